"""Pick & Pack, batched: thousands of games in lockstep as numpy arrays.

``PickAndPackVector`` plays ``B`` games of Pick & Pack at once, on
``envs.core.batched.BatchedEngine`` (which documents the interface), with every option
of the rules (``placement``, ``opponent_crates``, ``tray_counts``,
``chain_rush_orders``, ``targetless_actions``). Both seats choose while placing tiles
in secret (``placement="simultaneous"``); every other choice has one chooser.

State: per game the grid (``apples``, ``face_down``, ``frames``, ``grabber``), the tiles
(``tile_type``, ``tile_status``, ``to_place``, and as bits the spaces still ``free`` and
the types still in ``hand``), the crates (``count``, ``crate_apples``, ``closure``; the
trays themselves only in the images), the Rush Orders, the player, the phase, the tray
in hand, the Order Mix-up crate and the ``points``, each an array with a game axis
(the per-seat ones also flat by ``2 * game + seat``, so that one index reaches them).

Observations: where the rules keep one ``view`` (``layout.SOURCE``) and gather each
seat's observation from it, the engine keeps every seat's observation itself,
``images`` (``(B, 2, 672)``, int8: every entry but the scores is a small count), each
seat's in its own layout and frame. Every change is written at once into both seats'
images where each sees it (blue's grid transposed, the seats swapped in blue's, the
opponent's buried trays only with ``opponent_crates="full"``, the opponent's tiles only
once a secret placement is over, when they are copied across). What changes on most
steps (``LIVE``: the seat to act, the phase, the tray in hand, the Order Mix-up crate)
is written from a table of those four values when observed, and the scores from
``points``. ``observations`` is then one converting copy of ``images`` (into the array
of its previous call when the caller has let that go; see there), ``observe`` one
gather of rows; ``view`` puts the rules' buffer together from the images (tests).

Playing: ``_apply`` plays the choosers' decisions and then, as the rules' ``_advance``,
every decision with a single legal choice (spending targetless actions, ending games
where the player to move is stuck) until each row reaches a real choice or the end. It
goes in passes over the phases in the order a turn visits them, the rows of one phase
at once, each phase handing the rows it sends on to the phases after it, so that most
rows go from their move to the end of its action in one pass; the actions done are
finished together, and the turns that go on (a Rush Order) or pass make the next pass.
The masks of the rows stepped are cleared first, and a row's legal choices written
when it reaches a real choice; the choosers come from a table of phase and player.
Numpy's costs shape the code: rows are gathered with ``take`` and selected with
``compress`` (several times faster than fancy and boolean indexing), per-seat values
are reached by one flat index, short rows of booleans are read as one integer's bytes
(counted with ``count_true``, written into the masks with one store), and a seat's move
targets are one word of its frame of the grid (``frames``). A search's rollouts, which
read no observation, set ``observed = False``: the moves then skip the images.

Chance: the rules draw only at the deal (the grid's trays, the first player and, with
``placement="random"``, each seat's tiles); nothing is random later. A deal of ``k``
games is one call to ``_draw(games)``: ``rng.random((k, 36))``, whose ``argsort`` orders
each game's trays, ``rng.integers(2, size=k)`` the first players and, with random
placement, ``rng.random((k, 2, 12))`` the tiles' order. Each is uniform as the rules'
shuffles are, but not the same numbers as ``new_initial_state`` from the same seed;
the differential tests replace ``_draw`` by the reference games' deals, and
``load(states)`` starts rows from any position (the first player included, still
unannounced during a secret placement).

Checked against the rules (``tests/test_batched_every_game.py``,
``tests/test_batched_pick_and_pack.py``): every
configuration of ``SPEC.configurations``, both seats' observations, masks, choosers,
scores, rewards (both modes) and terminations step by step, loaded mid-game positions
and determinisations, and ``make_vec`` against the Gymnasium view.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.pick_and_pack.layout import (
    GRABBER_CELL,
    HOLDING,
    MAX_APPLES,
    MAX_STACK,
    MIXUP_CRATE,
    NUM_CELLS,
    NUM_CRATES,
    NUM_PHASES,
    NUM_SPACES,
    NUM_STATUSES,
    NUM_TYPES,
    OBSERVATION,
    ONE,
    PHASE,
    POINTS,
    SHARED_FIELDS,
    SIZE,
    SOURCE,
    TILE_STATE,
    TILE_TYPE,
    TILES_PLACED,
    TO_ACT,
    TRAYS,
    ZERO,
)
from envs.pick_and_pack.rules import (
    CHOOSE_END,
    END,
    FLIPPED,
    MALFUNCTION,
    MALFUNCTION_TARGET,
    MIXUP,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MOVE,
    MOVING,
    NUM_ACTIONS,
    OPP_CRATE,
    OVER,
    OWN_CRATE,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM_CLOSED,
    PREMIUM_TARGET,
    QUALITY,
    QUALITY_SOURCE,
    RUSH,
    RUSH_CHOICE,
    RUSH_USE,
    TARGET_PHASE,
    TILE,
    TRAY,
    UNPLAYED,
    USED,
    WHOLESALE_CLOSED,
    WHOLESALE_TARGET,
    PickAndPackGame,
    PickAndPackState,
)

_CELLS = np.arange(NUM_CELLS)
_ROW, _COL = np.divmod(_CELLS, SIZE)
_LINES = np.arange(SIZE)
#: The cell each seat reaches moving the grabber from a cell to a line: ``(2, 36, 6)``.
LINE_CELL = np.stack(
    [_ROW[:, None] * SIZE + _LINES[None, :], _LINES[None, :] * SIZE + _COL[:, None]]
)
#: The line of the grabber's cell for each seat (red: its column, blue: its row); flat
#: by ``seat * 36 + cell``.
GRABBER_LINE = np.stack([_COL, _ROW])
_GRABBER_LINE = GRABBER_LINE.reshape(-1)
#: A cell in each seat's frame (red as is, blue transposed); its own inverse.
FRAME = np.stack([_CELLS, _COL * SIZE + _ROW])
#: The phase that asks for the target of each tile type (-1: none, Rush Order).
TARGET_OF = np.array([TARGET_PHASE.get(kind, -1) for kind in range(NUM_TYPES)])

#: What a grid cell holds (``PickAndPackVector.frames``): nothing, a face-up tray, a
#: face-down tray; ``NONE`` pads each row of a frame to 8 cells.
EMPTY, UP, DOWN, NONE = range(4)
#: A game's entries in ``frames`` (2 seats, 6 rows of 8), and where each cell is in each
#: seat's frame there: ``(36, 2)``.
FRAMES = 2 * SIZE * 8
FRAME_AT = np.stack(
    [seat * FRAMES // 2 + FRAME[seat] // SIZE * 8 + FRAME[seat] % SIZE for seat in (0, 1)], 1
)
#: The frame row of the grabber's cell, by ``seat * 36 + cell``: the seat moves along it.
_FRAME_ROW = (FRAME // SIZE).reshape(-1)
#: A row of 8 cells without the one at each line (the grabber's), as bytes of a word.
_BUT_LINE = ~(np.uint64(0xFF) << (np.arange(SIZE, dtype=np.uint64) * np.uint64(8)))
#: The tile space at end 0 of each line (+6: end 1), 8 wide.
LINE_SPACE = np.array([*range(SIZE), 0, 0])

# --- the images -----------------------------------------------------------------------
#: Entries of one seat's observation and of one game's images: seat ``p`` of game
#: ``g`` starts at ``g * GAME + p * OBS``, which is ``(2 * g + p) * OBS``.
OBS = OBSERVATION.size
GAME = 2 * OBS
_FIELDS = OBSERVATION.fields
(
    O_TRAYS,
    O_FACE_DOWN,
    O_GRABBER,
    O_TILE_TYPE,
    O_TILE_STATE,
    O_COUNT,
    O_TOP,
    O_STACK,
    O_CLOSURE,
    O_RUSH,
    O_PLACED,
    O_SCORES,
) = OBSERVATION.starts(*SHARED_FIELDS)
#: The fields that change on most steps (to act, phase, holding, Order Mix-up crate, end
#: to end): written from ``live_table`` when observed, not kept up to date.
LIVE = slice(TO_ACT, MIXUP_CRATE + NUM_CRATES)
assert PHASE == TO_ACT + 2 and HOLDING == PHASE + NUM_PHASES and MIXUP_CRATE == HOLDING + 1


def seat_pair(name: str) -> np.ndarray:
    """Where each observer (column) sees an entry of each seat's (row) half of a field
    with one half per seat (own first), from the field's start in a game's images."""
    half = _FIELDS[name].size // 2
    return np.array([[0, OBS + half], [half, OBS]])


#: ``seat_pair`` of the per-seat fields (``(7, 2, 2)``), and the index of each.
PAIRS = np.stack(
    [
        seat_pair(name)
        for name in (
            "tile_type",
            "tile_state",
            "crate_count",
            "crate_stack",
            "crate_closure",
            "rush_orders",
            "tiles_placed",
        )
    ]
)
TYPE_PAIR, STATE_PAIR, CRATE_PAIR, STACK_PAIR, CLOSURE_PAIR, RUSH_PAIR, PLACED_PAIR = range(7)
#: Where each observer sees a grid cell (red's frame) in a grid field: ``(36, 2)``.
GRID_PAIR = np.stack([_CELLS, OBS + FRAME[1]], axis=1)


def live_table(simultaneous: bool) -> np.ndarray:
    """The ``LIVE`` fields of both seats for every phase (``OVER`` too), player, tray in
    hand and Order Mix-up crate (+1): ``(12 * 2 * 7 * 5, 2, 18)`` int8, by
    ``PickAndPackVector._live_code``."""
    table = np.zeros((OVER + 1, 2, MAX_APPLES + 1, NUM_CRATES + 1, 2, LIVE.stop - TO_ACT))
    for phase in range(OVER):  # none at the end
        table[phase, ..., PHASE - TO_ACT + phase] = 1
        if not (simultaneous and phase == PLACING):  # both act while placing in secret
            for player in range(2):
                for seat in range(2):
                    table[phase, player, :, :, seat, int(player != seat)] = 1
    for holding in range(MAX_APPLES + 1):
        table[:, :, holding, ..., HOLDING - TO_ACT] = holding
    for crate in range(NUM_CRATES):
        table[:, :, :, crate + 1, :, MIXUP_CRATE - TO_ACT + crate] = 1
    return table.reshape(-1, 2, LIVE.stop - TO_ACT).astype(np.int8)


def chooser_table(simultaneous: bool) -> np.ndarray:
    """Who chooses, by ``phase * 2 + player``: ``(24, 2)`` bool."""
    table = np.zeros((OVER + 1, 2, 2), dtype=bool)
    for player in range(2):
        table[MOVING:OVER, player, player] = True
        table[PLACING, player] = True if simultaneous else np.arange(2) == player
    return table.reshape(-1, 2)


#: A seat's placement actions (``PLACE`` on) by the bits of its free spaces (``(4096,
#: 72)``) and of the types it still holds (``(64, 72)``): ``FREE_PLACEMENTS[free] &
#: HAND_PLACEMENTS[hand]``; and the same as 9 words of 8 actions.
_BITS = (np.arange(1 << NUM_SPACES)[:, None] >> np.arange(NUM_SPACES) & 1).astype(bool)
FREE_PLACEMENTS = np.repeat(_BITS, NUM_TYPES, axis=1)
HAND_PLACEMENTS = np.tile(_BITS[: 1 << NUM_TYPES, :NUM_TYPES], NUM_SPACES)
FREE_WORDS, HAND_WORDS = FREE_PLACEMENTS.view(np.uint64), HAND_PLACEMENTS.view(np.uint64)


def lowest_bit(bits: np.ndarray) -> np.ndarray:
    """The index of the lowest set bit of each positive integer."""
    return np.bitwise_count((bits & -bits) - 1).astype(np.int64)  # (not uint8)


#: The unsigned integer of each width in bytes.
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def count_true(legal: np.ndarray) -> np.ndarray:
    """The True entries of each row of ``legal`` (``(k, w)`` bool, C-contiguous): where
    ``w`` is 1, 2, 4 or 8, the bits of the row's bytes read as one integer (a sum along a
    short axis is several times slower)."""
    word = _WORDS.get(legal.shape[1])
    if word is None:
        return np.count_nonzero(legal, axis=1)
    return np.bitwise_count(legal.view(word)).ravel()


#: The phases in the order a turn goes through them (``_advance``'s passes); a phase
#: only hands rows on to the phases after it.
_ORDER = (
    RUSH_CHOICE,
    MOVING,
    CHOOSE_END,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    PREMIUM_TARGET,
    WHOLESALE_TARGET,
    MALFUNCTION_TARGET,
    QUALITY_SOURCE,
    PLACE_TRAY,
)
#: The first action of each phase's choices (``_choices``).
_OFFSET = {
    MOVING: MOVE,
    PLACE_TRAY: OWN_CRATE,
    CHOOSE_END: END,
    PREMIUM_TARGET: OWN_CRATE,
    WHOLESALE_TARGET: OPP_CRATE,
    QUALITY_SOURCE: OPP_CRATE,
    MIXUP_OPPONENT: OPP_CRATE,
    MIXUP_OWN: OWN_CRATE,
    MALFUNCTION_TARGET: TRAY,
    RUSH_CHOICE: RUSH_USE,
}

#: The width of each phase's choices (``_choices``: the actions and False after them).
_WIDTH = {
    MOVING: 8,
    PLACE_TRAY: NUM_CRATES,
    CHOOSE_END: 2,
    PREMIUM_TARGET: NUM_CRATES,
    WHOLESALE_TARGET: NUM_CRATES,
    QUALITY_SOURCE: NUM_CRATES,
    MIXUP_OPPONENT: NUM_CRATES,
    MIXUP_OWN: NUM_CRATES,
    MALFUNCTION_TARGET: NUM_CELLS + NUM_SPACES,
    RUSH_CHOICE: 2,
}
assert all(_OFFSET[kind] + width <= NUM_ACTIONS for kind, width in _WIDTH.items())

#: Rows of one phase waiting in a pass: parts ``(rows, actions)``, the actions chosen by
#: the players, or None (ask the rules: the rows have just come to this phase).
Parts = list[tuple[np.ndarray, np.ndarray | None]]


class PickAndPackVector(BatchedEngine):
    """``num_envs`` games of Pick & Pack in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``placement``, ``opponent_crates``, ...), all
            supported.
    """

    game_class = PickAndPackGame
    #: The generator draws only at the deal (see "Chance" in the module docstring).
    draws_after_deal = False
    #: The state, with what is kept derived from it (``frames``, the bits, ``closed``,
    #: ``all_closed``, ``line_tiles``, the masks and choosers) and the ``images`` (which
    #: also hold the crates' trays): copied as is, nothing is worked out again.
    state_arrays = (
        "apples",
        "face_down",
        "frames",
        "grabber",
        "tile_type",
        "tile_status",
        "to_place",
        "free",
        "hand",
        "count",
        "crate_apples",
        "closure",
        "closed",
        "all_closed",
        "rush_ready",
        "rush_new",
        "rushes",
        "first_player",
        "player",
        "holding",
        "mixup",
        "phase",
        "points",
        "images",
        "_mask",
        "line_tiles",
        "_choosers",
    )
    # ``observed = False``: the moves write into ``images`` only the seats' own stacks
    # (``_take_top`` reads them back), and ``observe``, ``observations`` and ``view`` raise.

    def _allocate(self) -> None:
        game, b = self.game, self.num_envs
        config = game.config
        self.simultaneous = game.simultaneous
        self.full_crates = game.full_crates
        self.random_placement = config.placement == "random"
        self.spent = game.targetless_spent
        self.chain = config.chain_rush_orders
        self._trays = np.repeat(np.arange(1, 7, dtype=np.int8), game.tray_counts)
        self._types = np.repeat(np.arange(NUM_TYPES, dtype=np.int8), 2)
        self.apples = np.zeros((b, NUM_CELLS), dtype=np.int8)
        self.face_down = np.zeros((b, NUM_CELLS), dtype=bool)
        #: What each cell holds (``EMPTY``, ``UP``, ``DOWN``) in each seat's frame, its
        #: rows padded to 8 with ``NONE``: a seat's move targets are one word of it.
        self.frames = np.full((b, 2, SIZE, 8), NONE, dtype=np.uint8)
        self.grabber = np.zeros(b, dtype=np.int64)  # cell row * 6 + col
        self.tile_type = np.zeros((b, 2, NUM_SPACES), dtype=np.int8)
        self.tile_status = np.zeros((b, 2, NUM_SPACES), dtype=np.int8)
        self.to_place = np.zeros((b, 2, NUM_TYPES), dtype=np.int8)
        #: The bits of each seat's free spaces and of the types it still has to place.
        self.free = np.zeros((b, 2), dtype=np.int64)
        self.hand = np.zeros((b, 2), dtype=np.int64)
        self.count = np.zeros((b, 2, NUM_CRATES), dtype=np.int64)
        self.crate_apples = np.zeros((b, 2, NUM_CRATES), dtype=np.int64)
        self.closure = np.zeros((b, 2, NUM_CRATES), dtype=np.int8)
        self.closed = np.zeros((b, 2), dtype=np.int64)  # crates closed
        #: Whether a seat has all four crates closed (the game ends with that action).
        self.all_closed = np.zeros(b, dtype=bool)
        self.rush_ready = np.zeros((b, 2), dtype=np.int64)
        self.rush_new = np.zeros((b, 2), dtype=np.int64)
        self.rushes = np.zeros(b, dtype=np.int64)
        self.first_player = np.zeros(b, dtype=np.int64)
        self.player = np.zeros(b, dtype=np.int64)
        self.holding = np.zeros(b, dtype=np.int64)
        self.mixup = np.full(b, -1, dtype=np.int64)
        self.phase = np.zeros(b, dtype=np.int64)
        self.points = np.zeros((b, 2))
        # The same memory flat (``_x1``) or by seat rows (``_x2``), ``2 * game + seat``.
        self._apples1, self._frames1 = self.apples.reshape(-1), self.frames.reshape(-1)
        self._frame_words = self.frames.reshape(-1).view(np.uint64)  # by 6 * seat row + row
        self._type1, self._type2 = self.tile_type.reshape(-1), self.tile_type.reshape(2 * b, -1)
        self._status1 = self.tile_status.reshape(-1)
        self._status2 = self.tile_status.reshape(2 * b, -1)
        self._place1 = self.to_place.reshape(-1)
        self._free1, self._hand1 = self.free.reshape(-1), self.hand.reshape(-1)
        self._count1, self._count2 = self.count.reshape(-1), self.count.reshape(2 * b, -1)
        self._crate_apples1 = self.crate_apples.reshape(-1)
        self._closure1, self._closure2 = self.closure.reshape(-1), self.closure.reshape(2 * b, -1)
        self._closed1 = self.closed.reshape(-1)
        self._ready1, self._new1 = self.rush_ready.reshape(-1), self.rush_new.reshape(-1)
        self._points1 = self.points.reshape(-1)
        self._seat_rows = np.arange(2 * b)
        #: ``_both`` of every seat row for each of ``PAIRS``, from the field's start:
        #: ``(7, 2 * B, 2)``.
        self._pair_rows = (self._seat_rows >> 1)[:, None] * GAME + PAIRS[:, self._seat_rows & 1]
        self._even = np.arange(0, 2 * b, 2)
        #: Every seat's observation, but ``LIVE`` and the scores (see the module
        #: docstring); ``_flat`` is the same memory flat.
        self.images = np.zeros((b, 2, OBS), dtype=np.int8)
        self._flat, self._images2 = self.images.reshape(-1), self.images.reshape(2 * b, -1)
        self._mask = np.zeros((b, 2, NUM_ACTIONS), dtype=bool)
        self._mask2 = self._mask.reshape(2 * b, -1)
        #: The masks' actions of a phase by seat rows as one (unaligned) integer each,
        #: where its choices (``_choices``) are 2, 4 or 8 wide: one store per row.
        self._mask_words = {
            kind: np.ndarray(
                (2 * b,),
                dtype=_WORDS[width],
                buffer=self._mask,
                offset=_OFFSET[kind],
                strides=(NUM_ACTIONS,),
            )
            for kind, width in _WIDTH.items()
            if width in _WORDS
        }
        #: Whether each line of each seat has an unplayed tile at an end (by seat row,
        #: 8 wide as a frame's row).
        self.line_tiles = np.zeros((b, 2, 8), dtype=bool)
        self._line_tiles1 = self.line_tiles.reshape(-1)
        self._line_tiles2 = self.line_tiles.reshape(2 * b, -1)
        self._choosers = np.zeros((b, 2), dtype=bool)
        words = (b, 2, FREE_WORDS.shape[1])  # (``_placement_masks``)
        self._placements = np.zeros(words, dtype=np.uint64), np.zeros(words, dtype=np.uint64)
        # The game's gather per (secret placement, observer): the images of a position
        # from its ``view`` (deals and loads).
        self._gather = np.array(game.gather_index)  # (2, 2, obs_size)
        self._live = live_table(self.simultaneous)
        self._choosing = chooser_table(self.simultaneous)

    # --- chance ------------------------------------------------------------------------
    def _draw(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every random draw of the engine: the deals of new games in rows ``games``
        (``k`` of them): the grid's trays (``(k, 36)``, cell ``row * 6 + col``), the first
        players (``(k,)``) and, with random placement, each seat's tile on each space
        (``(k, 2, 12)``; else None)."""
        rng, count = self.rng, len(games)
        trays = self._trays[np.argsort(rng.random((count, NUM_CELLS)), axis=1)]
        first = rng.integers(2, size=count)
        tiles = None
        if self.random_placement:
            tiles = self._types[np.argsort(rng.random((count, 2, NUM_SPACES)), axis=2)]
        return trays, first, tiles

    # --- dealing -----------------------------------------------------------------------
    def _deal(self, games: np.ndarray) -> None:
        self._start(games, *self._draw(games))

    def _start(
        self, games: np.ndarray, trays: np.ndarray, first: np.ndarray, tiles: np.ndarray | None
    ) -> None:
        """New games in rows ``games`` from their deal (see ``_draw``), as
        ``PickAndPackState.__init__``."""
        k = len(games)
        self.apples[games] = trays
        self.face_down[games] = False
        self.frames[games, :, :, :SIZE] = UP
        self.grabber[games] = np.argmax(trays == 6, axis=1)
        self.tile_status[games] = UNPLAYED
        self.line_tiles[games, :, :SIZE] = True
        self.count[games] = 0
        self.crate_apples[games] = 0
        self.closure[games] = 0
        self.closed[games] = 0
        self.all_closed[games] = False
        self.rush_ready[games] = 0
        self.rush_new[games] = 0
        self.rushes[games] = 0
        self.first_player[games] = first
        self.player[games] = first
        self.holding[games] = 0
        self.mixup[games] = -1
        self.phase[games] = PLACING
        self.points[games] = 0.0
        view = np.zeros((k, SOURCE.size), dtype=np.float32)  # the rules' ``view``
        view[:, TRAYS : TRAYS + NUM_CELLS] = trays
        view[np.arange(k), GRABBER_CELL + self.grabber[games]] = 1.0
        view[:, ONE] = 1.0
        if tiles is None:
            self.tile_type[games] = -1
            self.to_place[games] = 2
            self.free[games] = (1 << NUM_SPACES) - 1
            self.hand[games] = (1 << NUM_TYPES) - 1
        else:
            self.tile_type[games] = tiles
            self.to_place[games] = 0
            self.free[games] = 0
            self.hand[games] = 0
            spaces = np.arange(2 * NUM_SPACES)
            view[np.arange(k)[:, None], TILE_TYPE + spaces * NUM_TYPES + tiles.reshape(k, -1)] = 1
            view[:, TILE_STATE + spaces * NUM_STATUSES + UNPLAYED] = 1.0
            view[:, TILES_PLACED : TILES_PLACED + 2] = NUM_SPACES
        self.images[games] = view[:, self._gather[0]]  # no tile hidden yet
        if tiles is not None:
            self._start_turn(games, first)
            self._advance({MOVING: [(games, None)]})
        self._refresh(games)

    def _load(self, games: np.ndarray, states: Sequence[PickAndPackState]) -> None:
        # Every field for all the rows at once, read from each distinct state once (a
        # search loads each of its determinisations into several rows).
        index: dict[int, int] = {}
        slots = [index.setdefault(id(state), len(index)) for state in states]
        distinct = list({id(state): state for state in states}.values())  # by slot
        rows = np.array(slots, dtype=np.int64)
        if not distinct:
            return

        def field(read) -> np.ndarray:
            """``read(state)`` of each row's state."""
            return np.array([read(state) for state in distinct]).take(rows, axis=0)

        apples = field(lambda state: state.apples.ravel())
        face_down = field(lambda state: state.face_down.ravel())
        self.apples[games] = apples
        self.face_down[games] = face_down
        held = np.where(face_down, DOWN, np.where(apples > 0, UP, EMPTY))
        self._frames1[(games * FRAMES)[:, None, None] + FRAME_AT] = held[:, :, None]
        grabber = field(lambda state: state.grabber)
        self.grabber[games] = grabber[:, 0] * SIZE + grabber[:, 1]
        tile_type = field(lambda state: state.tile_type)
        tile_status = field(lambda state: state.tile_status)
        to_place = field(lambda state: state.to_place)
        self.tile_type[games] = tile_type
        self.tile_status[games] = tile_status
        unplayed = tile_status == UNPLAYED
        self.line_tiles[games, :, :SIZE] = unplayed[..., :SIZE] | unplayed[..., SIZE:]
        self.to_place[games] = to_place
        self.free[games] = (tile_type < 0) @ (1 << np.arange(NUM_SPACES))
        self.hand[games] = (to_place > 0) @ (1 << np.arange(NUM_TYPES))
        self.count[games] = field(lambda state: [list(map(len, seat)) for seat in state.crates])
        self.crate_apples[games] = field(lambda state: state.crate_apples)
        closure = field(lambda state: state.closure)
        self.closure[games] = closure
        closed = (closure != 0).sum(axis=2)
        self.closed[games] = closed
        self.all_closed[games] = (closed == NUM_CRATES).any(axis=1)
        self.rush_ready[games] = field(lambda state: state.rush_ready)
        self.rush_new[games] = field(lambda state: state.rush_new)
        self.rushes[games] = field(lambda state: state.rushes_this_turn)
        self.first_player[games] = field(lambda state: state.first_player)
        self.player[games] = field(lambda state: state.player)
        self.holding[games] = field(lambda state: state.holding)
        self.mixup[games] = field(lambda state: state.mixup_crate)
        phase = field(lambda state: state.phase)
        self.phase[games] = phase
        views = field(lambda state: state.view)
        self.points[games] = views[:, POINTS : POINTS + 2]
        hidden = ((phase == PLACING) & self.simultaneous).astype(np.int64)
        images = views[np.arange(len(games))[:, None, None], self._gather[hidden]]
        images[:, :, O_SCORES : O_SCORES + 2] = 0  # (from ``points``)
        self.images[games] = images
        self._refresh(games)

    def _refresh(self, games: np.ndarray) -> None:
        """Work out the masks and choosers of ``games`` (ascending) afresh."""
        self._mask[games] = False
        phase = self.phase[games]
        placing = games[phase == PLACING]
        if len(placing):
            self._placement_masks(placing)
        playing = games[(phase != PLACING) & (phase != OVER)]
        phase = self.phase[playing]
        for kind in np.unique(phase).tolist():
            rows = playing[phase == kind]
            seats = self.player[rows]
            seat_rows = rows * 2 + seats
            self._write_mask(kind, seat_rows, self._choices(kind, rows, seats, seat_rows))
        self._rechoose(games)

    # --- what the seats read -----------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        self._check_observed()
        if not len(games):  # (``step`` asks for the final views of no game at most steps)
            return np.zeros((0, self.observation_size), dtype=np.float32)
        seat_rows = games * 2 + seats
        observations = self._images2.take(seat_rows, axis=0).astype(np.float32)
        live = self._live_code(games) * 2 + seats
        observations[:, LIVE] = self._live.reshape(-1, LIVE.stop - TO_ACT).take(live, axis=0)
        observations[:, O_SCORES] = self._points1.take(seat_rows)
        if self.full_crates:
            observations[:, O_SCORES + 1] = self._points1.take(seat_rows ^ 1)
        return observations

    def observations(self) -> np.ndarray:
        """Every seat's observation: ``(B, 2, 672)`` float32, a new array."""
        self._check_observed()
        observations = np.empty(self.images.shape, dtype=np.float32)
        self.images[:, :, LIVE] = self._live.take(self._live_code(None), axis=0)
        np.copyto(observations, self.images)
        observations[:, :, O_SCORES] = self.points
        if self.full_crates:
            observations[:, :, O_SCORES + 1] = self.points[:, ::-1]
        return observations

    def _live_code(self, games: np.ndarray | None) -> np.ndarray:
        """The rows of ``live_table`` for ``games`` (None: all)."""
        if games is None:
            phase, player, holding, mixup = self.phase, self.player, self.holding, self.mixup
        else:
            phase, player = self.phase[games], self.player[games]
            holding, mixup = self.holding[games], self.mixup[games]
        code = phase * 2
        code += player
        code *= MAX_APPLES + 1
        code += holding
        code *= NUM_CRATES + 1
        code += mixup
        code += 1
        return code

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, 2, 138)`` bool (a copy), all False off turn."""
        return self._mask.copy()

    def choosers(self) -> np.ndarray:
        """Both seats while placing in secret, else the player to act (none at the end)."""
        return self._choosers.copy()

    def scores(self) -> np.ndarray:
        """Every seat's points (``PickAndPackState.scores``): ``(B, 2)`` float64."""
        return self.points.copy()

    @property
    def view(self) -> np.ndarray:
        """The rules' ``view`` of every game (``layout.SOURCE``), put together from the
        images (each seat's tiles and crates from its own) and the points: ``(B, 654)``
        float32, a copy."""
        self._check_observed()
        view = np.zeros((self.num_envs, SOURCE.size), dtype=np.float32)
        for seat in range(2):
            index = self._gather[1, seat]  # a secret placement's: own tiles only
            shown = index < ZERO
            view[:, index[shown]] = self.images[:, seat, shown]
        view[:, POINTS : POINTS + 2] = self.points
        view[:, ONE] = 1.0
        return view

    def _check_observed(self) -> None:
        if not self.observed:
            raise ValueError("this engine does not keep its observations (observed=False)")

    def _rechoose(self, games: np.ndarray) -> None:
        """The choosers of ``games`` (ascending) from their phase and player."""
        if len(games) == self.num_envs:
            self._choosers[:] = self._choosing.take(self.phase * 2 + self.player, axis=0)
        else:
            code = self.phase[games] * 2 + self.player[games]
            self._choosers[games] = self._choosing.take(code, axis=0)

    # --- playing -----------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        every = len(games) == self.num_envs
        if every:
            self._mask.fill(False)
            phase = self.phase
        else:
            self._mask[games] = False
            phase = self.phase[games]
        placing = phase == PLACING
        count = int(np.count_nonzero(placing))
        if count == len(games):
            started = self._place_step(games, actions)
            pending: dict[int, Parts] = {MOVING: [(started, None)]} if len(started) else {}
        else:
            rows, started = games, None
            if count:
                started = self._place_step(games[placing], actions[placing])
                rows, actions = games[~placing], actions[~placing]
            chosen = actions.reshape(-1)[self._even[: len(rows)] + self.player[rows]]
            pending = self._group(rows, chosen)
            if started is not None and len(started):
                pending.setdefault(MOVING, []).append((started, None))
        if pending:
            self._advance(pending)
        self._rechoose(games)
        return (self.phase == OVER) if every else (self.phase[games] == OVER)

    def _place_step(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """One placement step in ``games`` (``PickAndPackState._apply`` while placing);
        return the games whose placement ended (their first turn begins)."""
        k = len(games)
        every = k == self.num_envs
        if self.simultaneous:
            seat_rows = self._seat_rows if every else (games[:, None] * 2 + (0, 1)).ravel()
            chosen = actions.reshape(-1)
        else:
            seat_rows = games * 2 + self.player[games]
            chosen = actions.reshape(-1)[self._even[:k] + self.player[games]]
        space, kind = np.divmod(chosen - PLACE, NUM_TYPES)
        self._put_tile(seat_rows, space, kind)
        free = self._free1[seat_rows]
        last = np.bitwise_count(free) == 1  # the last tile places itself
        if last.any():
            at = seat_rows[last]
            self._put_tile(at, lowest_bit(free[last]), lowest_bit(self._hand1[at]))
        if self.observed:  # how many tiles each seat has placed: both see it
            if every and self.simultaneous:
                placed = NUM_SPACES - np.bitwise_count(self.free)
                self.images[:, :, O_PLACED] = placed
                self.images[:, :, O_PLACED + 1] = placed[:, ::-1]
            else:
                placed = NUM_SPACES - np.bitwise_count(self._free1[seat_rows])
                self._flat[self._both(seat_rows, O_PLACED, PLACED_PAIR)] = placed[:, None]
        free = self.free if every else self.free[games]
        done = (free[:, 0] | free[:, 1]) == 0
        going = games.compress(~done)
        if len(going):
            if not self.simultaneous:
                self.player[going] ^= 1
            self._placement_masks(going)
        ended = games.compress(done)
        if len(ended):
            if self.simultaneous and self.observed:  # the tiles are shown: each seat's own
                rows = slice(None) if len(ended) == self.num_envs else ended
                images = self.images
                for start, size in ((O_TILE_TYPE, 72), (O_TILE_STATE, 36)):
                    own, shown = slice(start, start + size), slice(start + size, start + 2 * size)
                    images[rows, 0, shown] = images[rows, 1, own]
                    images[rows, 1, shown] = images[rows, 0, own]
            self._start_turn(ended, self.first_player[ended])
        return ended

    def _placement_masks(self, games: np.ndarray) -> None:
        """The masks of ``games`` (placing, ascending): the placements of the seats that
        choose."""
        if not self.simultaneous:
            seat_rows = games * 2 + self.player[games]
            free = FREE_PLACEMENTS.take(self._free1[seat_rows], axis=0)
            free &= HAND_PLACEMENTS.take(self._hand1[seat_rows], axis=0)
            self._mask2[seat_rows, PLACE:MOVE] = free
        elif len(games) == self.num_envs:  # 8 actions at a time, into buffers
            free, hand = self._placements
            FREE_WORDS.take(self.free, axis=0, out=free)
            free &= HAND_WORDS.take(self.hand, axis=0, out=hand)
            self._mask[:, :, PLACE:MOVE] = free.view(bool)
        else:
            free = FREE_PLACEMENTS.take(self.free[games], axis=0)
            free &= HAND_PLACEMENTS.take(self.hand[games], axis=0)
            self._mask[games, :, PLACE:MOVE] = free

    def _put_tile(self, seat_rows: np.ndarray, space: np.ndarray, kind: np.ndarray) -> None:
        """Seat ``seat_rows & 1`` of game ``seat_rows >> 1`` puts a tile of ``kind`` on
        ``space``."""
        self._type1[seat_rows * NUM_SPACES + space] = kind
        at = seat_rows * NUM_TYPES + kind
        hand = self._place1[at] - 1
        self._place1[at] = hand
        self._free1[seat_rows] &= ~(1 << space)
        self._hand1[seat_rows] &= ~((hand == 0) << kind)  # the last tile of its type
        if not self.observed:
            return
        type_at = O_TILE_TYPE + space * NUM_TYPES + kind
        state_at = O_TILE_STATE + space * NUM_STATUSES + UNPLAYED
        flat = self._flat
        if self.simultaneous:  # the opponent sees only how many (``_place_step``)
            own = seat_rows * OBS
            flat[own + type_at] = 1
            flat[own + state_at] = 1
        else:
            flat[self._both(seat_rows, type_at, TYPE_PAIR)] = 1
            flat[self._both(seat_rows, state_at, STATE_PAIR)] = 1

    def _group(self, games: np.ndarray, actions: np.ndarray) -> dict[int, Parts]:
        """``games`` and their actions by phase."""
        phase = self.phase[games]
        counts = np.bincount(phase, minlength=OVER + 1)
        kinds = np.flatnonzero(counts).tolist()
        if len(kinds) == 1:
            return {kinds[0]: [(games, actions)]}
        order = np.argsort(phase.astype(np.int8), kind="stable")  # (a radix sort)
        games, actions = games.take(order), actions.take(order)
        starts = np.cumsum(counts).tolist()
        pending: dict[int, Parts] = {}
        for kind in kinds:
            rows = slice(starts[kind - 1] if kind else 0, starts[kind])
            pending[kind] = [(games[rows], actions[rows])]
        return pending

    def _advance(self, pending: dict[int, Parts]) -> None:
        """Play the chosen decisions of the rows ``pending`` (by phase), then every
        decision with a single legal choice until a real choice or the end
        (``PickAndPackState._advance``), writing the masks of the rows that reach one.

        In passes: each visits the phases in the order a turn goes through them
        (``_ORDER``), each phase handing the rows it sends on to later ones, so that a
        row goes from its move to the end of its action in one pass; the actions done are
        finished together at the end of the pass, and the rows whose turn goes on (a Rush
        Order) or passes make the next pass."""
        while pending:
            finish: list[np.ndarray] = []
            end: list[np.ndarray] = []
            for kind in _ORDER:
                parts = pending.pop(kind, None)
                if parts is None:
                    continue
                rows_list = [rows for rows, actions in parts if actions is not None]
                actions_list = [actions for _, actions in parts if actions is not None]
                asked = [rows for rows, actions in parts if actions is None]
                if asked:
                    asked_rows = asked[0] if len(asked) == 1 else np.concatenate(asked)
                    rows, actions = self._ask(kind, asked_rows, finish)
                    rows_list.append(rows)
                    actions_list.append(actions)
                if len(rows_list) == 1:
                    rows, actions = rows_list[0], actions_list[0]
                else:
                    rows, actions = np.concatenate(rows_list), np.concatenate(actions_list)
                if len(rows):
                    for after, moved in self._resolve(kind, rows, actions, finish, end):
                        if len(moved):
                            pending.setdefault(after, []).append((moved, None))
            assert not pending, "a phase handed rows back to an earlier one"
            pending = self._finish(finish, end)

    def _ask(
        self, kind: int, games: np.ndarray, finish: list[np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The legal choices of ``games`` (just come to phase ``kind``): write the masks
        of those with a real choice; return those with one and its action. With none, the
        player to move is stuck (the game ends) or the action is spent (to ``finish``)."""
        seats = self.player[games]
        seat_rows = games * 2 + seats
        legal = self._choices(kind, games, seats, seat_rows)
        count = count_true(legal)
        many = count > 1
        real = int(np.count_nonzero(many))
        if real == len(games):
            self._write_mask(kind, seat_rows, legal)
            return games[:0], games[:0]
        if real:
            self._write_mask(kind, seat_rows.compress(many), legal.compress(many, axis=0))
        none = count == 0
        if none.any():
            stuck = games.compress(none)
            if kind == MOVING:
                self.phase[stuck] = OVER  # the player to move has no legal move
            else:
                finish.append(stuck)  # an action with no valid target is spent
        one = count == 1
        return games.compress(one), _OFFSET[kind] + legal.compress(one, axis=0).argmax(axis=1)

    def _write_mask(self, kind: int, seat_rows: np.ndarray, legal: np.ndarray) -> None:
        """Write the legal choices of seat rows in phase ``kind`` (``_choices``, all
        ``_WIDTH[kind]`` columns) into their masks (cleared this step)."""
        words = self._mask_words.get(kind)
        if words is None:
            self._mask2[seat_rows, _OFFSET[kind] : _OFFSET[kind] + legal.shape[1]] = legal
        else:
            words[seat_rows] = legal.view(words.dtype).ravel()

    # --- what the rules ask ------------------------------------------------------------
    def _open_with_trays(self, seat_rows: np.ndarray) -> np.ndarray:
        open_ = self._closure2.take(seat_rows, axis=0) == 0
        return open_ & (self._count2.take(seat_rows, axis=0) > 0)

    def _playable(self, games: np.ndarray, seat_rows: np.ndarray) -> np.ndarray:
        """Which of the seats' tile spaces hold an unplayed tile that may be activated
        now (``playable_ends`` over every space): ``(k, 12)``."""
        unplayed = self._status2.take(seat_rows, axis=0) == UNPLAYED
        if self.spent:
            return unplayed
        theirs = self._open_with_trays(seat_rows ^ 1).any(axis=1)
        mine = self._open_with_trays(seat_rows).any(axis=1)
        up = (self.frames[games, 0] == UP).any(axis=(1, 2))
        tiles = (self._status2.take(seat_rows ^ 1, axis=0) == UNPLAYED).any(axis=1)
        effect = np.ones((len(games), NUM_TYPES), dtype=bool)
        effect[:, QUALITY] = theirs
        effect[:, MIXUP] = theirs & mine
        effect[:, MALFUNCTION] = up | tiles
        kinds = self._type2.take(seat_rows, axis=0).astype(np.int64)
        return unplayed & np.take_along_axis(effect, kinds, axis=1)

    def _move_targets(
        self, games: np.ndarray, seats: np.ndarray, seat_rows: np.ndarray
    ) -> np.ndarray:
        """The lines the seats may move the grabber to (a face-up tray there, or an
        empty cell and a playable tile at an end of the line): ``(k, 8)`` bool, the last
        two False."""
        grabber = seats * NUM_CELLS + self.grabber[games]
        row = self._frame_words.take(seat_rows * SIZE + _FRAME_ROW.take(grabber))
        held = row.view(np.uint8).reshape(-1, 8)
        if self.spent:
            tile = self._line_tiles2.take(seat_rows, axis=0)
        else:
            playable = self._playable(games, seat_rows)
            tile = playable[:, LINE_SPACE] | playable[:, LINE_SPACE + SIZE]
        targets = ((held == UP) | ((held == EMPTY) & tile)).view(np.uint64).ravel()
        targets &= _BUT_LINE.take(_GRABBER_LINE.take(grabber))
        return targets.view(bool).reshape(-1, 8)

    def _choices(
        self, kind: int, games: np.ndarray, seats: np.ndarray, seat_rows: np.ndarray
    ) -> np.ndarray:
        """The legal actions of ``seats`` (to act) in ``games``, all in phase ``kind``
        (``PickAndPackState.choices``): ``(k, _WIDTH[kind])`` bool, C-contiguous, action
        ``_OFFSET[kind]`` on."""
        if kind == MOVING:
            return self._move_targets(games, seats, seat_rows)
        if kind == PLACE_TRAY:
            open_ = self._closure2.take(seat_rows, axis=0) == 0
            sizes = np.where(open_, self._count2.take(seat_rows, axis=0), MAX_STACK + 1)
            fewest = np.minimum(
                np.minimum(sizes[:, 0], sizes[:, 1]), np.minimum(sizes[:, 2], sizes[:, 3])
            )
            return open_ & (sizes == fewest[:, None])
        if kind == CHOOSE_END:
            line = _GRABBER_LINE.take(seats * NUM_CELLS + self.grabber[games])
            at = seat_rows * NUM_SPACES + line
            if self.spent:
                first = self._status1[at] == UNPLAYED
                second = self._status1[at + SIZE] == UNPLAYED
            else:
                playable = self._playable(games, seat_rows)
                index = np.arange(len(games))
                first, second = playable[index, line], playable[index, SIZE + line]
            same = self._type1[at] == self._type1[at + SIZE]
            ends = np.empty((len(games), 2), dtype=bool)  # (``np.stack``'s, cheaper)
            ends[:, 0] = first
            ends[:, 1] = second & ~(first & same)
            return ends
        if kind == PREMIUM_TARGET:
            return self._closure2.take(seat_rows, axis=0) == 0
        if kind == WHOLESALE_TARGET:
            return self._closure2.take(seat_rows ^ 1, axis=0) == 0
        if kind in (QUALITY_SOURCE, MIXUP_OPPONENT):
            return self._open_with_trays(seat_rows ^ 1)
        if kind == MIXUP_OWN:
            return self._open_with_trays(seat_rows)
        if kind == MALFUNCTION_TARGET:
            frames = self.frames.reshape(-1, SIZE, 8).take(seat_rows, axis=0)
            trays = (frames[:, :, :SIZE] == UP).reshape(-1, NUM_CELLS)
            tiles = self._status2.take(seat_rows ^ 1, axis=0) == UNPLAYED
            return np.concatenate([trays, tiles], axis=1)
        assert kind == RUSH_CHOICE
        return np.ones((len(games), 2), dtype=bool)

    # --- how the rules change the state -------------------------------------------------
    def _both(self, seat_rows: np.ndarray, at, pair: int) -> np.ndarray:
        """Where both seats of games ``seat_rows >> 1`` see entry ``at`` (one, or one per
        row) of the half of seat ``seat_rows & 1`` of a per-seat field (``pair``: the
        index of its ``seat_pair`` in ``PAIRS``), in ``_flat``: ``(k, 2)``."""
        where = self._pair_rows[pair].take(seat_rows, axis=0)
        where += at[:, None] if isinstance(at, np.ndarray) else at
        return where

    def _resolve(
        self,
        kind: int,
        games: np.ndarray,
        actions: np.ndarray,
        finish: list[np.ndarray],
        end: list[np.ndarray],
    ) -> list[tuple[int, np.ndarray]]:
        """One decision of the player to act in each of ``games``, all in phase ``kind``
        (``PickAndPackState._resolve``); the games whose action is done go to ``finish``,
        those whose turn ends to ``end``; return the rows sent on to later phases of the
        pass, as ``(phase, rows)``."""
        rows, chosen = games, actions
        seats = self.player[rows]
        seat_rows = rows * 2 + seats
        if kind == MOVING:
            tray = self._move(rows, seats, chosen - MOVE)
            self.phase[rows] = np.where(tray, PLACE_TRAY, CHOOSE_END)
            return [(CHOOSE_END, rows.compress(~tray)), (PLACE_TRAY, rows.compress(tray))]
        if kind == PLACE_TRAY:
            self._add_tray(seat_rows, chosen - OWN_CRATE, self.holding[rows])
            self.holding[rows] = 0
            finish.append(rows)
        elif kind == CHOOSE_END:
            line = _GRABBER_LINE.take(seats * NUM_CELLS + self.grabber[rows])
            return self._activate(rows, seat_rows, (chosen - END) * SIZE + line, finish)
        elif kind == PREMIUM_TARGET:
            self._close(seat_rows, chosen - OWN_CRATE, PREMIUM_CLOSED)
            finish.append(rows)
        elif kind == WHOLESALE_TARGET:
            self._close(seat_rows ^ 1, chosen - OPP_CRATE, WHOLESALE_CLOSED)
            finish.append(rows)
        elif kind == QUALITY_SOURCE:
            self.holding[rows] = self._take_top(seat_rows ^ 1, chosen - OPP_CRATE)
            self.phase[rows] = PLACE_TRAY
            return [(PLACE_TRAY, rows)]
        elif kind == MIXUP_OPPONENT:
            self.mixup[rows] = chosen - OPP_CRATE
            self.phase[rows] = MIXUP_OWN
            return [(MIXUP_OWN, rows)]
        elif kind == MIXUP_OWN:
            # Both top trays taken, then put back swapped: one call each for both seats
            # (their crates and the player's are distinct).
            both_seats = np.concatenate([seat_rows ^ 1, seat_rows])
            crates = np.concatenate([self.mixup[rows], chosen - OWN_CRATE])
            tops = self._take_top(both_seats, crates)
            self._add_tray(both_seats, crates, tops.reshape(2, -1)[::-1].ravel())
            self.mixup[rows] = -1
            finish.append(rows)
        elif kind == MALFUNCTION_TARGET:
            tray = chosen < TILE
            cells = FRAME[seats[tray], chosen[tray] - TRAY]
            flipped = rows[tray]
            self.face_down[flipped, cells] = True
            self._frames1[(flipped * FRAMES)[:, None] + FRAME_AT.take(cells, axis=0)] = DOWN
            if self.observed:
                at = (flipped * GAME)[:, None] + GRID_PAIR.take(cells, axis=0)
                self._flat[at + O_TRAYS] = 0
                self._flat[at + O_FACE_DOWN] = 1
            tile = ~tray
            self._play_tile(seat_rows[tile] ^ 1, chosen[tile] - TILE, FLIPPED)
            finish.append(rows)
        else:
            assert kind == RUSH_CHOICE
            use = chosen == RUSH_USE
            used, who = rows[use], seat_rows[use]
            self._ready1[who] -= 1
            if self.observed:
                self._flat[self._both(who, O_RUSH, RUSH_PAIR)] = self._ready1[who][:, None]
            self.rushes[used] += 1
            self.phase[used] = MOVING
            end.append(rows[~use])
            return [(MOVING, used)]
        return []

    def _move(self, games: np.ndarray, seats: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """Move the grabber (onto a face-up tray, taken, or an empty cell); return which
        of ``games`` took a tray."""
        old = self.grabber[games]
        cells = LINE_CELL.reshape(-1)[(seats * NUM_CELLS + old) * SIZE + lines]
        self.grabber[games] = cells
        if self.observed:
            flat, first = self._flat, (games * GAME)[:, None]
            flat[first + GRID_PAIR.take(old, axis=0) + O_GRABBER] = 0
            at = first + GRID_PAIR.take(cells, axis=0)
            flat[at + O_GRABBER] = 1
            flat[at + O_TRAYS] = 0
        at = games * NUM_CELLS + cells
        apples = self._apples1[at]
        self._apples1[at] = 0
        self._frames1[(games * FRAMES)[:, None] + FRAME_AT.take(cells, axis=0)] = EMPTY
        self.holding[games] = apples
        return apples > 0

    def _activate(
        self,
        games: np.ndarray,
        seat_rows: np.ndarray,
        spaces: np.ndarray,
        finish: list[np.ndarray],
    ) -> list[tuple[int, np.ndarray]]:
        """Activate the tiles: the rows whose action is done go to ``finish``; return the
        others by the phase of their target."""
        kinds = self._type1[seat_rows * NUM_SPACES + spaces]
        self._play_tile(seat_rows, spaces, USED)
        spent = kinds == RUSH
        rush = seat_rows.compress(spent)
        if len(rush):
            self._new1[rush] += 1
            if self.observed:
                self._flat[self._both(rush, O_RUSH + 1, RUSH_PAIR)] = self._new1[rush][:, None]
        mixup = np.flatnonzero(kinds == MIXUP)
        if len(mixup):  # no pair of top trays to swap: spent
            who = seat_rows[mixup]
            theirs = self._open_with_trays(who ^ 1).view(np.uint32).ravel() != 0
            mine = self._open_with_trays(who).view(np.uint32).ravel() != 0
            spent[mixup[~(theirs & mine)]] = True
        finish.append(games.compress(spent))
        targeted = ~spent
        games, targets = games.compress(targeted), TARGET_OF.take(kinds.compress(targeted))
        self.phase[games] = targets
        kinds = np.flatnonzero(np.bincount(targets)).tolist()
        return [(kind, games.compress(targets == kind)) for kind in kinds]

    def _play_tile(self, seat_rows: np.ndarray, spaces: np.ndarray, status: int) -> None:
        self._status1[seat_rows * NUM_SPACES + spaces] = status
        line = spaces % SIZE
        at = seat_rows * NUM_SPACES + line
        unplayed = (self._status1[at] == UNPLAYED) | (self._status1[at + SIZE] == UNPLAYED)
        self._line_tiles1[seat_rows * 8 + line] = unplayed
        if self.observed:
            at = self._both(seat_rows, O_TILE_STATE + spaces * NUM_STATUSES, STATE_PAIR)
            self._flat[at + UNPLAYED] = 0
            self._flat[at + status] = 1

    def _close(self, seat_rows: np.ndarray, crates: np.ndarray, closure: int) -> None:
        """Close open crates."""
        at = seat_rows * NUM_CRATES + crates
        self._closure1[at] = closure
        apples = self._crate_apples1[at]  # 1 point an apple while open
        self._points1[seat_rows] += apples if closure == PREMIUM_CLOSED else apples // 2 - apples
        if self.observed:
            at = O_CLOSURE + crates * 2 + closure - 1
            self._flat[self._both(seat_rows, at, CLOSURE_PAIR)] = 1
        self._closed1[seat_rows] += 1
        self.all_closed[seat_rows[self._closed1[seat_rows] == NUM_CRATES] >> 1] = True

    def _add_tray(self, seat_rows: np.ndarray, crates: np.ndarray, apples: np.ndarray) -> None:
        """Put trays of ``apples`` on open crates."""
        at = seat_rows * NUM_CRATES + crates
        size = self._count1[at]
        self._count1[at] = size + 1
        self._crate_apples1[at] += apples
        self._points1[seat_rows] += apples  # 1 point an apple while open
        flat = self._flat
        stack = O_STACK + crates * MAX_STACK + size
        if not self.observed:  # the seat's own stack only (``_take_top`` reads it)
            flat[seat_rows * OBS + stack] = apples
            return
        at = self._both(seat_rows, crates, CRATE_PAIR)
        flat[at + O_COUNT] = (size + 1)[:, None]
        flat[at + O_TOP] = apples[:, None]
        if self.full_crates:
            flat[self._both(seat_rows, stack, STACK_PAIR)] = apples[:, None]
        else:  # only the seat's own
            flat[seat_rows * OBS + stack] = apples

    def _take_top(self, seat_rows: np.ndarray, crates: np.ndarray) -> np.ndarray:
        """Take the top trays of open crates; return their apples."""
        at = seat_rows * NUM_CRATES + crates
        size = self._count1[at] - 1
        self._count1[at] = size
        flat = self._flat
        stack = O_STACK + crates * MAX_STACK + size
        own = seat_rows * OBS + stack
        apples = flat[own].astype(np.int64)
        self._crate_apples1[at] -= apples
        self._points1[seat_rows] -= apples
        if not self.observed:  # (the tray left above the top is never read)
            return apples
        below = np.where(size > 0, flat[own - 1], 0)
        if self.full_crates:
            flat[self._both(seat_rows, stack, STACK_PAIR)] = 0
        else:
            flat[own] = 0
        at = self._both(seat_rows, crates, CRATE_PAIR)
        flat[at + O_COUNT] = size[:, None]
        flat[at + O_TOP] = below[:, None]
        return apples

    def _finish(self, finish: list[np.ndarray], ending: list[np.ndarray]) -> dict[int, Parts]:
        """A move and its action are done in the rows ``finish``: the game may end, else
        an extra move may follow (``_finish_action``); the turn ends in ``ending`` too.
        Return the rows that go on, by phase: a Rush Order offered, or the next player
        to move."""
        ending = [rows for rows in ending if len(rows)]
        pending: dict[int, Parts] = {}
        games = np.concatenate(finish) if len(finish) > 1 else (finish[0] if finish else None)
        if games is not None and len(games):
            closed = self.all_closed[games]
            if closed.any():
                self.phase[games.compress(closed)] = OVER  # a player has all four crates closed
                games = games.compress(~closed)
            seats = self.player[games]
            seat_rows = games * 2 + seats
            may_rush = self._ready1[seat_rows] > 0
            if not self.chain:
                may_rush &= self.rushes[games] == 0
            at = np.flatnonzero(may_rush)
            if len(at):
                targets = self._move_targets(games[at], seats[at], seat_rows[at])
                may_rush[at] = targets.view(np.uint64).ravel() != 0
                rushing = games.compress(may_rush)
                if len(rushing):
                    self.phase[rushing] = RUSH_CHOICE
                    pending[RUSH_CHOICE] = [(rushing, None)]
                    games = games.compress(~may_rush)
            ending.append(games)
        if ending:
            games = ending[0] if len(ending) == 1 else np.concatenate(ending)
            if len(games):
                self._end_turn(games)
                pending[MOVING] = [(games, None)]
        return pending

    def _end_turn(self, games: np.ndarray) -> None:
        seats = self.player[games]
        seat_rows = games * 2 + seats
        new = self._new1[seat_rows]
        taken = np.flatnonzero(new)
        if len(taken):  # taken this turn: usable from the next
            who = seat_rows[taken]
            self._ready1[who] += new[taken]
            self._new1[who] = 0
            if self.observed:
                at = self._both(who, O_RUSH, RUSH_PAIR)
                self._flat[at] = self._ready1[who][:, None]
                self._flat[at + 1] = 0
        self._start_turn(games, seats ^ 1)

    def _start_turn(self, games: np.ndarray, players: np.ndarray) -> None:
        self.player[games] = players
        self.rushes[games] = 0
        self.phase[games] = MOVING
