"""Pick & Pack rule-based agents: a greedy heuristic and a searching expert.

``PickAndPackHeuristic`` is a greedy player who looks one move ahead. Each move is
valued as what it gains now (a tray's apples, or the best tile that can be activated
at that empty space) minus half of the best tray it leaves the opponent on their next
line. Sub-decisions follow simple human rules: pack trays onto the fullest crate and
close it with Premium, Wholesale the opponent's richest crate, steal and swap the best
top trays, and Malfunction the tray the opponent wants next.

``PickAndPackExpert`` rebuilds the public position from its observation into a light
model (the opponent's buried trays, unseen with ``opponent_crates="visible"``, are
estimated from the apples unaccounted for) and runs a 3-ply alpha-beta search over
whole moves (a move, its tile and its targets; me, the opponent, me). It values a
position as the score margin plus what the unplayed tiles and held Rush Orders are
still worth (Premium and Wholesale more the richer the crate they would hit), plus
half the best tray the player to move can grab; a finished game adds a win bonus.
Every sub-decision (crate for a tray, tile end, targets, using a Rush Order; a
Malfunction among the opponent's tiles, their next line's trays and the two best
others) is chosen by the same search from the position it leads to. Tiles are placed
as fixed pairs of different types, each Premium and Wholesale beside a tile that is
useful any time (Rush Order, Malfunction, Quality Control, Order Mix-up).
``action_values`` gives the exact searched value of each option it considers, for
distillation.

``PickAndPackTactician`` is a teacher for policy networks: the expert's decisions but
the heuristic's moves (see its docstring).
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
    NUM_CRATES,
    OPEN,
    OPP_CRATE,
    OWN_CRATE,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM,
    PREMIUM_CLOSED,
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
    WHOLESALE_CLOSED,
    WHOLESALE_TARGET,
    PickAndPackGame,
    points,
)

MEAN_TRAY = 3.0  # a buried tray's expected apples
RUSH_VALUE = 3.0
MALFUNCTION_VALUE = 2.5
PREMIUM_COST = 4.0  # a closed crate takes no more trays
RUSH_THRESHOLD = 4.0
#: Which opponent tiles to Malfunction first.
TILE_PRIORITY = (PREMIUM, QUALITY, WHOLESALE, MIXUP, RUSH, MALFUNCTION)


#: A decision: one action, or candidates that ``act`` draws from uniformly at random.
Decision = int | np.ndarray


def _act(decision: Decision, rng: np.random.Generator) -> int:
    """The action of a decision (drawn uniformly from its candidates if it has several)."""
    return int(rng.choice(decision)) if isinstance(decision, np.ndarray) else int(decision)


def _probabilities(decision: Decision, size: int) -> np.ndarray:
    """A decision as a distribution over ``size`` actions."""
    probabilities = np.zeros(size)
    if isinstance(decision, np.ndarray):
        probabilities[decision] = 1.0 / len(decision)
    else:
        probabilities[decision] = 1.0
    return probabilities


class PickAndPackHeuristic:
    """``act`` and ``action_probabilities`` share one ``decide``: a single action (every
    choice but placement is deterministic) or candidates taken uniformly at random
    (placement, and any phase without a rule)."""

    def __init__(self, game: PickAndPackGame) -> None:
        self.game = game

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        return _act(self.decide(observation, action_mask), rng)

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return _probabilities(self.decide(observation, action_mask), len(action_mask))

    def decide(self, observation: np.ndarray, action_mask: np.ndarray) -> Decision:
        """The action, or the candidates drawn from uniformly."""
        v = self.game.observation_layout.views(observation)
        legal = np.flatnonzero(action_mask)
        phase = phase_of(v)
        if phase == PLACING:
            return self._place(v, legal)
        if phase in (MOVING, RUSH_CHOICE, CHOOSE_END):
            board = Board(v)
            if phase == MOVING:
                values = [board.move_value(a - MOVE) for a in legal.tolist()]
                return int(legal[values.index(max(values))])
            if phase == RUSH_CHOICE:
                best = max(board.move_value(line) for line in board.lines_open())
                return RUSH_USE if best >= RUSH_THRESHOLD else RUSH_DECLINE
            line = board.col
            return int(max(legal, key=lambda a: board.tile_value(board.tile(a - END, line))))
        mine, theirs = crate_sums(v)
        top = v["crate_top"]
        if phase in (PLACE_TRAY, PREMIUM_TARGET):
            return int(max(legal, key=lambda a: mine[a - OWN_CRATE]))
        if phase == WHOLESALE_TARGET:
            return int(max(legal, key=lambda a: theirs[a - OPP_CRATE]))
        if phase in (QUALITY_SOURCE, MIXUP_OPPONENT):
            return int(max(legal, key=lambda a: top[1, a - OPP_CRATE]))
        if phase == MIXUP_OWN:
            return int(min(legal, key=lambda a: top[0, a - OWN_CRATE]))
        if phase == MALFUNCTION_TARGET:
            return self._malfunction(v, legal)
        return legal

    # --- placement ----------------------------------------------------------------------
    @staticmethod
    def _place(v: dict[str, np.ndarray], legal: np.ndarray) -> np.ndarray:
        """Put different types at the two ends of a line, so each line offers a choice."""
        space, kind = np.divmod(legal - PLACE, 6)
        other_end = (space + SIZE) % (2 * SIZE)
        good = legal[v["tile_type"][0][other_end, kind] == 0]
        return good if len(good) else legal

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


def phase_of(v: dict[str, np.ndarray]) -> int:
    """The phase the observation asks about (-1 at the end: no phase is set)."""
    return int(np.argmax(v["phase"])) if v["phase"].any() else -1


def crate_sums(v: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Apples in my crates, and the estimate of the opponent's (exact if shown)."""
    _, mine, theirs = tile_values({key: v[key][None] for key in CRATE_FIELDS})
    return mine[0], theirs[0]


