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
        if phase == MOVING:
            values = [self._move_value(v, a - MOVE) for a in legal]
            return int(legal[int(np.argmax(values))])
        if phase == RUSH_CHOICE:
            best = max(self._move_value(v, line) for line in self._lines_open(v))
            return RUSH_USE if best >= RUSH_THRESHOLD else RUSH_DECLINE
        mine, theirs = self._crate_sums(v)
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
        if phase == CHOOSE_END:
            line = int(np.argmax(v["grabber"].max(axis=0)))
            return max(legal, key=lambda a: self._tile_value(v, self._tile(v, 0, a - END, line)))
        return int(rng.choice(legal))

    # --- placement ----------------------------------------------------------------------
    def _place(self, v: dict[str, np.ndarray], legal: np.ndarray, rng: np.random.Generator) -> int:
        """Put different types at the two ends of a line, so each line offers a choice."""
        types = v["tile_type"][0]
        good = []
        for action in legal:
            space, kind = divmod(int(action) - PLACE, 6)
            other = (space + SIZE) % (2 * SIZE)
            if types[other, kind] == 0:
                good.append(int(action))
        return int(rng.choice(good or legal))

    # --- valuation ----------------------------------------------------------------------
    @staticmethod
    def _tile(v: dict[str, np.ndarray], seat: int, end: int, line: int) -> int:
        """The unplayed tile type of ``seat`` at that end of ``line``, or -1."""
        space = end * SIZE + line
        if not v["tile_state"][seat, space, 0]:
            return -1
        return int(np.argmax(v["tile_type"][seat, space]))

    @staticmethod
    def _crate_sums(v: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Apples in my crates, and the estimate of the opponent's (exact if shown)."""
        mine = v["crate_stack"][0].sum(axis=1)
        theirs = v["crate_stack"][1].sum(axis=1)
        count, top = v["crate_count"][1], v["crate_top"][1]
        estimate = np.where(count > 0, top + (count - 1) * MEAN_TRAY, 0.0)
        return mine, np.where(theirs > 0, theirs, estimate)

    def _tile_value(self, v: dict[str, np.ndarray], kind: int) -> float:
        open_mine = v["crate_closure"][0].sum(axis=1) == 0
        open_theirs = v["crate_closure"][1].sum(axis=1) == 0
        mine, theirs = self._crate_sums(v)
        top = v["crate_top"]
        if kind == PREMIUM:
            return float(mine[open_mine].max(initial=0.0)) - PREMIUM_COST
        if kind == WHOLESALE:
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

    def _lines_open(self, v: dict[str, np.ndarray]) -> list[int]:
        """Lines I could move to (the mask is not at hand while deciding on a Rush Order)."""
        row = int(np.argmax(v["grabber"].max(axis=1)))
        col = int(np.argmax(v["grabber"].max(axis=0)))
        lines = []
        for line in range(SIZE):
            if line == col or v["face_down"][row, line]:
                continue
            if v["trays"][row, line] or max(self._tile(v, 0, e, line) for e in (0, 1)) >= 0:
                lines.append(line)
        return lines

    def _move_value(self, v: dict[str, np.ndarray], line: int) -> float:
        row = int(np.argmax(v["grabber"].max(axis=1)))
        trays = v["trays"]
        apples = float(trays[row, line])
        if apples:
            gain = apples
        else:
            kinds = [self._tile(v, 0, e, line) for e in (0, 1)]
            gain = max(self._tile_value(v, k) for k in kinds if k >= 0)
        # The opponent then moves along this column of my frame.
        column = trays[:, line].copy()
        column[row] = 0
        return gain - 0.5 * float(column.max())

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
