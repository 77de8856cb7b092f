"""A Pick & Pack heuristic: a greedy player who looks one move ahead.

Each move is valued as what it gains now (a tray's apples, or the best tile that can
be activated at that empty space) minus half of the best tray it leaves the opponent
on their next line. Sub-decisions follow simple human rules: pack trays onto the
fullest crate and close it with Premium, Wholesale the opponent's richest crate,
steal and swap the best top trays, and Malfunction the tray the opponent wants next.
"""

from __future__ import annotations

import numpy as np

from envs.pick_and_pack.rules import (
    CHOOSE_END,
    END,
    MALFUNCTION,
    MALFUNCTION_TARGET,
    MIXUP,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MOVE,
    MOVING,
    OPP_CRATE,
    OWN_CRATE,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM,
    PREMIUM_TARGET,
    QUALITY,
    QUALITY_SOURCE,
    RUSH,
    RUSH_CHOICE,
    RUSH_DECLINE,
    RUSH_USE,
    SIZE,
    TILE,
    TRAY,
    WHOLESALE,
    WHOLESALE_TARGET,
    PickAndPackGame,
)

MEAN_TRAY = 3.0  # a buried tray's expected apples
RUSH_VALUE = 3.0
MALFUNCTION_VALUE = 2.5
PREMIUM_COST = 4.0  # a closed crate takes no more trays
RUSH_THRESHOLD = 4.0
#: Which opponent tiles to Malfunction first.
TILE_PRIORITY = (PREMIUM, QUALITY, WHOLESALE, MIXUP, RUSH, MALFUNCTION)


class PickAndPackHeuristic:
    def __init__(self, game: PickAndPackGame) -> None:
        self.game = game

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        v = self.game.observation_layout.views(observation)
        legal = np.flatnonzero(action_mask)
        phase = int(np.argmax(v["phase"])) if v["phase"].any() else -1
        if phase == PLACING:
            return self._place(v, legal, rng)
        if phase in (MOVING, RUSH_CHOICE, CHOOSE_END):
            board = Board(v)
            if phase == MOVING:
                values = [board.move_value(a - MOVE) for a in legal.tolist()]
                return int(legal[values.index(max(values))])
            if phase == RUSH_CHOICE:
                best = max(board.move_value(line) for line in board.lines_open())
                return RUSH_USE if best >= RUSH_THRESHOLD else RUSH_DECLINE
            line = board.col
            return max(legal, key=lambda a: board.tile_value(board.tile(a - END, line)))
        mine, theirs = crate_sums(v)
        top = v["crate_top"]
        if phase in (PLACE_TRAY, PREMIUM_TARGET):
            return max(legal, key=lambda a: mine[a - OWN_CRATE])
        if phase == WHOLESALE_TARGET:
            return max(legal, key=lambda a: theirs[a - OPP_CRATE])
        if phase in (QUALITY_SOURCE, MIXUP_OPPONENT):
            return max(legal, key=lambda a: top[1, a - OPP_CRATE])
        if phase == MIXUP_OWN:
            return min(legal, key=lambda a: top[0, a - OWN_CRATE])
        if phase == MALFUNCTION_TARGET:
            return self._malfunction(v, legal)
        return int(rng.choice(legal))

    # --- placement ----------------------------------------------------------------------
    @staticmethod
    def _place(v: dict[str, np.ndarray], legal: np.ndarray, rng: np.random.Generator) -> int:
        """Put different types at the two ends of a line, so each line offers a choice."""
        space, kind = np.divmod(legal - PLACE, 6)
        other_end = (space + SIZE) % (2 * SIZE)
        good = legal[v["tile_type"][0][other_end, kind] == 0]
        return int(rng.choice(good if len(good) else legal))

    # --- sub-decisions ------------------------------------------------------------------
    def _malfunction(self, v: dict[str, np.ndarray], legal: np.ndarray) -> int:
        trays = [int(a) for a in legal if TRAY <= a < TILE]
        tiles = [int(a) for a in legal if a >= TILE]
        col = int(np.argmax(v["grabber"].max(axis=0)))
        flat = v["trays"].ravel()
        threatened = [a for a in trays if (a - TRAY) % SIZE == col]
        if threatened:
            best = max(threatened, key=lambda a: flat[a - TRAY])
            if flat[best - TRAY] >= 4 or not tiles:
                return best
        if tiles:
            kinds = {a: int(np.argmax(v["tile_type"][1, a - TILE])) for a in tiles}
            return min(tiles, key=lambda a: TILE_PRIORITY.index(kinds[a]))
        return max(trays, key=lambda a: flat[a - TRAY])


