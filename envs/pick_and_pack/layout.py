"""Pick & Pack's observation layout: what the rules and the encoders share.

- The sizes of the board both need (grid, tile spaces, tile types and statuses, crates,
  phases), each declared here once.
- ``observation_layout()``: the observation's fields, from the observer's seat.
- ``SOURCE``: the layout of the buffer each state keeps (``state.view``): the fields that
  change on some moves only, for both seats in seat order and red's frame. The rules
  write every change into it through the offsets below (``TRAYS`` ... ``POINTS``).
- ``gather_index(player, hidden, full_crates)``: where each entry of an observation comes
  from in that buffer (the observer's seat order and frame, hidden entries pointing at a
  zero). The fast observation (``PickAndPackGame.observation``) is one gather with it,
  then the fields that change on most steps written in at ``TO_ACT``, ``PHASE``,
  ``HOLDING`` and ``MIXUP_CRATE``.

This module imports neither the rules nor the encoder (``observation.py``); both import
it.
"""

from __future__ import annotations

import numpy as np

from envs.core.observation import ObservationLayout

SIZE = 6  # the grid is SIZE × SIZE; each player has SIZE lines
NUM_CELLS = SIZE * SIZE
NUM_SPACES = 2 * SIZE  # tile spaces per player: both ends of their lines
NUM_TYPES = 6  # action tile types
NUM_STATUSES = 3  # a placed tile: unplayed, used by its owner, malfunctioned
NUM_CLOSURES = 2  # a closed crate: by Premium, by Wholesale
NUM_CRATES = 4  # per player
NUM_PHASES = 11  # the sub-steps a player can be asked in
MAX_APPLES = 6  # on one tray
MAX_STACK = NUM_CELLS  # trays a crate can hold
MAX_SCORE = 2 * MAX_APPLES * MAX_STACK  # a Premium crate of every tray


def observation_layout() -> ObservationLayout:
    """The observation's fields, from the observer's seat (own seat first, then the
    opponent's) and in their frame (the same in every configuration)."""
    return (
        ObservationLayout()
        .add(
            "trays",
            (SIZE, SIZE),
            "apples on each face-up grid tray (observer's frame)",
            high=MAX_APPLES,
        )
        .add("face_down", (SIZE, SIZE), "1 for a face-down (unplayable) tray")
        .add("grabber", (SIZE, SIZE), "one-hot: the grabber's cell")
        .add("tile_type", (2, NUM_SPACES, NUM_TYPES), "one-hot type of each seat's tile spaces")
        .add(
            "tile_state",
            (2, NUM_SPACES, NUM_STATUSES),
            "one-hot: unplayed, used by owner, malfunctioned",
        )
        .add("crate_count", (2, NUM_CRATES), "trays in each crate", high=MAX_STACK)
        .add(
            "crate_top",
            (2, NUM_CRATES),
            "apples on each crate's top tray (0: empty)",
            high=MAX_APPLES,
        )
        .add(
            "crate_stack",
            (2, NUM_CRATES, MAX_STACK),
            "apples of each tray, bottom first (opponent: only if full)",
            high=MAX_APPLES,
        )
        .add(
            "crate_closure",
            (2, NUM_CRATES, NUM_CLOSURES),
            "one-hot: closed by Premium, by Wholesale",
        )
        .add("rush_orders", (2, 2), "Rush Orders held: usable now, taken this turn", high=2)
        .add("tiles_placed", 2, "tiles each seat has placed", high=NUM_SPACES)
        .add("to_act", 2, "one-hot: the seat to act (zeros while both place)")
        .add("phase", NUM_PHASES, "one-hot: the sub-step being decided (zeros at the end)")
        .add("holding", 1, "apples of the tray waiting for a crate", high=MAX_APPLES)
        .add("mixup_crate", NUM_CRATES, "one-hot: opponent crate chosen for an Order Mix-up")
        .add("scores", 2, "points so far (opponent: only if full)", high=MAX_SCORE)
        .add("color", 2, "one-hot: the observer is red, blue")
    )


OBSERVATION = observation_layout()
#: Where the fields written after the gather start in an observation.
TO_ACT, PHASE, HOLDING, MIXUP_CRATE = OBSERVATION.starts(
    "to_act", "phase", "holding", "mixup_crate"
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
    .add("crate_closure", (2, NUM_CRATES, NUM_CLOSURES), "one-hot: closed by Premium, by Wholesale")
    .add("rush_orders", (2, 2), "Rush Orders held: usable now, taken this turn")
    .add("tiles_placed", 2, "tiles each seat has placed")
    .add("scores", 2, "points so far")
    .add("zero", 1, "always 0: what the observer may not see, and the fields written later")
    .add("one", 1, "always 1")
)
#: The fields that ``SOURCE`` and ``OBSERVATION`` both have (under the same names).
SHARED_FIELDS = (
    "trays",
    "face_down",
    "grabber",
    "tile_type",
    "tile_state",
    "crate_count",
    "crate_top",
    "crate_stack",
    "crate_closure",
    "rush_orders",
    "tiles_placed",
    "scores",
)
#: Where each ``SOURCE`` field starts in ``view``, for the rules' writes.
(
    TRAYS,
    FACE_DOWN,
    GRABBER_CELL,
    TILE_TYPE,
    TILE_STATE,
    CRATE_COUNT,
    CRATE_TOP,
    CRATE_STACK,
    CRATE_CLOSURE,
    RUSH_ORDERS,
    TILES_PLACED,
    POINTS,
) = SOURCE.starts(*SHARED_FIELDS)
ZERO, ONE = SOURCE.starts("zero", "one")


def gather_index(player: int, hidden: bool, full_crates: bool) -> np.ndarray:
    """Where each entry of ``player``'s observation comes from in ``view`` (``ZERO`` for
    the fields written after the gather and what the observer may not see). ``hidden``:
    during a secret placement (the opponent's tiles are not shown); ``full_crates``: the
    opponent's whole stacks and score are shown (``opponent_crates="full"``)."""
    source = SOURCE.views(np.arange(SOURCE.size))
    index = np.full(OBSERVATION.size, ZERO, dtype=np.intp)
    out = OBSERVATION.views(index)
    seats = [player, 1 - player]
    for name in ("trays", "face_down", "grabber"):  # blue's frame is red's transposed
        out[name][:] = source[name] if player == 0 else source[name].T
    tile_rows = 1 if hidden else 2  # own tiles only during a secret placement
    for name in ("tile_type", "tile_state"):
        out[name][:tile_rows] = source[name][seats][:tile_rows]
    for name in ("crate_count", "crate_top", "crate_closure", "rush_orders", "tiles_placed"):
        out[name][:] = source[name][seats]
    shown = 2 if full_crates else 1  # the opponent's stacks and score only if full
    out["crate_stack"][:shown] = source["crate_stack"][seats][:shown]
    out["scores"][:shown] = source["scores"][seats][:shown]
    out["color"][player] = ONE
    return index
