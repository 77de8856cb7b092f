"""Pick & Pack observations, from the observer's seat (own seat first, then the opponent).

The grid is shown in the observer's frame: their lines are the columns, so the
observer always moves the grabber along its row (red sees the board as it is, blue
sees it transposed). Tile spaces are ``end * 6 + line`` of their owner; an opponent's
line is a row of the observer's frame. During simultaneous placement the opponent's
tiles are zeros until both arrangements are complete. The opponent's crates show the
top tray, tray count and closure; their full stacks only with ``opponent_crates="full"``.

How it is computed: each state keeps ``view``, the fields that change on some moves
only (grid, grabber, tiles, crates, scores, Rush Orders) for both seats, in seat order
and red's frame, laid out as ``SOURCE``; the rules write every change into it as they
make it. An observation is one gather from ``view`` (a precomputed index per observer,
and per secret placement, puts the rows in the observer's order and frame and points
hidden entries at a zero), then the few fields that change on most steps (phase, seat
to act, tray in hand, Order Mix-up) are written in.
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
NUM_STATUSES = 3
NUM_CRATES = 4
NUM_PHASES = 11
MAX_STACK = 36
MAX_SCORE = 2 * 6 * MAX_STACK
PLACING = 0  # the tile placement phase (see rules)


def layout(game: PickAndPackGame | None = None) -> ObservationLayout:
    return (
        ObservationLayout()
        .add("trays", (SIZE, SIZE), "apples on each face-up grid tray (observer's frame)", high=6)
        .add("face_down", (SIZE, SIZE), "1 for a face-down (unplayable) tray")
        .add("grabber", (SIZE, SIZE), "one-hot: the grabber's cell")
        .add("tile_type", (2, NUM_SPACES, NUM_TYPES), "one-hot type of each seat's tile spaces")
        .add(
            "tile_state",
            (2, NUM_SPACES, NUM_STATUSES),
            "one-hot: unplayed, used by owner, malfunctioned",
        )
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


#: The layout of a state's ``view``: per-seat rows in seat order, the grid in red's frame
#: (cell ``row * 6 + col``), tile ``seat * 12 + space``, crate ``seat * 4 + crate``.
SOURCE = (
    ObservationLayout()
    .add("trays", (SIZE, SIZE), "apples on each face-up grid tray")
    .add("face_down", (SIZE, SIZE), "1 for a face-down tray")
    .add("grabber", (SIZE, SIZE), "one-hot: the grabber's cell")
    .add("tile_type", (2, NUM_SPACES, NUM_TYPES), "one-hot type of each placed tile")
    .add("tile_state", (2, NUM_SPACES, NUM_STATUSES), "one-hot status of each placed tile")
    .add("crate_count", (2, NUM_CRATES), "trays in each crate")
    .add("crate_top", (2, NUM_CRATES), "apples on each crate's top tray")
    .add("crate_stack", (2, NUM_CRATES, MAX_STACK), "apples of each tray, bottom first")
    .add("crate_closure", (2, NUM_CRATES, 2), "one-hot: closed by Premium, by Wholesale")
    .add("rush_orders", (2, 2), "Rush Orders held: usable now, taken this turn")
    .add("tiles_placed", 2, "tiles each seat has placed")
    .add("scores", 2, "points so far")
    .add("zero", 1, "always 0: what the observer may not see, and the fields written later")
    .add("one", 1, "always 1")
)
#: Where each ``SOURCE`` field starts in ``view``, for the rules' writes.
TRAYS, FACE_DOWN, GRABBER_CELL, TILE_TYPE, TILE_STATE, CRATE_COUNT, CRATE_TOP, CRATE_STACK = (
    SOURCE.fields[name].start
    for name in (
        "trays",
        "face_down",
        "grabber",
        "tile_type",
        "tile_state",
        "crate_count",
        "crate_top",
        "crate_stack",
    )
)
CRATE_CLOSURE, RUSH_ORDERS, TILES_PLACED, POINTS, ONE = (
    SOURCE.fields[name].start
    for name in ("crate_closure", "rush_orders", "tiles_placed", "scores", "one")
)


def fresh_view(state: PickAndPackState) -> np.ndarray:
    """``state``'s ``view`` computed from scratch (the rules keep it up to date)."""
    from envs.pick_and_pack.rules import crate_value  # rules imports this module

    view = np.zeros(SOURCE.size, dtype=np.float32)
    v = SOURCE.views(view)
    v["trays"][:] = np.where(state.face_down, 0, state.apples)
    v["face_down"][:] = state.face_down
    v["grabber"][state.grabber] = 1
    for seat in range(2):
        for space in range(NUM_SPACES):
            kind = int(state.tile_type[seat, space])
            if kind >= 0:
                v["tile_type"][seat, space, kind] = 1
                v["tile_state"][seat, space, state.tile_status[seat, space]] = 1
                v["tiles_placed"][seat] += 1
        for k, stack in enumerate(state.crates[seat]):
            v["crate_count"][seat, k] = len(stack)
            v["crate_top"][seat, k] = stack[-1] if stack else 0
            v["crate_stack"][seat, k, : len(stack)] = stack
            closure = state.closure[seat][k]
            if closure:
                v["crate_closure"][seat, k, closure - 1] = 1
        v["rush_orders"][seat] = state.rush_ready[seat], state.rush_new[seat]
        v["scores"][seat] = sum(
            crate_value(sum(stack), closure)
            for stack, closure in zip(state.crates[seat], state.closure[seat], strict=True)
        )
    v["one"][0] = 1
    return view


