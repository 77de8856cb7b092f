"""Pick & Pack rules: pure, seeded, no RL imports. See the package docstring for the rules.

Coordinates: the grid is ``apples[row, col]``. Red (seat 0) moves the grabber along its
row, choosing a column; red's tiles sit at the two ends of the columns. Blue (seat 1)
moves along its column, choosing a row; blue's tiles sit at the two ends of the rows.
A player's *line* is what they choose when moving (red: a column, blue: a row), and
their *frame* is the grid seen with their lines as columns (red: ``(row, col)``,
blue: ``(col, row)``). A tile space is ``end * 6 + line`` (end 0: top / left, end 1:
bottom / right).

The state keeps ``view``, its observation buffer (laid out as ``layout.SOURCE``): every
change of the grid, the tiles and the crates is written into it as it is made, so that
``PickAndPackGame.observation`` is one gather from it (``layout.gather_index``) and a
few entries written in. ``observation.encode`` is the plain reference encoder.

For the search agents, which play thousands of random moves per decision, the state
also keeps its move targets as bits (``trays_up``, ``empty``, ``tile_lines``: a move's
choices are a few integer operations), plays random rollouts without masks
(``random_play_out``) and lists legal actions without them (``legal_actions``); a
determinisation makes its generator only if asked for (nothing is drawn after the deal).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, not_allowed, require_choice
from envs.pick_and_pack.layout import (
    CRATE_CLOSURE,
    CRATE_COUNT,
    CRATE_STACK,
    CRATE_TOP,
    FACE_DOWN,
    GRABBER_CELL,
    HOLDING,
    MAX_STACK,
    MIXUP_CRATE,
    NUM_CELLS,
    NUM_CLOSURES,
    NUM_CRATES,
    NUM_PHASES,
    NUM_SPACES,
    NUM_STATUSES,
    NUM_TYPES,
    PHASE,
    POINTS,
    RUSH_ORDERS,
    SIZE,
    SOURCE,
    TILE_STATE,
    TILE_TYPE,
    TILES_PLACED,
    TO_ACT,
    TRAYS,
    gather_index,
    observation_layout,
)

RED, BLUE = 0, 1
#: Each seat alone, as ``to_act()`` names it.
SEATS = ((RED,), (BLUE,))
COLORS = ("red", "blue")

#: Action tile types (two of each per player).
PREMIUM, WHOLESALE, RUSH, QUALITY, MIXUP, MALFUNCTION = range(NUM_TYPES)
TYPE_NAMES = (
    "Premium",
    "Wholesale",
    "Rush Order",
    "Quality Control",
    "Order Mix-up",
    "Malfunction",
)
TYPE_LETTERS = "PWRQXM"
#: Status of a placed tile.
UNPLAYED, USED, FLIPPED = range(NUM_STATUSES)
#: Crate closure (the observation's one-hot leaves out ``OPEN``).
OPEN, PREMIUM_CLOSED, WHOLESALE_CLOSED = range(1 + NUM_CLOSURES)

#: Default trays per apple count 1-6 [decision: seven each of 1-5, one 6].
DEFAULT_TRAY_COUNTS: tuple[int, ...] = (7, 7, 7, 7, 7, 1)

# The flat action space: one range per kind of choice.
PLACE = 0  # + space * NUM_TYPES + type: put a tile of that type on that space
MOVE = PLACE + NUM_SPACES * NUM_TYPES  # + line: move the grabber along your axis
OWN_CRATE = MOVE + SIZE  # + crate: one of your crates
OPP_CRATE = OWN_CRATE + NUM_CRATES  # + crate: one of the opponent's crates
END = OPP_CRATE + NUM_CRATES  # + end: activate the tile at that end of the line
TRAY = END + 2  # + i * SIZE + j in your frame: Malfunction a grid tray
TILE = TRAY + NUM_CELLS  # + space: Malfunction an opponent tile
RUSH_USE = TILE + NUM_SPACES  # flip a Rush Order for an extra move
RUSH_DECLINE = RUSH_USE + 1  # keep your Rush Orders, end the turn
NUM_ACTIONS = RUSH_DECLINE + 1

# Phases: the sub-steps a player can be asked in, then OVER (terminal).
(
    PLACING,
    MOVING,
    PLACE_TRAY,
    CHOOSE_END,
    PREMIUM_TARGET,
    WHOLESALE_TARGET,
    QUALITY_SOURCE,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MALFUNCTION_TARGET,
    RUSH_CHOICE,
) = range(NUM_PHASES)
OVER = NUM_PHASES
PHASE_NAMES = (
    "place tiles",
    "move the grabber",
    "choose a crate for the tray",
    "choose which end's tile to activate",
    "Premium: choose your crate",
    "Wholesale: choose an opponent crate",
    "Quality Control: choose an opponent crate",
    "Order Mix-up: choose an opponent crate",
    "Order Mix-up: choose your crate",
    "Malfunction: choose a tray or an opponent tile",
    "use a Rush Order?",
    "game over",
)

PLACEMENTS = ("simultaneous", "alternate", "random")
OPPONENT_CRATES = ("visible", "full")
TARGETLESS = ("spent", "unplayable")


@dataclass(frozen=True)
class PickAndPackConfig(Config):
    """Options; see the package docstring."""

    num_players: int = 2
    tray_counts: Sequence[int] = DEFAULT_TRAY_COUNTS
    placement: str = "simultaneous"
    opponent_crates: str = "visible"
    chain_rush_orders: bool = True
    targetless_actions: str = "spent"

    def validate(self) -> None:
        require_choice("num_players", self.num_players, (2,))
        require_choice("placement", self.placement, PLACEMENTS)
        require_choice("opponent_crates", self.opponent_crates, OPPONENT_CRATES)
        require_choice("targetless_actions", self.targetless_actions, TARGETLESS)
        require_choice("chain_rush_orders", self.chain_rush_orders, (True, False))
        counts = self.tray_counts
        ok = (
            isinstance(counts, Sequence)
            and not isinstance(counts, str)
            and len(counts) == 6
            and all(
                isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c >= 0
                for c in counts
            )
        )
        if not ok or sum(counts) != NUM_CELLS or counts[5] != 1:
            raise not_allowed(
                "tray_counts",
                counts,
                f"six non-negative integers (trays with 1..6 apples) summing to {NUM_CELLS}, "
                f"with exactly one 6 (the grabber starts on it), e.g. {DEFAULT_TRAY_COUNTS}",
            )


def crate_value(apples: int, closure: int) -> int:
    """Points of a crate: open 1 per apple, Premium 2 per apple, Wholesale half, rounded down."""
    if closure == PREMIUM_CLOSED:
        return 2 * apples
    if closure == WHOLESALE_CLOSED:
        return apples // 2
    return apples


def points(apples: Sequence[int], closures: Sequence[int]) -> int:
    """Points of a seat's crates, from their apples and closures: ``crate_value`` of each,
    inlined."""
    if not any(closures):  # all open: 1 per apple
        return sum(apples)
    total = 0
    for a, closure in zip(apples, closures, strict=False):
        total += a if closure == OPEN else (2 * a if closure == PREMIUM_CLOSED else a // 2)
    return total


#: The phase that asks for the target of each tile type (Rush Order needs none).
TARGET_PHASE = {
    PREMIUM: PREMIUM_TARGET,
    WHOLESALE: WHOLESALE_TARGET,
    QUALITY: QUALITY_SOURCE,
    MIXUP: MIXUP_OPPONENT,
    MALFUNCTION: MALFUNCTION_TARGET,
}


def to_frame(player: int, row: int, col: int) -> tuple[int, int]:
    """A grid cell in ``player``'s frame (their lines are the columns); its own inverse."""
    return (row, col) if player == RED else (col, row)


