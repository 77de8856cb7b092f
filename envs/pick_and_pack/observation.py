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
PLACING = 0  # the tile placement phase (see rules)


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


#: One-hot rows looked up by value; index -1 (an empty space) is all zeros.
TYPE_ROWS = np.vstack([np.eye(NUM_TYPES), np.zeros(NUM_TYPES)]).astype(np.float32)
#: Tile status one-hot by (type, status): an empty space (type -1) is all zeros.
STATUS_ROWS = np.zeros((NUM_TYPES + 1, 3, 3), dtype=np.float32)
STATUS_ROWS[:NUM_TYPES] = np.eye(3)
#: Closure one-hot by closure (0 open: zeros, 1 Premium, 2 Wholesale).
CLOSURE_ROWS = np.array([[0, 0], [1, 0], [0, 1]], dtype=np.float32)
#: Seats in observer order as an index into per-seat arrays: a view, not a copy.
SEAT_ORDER = (slice(None), slice(None, None, -1))
#: Encodings of the fields that change on a few moves only (tiles, closures), kept per
#: game and looked up by those fields; the cache is cleared when full.
CACHE_SIZE = 256


def rare_fields(state: PickAndPackState, player: int, hidden: bool) -> tuple[np.ndarray, ...]:
    """The ``tile_type``, ``tile_state`` and ``crate_closure`` rows ``player`` sees, in
    observer order (only their own tiles while the opponent's arrangement is secret)."""
    key = (
        player,
        hidden,
        state.tile_type.tobytes(),
        state.tile_status.tobytes(),
        state.closure.tobytes(),
    )
    cache = state.game.encoding_cache
    rows = cache.get(key)
    if rows is None:
        seats = SEAT_ORDER[player]
        tile_type, tile_status = state.tile_type[seats], state.tile_status[seats]
        if hidden:
            tile_type, tile_status = tile_type[:1], tile_status[:1]
        rows = (
            TYPE_ROWS[tile_type],
            STATUS_ROWS[tile_type, tile_status],
            CLOSURE_ROWS[state.closure[seats]],
        )
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[key] = rows
    return rows


def encode(state: PickAndPackState, player: int, views: dict[str, np.ndarray]) -> None:
    opponent = 1 - player
    apples, face_down = state.apples, state.face_down
    if player == 1:  # blue's frame: the grid transposed
        apples, face_down = apples.T, face_down.T
    np.copyto(views["trays"], apples, where=~face_down)
    views["face_down"][:] = face_down
    row, col = state.grabber
    views["grabber"][(row, col) if player == 0 else (col, row)] = 1
    placing = state.phase == PLACING
    types, statuses, closures = rare_fields(state, player, placing and state.game.simultaneous)
    views["tile_type"][: len(types)] = types
    views["tile_state"][: len(types)] = statuses
    views["crate_closure"][:] = closures
    mine, theirs = state.crates[player], state.crates[opponent]
    views["crate_count"][:] = [[len(s) for s in mine], [len(s) for s in theirs]]
    views["crate_top"][:] = [[s[-1] if s else 0 for s in mine], [s[-1] if s else 0 for s in theirs]]
    seats = SEAT_ORDER[player]
    if state.game.full_crates:
        views["crate_stack"][:] = state.crate_grid[seats]
        views["scores"][:] = state.score(player), state.score(opponent)
    else:
        views["crate_stack"][0] = state.crate_grid[player]
        views["scores"][0] = state.score(player)
    views["rush_orders"][:] = [
        [state.rush_ready[player], state.rush_new[player]],
        [state.rush_ready[opponent], state.rush_new[opponent]],
    ]
    if placing:
        views["tiles_placed"][:] = NUM_SPACES - (state.tile_type[seats] < 0).sum(axis=1)
    else:
        views["tiles_placed"][:] = NUM_SPACES
    to_act = state.to_act()
    if len(to_act) == 1:
        views["to_act"][0 if to_act[0] == player else 1] = 1
    phase = state.phase
    if phase < NUM_PHASES:
        views["phase"][phase] = 1
    views["holding"][0] = state.holding
    if state.mixup_crate >= 0:
        views["mixup_crate"][state.mixup_crate] = 1
    views["color"][player] = 1
