"""Pick & Pack observations, the plain way: ``encode(state, player)``.

An observation is from the observer's seat (own seat first, then the opponent). The
grid is shown in the observer's frame: their lines are the columns, so the observer
always moves the grabber along its row (red sees the board as it is, blue sees it
transposed). Tile spaces are ``end * 6 + line`` of their owner; an opponent's line is a
row of the observer's frame. During simultaneous placement the opponent's tiles are
zeros until both arrangements are complete. The opponent's crates show the top tray,
tray count and closure; their full stacks (and so their score) only with
``opponent_crates="full"``.

``encode`` is the reference: it reads the state's plain fields (grid, tiles, crates,
Rush Orders, phase) into the layout's named views, field by field. The game's own
``observation`` (in the rules) gives the same vector the fast way, one gather from the
buffer the state keeps; the tests check that they agree at every decision.
"""

from __future__ import annotations

import numpy as np

from envs.pick_and_pack.layout import NUM_SPACES, OBSERVATION, SIZE
from envs.pick_and_pack.rules import OVER, PickAndPackState, crate_value, to_frame


def encode(state: PickAndPackState, player: int) -> np.ndarray:
    """``player``'s observation of ``state`` (a new float32 array), written field by field
    from the state's plain fields (never its ``view``)."""
    game = state.game
    flat = OBSERVATION.zeros()
    v = OBSERVATION.views(flat)
    # The grid, in the observer's frame.
    for row in range(SIZE):
        for col in range(SIZE):
            i, j = to_frame(player, row, col)
            down = bool(state.face_down[row, col])
            v["face_down"][i, j] = down
            v["trays"][i, j] = 0 if down else state.apples[row, col]
            v["grabber"][i, j] = (row, col) == state.grabber
    # Each seat's tiles, crates, Rush Orders and score: own seat first.
    hidden = state.placement_hidden()
    for rank, seat in enumerate((player, 1 - player)):
        placed = 0
        for space in range(NUM_SPACES):
            kind = int(state.tile_type[seat, space])
            if kind < 0:
                continue
            placed += 1
            if hidden and seat != player:
                continue  # the opponent's arrangement is secret until both are done
            v["tile_type"][rank, space, kind] = 1
            v["tile_state"][rank, space, state.tile_status[seat, space]] = 1
        v["tiles_placed"][rank] = placed
        shown = seat == player or game.full_crates  # whole stacks and the score
        for k, stack in enumerate(state.crates[seat]):
            v["crate_count"][rank, k] = len(stack)
            v["crate_top"][rank, k] = stack[-1] if stack else 0
            if shown:
                v["crate_stack"][rank, k, : len(stack)] = stack
            closure = state.closure[seat][k]
            if closure:
                v["crate_closure"][rank, k, closure - 1] = 1
        v["rush_orders"][rank] = state.rush_ready[seat], state.rush_new[seat]
        if shown:
            v["scores"][rank] = sum(
                crate_value(sum(stack), closure)
                for stack, closure in zip(state.crates[seat], state.closure[seat], strict=True)
            )
    # The decision under way.
    choosers = state.to_act()
    if len(choosers) == 1:  # none at the end, both while placing in secret
        v["to_act"][0 if choosers[0] == player else 1] = 1
    if state.phase != OVER:
        v["phase"][state.phase] = 1
    v["holding"][0] = state.holding
    if state.mixup_crate >= 0:
        v["mixup_crate"][state.mixup_crate] = 1
    v["color"][player] = 1
    return flat