#: The observation fields ``tile_values`` reads.
CRATE_FIELDS = ("crate_stack", "crate_count", "crate_top", "crate_closure")


def tile_values(v: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a batch of observations' views (a leading batch axis): what activating each
    tile type is worth now to the heuristic, in apples (``(B, 6)``, in tile-type order),
    the apples in my crates and the estimate of the opponent's (``(B, 4)`` each; a
    buried tray counts ``MEAN_TRAY`` unless the crates are shown)."""
    stacks, count, top = v["crate_stack"], v["crate_count"], v["crate_top"]
    is_open = v["crate_closure"].sum(axis=3) == 0  # (B, 2, 4)
    mine = stacks[:, 0].sum(axis=2)
    shown = stacks[:, 1].sum(axis=2)
    estimate = np.where(count[:, 1] > 0, top[:, 1] + (count[:, 1] - 1) * MEAN_TRAY, 0.0)
    theirs = np.where(shown > 0, shown, estimate)

    def best(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        return np.where(where, values, 0.0).max(axis=1).clip(min=0)

    their_best_top = best(top[:, 1], is_open[:, 1])
    my_tops = np.where(is_open[:, 0] & (top[:, 0] > 0), top[:, 0], 99.0)
    my_worst_top = my_tops.min(axis=1)
    mixup = np.where(
        (my_worst_top < 99) & (their_best_top > 0),
        2 * (their_best_top - my_worst_top).clip(min=0),
        0.0,
    )
    values = np.stack(
        [
            best(mine, is_open[:, 0]) - PREMIUM_COST,
            best(theirs, is_open[:, 1]) / 2,
            np.full_like(mixup, RUSH_VALUE),
            2 * their_best_top,
            mixup,
            np.full_like(mixup, MALFUNCTION_VALUE),
        ],
        axis=1,
    )
    return values, mine, theirs


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
        self._tile_values: list[float] | None = None

    def tile(self, end: int, line: int) -> int:
        """My unplayed tile type at that end of ``line``, or -1."""
        return self.tiles[end * SIZE + line]

    def tile_value(self, kind: int) -> float:
        """What activating a tile of ``kind`` is worth now, in apples (``tile_values``,
        worked out once)."""
        if self._tile_values is None:
            batch = {key: self.v[key][None] for key in CRATE_FIELDS}
            self._tile_values = tile_values(batch)[0][0].tolist()
        return self._tile_values[kind] if 0 <= kind < len(self._tile_values) else -np.inf

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


# --- the expert -----------------------------------------------------------------------------
SEARCH_DEPTH = 3  # whole moves: me, the opponent, me
#: What an unplayed tile is still worth, by type (Premium .. Malfunction; -1: none).
TILE_WORTH = (6.0, 4.0, 3.0, 4.0, 2.0, 2.5, 0.0)
PREMIUM_SHARE = 0.2  # an unplayed Premium is also worth this share of my richest open crate
WHOLESALE_SHARE = 0.15  # an unplayed Wholesale, this share of the opponent's richest
RUSH_WORTH = 3.0  # a Rush Order held
TEMPO = 0.5  # share of the best tray the player to move can grab
WIN_BONUS = 10.0
#: Which opponent tile a Malfunction considers.
MALFUNCTION_ORDER = (PREMIUM, WHOLESALE, QUALITY, RUSH, MIXUP, MALFUNCTION)
#: The two types at the ends of each line, as placed by the expert.
PAIRS = (
    (PREMIUM, RUSH),
    (PREMIUM, MALFUNCTION),
    (WHOLESALE, QUALITY),
    (WHOLESALE, MIXUP),
    (RUSH, QUALITY),
    (MALFUNCTION, MIXUP),
)
#: A whole move: (line, end of the tile or -1 for a grab, tray apples or Malfunction kind
#: (0 a grid tray, 1 an opponent tile, 2 none), Malfunction target).
Move = tuple[int, int, float, int]


def _move_order(move: Move) -> float:
    """Big grabs first (alpha-beta prunes more), tiles as a middling tray."""
    return -move[2] if move[1] < 0 else -3.5


class Model:
    """The public position in the expert's frame: seat 0 is the expert, moving along rows
    (choosing a column), seat 1 the opponent, moving along columns (choosing a row).
    Plain Python lists, copied per move of the search.

    Why not the rules' own state: the expert knows only its observation (the
    opponent's buried trays are estimates, ``MEAN_TRAY`` each), and it searches whole
    moves (a move with its tile and targets) rather than the rules' sub-decisions, three
    plies in about a millisecond. What it shares with the rules it takes from them:
    points (``rules.points``) and the tile types and closures (the rules' constants)."""

    __slots__ = ("grid", "row", "col", "tiles", "stacks", "sums", "closure", "rush", "new_rush")
    __slots__ += ("player", "over")

    grid: list[float]  # apples per cell (row * 6 + col): > 0 a tray, 0 empty, -1 face down
    row: int
    col: int
    tiles: list[list[int]]  # per seat, the unplayed tile type on each space, or -1
    stacks: list[list[tuple[float, ...]]]  # per seat and crate, trays bottom first
    sums: list[list[float]]
    closure: list[list[int]]
    rush: list[int]  # Rush Orders usable
    new_rush: list[int]  # taken this turn
    player: int  # to move
    over: bool

    def copy(self) -> Model:
        m = Model.__new__(Model)
        m.grid = self.grid[:]
        m.row, m.col, m.player, m.over = self.row, self.col, self.player, self.over
        m.tiles = [self.tiles[0][:], self.tiles[1][:]]
        m.stacks = [self.stacks[0][:], self.stacks[1][:]]
        m.sums = [self.sums[0][:], self.sums[1][:]]
        m.closure = [self.closure[0][:], self.closure[1][:]]
        m.rush, m.new_rush = self.rush[:], self.new_rush[:]
        return m

    # --- crates ---------------------------------------------------------------------------
    def fewest(self, p: int) -> int:
        """The open crate with the fewest trays that a tray goes to (a tie: the richest)."""
        closure, stacks, sums = self.closure[p], self.stacks[p], self.sums[p]
        best, key = -1, (-99, 0.0)
        for k in range(NUM_CRATES):
            if closure[k] == OPEN and (-len(stacks[k]), sums[k]) > key:
                best, key = k, (-len(stacks[k]), sums[k])
        return best

    def add(self, p: int, k: int, apples: float) -> None:
        self.stacks[p][k] = self.stacks[p][k] + (apples,)
        self.sums[p][k] += apples

    def take(self, p: int, k: int) -> float:
        stack = self.stacks[p][k]
        self.stacks[p][k] = stack[:-1]
        self.sums[p][k] -= stack[-1]
        return stack[-1]

    def open_with_trays(self, p: int) -> list[int]:
        return [k for k in range(NUM_CRATES) if self.closure[p][k] == OPEN and self.stacks[p][k]]

    def score(self, p: int) -> float:
        """Seat ``p``'s points as the rules count them (``rules.points``), from the model's
        apples (estimates where buried trays are unseen)."""
        return float(points(self.sums[p], self.closure[p]))

    # --- moves ----------------------------------------------------------------------------
    def cell(self, p: int, line: int) -> int:
        return self.row * SIZE + line if p == 0 else line * SIZE + self.col

    def moves(self) -> list[Move]:
        """The whole moves of the player to move, each tile with its best-guess targets
        (a Malfunction: the best tray on the opponent's next line, or their best tile)."""
        p, grid = self.player, self.grid
        out: list[Move] = []
        current = self.col if p == 0 else self.row
        tiles, theirs = self.tiles[p], self.tiles[1 - p]
        for line in range(SIZE):
            apples = grid[self.cell(p, line)] if line != current else -1
            if apples > 0:
                out.append((line, -1, apples, 0))
            elif apples == 0:
                seen = -1
                for end in (0, 1):
                    kind = tiles[end * SIZE + line]
                    if kind < 0 or kind == seen:
                        continue
                    seen = kind
                    if kind != MALFUNCTION:
                        out.append((line, end, 0, 0))
                        continue
                    # the opponent's next line: my column ``line``, or their row ``line``
                    cells = range(line, 36, SIZE) if p == 0 else range(line * SIZE, line * SIZE + 6)
                    tray = max(cells, key=grid.__getitem__)
                    if grid[tray] > 0:
                        out.append((line, end, 0, tray))
                    target = next((t for t in MALFUNCTION_ORDER if t in theirs), -1)
                    if target >= 0:
                        out.append((line, end, 1, theirs.index(target)))
                    elif grid[tray] <= 0:
                        out.append((line, end, 2, 0))
        out.sort(key=_move_order)
        return out

    def apply(self, move: Move) -> Model:
        """The position after a whole move and the end of the turn (no Rush Order used)."""
        m = self.copy()
        p, (line, end, apples, target) = m.player, move
        cell = m.cell(p, line)
        m.row, m.col = divmod(cell, SIZE)
        if end < 0:
            m.grid[cell] = 0
            m.add(p, m.fewest(p), apples)
        else:
            space = end * SIZE + line
            kind, m.tiles[p][space] = m.tiles[p][space], -1
            m.effect(p, kind, int(apples), target)
        m.finish()
        return m

    def effect(self, p: int, kind: int, malfunction: int, target: int) -> None:
        """A tile's effect on the greedy targets."""
        q = 1 - p
        if kind in (PREMIUM, WHOLESALE):
            side = p if kind == PREMIUM else q
            sums, closure = self.sums[side], self.closure[side]
            k = max((k for k in range(NUM_CRATES) if closure[k] == OPEN), key=sums.__getitem__)
            closure[k] = PREMIUM_CLOSED if kind == PREMIUM else WHOLESALE_CLOSED
        elif kind == RUSH:
            self.new_rush[p] += 1
        elif kind == QUALITY:
            sources = self.open_with_trays(q)
            if sources:
                k = max(sources, key=lambda k: self.stacks[q][k][-1])
                self.add(p, self.fewest(p), self.take(q, k))
        elif kind == MIXUP:
            theirs, mine = self.open_with_trays(q), self.open_with_trays(p)
            if theirs and mine:
                self.swap(
                    max(theirs, key=lambda k: self.stacks[q][k][-1]),
                    min(mine, key=lambda k: self.stacks[p][k][-1]),
                    p,
                )
        elif malfunction == 0:
            self.grid[target] = -1
        elif malfunction == 1:
            self.tiles[q][target] = -1

    def swap(self, theirs: int, mine: int, p: int = 0) -> None:
        """Order Mix-up by ``p``: the top trays of the opponent's and ``p``'s crates."""
        a, b = self.take(1 - p, theirs), self.take(p, mine)
        self.add(1 - p, theirs, b)
        self.add(p, mine, a)

    def finish(self) -> None:
        """The game ends if a seat's crates are all closed, else the turn passes."""
        if OPEN not in self.closure[0] or OPEN not in self.closure[1]:
            self.over = True
            return
        p = self.player
        self.rush[p] += self.new_rush[p]
        self.new_rush[p] = 0
        self.player = 1 - p

    def evaluate(self) -> float:
        """Seat 0's margin, with what tiles, Rush Orders and the next grab are worth."""
        margin = self.score(0) - self.score(1)
        if self.over:
            return margin + (WIN_BONUS if margin > 0 else -WIN_BONUS if margin < 0 else 0.0)
        richest = [
            max([a for a, c in zip(self.sums[p], self.closure[p], strict=True) if c == OPEN] or [0])
            for p in (0, 1)
        ]
        mine, theirs = self.tiles
        margin += sum([TILE_WORTH[k] for k in mine]) - sum([TILE_WORTH[k] for k in theirs])
        margin += PREMIUM_SHARE * (
            mine.count(PREMIUM) * richest[0] - theirs.count(PREMIUM) * richest[1]
        )
        margin += WHOLESALE_SHARE * (
            mine.count(WHOLESALE) * richest[1] - theirs.count(WHOLESALE) * richest[0]
        )
        rush, new = self.rush, self.new_rush
        margin += RUSH_WORTH * (rush[0] + new[0] - rush[1] - new[1])
        if self.player == 0:
            return margin + TEMPO * max(self.grid[self.row * SIZE : self.row * SIZE + SIZE])
        return margin - TEMPO * max(self.grid[self.col :: SIZE])


def search(m: Model, depth: int, alpha: float, beta: float) -> float:
    """Alpha-beta minimax over whole moves; seat 0 maximises."""
    if m.over or depth == 0:
        return m.evaluate()
    moves = m.moves()
    if not moves:  # the player to move has none: the game is over
        m.over = True
        return m.evaluate()
    maximise = m.player == 0
    best = -np.inf if maximise else np.inf
    for move in moves:
        value = search(m.apply(move), depth - 1, alpha, beta)
        if maximise:
            best = max(best, value)
            alpha = max(alpha, value)
        else:
            best = min(best, value)
            beta = min(beta, value)
        if alpha >= beta:
            break
    return best


class PickAndPackExpert:
    """A searching player (see the module docstring); reads only its own observation."""

    def __init__(self, game: PickAndPackGame, depth: int = SEARCH_DEPTH) -> None:
        self.game = game
        self.depth = depth
        self.apples = float(sum((i + 1) * n for i, n in enumerate(game.tray_counts)))
        self.full = game.config.opponent_crates == "full"
        self.fallback = PickAndPackHeuristic(game)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        return _act(self.decide(observation, action_mask), rng)

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The one-hot of the searched choice (the search is deterministic), or uniform
        where ``act`` draws at random (a placement off the plan, the heuristic's)."""
        return _probabilities(self.decide(observation, action_mask), len(action_mask))

    def decide(self, observation: np.ndarray, action_mask: np.ndarray) -> Decision:
        """The action, or the candidates drawn from uniformly."""
        legal = np.flatnonzero(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        v = self.game.observation_layout.views(observation)
        if phase_of(v) == PLACING:
            planned = self._planned(v, action_mask)
            return np.array(legal) if planned is None else planned
        options = self._options(v, legal)
        if not options:
            return self.fallback.decide(observation, action_mask)
        return self._best(options)

    def action_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each action's searched value (seat 0's margin and what is still worth having, in
        apples, after it and the turn's end), exact rather than pruned; -inf where illegal
        or not considered (Malfunction targets beyond the candidates, placements other than
        the planned one: all legal ones are 0 once the plan is out of reach). ``act``
        chooses a best one; distillation learns from them all."""
        values = np.full(len(action_mask), -np.inf)
        legal = np.flatnonzero(action_mask).tolist()
        v = self.game.observation_layout.views(observation)
        if phase_of(v) == PLACING:
            planned = self._planned(v, action_mask)
            values[legal if planned is None else planned] = 0.0
            return values
        if len(legal) == 1:
            values[legal] = 0.0
            return values
        for action, position in self._options(v, legal):
            value = search(position, self.depth - 1, -np.inf, np.inf)
            values[action] = max(values[action], value)
        return values

    def _options(self, v: dict[str, np.ndarray], legal: list[int]) -> list[tuple[int, Model]]:
        """The legal actions the search considers, each with the position after it (and
        the end of the turn), in the order the search tries them (a move's line may come
        several times: one per tile target)."""
        phase = phase_of(v)
        m = self.model(v)
        if phase == MOVING:
            return [(MOVE + mv[0], m.apply(mv)) for mv in m.moves() if MOVE + mv[0] in legal]
        if phase == RUSH_CHOICE:
            keep = m.copy()
            keep.finish()
            m.rush[0] -= 1
            return [(RUSH_DECLINE, keep)] + [(RUSH_USE, m.apply(mv)) for mv in m.moves()]
        if phase == CHOOSE_END:
            # The grabber is on the line already: move it notionally off to reuse ``moves``.
            line = m.col
            m.col = (line + 1) % SIZE
            action_of = {m.tiles[0][(a - END) * SIZE + line]: a for a in legal}
            return [
                (action_of[m.tiles[0][mv[1] * SIZE + line]], m.apply(mv))
                for mv in m.moves()
                if mv[0] == line and mv[1] >= 0
            ]
        if phase == MALFUNCTION_TARGET:
            legal = self._malfunction_candidates(m, legal)
        holding = float(v["holding"][0])
        mixup = int(np.argmax(v["mixup_crate"]))

        def after(a: int) -> Model:
            t = m.copy()
            if phase == PLACE_TRAY:
                t.add(0, a - OWN_CRATE, holding)
            elif phase == PREMIUM_TARGET:
                t.closure[0][a - OWN_CRATE] = PREMIUM_CLOSED
            elif phase == WHOLESALE_TARGET:
                t.closure[1][a - OPP_CRATE] = WHOLESALE_CLOSED
            elif phase == QUALITY_SOURCE:
                t.add(0, t.fewest(0), t.take(1, a - OPP_CRATE))
            elif phase == MIXUP_OPPONENT:
                t.swap(a - OPP_CRATE, min(t.open_with_trays(0), key=lambda k: t.stacks[0][k][-1]))
            elif phase == MIXUP_OWN:
                t.swap(mixup, a - OWN_CRATE)
            elif a < TILE:  # Malfunction a grid tray
                t.grid[a - TRAY] = -1
            else:  # or an opponent tile
                t.tiles[1][a - TILE] = -1
            t.finish()
            return t

        return [(a, after(a)) for a in legal]

    def _best(self, options: list[tuple[int, Model]]) -> int:
        """The action whose position after it searches best (the first on a tie)."""
        best, best_value = options[0][0], -np.inf
        for action, position in options:
            value = search(position, self.depth - 1, best_value, np.inf)
            if value > best_value:
                best, best_value = action, value
        return best

    def model(self, v: dict[str, np.ndarray]) -> Model:
        """The public position from the observation, in the expert's frame."""
        m = Model.__new__(Model)
        trays = v["trays"].ravel().tolist()
        down = v["face_down"].ravel().tolist()
        m.grid = [-1 if d else t for t, d in zip(trays, down, strict=True)]
        m.row, m.col = divmod(int(np.argmax(v["grabber"])), SIZE)
        types = v["tile_type"].argmax(axis=2)
        m.tiles = np.where(v["tile_state"][:, :, 0] > 0, types, -1).tolist()
        count = v["crate_count"].astype(int).tolist()
        top = v["crate_top"].tolist()
        stack = v["crate_stack"]
        mine = [tuple(stack[0, k, : count[0][k]].tolist()) for k in range(NUM_CRATES)]
        if self.full:
            theirs = [tuple(stack[1, k, : count[1][k]].tolist()) for k in range(NUM_CRATES)]
        else:  # their buried trays: the apples unaccounted for, shared evenly
            known = sum(trays) + sum(map(sum, mine)) + sum(top[1])
            unseen = sum(max(0, n - 1) for n in count[1]) + sum(down)
            mean = (self.apples - known) / unseen if unseen else 0.0
            theirs = [(mean,) * (n - 1) + (top[1][k],) if n else () for k, n in enumerate(count[1])]
        m.stacks = [mine, theirs]
        m.sums = [[float(sum(s)) for s in mine], [float(sum(s)) for s in theirs]]
        closed = v["crate_closure"].tolist()
        m.closure = [
            [OPEN if not any(c) else PREMIUM_CLOSED if c[0] else WHOLESALE_CLOSED for c in seat]
            for seat in closed
        ]
        rush = v["rush_orders"].astype(int).tolist()
        m.rush, m.new_rush = [rush[0][0], rush[1][0]], [rush[0][1], rush[1][1]]
        m.player, m.over = 0, False
        return m

    @staticmethod
    def _malfunction_candidates(m: Model, legal: list[int]) -> list[int]:
        """Opponent tiles, the trays on the opponent's next line and the best two others."""
        tiles = [a for a in legal if a >= TILE]
        trays = [a for a in legal if a < TILE]
        near = [a for a in trays if (a - TRAY) % SIZE == m.col]
        far = sorted(
            (a for a in trays if (a - TRAY) % SIZE != m.col), key=lambda a: -m.grid[a - TRAY]
        )
        return tiles + near + far[:2]

    @staticmethod
    def _planned(v: dict[str, np.ndarray], action_mask: np.ndarray) -> int | None:
        """The next placement of the plan: the ``PAIRS`` on the lines in an order drawn
        from the (public) grid, so every step of a placement follows the same plan
        (None once no step of it is legal)."""
        trays = v["trays"].ravel()
        seed = int((trays * np.arange(1, 37)).sum()) + 7 * int(np.argmax(v["grabber"]))
        lines = np.random.default_rng(seed).permutation(SIZE).tolist()
        for line, pair in zip(lines, PAIRS, strict=True):
            for end, kind in enumerate(pair):
                action = PLACE + (end * SIZE + line) * 6 + kind
                if action_mask[action]:
                    return action
        return None


class PickAndPackTactician(PickAndPackExpert):
    """The expert's every decision but the move itself, which is the heuristic's (valued
    by its ``Board.move_value``): a teacher a policy network can follow. The expert's
    moves come from a three-ply search that an MLP imitates poorly (about half of them on
    new states), while the heuristic's are the best of six numbers the game's features
    already hold; the expert's tile, target, crate and Rush Order choices carry much of its
    edge (with the heuristic's moves it still beats the heuristic about 0.74 of the time).
    """

    def decide(self, observation: np.ndarray, action_mask: np.ndarray) -> Decision:
        if self._moving(observation):
            return self.fallback.decide(observation, action_mask)
        return super().decide(observation, action_mask)

    def action_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        if not self._moving(observation):
            return super().action_values(observation, action_mask)
        board = Board(self.game.observation_layout.views(observation))
        values = np.full(len(action_mask), -np.inf)
        for action in np.flatnonzero(action_mask).tolist():
            values[action] = board.move_value(action - MOVE)
        return values

    def _moving(self, observation: np.ndarray) -> bool:
        return phase_of(self.game.observation_layout.views(observation)) == MOVING
