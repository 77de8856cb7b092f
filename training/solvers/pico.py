"""Two-player Pico, solved exactly.

With two players the aside card lies face up, so both hands are public: the only
thing a player does not know is the card the other is choosing now. Every reveal is
therefore a zero-sum matrix game (at most 5×5) whose entries are the values of the
positions it leads to, and the whole game solves by backward induction, one small
matrix game per reveal. ``matrix_game`` checks for a pure saddle point (most reveals),
removes weakly dominated cards, solves 2×2 games in closed form and larger ones through
their square kernels (Shapley and Snow), falling back on a linear program
(``training.solvers.zero_sum``); all give the LP's value.

A ``Position`` is what the future depends on: the round, both hands and won piles
(as 11-bit card masks) and the scores. The round ends the moment a hand holds one
card; the players then swap the sets they held (hand plus won pile) for the second
round, so the won piles of the first round fix the second round's hands.
``Position.child`` follows ``envs.pico.rules`` (the tests check it against the real
state on random play).

Objectives, from player_0's side: ``"win"`` is the env's default reward at the end
(+1 for a higher two-round total, -1 for a lower, 0 for a tie); ``"score"`` is the
final margin (player_0's score minus player_1's). With ``"win"`` the value depends on
the running score difference; positions whose result no longer depends on play (the
lead is larger than all the points the other can still take) are valued without
search. Values are memoised (``PicoSolver`` keeps them for every deal it solves:
second-round positions recur across deals), one of each pair of seat-swapped positions.
Since the players swap sets, the ``score`` value of every deal is 0, and the ``win``
value of a deal is minus that of the deal with the sets exchanged.

``PicoSolver.strategy`` gives an equilibrium mixed strategy for either seat at any
position; playing it at every position is a subgame-perfect equilibrium
(``training.agents.nash``). ``nash_conv`` computes an agent's exact NashConv
(OpenSpiel's definition: the sum over both seats of the best-response value against
the agent in the other seat, minus the agent's value in that seat; the game is zero
sum, so the game value cancels) over the public tree of a deal, with the agent's
action probabilities at every observation it would face (``training.exploitability``).
``policy_values`` values an agent against itself over the same tree: the value of every
pair of cards at every state, with the agent playing both seats after it.

Deals: ``all_deals()`` lists the 2,772 (= 11! / (5! 5! 1!)) deals in a fixed order
(player_0's five cards, then player_1's, in lexicographic order of card indices);
``sample_deals(k, seed)`` draws ``k`` distinct ones with
``np.random.default_rng(seed).choice(2772, k, replace=False)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from envs.core.game import State, require_choice
from envs.pico.rules import (
    DEFAULT_POINTS,
    NUM_CARDS,
    VALUES,
    PicoGame,
    PicoState,
    held_set,
)
from training.solvers.zero_sum import zero_sum_lp

OBJECTIVES = ("win", "score")
NUM_ROUNDS = 2
FULL = (1 << NUM_CARDS) - 1
#: BITS[mask]: the card indices in a mask, ascending.
BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(c for c in range(NUM_CARDS) if m >> c & 1) for m in range(1 << NUM_CARDS)
)
POP: tuple[int, ...] = tuple(len(b) for b in BITS)
#: SEAT0_WINS[a][b]: whether player_0's card ``a`` beats player_1's ``b`` (cards differ).
SEAT0_WINS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(
        (VALUES[a] > VALUES[b]) != (max(VALUES[a], VALUES[b]) > 2 * min(VALUES[a], VALUES[b]))
        for b in range(NUM_CARDS)
    )
    for a in range(NUM_CARDS)
)
#: The default points of each card index.
DEFAULT_TABLE: tuple[int, ...] = tuple(DEFAULT_POINTS[v] for v in VALUES)
#: Tolerance for a pure saddle point and for ties in the matrix games.
EPS = 1e-12


def mask_of(cards: Sequence[int]) -> int:
    """The 11-bit mask of some card indices."""
    return sum(1 << int(c) for c in cards)


def counts_mask(counts: np.ndarray) -> int:
    """The mask of an 11-long vector of card counts (0 or 1 each)."""
    return sum(1 << int(c) for c in np.flatnonzero(counts))


def require_public_hands(game: PicoGame) -> None:
    """Raise a ValueError unless both hands are public (``aside="face_up"``)."""
    if game.config.aside != "face_up":
        raise ValueError(
            f"the exact Pico solver needs both hands public, but aside={game.config.aside!r} "
            "hides the other hand in round 1; allowed values: aside='face_up'"
        )


@dataclass(frozen=True)
class Position:
    """A two-player position: ``round`` (0, 1; 2 at the end), and per seat the hand and
    the won pile of this round (card masks) and the score (all rounds)."""

    round: int
    hands: tuple[int, int]
    won: tuple[int, int]
    scores: tuple[int, int]

    @classmethod
    def deal(cls, set0: int, set1: int) -> Position:
        """The start of the game where player_0 was dealt ``set0`` and player_1 ``set1``."""
        return cls(0, (set0, set1), (0, 0), (0, 0))

    @classmethod
    def from_state(cls, state: PicoState) -> Position:
        """The position of a real two-player state."""
        if state.game.num_players != 2:
            raise ValueError("only two-player Pico is solved exactly")
        require_public_hands(state.game)
        if state.is_terminal():
            hands = won = (0, 0)
        else:
            hands = tuple(counts_mask(h) for h in state.hands)
            won = tuple(counts_mask(w) for w in state.won)
        scores = tuple(int(s) for s in state.scores())
        return cls(min(state.round, NUM_ROUNDS), hands, won, scores)

    @classmethod
    def from_observation(cls, game: PicoGame, observation: np.ndarray) -> Position:
        """The position seen from an observation, in the observer's frame (the observer is
        seat 0 here: it goes first in its own observation)."""
        views = game.observation_layout.views(np.asarray(observation))
        hands, won = views["hand"], views["won"]
        rounds = views["round"][:NUM_ROUNDS]
        round_ = int(np.argmax(rounds)) if rounds.any() else NUM_ROUNDS
        return cls(
            round_,
            (counts_mask(hands[0]), counts_mask(hands[1])),
            (counts_mask(won[0]), counts_mask(won[1])),
            (int(round(float(views["scores"][0]))), int(round(float(views["scores"][1])))),
        )

    def is_terminal(self) -> bool:
        return self.round >= NUM_ROUNDS

    def legal(self, player: int) -> tuple[int, ...]:
        """The cards ``player`` may play (none at the end)."""
        return () if self.is_terminal() else BITS[self.hands[player]]

    def held(self, player: int) -> int:
        """The set ``player`` holds this round (hand and won pile)."""
        return self.hands[player] | self.won[player]

    def child(self, card0: int, card1: int, points: Sequence[int]) -> Position:
        """The position after player_0 shows ``card0`` and player_1 ``card1``."""
        hands, won, scores = list(self.hands), list(self.won), list(self.scores)
        seat = 0 if SEAT0_WINS[card0][card1] else 1
        card = (card0, card1)[seat]
        hands[seat] &= ~(1 << card)
        won[seat] |= 1 << card
        scores[seat] += points[card]
        if POP[hands[seat]] == 1:  # the round ends; the players swap their sets
            if self.round + 1 >= NUM_ROUNDS:
                return Position(NUM_ROUNDS, (0, 0), (0, 0), (scores[0], scores[1]))
            return Position(
                self.round + 1, (self.held(1), self.held(0)), (0, 0), (scores[0], scores[1])
            )
        return Position(self.round, (hands[0], hands[1]), (won[0], won[1]), tuple(scores))

    def swapped(self) -> Position:
        """The same position with the seats exchanged."""
        return Position(self.round, self.hands[::-1], self.won[::-1], self.scores[::-1])


def state_from_observation(game: PicoGame, observation: np.ndarray) -> PicoState:
    """The real two-player state an observation shows, its observer in seat 0 (every hand
    is public, so the observation holds the whole state). For agents that search from a
    state (``uses_position``): exploitability asks them at every position of the tree."""
    require_public_hands(game)
    views = game.observation_layout.views(np.asarray(observation, dtype=np.float32))
    rounds = views["round"][: game.num_rounds]
    round_ = int(np.argmax(rounds)) if rounds.any() else game.num_rounds
    hands = views["hand"].astype(np.int64)
    held = hands + views["won"].astype(np.int64)
    state = PicoState.__new__(PicoState)
    State.__init__(state, game, np.random.default_rng(0))
    sets = np.zeros_like(held)
    for player in range(2):
        sets[held_set(player, min(round_, game.num_rounds - 1), 2)] = held[player]
    state._deal(sets, views["aside"].astype(np.int64))
    state.round = round_
    state.public[:] = observation
    state.total_scores = views["scores"].astype(np.float64)
    state.hand_sizes = hands.sum(axis=1).tolist()
    state.legal = hands > 0
    return state


def future_key(game: PicoGame, observation: np.ndarray) -> bytes:
    """What of an observation the rest of the game depends on: all of it but the last
    reveal (``last_played``, ``last_winners``), which the rules never read. Observations
    with the same key show states that play on alike, so a search from one serves all."""
    kept = np.array(observation, dtype=np.float32)
    views = game.observation_layout.views(kept)
    views["last_played"][:] = 0
    views["last_winners"][:] = 0
    return kept.tobytes()


def all_deals() -> list[tuple[int, int]]:
    """Every deal (player_0's set, player_1's set) as card masks, in a fixed order."""
    deals = []
    for first in itertools.combinations(range(NUM_CARDS), 5):
        rest = [c for c in range(NUM_CARDS) if c not in first]
        for second in itertools.combinations(rest, 5):
            deals.append((mask_of(first), mask_of(second)))
    return deals


def sample_deals(k: int, seed: int) -> list[tuple[int, int]]:
    """``k`` distinct deals drawn with ``seed`` (see the module docstring)."""
    deals = all_deals()
    if not 1 <= k <= len(deals):
        raise ValueError(f"the number of deals must be 1 to {len(deals)}, got {k}")
    chosen = np.random.default_rng(seed).choice(len(deals), size=k, replace=False)
    return [deals[i] for i in chosen.tolist()]


# --- matrix games ---------------------------------------------------------------------
def _reduce(matrix: list[list[float]]) -> tuple[list[int], list[int]]:
    """The rows and columns left after iterated elimination of weakly dominated ones (the
    reduced game keeps the value, and its optimal strategies stay optimal)."""
    rows, columns = list(range(len(matrix))), list(range(len(matrix[0])))
    changed = True
    while changed and len(rows) > 1 and len(columns) > 1:
        changed = False
        for i in rows:
            if any(
                k != i and all(matrix[i][j] <= matrix[k][j] + EPS for j in columns) for k in rows
            ):
                rows.remove(i)
                changed = True
                break
        for j in columns:
            if len(columns) > 1 and any(
                k != j and all(matrix[i][j] >= matrix[i][k] - EPS for i in rows) for k in columns
            ):
                columns.remove(j)
                changed = True
                break
    return rows, columns


def matrix_game(matrix: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The value of a zero-sum matrix game for the row player (who maximises) and an
    optimal mixed strategy for each side: pure at a saddle point, else after removing
    weakly dominated rows and columns, in closed form for 2×2 and by linear programming
    for larger games."""
    matrix = np.asarray(matrix, dtype=np.float64)
    m, n = matrix.shape
    row_min, column_max = matrix.min(axis=1), matrix.max(axis=0)
    i, j = int(np.argmax(row_min)), int(np.argmin(column_max))
    if row_min[i] >= column_max[j] - EPS:
        return float(matrix[i, j]), np.eye(m)[i], np.eye(n)[j]
    rows, columns = _reduce(matrix.tolist())
    value, row, column = _reduced_game(matrix[np.ix_(rows, columns)])
    row_strategy, column_strategy = np.zeros(m), np.zeros(n)
    row_strategy[rows], column_strategy[columns] = row, column
    return value, row_strategy, column_strategy


