"""Pick & Pack observations, from the observer's seat (own seat first, then the opponent).

The grid is shown in the observer's frame: their lines are the columns, so the
observer always moves the grabber along its row (red sees the board as it is, blue
sees it transposed). Tile spaces are ``end * 6 + line`` of their owner; an opponent's
line is a row of the observer's frame. During simultaneous placement the opponent's
tiles are zeros until both arrangements are complete. The opponent's crates show the
top tray, tray count and closure; their full stacks only with ``opponent_crates="full"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.pick_and_pack.rules import PickAndPackGame, PickAndPackState

SIZE = 6
NUM_SPACES = 12
NUM_TYPES = 6
NUM_CRATES = 4
NUM_PHASES = 11
MAX_STACK = 36
MAX_SCORE = 2 * 6 * MAX_STACK


def layout(game: PickAndPackGame) -> ObservationLayout:
    return (
        ObservationLayout()
        .add("trays", (SIZE, SIZE), "apples on each face-up grid tray (observer's frame)", high=6)
        .add("face_down", (SIZE, SIZE), "1 for a face-down (unplayable) tray")
        .add("grabber", (SIZE, SIZE), "one-hot: the grabber's cell")
        .add("tile_type", (2, NUM_SPACES, NUM_TYPES), "one-hot type of each seat's tile spaces")
        .add("tile_state", (2, NUM_SPACES, 3), "one-hot: unplayed, used by owner, malfunctioned")
        .add("crate_count", (2, NUM_CRATES), "trays in each crate", high=MAX_STACK)
        .add("crate_top", (2, NUM_CRATES), "apples on each crate's top tray (0: empty)", high=6)
        .add(
            "crate_stack",
            (2, NUM_CRATES, MAX_STACK),
            "apples of each tray, bottom first (opponent: only if full)",
            high=6,
        )
        .add("crate_closure", (2, NUM_CRATES, 2), "one-hot: closed by Premium, by Wholesale")
        .add("rush_orders", (2, 2), "Rush Orders held: usable now, taken this turn", high=2)
        .add("tiles_placed", 2, "tiles each seat has placed", high=NUM_SPACES)
        .add("to_act", 2, "one-hot: the seat to act (zeros while both place)")
        .add("phase", NUM_PHASES, "one-hot: the sub-step being decided (zeros at the end)")
        .add("holding", 1, "apples of the tray waiting for a crate", high=6)
        .add("mixup_crate", NUM_CRATES, "one-hot: opponent crate chosen for an Order Mix-up")
        .add("scores", 2, "points so far (opponent: only if full)", high=MAX_SCORE)
        .add("color", 2, "one-hot: the observer is red, blue")
    )


def encode(state: PickAndPackState, player: int, views: dict[str, np.ndarray]) -> None:
    opponent = 1 - player
    apples, face_down = state.apples, state.face_down
    if player == 1:
        apples, face_down = apples.T, face_down.T
    views["trays"][:] = np.where(face_down, 0, apples)
    views["face_down"][:] = face_down
    row, col = state.grabber
    views["grabber"][(row, col) if player == 0 else (col, row)] = 1
    full = state.game.full_crates
    hidden = state.placement_hidden()
    scores = state.scores()
    for r, seat in enumerate((player, opponent)):
        if not (hidden and seat == opponent):
            kinds = state.tile_type[seat]
            spaces = np.flatnonzero(kinds >= 0)
            views["tile_type"][r, spaces, kinds[spaces]] = 1
            views["tile_state"][r, spaces, state.tile_status[seat, spaces]] = 1
        show_stack = seat == player or full
        for k, stack in enumerate(state.crates[seat]):
            if stack:
                views["crate_count"][r, k] = len(stack)
                views["crate_top"][r, k] = stack[-1]
                if show_stack:
                    views["crate_stack"][r, k, : len(stack)] = stack
            closure = state.closure[seat, k]
            if closure:
                views["crate_closure"][r, k, closure - 1] = 1
        views["rush_orders"][r] = state.rush_ready[seat], state.rush_new[seat]
        views["tiles_placed"][r] = NUM_SPACES - int((state.tile_type[seat] < 0).sum())
        if show_stack:
            views["scores"][r] = scores[seat]
    to_act = state.to_act()
    if len(to_act) == 1:
        views["to_act"][0 if to_act[0] == player else 1] = 1
    if state.phase < NUM_PHASES:
        views["phase"][state.phase] = 1
    views["holding"][0] = state.holding
    if state.mixup_crate >= 0:
        views["mixup_crate"][state.mixup_crate] = 1
    views["color"][player] = 1