def crate_sums(v: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Apples in my crates, and the estimate of the opponent's (exact if shown)."""
    mine = v["crate_stack"][0].sum(axis=1)
    theirs = v["crate_stack"][1].sum(axis=1)
    count, top = v["crate_count"][1], v["crate_top"][1]
    estimate = np.where(count > 0, top + (count - 1) * MEAN_TRAY, 0.0)
    return mine, np.where(theirs > 0, theirs, estimate)


class Board:
    """What a move decision reads from the observation, unpacked once into Python values
    (the same numbers are looked at for every candidate line)."""

    def __init__(self, v: dict[str, np.ndarray]) -> None:
        self.v = v
        self.row, self.col = divmod(int(np.argmax(v["grabber"])), SIZE)
        self.trays = v["trays"].tolist()
        #: My unplayed tile type at each space, or -1.
        types = v["tile_type"][0].argmax(axis=1)
        self.tiles = np.where(v["tile_state"][0, :, 0] > 0, types, -1).tolist()
        #: The best tray the opponent could take next along each of my lines (their
        #: next move runs along that column of my frame, the current row left empty).
        self.threat = [
            max(self.trays[r][line] for r in range(SIZE) if r != self.row) for line in range(SIZE)
        ]
        self._tile_values: dict[int, float] = {}

    def tile(self, end: int, line: int) -> int:
        """My unplayed tile type at that end of ``line``, or -1."""
        return self.tiles[end * SIZE + line]

    def tile_value(self, kind: int) -> float:
        """What activating a tile of ``kind`` is worth now, in apples (worked out once)."""
        value = self._tile_values.get(kind)
        if value is None:
            value = self._tile_values[kind] = self._value_of(kind)
        return value

    def _value_of(self, kind: int) -> float:
        v = self.v
        open_mine = v["crate_closure"][0].sum(axis=1) == 0
        open_theirs = v["crate_closure"][1].sum(axis=1) == 0
        top = v["crate_top"]
        if kind == PREMIUM:
            mine = v["crate_stack"][0].sum(axis=1)
            return float(mine[open_mine].max(initial=0.0)) - PREMIUM_COST
        if kind == WHOLESALE:
            theirs = crate_sums(v)[1]
            return float(theirs[open_theirs].max(initial=0.0)) / 2
        if kind == RUSH:
            return RUSH_VALUE
        if kind == QUALITY:
            return 2.0 * float(top[1][open_theirs].max(initial=0.0))
        if kind == MIXUP:
            mine_tops = top[0][open_mine & (top[0] > 0)]
            theirs_best = float(top[1][open_theirs].max(initial=0.0))
            if not len(mine_tops) or not theirs_best:
                return 0.0
            return 2.0 * max(0.0, theirs_best - float(mine_tops.min()))
        if kind == MALFUNCTION:
            return MALFUNCTION_VALUE
        return -np.inf

    def lines_open(self) -> list[int]:
        """Lines I could move to (the mask is not at hand while deciding on a Rush Order)."""
        row = self.row
        face_down = self.v["face_down"][row].tolist()
        return [
            line
            for line in range(SIZE)
            if line != self.col
            and not face_down[line]
            and (self.trays[row][line] or max(self.tile(0, line), self.tile(1, line)) >= 0)
        ]

    def move_value(self, line: int) -> float:
        apples = self.trays[self.row][line]
        if apples:
            gain = apples
        else:
            kinds = (self.tile(0, line), self.tile(1, line))
            gain = max(self.tile_value(k) for k in kinds if k >= 0)
        return gain - 0.5 * self.threat[line]