def _reduced_game(matrix: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    m, n = matrix.shape
    row_min, column_max = matrix.min(axis=1), matrix.max(axis=0)
    i, j = int(np.argmax(row_min)), int(np.argmin(column_max))
    if row_min[i] >= column_max[j] - EPS:
        return float(matrix[i, j]), np.eye(m)[i], np.eye(n)[j]
    if m == n == 2:
        (a, b), (c, d) = matrix.tolist()
        denominator = a + d - b - c  # nonzero without a saddle point
        p, q = (d - c) / denominator, (d - b) / denominator
        return (a * d - b * c) / denominator, np.array([p, 1 - p]), np.array([q, 1 - q])
    solved = _kernel_game(matrix)
    return zero_sum_lp(matrix) if solved is None else solved


def _kernel_game(matrix: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    """A small game solved through its kernels (Shapley and Snow, 1950: with a positive
    value, some optimal pair of strategies is given by a square nonsingular submatrix
    ``A``: ``v = 1 / (1' A^-1 1)``, ``x = v 1' A^-1``, ``y = v A^-1 1``). Every square
    submatrix is tried, smallest first, in batched solves; the first whose strategies are
    non-negative and optimal in the whole game is returned (None if rounding defeats
    them all)."""
    m, n = matrix.shape
    shift = 1.0 - float(matrix.min())
    game = matrix + shift  # entries >= 1: the value is positive
    tolerance = 1e-9 * max(1.0, float(np.abs(game).max()))
    for k in range(2, min(m, n) + 1):
        rows = np.array(list(itertools.combinations(range(m), k)))
        columns = np.array(list(itertools.combinations(range(n), k)))
        pairs_r = np.repeat(np.arange(len(rows)), len(columns))
        pairs_c = np.tile(np.arange(len(columns)), len(rows))
        kernels = game[rows[pairs_r][:, :, None], columns[pairs_c][:, None, :]]
        regular = np.abs(np.linalg.det(kernels)) > 1e-9
        if not regular.any():
            continue
        kernels, pairs_r, pairs_c = kernels[regular], pairs_r[regular], pairs_c[regular]
        ones = np.ones((len(kernels), k, 1))
        y = np.linalg.solve(kernels, ones)[:, :, 0]
        x = np.linalg.solve(kernels.transpose(0, 2, 1), ones)[:, :, 0]
        total = y.sum(axis=1)
        good = (total > 0) & (x.min(axis=1) >= -1e-12) & (y.min(axis=1) >= -1e-12)
        for p in np.flatnonzero(good).tolist():
            value = 1.0 / total[p]
            row, column = np.zeros(m), np.zeros(n)
            row[rows[pairs_r[p]]] = np.clip(x[p], 0.0, None) * value
            column[columns[pairs_c[p]]] = np.clip(y[p], 0.0, None) * value
            if (row @ game).min() >= value - tolerance and (game @ column).max() <= (
                value + tolerance
            ):
                return value - shift, row / row.sum(), column / column.sum()
    return None


def game_value(rows: list[list[float]]) -> float:
    """The value of the matrix game ``rows`` (as ``matrix_game``, with a pure-Python
    saddle-point check and 2×2 formula first)."""
    maximin = max(min(row) for row in rows)
    minimax = min(max(column) for column in zip(*rows, strict=True))
    if maximin >= minimax - EPS:
        return maximin
    kept_rows, kept_columns = _reduce(rows)
    if len(kept_rows) == len(kept_columns) == 2:
        (a, b), (c, d) = ([rows[i][j] for j in kept_columns] for i in kept_rows)
        if max(min(a, b), min(c, d)) < min(max(a, c), max(b, d)) - EPS:  # no saddle point
            return (a * d - b * c) / (a + d - b - c)
    return _reduced_game(np.array(rows)[np.ix_(kept_rows, kept_columns)])[0]


# --- the solver ---------------------------------------------------------------------
def _gains(points: Sequence[int]) -> list[int]:
    """Per card mask: the most points its holder can still win this round (every card but
    one: the round ends when a hand holds one card)."""
    return [
        sum(sorted((points[c] for c in BITS[m]), reverse=True)[: POP[m] - 1])
        for m in range(1 << NUM_CARDS)
    ]


class PicoSolver:
    """Backward induction over two-player Pico with memoised values (player_0's side)."""

    def __init__(
        self,
        objective: str = "win",
        points: Sequence[int] | None = None,
        solve: Callable[[np.ndarray], tuple[float, np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        require_choice("objective", objective, OBJECTIVES)
        self.objective = objective
        #: Each reveal's solution (value, row and column strategies): by default its exact
        #: equilibrium (``matrix_game``); another, such as a regularised one, makes this the
        #: solver of another solution concept by the same backward induction.
        self.solve = solve
        self.points = tuple(int(p) for p in points) if points is not None else DEFAULT_TABLE
        self.gains = _gains(self.points)
        self._values: dict[int, float] = {}

    @classmethod
    def for_game(cls, game: PicoGame, objective: str = "win") -> PicoSolver:
        if game.num_players != 2:
            raise ValueError(
                f"only two-player Pico is solved exactly (both hands are public); "
                f"this game has {game.num_players} players"
            )
        require_public_hands(game)
        return cls(objective, game.points)

    def payoff(self, margin: int) -> float:
        """Player_0's payoff at the end of the game with this score margin."""
        if self.objective == "score":
            return float(margin)
        return float((margin > 0) - (margin < 0))

    def value(self, position: Position) -> float:
        """Player_0's equilibrium value of ``position`` (its payoff at the end)."""
        margin = position.scores[0] - position.scores[1]
        if position.is_terminal():
            return self.payoff(margin)
        h0, h1 = position.hands
        w0, w1 = position.won
        if self.objective == "score":
            return margin + self._future(position.round, h0, h1, w0, w1, 0)
        return self._future(position.round, h0, h1, w0, w1, margin)

    def matrix(self, position: Position) -> tuple[tuple[int, ...], tuple[int, ...], np.ndarray]:
        """The reveal at ``position`` as a matrix game: player_0's cards (rows), player_1's
        (columns) and the value of the position each pair of cards leads to."""
        rows, columns = position.legal(0), position.legal(1)
        matrix = np.array(
            [[self.value(position.child(a, b, self.points)) for b in columns] for a in rows]
        )
        return rows, columns, matrix

    def strategy(self, position: Position, player: int) -> np.ndarray:
        """An equilibrium mixed strategy of ``player`` at ``position`` over the 11 actions."""
        rows, columns, matrix = self.matrix(position)
        _, row, column = (self.solve or matrix_game)(matrix)
        strategy = np.zeros(NUM_CARDS)
        strategy[list(rows if player == 0 else columns)] = row if player == 0 else column
        return strategy

    def __len__(self) -> int:
        """The number of memoised positions."""
        return len(self._values)

    def _future(self, round_: int, h0: int, h1: int, w0: int, w1: int, d: int) -> float:
        """Player_0's value (``win``: with score difference ``d``; ``score``: the margin
        still to come, ``d`` is 0) of a non-terminal position."""
        win = self.objective == "win"
        if win:
            gain0, gain1 = self.gains[h0], self.gains[h1]
            if round_ == 0:  # and all but one card of the set the other holds now
                gain0, gain1 = gain0 + self.gains[h1 | w1], gain1 + self.gains[h0 | w0]
            if d > gain1:
                return 1.0
            if d < -gain0:
                return -1.0
        if h1 < h0:  # the seats' roles exchanged: one of each pair is stored
            return -self._future(round_, h1, h0, w1, w0, -d)
        last = round_ == NUM_ROUNDS - 1
        key = h0 | h1 << 11 | (0 if last else w0 << 22 | w1 << 33 | 1 << 44) | (d + 256) << 45
        value = self._values.get(key)
        if value is not None:
            return value
        points, wins, future = self.points, SEAT0_WINS, self._future
        rows = []
        for a in BITS[h0]:
            row = []
            bit_a = 1 << a
            for b in BITS[h1]:
                if wins[a][b]:
                    gained, n0, n1, m0, m1 = points[a], h0 & ~bit_a, h1, w0 | bit_a, w1
                    ended = POP[n0] == 1
                else:
                    gained, n0, n1, m0, m1 = -points[b], h0, h1 & ~(1 << b), w0, w1 | 1 << b
                    ended = POP[n1] == 1
                nd = d + gained if win else 0
                if not ended:
                    v = future(round_, n0, n1, m0, m1, nd)
                elif last:
                    v = self.payoff(nd) if win else 0.0
                else:
                    v = future(round_ + 1, n1 | m1, n0 | m0, 0, 0, nd)
                row.append(v if win else v + gained)
            rows.append(row)
        value = game_value(rows) if self.solve is None else self.solve(np.array(rows))[0]
        self._values[key] = value
        return value


_SOLVERS: dict[tuple[str, tuple[int, ...]], PicoSolver] = {}


def shared_solver(objective: str = "win", points: Sequence[int] | None = None) -> PicoSolver:
    """One solver per objective and points table for the process (its memo is shared)."""
    key = (objective, tuple(points) if points is not None else DEFAULT_TABLE)
    if key not in _SOLVERS:
        _SOLVERS[key] = PicoSolver(objective, key[1])
    return _SOLVERS[key]


def solve(state_or_deal: PicoState | Position | tuple[int, int], objective: str = "win") -> float:
    """Player_0's equilibrium value of a state, a position, or a deal (two card masks)."""
    if isinstance(state_or_deal, PicoState):
        solver = shared_solver(objective, state_or_deal.game.points)
        return solver.value(Position.from_state(state_or_deal))
    position = (
        state_or_deal if isinstance(state_or_deal, Position) else Position.deal(*state_or_deal)
    )
    return shared_solver(objective).value(position)


def strategy(
    position: Position, player: int, objective: str = "win", points: Sequence[int] | None = None
) -> np.ndarray:
    """An equilibrium mixed strategy of ``player`` at ``position`` (11 probabilities)."""
    return shared_solver(objective, points).strategy(position, player)


__all__ = [
    "OBJECTIVES",
    "Position",
    "PicoSolver",
    "all_deals",
    "best_responses",
    "observations",
    "game_value",
    "matrix_game",
    "sample_deals",
    "shared_solver",
    "solve",
    "strategy",
]


# --- exact exploitability ------------------------------------------------------------
#: BIT_VECTORS[mask]: the 11-long 0/1 vector of a card mask.
BIT_VECTORS = ((np.arange(1 << NUM_CARDS)[:, None] >> np.arange(NUM_CARDS)) & 1).astype(np.float32)
#: Probabilities of the actions at a batch of observations: (N, obs) and (N, 11) int8 masks
#: -> (N, 11) distributions.
Probabilities = Callable[[np.ndarray, np.ndarray], np.ndarray]
Reveal = tuple[int, int] | None
WINS_TABLE = np.array(SEAT0_WINS, dtype=bool)


def observations(
    game: PicoGame,
    round_: int,
    hands: np.ndarray,
    won: np.ndarray,
    reveals: np.ndarray,
    scores: np.ndarray,
) -> np.ndarray:
    """Player_0's observations (float32, one row each) of positions of one round given as
    arrays: ``hands`` and ``won`` (K, 2) card masks, ``reveals`` (K, 2) the cards of the
    last reveal (-1: none yet), ``scores`` (K, 2). The aside card is the one in no set."""
    fields = game.observation_layout.fields
    k = len(hands)
    out = np.zeros((k, game.observation_layout.size), dtype=np.float32)
    for seat in range(2):
        at = fields["hand"].start + seat * NUM_CARDS
        out[:, at : at + NUM_CARDS] = BIT_VECTORS[hands[:, seat]]
        at = fields["won"].start + seat * NUM_CARDS
        out[:, at : at + NUM_CARDS] = BIT_VECTORS[won[:, seat]]
    aside = FULL & ~(hands[:, 0] | hands[:, 1] | won[:, 0] | won[:, 1])
    out[:, fields["aside"].start : fields["aside"].stop] = BIT_VECTORS[aside]
    shown = reveals[:, 0] >= 0
    rows = np.flatnonzero(shown)
    a, b = reveals[rows, 0], reveals[rows, 1]
    played = fields["last_played"].start
    out[rows, played + a] = 1.0
    out[rows, played + NUM_CARDS + b] = 1.0
    seat0_won = WINS_TABLE[a, b]
    winners = fields["last_winners"].start
    out[rows, winners + np.where(seat0_won, 0, 1)] = 1.0
    at = fields["scores"].start
    out[:, at : at + 2] = scores
    if round_ < NUM_ROUNDS:
        out[:, fields["round"].start + round_] = 1.0
    return out


#: Observations per call of the agent's probabilities (bounds the memory of a batch).
CHUNK = 1 << 16


class _Round:
    """The public tree of one round from a root (both hands and won piles) as a graph of
    hand pairs, in breadth-first order (each reveal takes one card from a hand, so every
    node comes after its parents). A node is met after one of several last reveals and,
    in the second round, with one of several score pairs carried over: the agent may
    read both, so it is asked at every combination."""

    def __init__(
        self, round_: int, hands: tuple[int, int], won: tuple[int, int], points: Sequence[int]
    ) -> None:
        self.round = round_
        self.held = (hands[0] | won[0], hands[1] | won[1])
        self.nodes: list[tuple[int, int]] = [hands]
        index = {hands: 0}
        #: Per node: its moves (a, b, child node or -1 when the round ends, g0, g1 gained).
        self.moves: list[list[tuple[int, int, int, int, int]]] = []
        #: Per node: the reveals that lead to it, numbered (the root's come from outside).
        self.incoming: list[dict[Reveal, int]] = [{}]
        for h0, h1 in self.nodes:  # the list grows as the loop runs
            moves = []
            for a in BITS[h0]:
                for b in BITS[h1]:
                    if SEAT0_WINS[a][b]:
                        child, g0, g1, ended = (h0 & ~(1 << a), h1), points[a], 0, POP[h0] == 2
                    else:
                        child, g0, g1, ended = (h0, h1 & ~(1 << b)), 0, points[b], POP[h1] == 2
                    if ended:
                        moves.append((a, b, -1, g0, g1))
                        continue
                    if child not in index:
                        index[child] = len(self.nodes)
                        self.nodes.append(child)
                        self.incoming.append({})
                    at = index[child]
                    self.incoming[at].setdefault((a, b), len(self.incoming[at]))
                    moves.append((a, b, at, g0, g1))
            self.moves.append(moves)
        hand_masks = np.array(self.nodes, dtype=np.int64)
        self.hands = hand_masks
        self.won = np.array(self.held, dtype=np.int64)[None, :] & ~hand_masks
        new = self.won & ~np.array(won, dtype=np.int64)[None, :]
        table = np.array([sum(points[c] for c in BITS[m]) for m in range(1 << NUM_CARDS)])
        #: Per node: the points each seat has won since the root.
        self.offsets = table[new]

    def round_ends(self) -> list[tuple[int, int, int, int, int]]:
        """(node, a, b, g0, g1) of every move that ends the round."""
        return [
            (n, a, b, g0, g1)
            for n, moves in enumerate(self.moves)
            for a, b, child, g0, g1 in moves
            if child < 0
        ]

    def _ask(
        self,
        game: PicoGame,
        probabilities: Probabilities,
        root_reveals: Sequence[Reveal],
        bases: np.ndarray,
        observed: list[np.ndarray] | None = None,
    ) -> tuple[list[dict[Reveal, int]], np.ndarray, list[np.ndarray]]:
        """Ask the agent in both seats at every node of the round, after every reveal it is
        met after (the root's are ``root_reveals``), with every base score pair (``bases``,
        (C, 2)): the reveals of each node (numbered), where each node's start in the flat
        (node, reveal) order, and each seat's probabilities ``(node-reveals, C, 11)``.
        ``observed`` (a list) receives player_0's observations in that order, base last."""
        incoming = list(self.incoming)
        incoming[0] = {reveal: i for i, reveal in enumerate(root_reveals)}
        counts = [len(reveals) for reveals in incoming]
        starts = np.concatenate([[0], np.cumsum(counts)])
        node_of = np.repeat(np.arange(len(self.nodes)), counts)
        reveals = np.array(
            [(-1, -1) if r is None else r for table in incoming for r in table], dtype=np.int64
        )
        num_bases = len(bases)
        sigma = [np.empty((len(node_of), num_bases, NUM_CARDS)) for _ in range(2)]
        per_chunk = max(1, CHUNK // num_bases)
        permutation = game.seat_permutations[1]
        for i in range(0, len(node_of), per_chunk):
            nodes = node_of[i : i + per_chunk]
            m = len(nodes)
            scores = bases[None, :, :] + self.offsets[nodes][:, None, :]
            seat0 = observations(
                game,
                self.round,
                np.repeat(self.hands[nodes], num_bases, axis=0),
                np.repeat(self.won[nodes], num_bases, axis=0),
                np.repeat(reveals[i : i + per_chunk], num_bases, axis=0),
                scores.reshape(-1, 2),
            )
            if observed is not None:
                observed.append(seat0)
            for seat, obs in enumerate((seat0, seat0[:, permutation])):
                masks = BIT_VECTORS[np.repeat(self.hands[nodes, seat], num_bases)].astype(np.int8)
                sigma[seat][i : i + m] = probabilities(obs, masks).reshape(m, num_bases, -1)
        return incoming, starts, sigma

    def evaluate(
        self,
        game: PicoGame,
        probabilities: Probabilities,
        root_reveals: Sequence[Reveal],
        bases: np.ndarray,
        end: Callable[[int, int, np.ndarray], tuple[np.ndarray, np.ndarray]],
    ) -> dict[Reveal, tuple[np.ndarray, np.ndarray]]:
        """Best-response values at the root, per reveal it is met after: player_0's best
        response to the agent in seat 1 and player_1's to the agent in seat 0 (both in
        player_0's payoff), one per base score pair (``bases``, (C, 2)). ``end(a, b,
        scores)`` values a move that ends the round for each base (scores (C, 2))."""
        incoming, starts, sigma = self._ask(game, probabilities, root_reveals, bases)
        num_bases = len(bases)
        best0: list[np.ndarray] = [np.empty(0)] * len(self.nodes)
        best1: list[np.ndarray] = [np.empty(0)] * len(self.nodes)
        for n in reversed(range(len(self.nodes))):
            h0, h1 = self.nodes[n]
            rows, columns = BITS[h0], BITS[h1]
            w0 = np.empty((len(rows) * len(columns), num_bases))
            w1 = np.empty_like(w0)
            for k, (a, b, child, g0, g1) in enumerate(self.moves[n]):
                if child >= 0:
                    at = incoming[child][(a, b)]
                    w0[k], w1[k] = best0[child][at], best1[child][at]
                else:
                    w0[k], w1[k] = end(a, b, bases + self.offsets[n] + (g0, g1))
            w0 = w0.reshape(len(rows), len(columns), num_bases)
            w1 = w1.reshape(len(rows), len(columns), num_bases)
            at = slice(starts[n], starts[n + 1])
            seat1 = sigma[1][at][:, :, list(columns)]  # (reveals, bases, columns)
            best0[n] = np.einsum("lcb,abc->lac", seat1, w0).max(axis=1)
            seat0 = sigma[0][at][:, :, list(rows)]
            best1[n] = np.einsum("lca,abc->lbc", seat0, w1).min(axis=1)
        return {reveal: (best0[0][i], best1[0][i]) for reveal, i in incoming[0].items()}

    def policy_values(
        self,
        game: PicoGame,
        probabilities: Probabilities,
        root_reveals: Sequence[Reveal],
        bases: np.ndarray,
        end: Callable[[int, int, np.ndarray], np.ndarray],
        observed: list[np.ndarray],
        joint: list[np.ndarray],
    ) -> dict[Reveal, np.ndarray]:
        """``evaluate`` with the agent in both seats: player_0's value at the root per
        reveal it is met after, one per base. Appends player_0's observation of every
        (node, reveal, base) to ``observed`` and its joint-action values to ``joint``
        (``(11, 11)``, player_0's card the row; zero off the hands)."""
        incoming, starts, sigma = self._ask(game, probabilities, root_reveals, bases, observed)
        num_bases = len(bases)
        matrices = np.zeros((starts[-1], num_bases, NUM_CARDS, NUM_CARDS), dtype=np.float32)
        value: list[np.ndarray] = [np.empty(0)] * len(self.nodes)
        for n in reversed(range(len(self.nodes))):
            h0, h1 = self.nodes[n]
            rows, columns = list(BITS[h0]), list(BITS[h1])
            w = np.empty((len(rows) * len(columns), num_bases))
            for k, (a, b, child, g0, g1) in enumerate(self.moves[n]):
                if child >= 0:
                    w[k] = value[child][incoming[child][(a, b)]]
                else:
                    w[k] = end(a, b, bases + self.offsets[n] + (g0, g1))
            w = w.reshape(len(rows), len(columns), num_bases)
            at = slice(starts[n], starts[n + 1])
            matrices[at, :, np.array(rows)[:, None], columns] = w.transpose(2, 0, 1)
            seat0, seat1 = sigma[0][at][:, :, rows], sigma[1][at][:, :, columns]
            value[n] = np.einsum("lca,lcb,abc->lc", seat0, seat1, w)
        joint.append(matrices.reshape(-1, NUM_CARDS, NUM_CARDS))
        return {reveal: value[0][i] for reveal, i in incoming[0].items()}


def final_payoffs(scores: np.ndarray, objective: str) -> np.ndarray:
    """Player_0's payoffs at the ends of games with final scores ``scores`` ((C, 2)), as
    ``PicoSolver.payoff`` gives one."""
    margin = (scores[:, 0] - scores[:, 1]).astype(np.float64)
    return margin if objective == "score" else np.sign(margin)


def _next_round(
    first: _Round, base: np.ndarray, points: Sequence[int]
) -> tuple[_Round, np.ndarray, dict[tuple[int, ...], int], list[tuple[int, int]]]:
    """The round after ``first`` (met with score pairs ``base`` + its gains): its tree, the
    score pairs carried into it (C, 2), their index, and the reveals that end ``first``."""
    ends = first.round_ends()
    carried = sorted(
        {tuple((base[0] + first.offsets[n] + (g0, g1)).tolist()) for n, _, _, g0, g1 in ends}
    )
    at = {scores: i for i, scores in enumerate(carried)}
    second = _Round(first.round + 1, first.held[::-1], (0, 0), points)
    return second, np.array(carried), at, sorted({(a, b) for _, a, b, _, _ in ends})


def best_responses(
    game: PicoGame,
    probabilities: Probabilities,
    position: Position,
    reveal: Reveal = None,
    objective: str = "win",
) -> tuple[float, float]:
    """Exact best-response values against an agent, from ``position`` (met after the last
    reveal ``reveal``, cards (player_0's, player_1's), or None): player_0's best response
    to the agent in seat 1, and player_1's to the agent in seat 0, both as player_0's
    payoff. ``probabilities`` gives the agent's action probabilities for a batch of
    observations and masks; it is called on every observation of the public tree (a few
    hundred thousand from the start of a game), in batches of at most ``CHUNK``."""
    require_choice("objective", objective, OBJECTIVES)
    require_public_hands(game)
    if position.is_terminal():
        value = PicoSolver(objective).payoff(position.scores[0] - position.scores[1])
        return value, value

    def payoff(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value = final_payoffs(scores, objective)
        return value, value

    first = _Round(position.round, position.hands, position.won, game.points)
    base = np.array([position.scores], dtype=np.int64)
    if position.round == NUM_ROUNDS - 1:
        values = first.evaluate(game, probabilities, [reveal], base, lambda a, b, s: payoff(s))
        return float(values[reveal][0][0]), float(values[reveal][1][0])
    second, carried, at, last_reveals = _next_round(first, base, game.points)
    later = second.evaluate(game, probabilities, last_reveals, carried, lambda a, b, s: payoff(s))

    def next_round(a: int, b: int, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i = at[tuple(scores[0].tolist())]
        v0, v1 = later[(a, b)]
        return v0[i : i + 1], v1[i : i + 1]

    values = first.evaluate(game, probabilities, [reveal], base, next_round)
    return float(values[reveal][0][0]), float(values[reveal][1][0])


def policy_values(
    game: PicoGame,
    probabilities: Probabilities,
    position: Position,
    reveal: Reveal = None,
    objective: str = "win",
) -> tuple[np.ndarray, np.ndarray]:
    """The agent's exact values in both seats, at every state of the public tree from
    ``position`` (met after ``reveal``, as ``best_responses``): player_0's observation of
    each state ``(E, obs)`` and the value of each pair of cards there, played then with the
    agent in both seats after ``(E, 11, 11)`` (player_0's card the row, player_1's the
    column, player_0's payoff; zero off the hands). The value of a state is its matrix
    weighted by both seats' probabilities there; the first rows are the last round's."""
    require_choice("objective", objective, OBJECTIVES)
    require_public_hands(game)
    if position.is_terminal():
        raise ValueError("the game is over at this position: there is nothing to value")

    def payoff(a: int, b: int, scores: np.ndarray) -> np.ndarray:
        return final_payoffs(scores, objective)

    observed: list[np.ndarray] = []
    joint: list[np.ndarray] = []
    first = _Round(position.round, position.hands, position.won, game.points)
    base = np.array([position.scores], dtype=np.int64)
    end = payoff
    if position.round < NUM_ROUNDS - 1:
        second, carried, at, last_reveals = _next_round(first, base, game.points)
        later = second.policy_values(
            game, probabilities, last_reveals, carried, payoff, observed, joint
        )

        def end(a: int, b: int, scores: np.ndarray) -> np.ndarray:
            i = at[tuple(scores[0].tolist())]
            return later[(a, b)][i : i + 1]

    first.policy_values(game, probabilities, [reveal], base, end, observed, joint)
    return np.concatenate(observed), np.concatenate(joint)