#: The lines whose bits are set in a 6-bit set of lines, and their move actions.
ALL_LINES = (1 << SIZE) - 1
LINES_OF_BITS = tuple(tuple(line for line in range(SIZE) if bits >> line & 1) for bits in range(64))
MOVES_OF_BITS = tuple(tuple(MOVE + line for line in lines) for lines in LINES_OF_BITS)


def frame_bits(cells: np.ndarray) -> tuple[int, int]:
    """The grid cells where ``cells`` (``(6, 6)`` bool) is True as bits of each player's
    frame: bit ``6 * i + line`` for the cell at ``(i, line)`` of the frame."""
    weights = 1 << np.arange(NUM_CELLS, dtype=np.int64)
    return int(cells.ravel() @ weights), int(cells.T.ravel() @ weights)


def fresh_view(state: PickAndPackState) -> np.ndarray:
    """``state``'s ``view`` (``layout.SOURCE``) computed from scratch (the rules keep it up
    to date move by move)."""
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


class PickAndPackState(State):
    game: PickAndPackGame

    def __init__(self, game: PickAndPackGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        trays = np.repeat(np.arange(1, 7, dtype=np.int8), game.tray_counts)
        rng.shuffle(trays)
        #: Apples on the tray of each grid cell (face up or down); 0 once claimed.
        self.apples = trays.reshape(SIZE, SIZE)
        self.face_down = np.zeros((SIZE, SIZE), dtype=bool)
        six = int(np.flatnonzero(trays == 6)[0])
        self.grabber = (six // SIZE, six % SIZE)
        #: Tile type on each space (-1: not placed yet) and its status.
        self.tile_type = np.full((2, NUM_SPACES), -1, dtype=np.int8)
        self.tile_status = np.zeros((2, NUM_SPACES), dtype=np.int8)
        self.to_place = np.full((2, NUM_TYPES), 2, dtype=np.int8)  # tiles left to place
        #: Each crate's trays, bottom to top, the apples in it (kept up to date with every
        #: tray that comes or goes, so scoring is cheap) and its closure.
        self.crates: list[list[list[int]]] = [[[] for _ in range(NUM_CRATES)] for _ in range(2)]
        self.crate_apples = [[0] * NUM_CRATES for _ in range(2)]
        self.closure = [[OPEN] * NUM_CRATES for _ in range(2)]
        #: Rush Orders usable now, and those taken this turn (usable from the next turn).
        self.rush_ready = [0, 0]
        self.rush_new = [0, 0]
        self.rushes_this_turn = 0
        self.first_player = int(rng.integers(2))
        self.player = self.first_player  # whose turn (or whose placement, alternating)
        self.holding = 0  # apples of the tray waiting for a crate (PLACE_TRAY)
        self.mixup_crate = -1  # opponent crate chosen for an Order Mix-up
        self.phase = PLACING
        if game.config.placement == "random":
            for p in range(2):
                types = np.repeat(np.arange(NUM_TYPES, dtype=np.int8), 2)
                rng.shuffle(types)
                self.tile_type[p] = types
            self.to_place[:] = 0
        #: Per seat, the mask of its placement actions (``placements()``), kept by
        #: ``_put_tile``.
        self.placeable = self.placements()
        #: What the move targets are worked out from, kept by ``_move``, ``_flip_tray``
        #: and ``_play_tile`` (``count_bits`` works them out afresh): per seat, the cells
        #: holding a face-up tray and the empty cells, as bits of its frame
        #: (``frame_bits``), and the lines with one of its unplayed tiles at an end, as
        #: bits of lines.
        self.trays_up, self.empty, self.tile_lines = self.count_bits()
        #: The grid, tiles, crates, scores and Rush Orders as the observation shows them
        #: (``layout.SOURCE``): every change below writes into it too.
        self.view = fresh_view(self)
        if game.config.placement == "random":
            self._start_turn(self.first_player)
        #: ``to_act()`` and the legal actions of the player to act outside placement
        #: (``choices()``), worked out once per state by ``_advance``; ``refresh`` redoes
        #: them and ``view`` after changing the state by hand.
        self.choosers: tuple[int, ...] = ()
        self.legal_choices: list[int] = []
        self._advance()

    # --- queries ---------------------------------------------------------------------
    def cell_on_line(self, player: int, line: int) -> tuple[int, int]:
        """The grid cell ``player`` reaches by moving the grabber to ``line``."""
        row, col = self.grabber
        return (row, line) if player == RED else (line, col)

    def grabber_line(self, player: int) -> int:
        return self.grabber[1] if player == RED else self.grabber[0]

    def count_bits(self) -> tuple[list[int], list[int], list[int]]:
        """``trays_up``, ``empty`` and ``tile_lines`` worked out afresh."""
        unplayed = self.tile_status == UNPLAYED
        on_lines = (unplayed[:, :SIZE] | unplayed[:, SIZE:]) @ (1 << np.arange(SIZE))
        return (
            list(frame_bits((self.apples > 0) & ~self.face_down)),
            list(frame_bits(self.apples == 0)),
            on_lines.tolist(),
        )

    def open_crates(self, player: int, with_trays: bool = False) -> list[int]:
        closure, crates = self.closure[player], self.crates[player]
        return [
            k for k in range(NUM_CRATES) if closure[k] == OPEN and (crates[k] or not with_trays)
        ]

    def fewest_open(self, player: int) -> list[int]:
        """``player``'s open crates holding the fewest trays."""
        closure, crates = self.closure[player], self.crates[player]
        fewest: list[int] = []
        least = NUM_CELLS + 1
        for k in range(NUM_CRATES):
            if closure[k] == OPEN:
                size = len(crates[k])
                if size < least:
                    fewest, least = [k], size
                elif size == least:
                    fewest.append(k)
        return fewest

    def has_effect(self, player: int, kind: int) -> bool:
        """Whether a tile of ``kind`` activated by ``player`` now would have a target."""
        opponent = 1 - player
        if kind == QUALITY:
            return bool(self.open_crates(opponent, with_trays=True))
        if kind == MIXUP:
            return bool(
                self.open_crates(opponent, with_trays=True)
                and self.open_crates(player, with_trays=True)
            )
        if kind == MALFUNCTION:
            return bool(self.trays_up[RED] or (self.tile_status[opponent] == UNPLAYED).any())
        return True  # Premium, Wholesale: the game ends before a side has no open crate

    def playable_ends(self, player: int, line: int) -> list[int]:
        """Ends of ``line`` holding one of ``player``'s unplayed tiles that may be activated.
        (Moves come after placement, so every space holds a tile.)"""
        status_of, spent = self.tile_status.item, self.game.targetless_spent
        ends = []
        for end in (0, 1):
            space = end * SIZE + line
            if status_of(player, space) != UNPLAYED:
                continue
            if spent or self.has_effect(player, self.tile_type.item(player, space)):
                ends.append(end)
        return ends

    def move_targets(self, player: int) -> list[int]:
        """Lines ``player`` may move the grabber to: another space of their axis holding a
        face-up tray, or empty with a playable tile at either end of that line."""
        return list(LINES_OF_BITS[self.move_bits(player)])

    def move_bits(self, player: int) -> int:
        """``move_targets`` as bits of lines, from the bits the state keeps."""
        row, col = self.grabber
        frame_row, current = (row, col) if player == RED else (col, row)
        shift = SIZE * frame_row
        # An empty space needs an unplayed tile at an end (that may be activated, if it
        # matters).
        with_tile = self.empty[player] >> shift & self.tile_lines[player]
        if with_tile and not self.game.targetless_spent:
            for line in LINES_OF_BITS[with_tile]:
                if not self.playable_ends(player, line):
                    with_tile ^= 1 << line
        return ((self.trays_up[player] >> shift) | with_tile) & ALL_LINES & ~(1 << current)

    def choices(self) -> list[int]:
        """The legal actions of the player to act, outside tile placement."""
        player, opponent, phase = self.player, 1 - self.player, self.phase
        if phase == MOVING:
            return list(MOVES_OF_BITS[self.move_bits(player)])
        if phase == PLACE_TRAY:
            return [OWN_CRATE + k for k in self.fewest_open(player)]
        if phase == CHOOSE_END:
            line = self.grabber[1] if player == RED else self.grabber[0]
            ends = self.playable_ends(player, line)
            if len(ends) == 2:
                type_of = self.tile_type.item
                if type_of(player, line) == type_of(player, SIZE + line):
                    return [END]  # the same tile either way: the first end's
                return [END, END + 1]
            return [END + e for e in ends]
        if phase == PREMIUM_TARGET:
            return [OWN_CRATE + k for k in self.open_crates(player)]
        if phase == WHOLESALE_TARGET:
            return [OPP_CRATE + k for k in self.open_crates(opponent)]
        if phase in (QUALITY_SOURCE, MIXUP_OPPONENT):
            return [OPP_CRATE + k for k in self.open_crates(opponent, with_trays=True)]
        if phase == MIXUP_OWN:
            return [OWN_CRATE + k for k in self.open_crates(player, with_trays=True)]
        if phase == MALFUNCTION_TARGET:
            up = (self.apples > 0) & ~self.face_down
            frame = up if player == RED else up.T  # tray actions are in the player's frame
            trays = (TRAY + np.flatnonzero(frame)).tolist()
            tiles = np.flatnonzero(self.tile_status[opponent] == UNPLAYED)
            return trays + (TILE + tiles).tolist()
        if phase == RUSH_CHOICE:
            return [RUSH_USE, RUSH_DECLINE]
        return []

    def placements(self) -> np.ndarray:
        """Each seat's mask of placement actions, worked out afresh: an empty space times
        a type still in hand."""
        masks = np.zeros((2, NUM_ACTIONS), dtype=bool)
        for player in (RED, BLUE):
            self._placements_of(player, masks[player])
        return masks

    def _placements_of(self, player: int, mask: np.ndarray) -> None:
        """Write ``player``'s placement actions into ``mask`` (its other actions stay)."""
        free, hand = self.tile_type[player] < 0, self.to_place[player] > 0
        np.logical_and.outer(free, hand, out=mask[PLACE:MOVE].reshape(NUM_SPACES, -1))

    def current_choosers(self) -> tuple[int, ...]:
        """The players to act, worked out from the phase (``to_act`` reads it kept)."""
        if self.phase == OVER:
            return ()
        if self.phase == PLACING and self.game.simultaneous:
            return (RED, BLUE)
        return (self.player,)

    # --- the State interface -----------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        return self.choosers

    def legal_mask(self, player: int) -> np.ndarray:
        if self.phase == PLACING and player in self.choosers:
            return self.placeable[player].copy()
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if self.phase != PLACING and player == self.player:  # none at the end
            for action in self.legal_choices:  # a few: cheaper one by one than as an index
                mask[action] = True
        return mask

    def legal_actions(self, player: int) -> list[int]:
        """``legal_mask``'s actions, ascending, without the mask."""
        if self.phase == PLACING:
            if player in self.choosers:
                return self.placeable[player].nonzero()[0].tolist()
            return []
        return list(self.legal_choices) if player == self.player else []  # none at the end

    def _apply(self, joint: Mapping[int, int]) -> None:
        if self.phase == PLACING:
            for player, action in joint.items():
                self._place(player, action - PLACE)
            if not any(self.to_place.ravel().tolist()):
                self._start_turn(self.first_player)
            elif not self.game.simultaneous:
                self.player = 1 - self.player
            self._advance()
            return
        self._resolve(joint[self.player])
        self._advance()

    def scores(self) -> np.ndarray:
        return self.view[POINTS : POINTS + 2].astype(np.float64)  # kept with the crates

    def random_play_out(self, rng: np.random.Generator) -> np.ndarray:
        """``State.random_play_out`` without building masks: the same game and the same
        draws from ``rng``."""
        integers = rng.integers
        while self.phase != OVER:
            if self.phase == PLACING:
                joint = {}
                for player in self.choosers:  # both pick from the same state
                    legal = self.placeable[player].nonzero()[0]
                    joint[player] = int(legal[integers(len(legal))])
                self._apply(joint)
            else:
                legal = self.legal_choices  # ascending, as the mask's
                self._resolve(legal[integers(len(legal))])
                self._advance()
        return self.scores()

    def score(self, player: int) -> int:
        """``player``'s points."""
        return int(self.view[POINTS + player])

    def refresh(self) -> None:
        """Redo what the rules keep up to date (``view``, ``placeable``, the bits of the
        move targets, ``choosers``, ``legal_choices``) after changing the state by hand."""
        self.view = fresh_view(self)
        self.placeable = self.placements()
        self.trays_up, self.empty, self.tile_lines = self.count_bits()
        self.choosers = self.current_choosers()
        self.legal_choices = self.choices()

    @property
    def rng(self) -> np.random.Generator:
        """The state's generator. Pick & Pack draws only at the deal, so a determinisation
        (``resample``) keeps the seed of its own and makes the generator only if asked."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def clone(self) -> PickAndPackState:
        if self._rng is None:  # a determinisation's generator not made yet: the same seed
            return self._copy(None)
        return self._copy(copy.deepcopy(self._rng))

    def _copy(self, rng: np.random.Generator | None) -> PickAndPackState:
        """A deep copy with ``rng`` (None: made from ``_rng_seed`` when asked for) that
        shares the (immutable) game: cheaper than deepcopy."""
        other = object.__new__(type(self))  # (``copy.copy``, without its dispatch)
        other.__dict__.update(self.__dict__)
        other.rng = rng
        other.apples, other.face_down = self.apples.copy(), self.face_down.copy()
        other.tile_type, other.tile_status = self.tile_type.copy(), self.tile_status.copy()
        other.to_place, other.placeable = self.to_place.copy(), self.placeable.copy()
        other.view = self.view.copy()
        other.crates = [[list(stack) for stack in seat] for seat in self.crates]
        other.crate_apples = [list(seat) for seat in self.crate_apples]
        other.closure = [list(seat) for seat in self.closure]
        other.legal_choices = list(self.legal_choices)
        other.trays_up, other.empty = list(self.trays_up), list(self.empty)
        other.tile_lines = list(self.tile_lines)
        other.rush_ready, other.rush_new = list(self.rush_ready), list(self.rush_new)
        return other

    def resample(self, player: int, rng: np.random.Generator) -> PickAndPackState:
        """A determinisation for ``player``. Every grab, flip and activation is public, so
        only a secret placement under way hides anything: the opponent's arrangement so far
        (as many tiles as they have placed, of random types on random spaces) and the first
        player (drawn, but announced only when placement ends) are drawn again."""
        sample = self._copy(None)
        sample._rng_seed = rng.integers(2**63)  # for ``rng``, if ever asked for
        if self.placement_hidden():
            opponent = 1 - player
            placed = NUM_SPACES - int((self.tile_type[opponent] < 0).sum())
            tiles = np.repeat(np.arange(NUM_TYPES, dtype=np.int8), 2)
            rng.shuffle(tiles)
            spaces = rng.permutation(NUM_SPACES)[:placed]
            sample.tile_type[opponent] = -1
            sample.tile_type[opponent, spaces] = tiles[:placed]
            sample.to_place[opponent] = np.bincount(tiles[placed:], minlength=NUM_TYPES)
            sample.first_player = sample.player = int(rng.integers(2))
            sample._retile(opponent)
        return sample

    def _retile(self, player: int) -> None:
        """Redo what ``refresh`` would after ``player``'s tiles and tiles to place were
        changed by hand during a secret placement (nothing else was): their entries in
        ``view`` and their placement mask."""
        kinds = self.tile_type[player]
        spaces = np.flatnonzero(kinds >= 0)
        start = TILE_TYPE + player * NUM_SPACES * NUM_TYPES
        types = self.view[start : start + NUM_SPACES * NUM_TYPES].reshape(NUM_SPACES, -1)
        types[:] = 0
        types[spaces, kinds[spaces]] = 1
        start = TILE_STATE + player * NUM_SPACES * NUM_STATUSES
        status = self.view[start : start + NUM_SPACES * NUM_STATUSES].reshape(NUM_SPACES, -1)
        status[:] = 0
        status[spaces, UNPLAYED] = 1  # (unplayed while placing)
        self.placeable[player] = False
        self._placements_of(player, self.placeable[player])

    def position(self) -> tuple:
        """The whole position as plain values: everything but the RNG and the game."""
        return (
            self.apples.tolist(),
            self.face_down.tolist(),
            self.grabber,
            self.tile_type.tolist(),
            self.tile_status.tolist(),
            self.to_place.tolist(),
            self.crates,
            [list(seat) for seat in self.closure],
            self.rush_ready,
            self.rush_new,
            self.rushes_this_turn,
            self.first_player,
            self.player,
            self.holding,
            self.mixup_crate,
            self.phase,
        )

    def check_invariants(self) -> None:
        phase = self.phase
        # Every tray is in exactly one place: the grid (face up or down), a crate, or in hand.
        trays = [0] * 7
        assert ((self.apples >= 0) & (self.apples <= 6)).all(), "a grid tray of 7+ apples"
        for apples in self.apples.ravel().tolist():
            trays[apples] += 1
        for p in range(2):
            for k, stack in enumerate(self.crates[p]):
                assert all(1 <= a <= 6 for a in stack), f"seat {p} crate {k} holds {stack}"
                for apples in stack:
                    trays[apples] += 1
                assert self.crate_apples[p][k] == sum(stack), (
                    f"seat {p} crate {k}: {self.crate_apples[p][k]} apples counted, "
                    f"{sum(stack)} in {stack}"
                )
        trays[self.holding] += self.holding > 0
        assert tuple(trays[1:]) == self.game.tray_counts, (
            f"trays by apples 1-6 are {trays[1:]}, the game has {self.game.tray_counts}"
        )
        assert (self.holding > 0) == (phase == PLACE_TRAY), "a tray in hand outside PLACE_TRAY"
        assert not (self.face_down & (self.apples == 0)).any(), "a face-down cell without a tray"
        # Scores recomputed from the crates.
        expected = [
            sum(
                crate_value(sum(s), int(c))
                for s, c in zip(self.crates[p], self.closure[p], strict=True)
            )
            for p in range(2)
        ]
        assert self.scores().tolist() == expected, f"scores {self.scores()} != {expected}"
        each = [self.score(p) for p in range(2)]
        assert each == expected, f"score of each seat {each} != {expected}"
        # Tiles: each player's placed tiles and those still to place are two of each type.
        for p in range(2):
            kinds, status = self.tile_type[p], self.tile_status[p]
            placed = np.bincount(kinds[kinds >= 0], minlength=NUM_TYPES)
            assert (placed + self.to_place[p] == 2).all(), f"seat {p} tiles: {kinds.tolist()}"
            assert ((status >= UNPLAYED) & (status <= FLIPPED)).all(), f"seat {p} tile status"
            assert (status[kinds < 0] == UNPLAYED).all(), f"seat {p}: an empty space was played"
            # Held Rush Orders come from used Rush Order tiles.
            used_rush = int(((kinds == RUSH) & (status == USED)).sum())
            held = self.rush_ready[p] + self.rush_new[p]
            assert 0 <= held <= used_rush, f"seat {p} holds {held} Rush Orders of {used_rush}"
        assert (self.tile_type < 0).any() == (phase == PLACING), "placement and phase disagree"
        if phase == PLACING:
            assert not (self.tile_status != UNPLAYED).any() and not self.face_down.any()
            assert not any(self.crate_apples[0] + self.crate_apples[1]), "trays during placement"
        assert self.rushes_this_turn <= 2, "more Rush Orders used this turn than exist"
        # The grabber stays on its starting tray (the 6) until the first move, then on an
        # empty space.
        cell = self.grabber
        untouched = int((self.apples > 0).sum()) == NUM_CELLS
        assert self.apples[cell] == (6 if untouched else 0), f"grabber on {cell}"
        assert (self.mixup_crate >= 0) == (phase == MIXUP_OWN), "Order Mix-up half done"
        # The game goes on only while every player has an open crate.
        all_closed = any(OPEN not in seat for seat in self.closure)
        assert phase == OVER or not all_closed, "a player has four closed crates, yet play goes on"
        # What ``_advance`` kept for this state is what the rules work out afresh.
        assert self.choosers == self.current_choosers(), f"to_act() is {self.choosers}"
        assert self.legal_choices == self.choices(), f"kept legal choices {self.legal_choices}"
        assert np.array_equal(self.placeable, self.placements()), "kept placement masks"
        kept = (self.trays_up, self.empty, self.tile_lines)
        assert kept == self.count_bits(), f"kept bits of the move targets {kept}"
        # The observation's view, kept up to date move by move, is the one computed afresh.
        fresh = fresh_view(self)
        stale = [
            name
            for name, field in SOURCE.fields.items()
            if not np.array_equal(
                self.view[field.start : field.stop], fresh[field.start : field.stop]
            )
        ]
        assert not stale, f"the view is out of step with the state in {stale}"

    # --- rules -------------------------------------------------------------------------
    def _place(self, player: int, index: int) -> None:
        space, kind = divmod(index, NUM_TYPES)
        self._put_tile(player, space, kind)
        if sum(self.to_place[player].tolist()) == 1:  # the last tile has one place to go
            last_space = int(np.flatnonzero(self.tile_type[player] < 0)[0])
            last_kind = int(np.flatnonzero(self.to_place[player])[0])
            self._put_tile(player, last_space, last_kind)

    # Every change of the grid, the tiles and the crates goes through ``_move`` or the
    # methods below, which write it into ``view`` too.
    def _flip_tray(self, row: int, col: int) -> None:
        self.face_down[row, col] = True
        self.trays_up[RED] &= ~(1 << (row * SIZE + col))
        self.trays_up[BLUE] &= ~(1 << (col * SIZE + row))
        self.view[TRAYS + row * SIZE + col] = 0
        self.view[FACE_DOWN + row * SIZE + col] = 1

    def _put_tile(self, player: int, space: int, kind: int) -> None:
        self.tile_type[player, space] = kind
        self.to_place[player, kind] -= 1
        tile = player * NUM_SPACES + space
        view = self.view
        view[TILE_TYPE + tile * NUM_TYPES + kind] = 1
        view[TILE_STATE + tile * NUM_STATUSES + UNPLAYED] = 1
        view[TILES_PLACED + player] += 1
        placeable = self.placeable[player]
        placeable[PLACE + space * NUM_TYPES : PLACE + (space + 1) * NUM_TYPES] = False  # taken
        if not self.to_place[player, kind]:  # the last tile of its type
            placeable[PLACE + kind : MOVE : NUM_TYPES] = False

    def _play_tile(self, player: int, space: int, status: int) -> None:
        """An unplayed tile is used (``USED``) or malfunctioned (``FLIPPED``)."""
        self.tile_status[player, space] = status
        line = space % SIZE
        status_of = self.tile_status.item
        if status_of(player, line) != UNPLAYED and status_of(player, SIZE + line) != UNPLAYED:
            self.tile_lines[player] &= ~(1 << line)
        at = TILE_STATE + (player * NUM_SPACES + space) * NUM_STATUSES
        self.view[at + UNPLAYED] = 0
        self.view[at + status] = 1

    def _close(self, player: int, crate: int, closure: int) -> None:
        self.closure[player][crate] = closure
        self.view[CRATE_CLOSURE + (player * NUM_CRATES + crate) * 2 + closure - 1] = 1
        self._rescore(player)

    def _rescore(self, player: int) -> None:
        """Write ``player``'s points into ``view`` after a change of their crates."""
        self.view[POINTS + player] = points(self.crate_apples[player], self.closure[player])

    def _set_rush_orders(self, player: int, ready: int, new: int) -> None:
        self.rush_ready[player], self.rush_new[player] = ready, new
        self.view[RUSH_ORDERS + 2 * player] = ready
        self.view[RUSH_ORDERS + 2 * player + 1] = new

    def _start_turn(self, player: int) -> None:
        self.player = player
        self.rushes_this_turn = 0
        self.phase = MOVING

    def _advance(self) -> None:
        """Resolve every decision with a single legal choice, until a real choice or the end;
        keep that state's ``choosers`` and ``legal_choices``."""
        self.legal_choices = []
        while self.phase not in (OVER, PLACING):
            choices = self.choices()
            if len(choices) > 1:
                self.legal_choices = choices
                break
            if choices:
                self._resolve(choices[0])
            elif self.phase == MOVING:
                self.phase = OVER  # the player to move has no legal move
            else:
                self._finish_action()  # an action with no valid target is spent
        phase = self.phase  # ``current_choosers``, inlined
        if phase == OVER:
            self.choosers = ()
        elif phase == PLACING and self.game.simultaneous:
            self.choosers = (RED, BLUE)
        else:
            self.choosers = SEATS[self.player]

    def _add_tray(self, player: int, crate: int, apples: int) -> None:
        stack = self.crates[player][crate]
        at, view = player * NUM_CRATES + crate, self.view
        view[CRATE_STACK + at * MAX_STACK + len(stack)] = apples
        stack.append(apples)
        view[CRATE_COUNT + at] = len(stack)
        view[CRATE_TOP + at] = apples
        self.crate_apples[player][crate] += apples
        view[POINTS + player] += apples  # trays come and go on open crates: 1 point an apple

    def _take_top(self, player: int, crate: int) -> int:
        stack = self.crates[player][crate]
        apples = stack.pop()
        at, view = player * NUM_CRATES + crate, self.view
        view[CRATE_STACK + at * MAX_STACK + len(stack)] = 0
        view[CRATE_COUNT + at] = len(stack)
        view[CRATE_TOP + at] = stack[-1] if stack else 0
        self.crate_apples[player][crate] -= apples
        view[POINTS + player] -= apples  # (an open crate: 1 point an apple)
        return apples

    def _resolve(self, action: int) -> None:
        player, opponent, phase = self.player, 1 - self.player, self.phase
        if phase == MOVING:
            self._move(player, action - MOVE)
        elif phase == PLACE_TRAY:
            self._add_tray(player, action - OWN_CRATE, self.holding)
            self.holding = 0
            self._finish_action()
        elif phase == CHOOSE_END:
            self._activate(player, (action - END) * SIZE + self.grabber_line(player))
        elif phase == PREMIUM_TARGET:
            self._close(player, action - OWN_CRATE, PREMIUM_CLOSED)
            self._finish_action()
        elif phase == WHOLESALE_TARGET:
            self._close(opponent, action - OPP_CRATE, WHOLESALE_CLOSED)
            self._finish_action()
        elif phase == QUALITY_SOURCE:
            self.holding = self._take_top(opponent, action - OPP_CRATE)
            self.phase = PLACE_TRAY
        elif phase == MIXUP_OPPONENT:
            self.mixup_crate = action - OPP_CRATE
            self.phase = MIXUP_OWN
        elif phase == MIXUP_OWN:
            theirs, mine = self.mixup_crate, action - OWN_CRATE
            their_top = self._take_top(opponent, theirs)
            self._add_tray(opponent, theirs, self._take_top(player, mine))
            self._add_tray(player, mine, their_top)
            self.mixup_crate = -1
            self._finish_action()
        elif phase == MALFUNCTION_TARGET:
            if action < TILE:
                i, j = divmod(action - TRAY, SIZE)
                self._flip_tray(*to_frame(player, i, j))
            else:
                self._play_tile(opponent, action - TILE, FLIPPED)
            self._finish_action()
        elif phase == RUSH_CHOICE:
            if action == RUSH_USE:
                self._set_rush_orders(player, self.rush_ready[player] - 1, self.rush_new[player])
                self.rushes_this_turn += 1
                self.phase = MOVING
            else:
                self._end_turn()

    def _move(self, player: int, line: int) -> None:
        row, col = self.grabber
        view = self.view
        view[GRABBER_CELL + row * SIZE + col] = 0
        if player == RED:  # (``cell_on_line``)
            col = line
        else:
            row = line
        self.grabber = row, col
        cell = row * SIZE + col
        view[GRABBER_CELL + cell] = 1
        apples = self.apples.item(cell)
        if apples:
            self.holding = apples
            self.apples[row, col] = 0
            view[TRAYS + cell] = 0
            red_bit, blue_bit = 1 << cell, 1 << (col * SIZE + row)  # (``frame_bits``)
            self.trays_up[RED] &= ~red_bit
            self.trays_up[BLUE] &= ~blue_bit
            self.empty[RED] |= red_bit
            self.empty[BLUE] |= blue_bit
            self.phase = PLACE_TRAY
        else:
            self.phase = CHOOSE_END

    def _activate(self, player: int, space: int) -> None:
        kind = self.tile_type.item(player, space)
        self._play_tile(player, space, USED)
        if kind == RUSH:
            self._set_rush_orders(player, self.rush_ready[player], self.rush_new[player] + 1)
            self._finish_action()
        elif kind == MIXUP and not self.has_effect(player, MIXUP):
            self._finish_action()  # no pair of top trays to swap: spent
        else:
            self.phase = TARGET_PHASE[kind]

    def _finish_action(self) -> None:
        """A move and its action are done: the game may end, else an extra move may follow."""
        closure = self.closure
        if OPEN not in closure[0] or OPEN not in closure[1]:
            self.phase = OVER  # a player has all four crates closed
            return
        player = self.player
        may_rush = self.rush_ready[player] > 0 and (
            self.game.chain_rush_orders or self.rushes_this_turn == 0
        )
        if may_rush and self.move_bits(player):
            self.phase = RUSH_CHOICE
        else:
            self._end_turn()

    def _end_turn(self) -> None:
        player = self.player
        if self.rush_new[player]:  # taken this turn: usable from the next
            self._set_rush_orders(player, self.rush_ready[player] + self.rush_new[player], 0)
        self.player = 1 - player  # (``_start_turn``)
        self.rushes_this_turn = 0
        self.phase = MOVING

    # --- the spectator's view ---------------------------------------------------------
    def placement_hidden(self) -> bool:
        """Whether tile arrangements are still secret (simultaneous placement under way)."""
        return self.phase == PLACING and self.game.simultaneous

    def _tile_char(self, player: int, space: int) -> str:
        if self.placement_hidden():
            return "?"  # neither the types nor the spaces filled so far are shown
        kind = self.tile_type[player, space]
        if kind < 0:
            return "."
        status = self.tile_status[player, space]
        return TYPE_LETTERS[kind] if status == UNPLAYED else ("-" if status == USED else "#")

    def _crate_text(self, player: int, k: int, full: bool) -> str:
        stack = self.crates[player][k]
        closure = ("", " Premium", " Wholesale")[self.closure[player][k]]
        if full:
            contents = " ".join(map(str, stack)) or "empty"
            return f"[{contents}{closure}]"
        top = f"top {stack[-1]}" if stack else "empty"
        return f"[{top}, {len(stack)} trays{closure}]"

    def __str__(self) -> str:
        placement = self.game.config.placement
        lines = [
            "Pick & Pack: red (player_0) moves along rows, blue (player_1) along columns; "
            f"{placement} placement"
        ]
        red_top = "".join(f" {self._tile_char(RED, c)} " for c in range(SIZE))
        red_bottom = "".join(f" {self._tile_char(RED, SIZE + c)} " for c in range(SIZE))
        lines.append(f"      {red_top}      red tiles")
        for r in range(SIZE):
            cells = []
            for c in range(SIZE):
                apples = int(self.apples[r, c])
                text = "#" if self.face_down[r, c] else (str(apples) if apples else ".")
                cells.append(f"[{text}]" if (r, c) == self.grabber else f" {text} ")
            left, right = self._tile_char(BLUE, r), self._tile_char(BLUE, SIZE + r)
            lines.append(f"   {left}  {''.join(cells)}  {right}")
        lines.append(f"      {red_bottom}")
        over = self.phase == OVER
        full = over or self.game.config.opponent_crates == "full"
        scores = self.scores()
        for p in range(2):
            crates = " ".join(self._crate_text(p, k, full) for k in range(NUM_CRATES))
            rush = f"; rush orders {self.rush_ready[p] + self.rush_new[p]}"
            score = f"; score {scores[p]:g}" if over else ""
            lines.append(f"{COLORS[p]} crates: {crates}{rush}{score}")
        if self.phase == PLACING:
            placed = [NUM_SPACES - int((self.tile_type[p] < 0).sum()) for p in range(2)]
            who = "both" if self.game.simultaneous else COLORS[self.player]
            lines.append(f"placing tiles ({who}); placed: red {placed[0]}, blue {placed[1]}")
        elif over:
            lines.append("game over")
        else:
            extra = f" ({self.holding} apples)" if self.phase == PLACE_TRAY else ""
            lines.append(f"{COLORS[self.player]} to act: {PHASE_NAMES[self.phase]}{extra}")
        lines.append(
            "key: P Premium, W Wholesale, R Rush Order, Q Quality Control, X Order Mix-up, "
            "M Malfunction, - used, # malfunctioned; tray # face down, . empty, [ ] grabber"
        )
        return "\n".join(line.rstrip() for line in lines)

    def private_view(self, player: int) -> str:
        """What only ``player`` sees: their own tiles while a secret placement is under way,
        and their own crates in full (every tray, buried ones too) while the table shows only
        the top trays (``opponent_crates="visible"``, before the end)."""
        color = COLORS[player]
        lines = []
        if self.placement_hidden():
            ends = ("top", "bottom") if player == RED else ("left", "right")
            letters = [TYPE_LETTERS[k] if k >= 0 else "." for k in self.tile_type[player].tolist()]
            rows = [f"{ends[e]} {' '.join(letters[e * SIZE : (e + 1) * SIZE])}" for e in (0, 1)]
            to_place = self.to_place[player].tolist()
            left = [TYPE_NAMES[k] for k in range(NUM_TYPES) for _ in range(to_place[k])]
            lines.append(
                f"your tiles ({color}, secret until both have placed; lines 0-5): "
                f"{'; '.join(rows)}; still to place: {', '.join(left) or '-'}"
            )
        if not (self.phase == OVER or self.game.full_crates):
            crates = " ".join(self._crate_text(player, k, full=True) for k in range(NUM_CRATES))
            lines.append(f"your crates ({color}, bottom to top): {crates}")
        return "\n".join(lines)


class PickAndPackGame(Game):
    name = "pick_and_pack"
    config_class = PickAndPackConfig
    num_actions = NUM_ACTIONS

    def __init__(self, config: PickAndPackConfig) -> None:
        super().__init__(config)
        self.tray_counts = tuple(int(c) for c in config.tray_counts)
        self.simultaneous = config.placement == "simultaneous"
        self.targetless_spent = config.targetless_actions == "spent"
        self.chain_rush_orders = config.chain_rush_orders
        self.full_crates = config.opponent_crates == "full"
        # Every grab, flip and activation is public: only a secret placement hides anything.
        self.has_hidden_state = self.simultaneous
        # Decisions: 11 placement steps for each player (none if dealt at random), then at
        # most 36 + 24 = 60 moves (each takes a face-up tray or uses an unplayed tile). A
        # grab asks at most 3 times (move, crate, Rush Order); a tile at most 5 (move, end,
        # two targets for Quality Control or Order Mix-up, Rush Order).
        placement = 0 if config.placement == "random" else 2 * (NUM_SPACES - 1)
        self.max_decisions = placement + NUM_CELLS * 3 + 2 * NUM_SPACES * 5
        self.observation_layout = observation_layout()
        #: Per secret placement (False, True), per observer: see ``layout.gather_index``.
        self.gather_index = tuple(
            tuple(gather_index(player, hidden, self.full_crates) for player in (RED, BLUE))
            for hidden in (False, True)
        )

    def new_initial_state(self, rng: np.random.Generator) -> PickAndPackState:
        return PickAndPackState(self, rng)

    def observation(self, state: PickAndPackState, player: int) -> np.ndarray:
        """``player``'s observation (a new float32 array), the fast way: gathered from
        ``state.view``, then the fields that change on most steps written into their zeros.
        ``observation.encode`` is the same from the state's plain fields."""
        phase = state.phase
        hidden = phase == PLACING and self.simultaneous
        obs = state.view.take(self.gather_index[hidden][player])
        if phase < NUM_PHASES:
            obs[PHASE + phase] = 1
            if not hidden:  # one seat to act (both while placing in secret, none at the end)
                obs[TO_ACT if state.player == player else TO_ACT + 1] = 1
        if state.holding:
            obs[HOLDING] = state.holding
        if state.mixup_crate >= 0:
            obs[MIXUP_CRATE + state.mixup_crate] = 1
        return obs

    def action_name(self, action: int) -> str:
        if action < MOVE:
            space, kind = divmod(action - PLACE, NUM_TYPES)
            end, line = divmod(space, SIZE)
            return f"place {TYPE_NAMES[kind]} at end {end} of line {line}"
        if action < OWN_CRATE:
            return f"move the grabber to line {action - MOVE}"
        if action < OPP_CRATE:
            return f"your crate {action - OWN_CRATE}"
        if action < END:
            return f"opponent crate {action - OPP_CRATE}"
        if action < TRAY:
            return f"activate the tile at end {action - END}"
        if action < TILE:
            i, j = divmod(action - TRAY, SIZE)
            return f"malfunction the tray at ({i}, line {j}) of your frame"
        if action < RUSH_USE:
            end, line = divmod(action - TILE, SIZE)
            return f"malfunction the opponent tile at end {end} of their line {line}"
        return "use a Rush Order" if action == RUSH_USE else "keep your Rush Orders"