def gather_index(game: PickAndPackGame, player: int, hidden: bool) -> np.ndarray:
    """Where each entry of ``player``'s observation comes from in ``view``; ``hidden``:
    during a secret placement (the opponent's tiles are not shown)."""
    source = SOURCE.views(np.arange(SOURCE.size))
    index = np.full(game.observation_layout.size, SOURCE.fields["zero"].start, dtype=np.intp)
    out = game.observation_layout.views(index)
    seats = [player, 1 - player]
    for name in ("trays", "face_down", "grabber"):
        out[name][:] = source[name] if player == 0 else source[name].T
    tile_rows = 1 if hidden else 2  # own tiles only during a secret placement
    for name in ("tile_type", "tile_state"):
        out[name][:tile_rows] = source[name][seats][:tile_rows]
    for name in ("crate_count", "crate_top", "crate_closure", "rush_orders", "tiles_placed"):
        out[name][:] = source[name][seats]
    shown = 2 if game.full_crates else 1  # the opponent's stacks and score only if full
    out["crate_stack"][:shown] = source["crate_stack"][seats][:shown]
    out["scores"][:shown] = source["scores"][seats][:shown]
    out["color"][player] = ONE
    return index


#: Where the fields written after the gather start in the observation (the layout does
#: not depend on the options).
TO_ACT, PHASE, HOLDING, MIXUP_CRATE = (
    layout().fields[name].start for name in ("to_act", "phase", "holding", "mixup_crate")
)


def observation(state: PickAndPackState, player: int) -> np.ndarray:
    """``player``'s observation (a new float32 array): gathered from ``state.view``, then
    the fields that change on most steps written into their zeros."""
    phase = state.phase
    hidden = phase == PLACING and state.game.simultaneous
    obs = state.view.take(state.game.gather_index[hidden][player])
    if phase < NUM_PHASES:
        obs[PHASE + phase] = 1
        if not hidden:  # one seat to act (both while placing in secret, none at the end)
            obs[TO_ACT if state.player == player else TO_ACT + 1] = 1
    if state.holding:
        obs[HOLDING] = state.holding
    if state.mixup_crate >= 0:
        obs[MIXUP_CRATE + state.mixup_crate] = 1
    return obs
