"""Pico, batched: thousands of games in lockstep as numpy arrays.

``PicoVector`` plays ``B`` games of Pico (two or three players, any ``points``) at
once. It is the batched multi-agent interface: every seat's observation, mask and
action are arrays with a game axis and a seat axis, and one ``step`` reveals one
joint action in every game (in Pico every seat chooses at every reveal):

```python
engine = PicoVector(num_envs=1024, num_players=2, reward_mode="win")
engine.reset(seed=0)
observations = engine.observations()    # (B, N, obs_size) float32, each seat's own view
masks = engine.masks()                  # (B, N, 11) bool
rewards, terminated, info = engine.step(actions)   # actions: (B, N) integers
```

It is checked against the rules (``envs/pico/rules.py``) by differential tests
(``tests/test_vector_pico.py``): from the same dealt cards and the same actions it
gives the same observations, masks, rewards, terminations and scores.

Layout and dtype: ``observations()[b, p]`` is exactly what ``PicoGame.observation``
gives seat ``p`` of game ``b`` (same layout, float32). As in ``PicoState``, the
engine keeps seat 0's observation of every game (``public``, shape ``(B,
obs_size)``), written in place at every reveal, and a seat's observation is a
gather from it through the same ``seat_permutations``.

Dealing: ``reset(seed)`` makes the engine's ``numpy.random.Generator``
(``default_rng(seed)``) and deals every game; every later deal (the automatic
reset of finished games, ``redeal``) draws from the same generator. A deal of ``k``
games is one call ``rng.random((k, deck_size))``: each row's ``argsort`` orders
that game's deck; set ``d`` is cards ``d * hand_size`` to ``(d + 1) * hand_size``
of it and the rest is the aside card. So a batch is reproducible from its seed and
its actions, but a game's deal is not the one ``PicoState`` would draw from the
same seed: to replay given deals, ``reset_from(sets, aside)`` starts every game
from given dealt sets.

Finished games restart at once (as SB3's ``VecEnv`` does): ``step`` returns
``terminated[b] = True`` with the final rewards, and the game is dealt again before
``step`` returns, so ``observations()``, ``masks()`` and ``scores()`` show the new
game. What the finished games ended with is in ``info``: ``info["done"]`` (the
indices of the games that finished, ascending), ``info["terminal_observations"]``
(``(len(done), N, obs_size)``: every seat's final view) and
``info["terminal_scores"]`` (``(len(done), N)``).

Rewards follow ``envs.core.rewards``: ``"win"`` gives every seat its zero-sum
share at the end (tied winners share), ``"score"`` the change in (own score - mean
of the others') at every reveal.

An illegal action raises ``IllegalActionError`` (a ValueError) naming the game,
the seat, the action and the legal actions, and changes nothing.

``heuristic_actions`` is the batched form of ``training.agents.pico.PicoHeuristic``
(``envs`` never imports ``training``, so its logic is written twice); a test checks
that both make exactly the same choices on many positions with the same tie-break
draws.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from envs.core.game import IllegalActionError
from envs.core.rewards import REWARD_MODES
from envs.pico.observation import last_reveal
from envs.pico.rules import (
    DECK_COUNTS,
    HAND_SIZE,
    NUM_CARDS,
    VALUES,
    PicoConfig,
    PicoGame,
    card_winners,
)

#: Scale of the heuristic's random tie-break (``training.agents.pico.TIE_BREAK``).
TIE_BREAK = 1e-3


@functools.cache
def reveal_tables(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """For every joint action, coded ``sum(action[p] * 11 ** (N - 1 - p))``: which seats
    win (``(11**N, N)`` bool) and the ``last_played``/``last_winners`` fields it leaves
    (``(11**N, 12N)`` float32), both from the rules' own functions."""
    joint = list(itertools.product(range(NUM_CARDS), repeat=num_players))
    wins = np.zeros((len(joint), num_players), dtype=bool)
    shown = np.zeros((len(joint), (NUM_CARDS + 1) * num_players), dtype=np.float32)
    for code, played in enumerate(joint):
        winning = card_winners(played)
        wins[code, list(winning)] = True
        shown[code] = last_reveal(played, winning)
    return wins, shown


@functools.cache
def heuristic_payoffs(num_players: int, points: tuple[int, ...]) -> np.ndarray:
    """The heuristic's payoff of seat 0's card against every choice of the others, times
    ``N - 1`` so that it is an integer: ``(N - 1) * (seat 0's points won) - (the others'
    points won)``; shape ``(11,) * N``, int64."""
    wins, _ = reveal_tables(num_players)
    cards = np.array(list(itertools.product(range(NUM_CARDS), repeat=num_players)))
    won = wins * np.asarray(points)[cards]  # points each seat wins
    payoff = (num_players - 1) * won[:, 0] - won[:, 1:].sum(axis=1)
    return payoff.reshape((NUM_CARDS,) * num_players)


def heuristic_values(
    observations: np.ndarray, masks: np.ndarray, num_players: int, points: tuple[int, ...]
) -> np.ndarray:
    """``PicoHeuristic.card_values`` of every row: each legal card's expected points won
    minus the opponents' mean points won, against opponents choosing uniformly among the
    values in their hands (-inf for illegal cards); ``(B, 11)`` float64.

    Computed exactly in integers and divided once, which gives the same floats as the
    per-game heuristic (its sums are of multiples of 1/2, exact in floats)."""
    n = num_players
    hands = np.asarray(observations)[:, : n * NUM_CARDS].reshape(-1, n, NUM_CARDS) > 0
    present = hands[:, 1:].astype(np.int64)  # the opponents' distinct values, in seat order
    payoff = heuristic_payoffs(n, points)
    if n == 2:
        total = present[:, 0] @ payoff.T
    else:
        total = np.einsum("cij,bi,bj->bc", payoff, present[:, 0], present[:, 1], optimize=True)
    combos = present.sum(axis=2).prod(axis=1)
    values = (total / (n - 1)) / combos[:, None]
    return np.where(np.asarray(masks, dtype=bool), values, -np.inf)


def heuristic_actions(
    observations: np.ndarray,
    masks: np.ndarray,
    num_players: int,
    points: tuple[int, ...],
    noise: np.ndarray,
) -> np.ndarray:
    """The batched ``PicoHeuristic.act``: per row, the legal card with the best
    ``heuristic_values`` plus ``TIE_BREAK * noise`` (``noise``: ``(B, 11)`` uniform draws;
    the per-game heuristic draws one per legal card, in card order, and adds it the same
    way), the first one on an exact tie. ``(B,)`` int64."""
    values = heuristic_values(observations, masks, num_players, points)
    return np.argmax(values + TIE_BREAK * noise, axis=1)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform legal actions for every row of ``masks`` (``(..., 11)`` bool)."""
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return np.argmax(keys, axis=-1)


class PicoVector:
    """``num_envs`` games of Pico in lockstep (see the module docstring).

    Args:
        num_envs: the number of games ``B``.
        num_players: 2 or 3.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's other options (``points``); the defaults otherwise.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        reward_mode: str = "win",
        seed: int | None = None,
        **options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(
                f"reward_mode={reward_mode!r} is not allowed; allowed values: "
                + ", ".join(map(repr, REWARD_MODES))
            )
        config = PicoConfig.from_options({"num_players": num_players, **options})
        if getattr(config, "aside", "face_up") != "face_up":
            raise ValueError("the batched Pico engine plays only aside='face_up' (the default)")
        self.game = game = PicoGame(config)
        self.num_envs = int(num_envs)
        self.num_players = n = game.num_players
        self.num_actions = NUM_CARDS
        self.reward_mode = reward_mode
        self.observation_layout = game.observation_layout
        self.observation_size = game.observation_layout.size
        self.points = game.points
        self._card_points = game.card_points.astype(np.float64)
        self._wins, self._shown = reveal_tables(n)
        self._code_weights = NUM_CARDS ** np.arange(n - 1, -1, -1)
        at = game.public_index
        self._at = at
        self._hand_rows = np.array(at.hand_rows)[None, :]  # + card: a seat's hand column
        self._won_offset = np.array(at.won_rows) - np.array(at.hand_rows)
        self._permutations = np.stack(game.seat_permutations)  # (N, obs_size)
        #: Per round, the dealt set each seat holds (``held_set``).
        self._held = np.array(game.held_sets)  # (rounds, N)
        self._deck = np.repeat(np.arange(NUM_CARDS), DECK_COUNTS[n])
        self._hand_size = HAND_SIZE[n]
        self.num_rounds = game.num_rounds
        self.reset(seed)

    # --- dealing ---------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """A new generator from ``seed`` and a new deal in every game."""
        self.rng = np.random.default_rng(seed)
        b = self.num_envs
        self.public = np.zeros((b, self.observation_size), dtype=np.float32)
        self.sets = np.zeros((b, self.num_players, NUM_CARDS), dtype=np.int64)
        self.aside = np.zeros((b, NUM_CARDS), dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)
        self.hand_sizes = np.zeros((b, self.num_players), dtype=np.int64)
        self._scores = np.zeros((b, self.num_players), dtype=np.float64)
        self._margins = np.zeros((b, self.num_players), dtype=np.float64)
        self.redeal(np.arange(b))

    def redeal(self, games: np.ndarray) -> None:
        """Deal new games in the rows ``games`` (indices), from the engine's generator."""
        games = np.asarray(games, dtype=np.int64)
        if not len(games):
            return
        n, size = self.num_players, self._hand_size
        keys = self.rng.random((len(games), len(self._deck)))
        deck = self._deck[np.argsort(keys, axis=1)]
        one_hot = deck[:, :, None] == np.arange(NUM_CARDS)  # (k, deck, 11)
        sets = one_hot[:, : n * size].reshape(len(games), n, size, NUM_CARDS).sum(axis=2)
        self._start(games, sets, one_hot[:, n * size :].sum(axis=1))

    def reset_from(
        self, sets: np.ndarray, aside: np.ndarray, games: np.ndarray | None = None
    ) -> None:
        """Start games from given dealt sets (``(k, N, 11)`` counts: set ``d`` dealt to seat
        ``d``, as ``PicoState.sets``) and aside cards (``(k, 11)``): the games ``games``
        (``k`` indices), or all ``B`` by default. The generator is not used."""
        sets = np.asarray(sets, dtype=np.int64)
        aside = np.asarray(aside, dtype=np.int64)
        games = np.arange(self.num_envs) if games is None else np.asarray(games, dtype=np.int64)
        b, n = len(games), self.num_players
        if sets.shape != (b, n, NUM_CARDS) or aside.shape != (b, NUM_CARDS):
            raise ValueError(
                f"reset_from needs sets of shape {(b, n, NUM_CARDS)} and aside of shape "
                f"{(b, NUM_CARDS)}, got {sets.shape} and {aside.shape}"
            )
        deck = sets.sum(axis=1) + aside
        if (deck != DECK_COUNTS[n]).any() or (sets.sum(axis=2) != self._hand_size).any():
            raise ValueError(
                f"the sets and aside cards must deal the {n}-player deck, "
                f"{self._hand_size} cards a set"
            )
        self._start(games, sets, aside)

    def _start(self, games: np.ndarray, sets: np.ndarray, aside: np.ndarray) -> None:
        at = self._at
        self.sets[games] = sets
        self.aside[games] = aside
        self.public[games] = 0.0
        self.public[games, at.aside] = aside
        self.round[games] = 0
        self._scores[games] = 0.0
        self._margins[games] = 0.0
        self._start_round(games)

    def _start_round(self, games: np.ndarray) -> None:
        """Hand out the sets held in the current round of ``games`` (as ``_start_round``)."""
        at, n = self._at, self.num_players
        held = self._held[self.round[games]]  # (k, N)
        hands = self.sets[games[:, None], held]  # (k, N, 11)
        rows = self.public[games]
        rows[:, at.hands] = hands.reshape(len(games), n * NUM_CARDS)
        rows[:, at.won] = 0.0
        rows[:, at.rounds] = 0.0
        rows[np.arange(len(games)), at.round + self.round[games]] = 1.0
        self.public[games] = rows
        self.hand_sizes[games] = hands.sum(axis=2)

    # --- what the seats read ---------------------------------------------------------
    def observations(self) -> np.ndarray:
        """Every seat's observation of every game: ``(B, N, obs_size)`` float32 (a new
        array); ``[b, p]`` is what ``PicoGame.observation`` gives seat ``p``."""
        return self.public[:, self._permutations]

    def observations_of(self, seats: np.ndarray) -> np.ndarray:
        """One seat's observation per game (``seats``: ``(B,)``): ``(B, obs_size)``."""
        return self.public[np.arange(self.num_envs)[:, None], self._permutations[seats]]

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, N, 11)`` bool (the values in its hand)."""
        at = self._at
        return self.public[:, at.hands].reshape(-1, self.num_players, NUM_CARDS) > 0

    def scores(self) -> np.ndarray:
        """Game points of every seat: ``(B, N)`` float64 (a copy)."""
        return self._scores.copy()

    # --- playing ---------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Reveal one joint action in every game: ``actions[b, p]`` is seat ``p``'s card.

        Returns ``rewards`` (``(B, N)`` float64), ``terminated`` (``(B,)`` bool) and
        ``info`` (the finished games' indices, final observations and scores; they are
        dealt again before this returns). Raises ``IllegalActionError`` and changes
        nothing if any action is illegal."""
        b, n = self.num_envs, self.num_players
        actions = np.asarray(actions)
        if actions.shape != (b, n) or actions.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions must be an integer array of shape {(b, n)}, got "
                f"{actions.dtype} {actions.shape}"
            )
        actions = actions.astype(np.int64, copy=False)
        public = self.public
        rows = np.arange(b)[:, None]
        in_range = (actions >= 0) & (actions < NUM_CARDS)
        hand_cols = self._hand_rows + np.where(in_range, actions, 0)
        legal = in_range & (public[rows, hand_cols] > 0)
        if not legal.all():
            game, seat = (int(i) for i in np.argwhere(~legal)[0])
            mask = self.masks()[game, seat]
            names = ", ".join(f"{a} (play {VALUES[a]})" for a in np.flatnonzero(mask))
            raise IllegalActionError(
                f"game {game}: action {int(actions[game, seat])} is illegal for player "
                f"{seat}; legal actions: {names}"
            )
        code = actions @ self._code_weights
        won = self._wins[code]  # (B, N)
        at = self._at
        public[:, at.last_reveal] = self._shown[code]
        delta = won.astype(np.float32)
        public[rows, hand_cols] -= delta
        public[rows, hand_cols + self._won_offset] += delta
        self._scores += self._card_points[actions] * won
        public[:, at.scores : at.scores + n] = self._scores
        self.hand_sizes -= won
        ended = (self.hand_sizes == 1).any(axis=1)
        terminated = np.zeros(b, dtype=bool)
        if ended.any():
            self.round += ended
            terminated = ended & (self.round >= self.num_rounds)
            next_round = np.flatnonzero(ended & ~terminated)
            if len(next_round):
                self._start_round(next_round)
        done = np.flatnonzero(terminated)
        if len(done):
            public[done, at.rounds] = 0.0
        rewards = self._rewards(terminated, done)
        info = {
            "done": done,
            "terminal_observations": public[done][:, self._permutations],
            "terminal_scores": self._scores[done],
        }
        self.redeal(done)
        return rewards, terminated, info

    def _rewards(self, terminated: np.ndarray, done: np.ndarray) -> np.ndarray:
        n = self.num_players
        scores = self._scores
        if self.reward_mode == "score":
            margins = scores - (scores.sum(axis=1, keepdims=True) - scores) / (n - 1)
            rewards = margins - self._margins
            self._margins = margins
            return rewards
        rewards = np.zeros((self.num_envs, n), dtype=np.float64)
        if len(done):
            final = scores[done]
            winners = final == final.max(axis=1, keepdims=True)
            shares = winners / winners.sum(axis=1, keepdims=True)
            rewards[done] = (shares - shares.mean(axis=1, keepdims=True)) * n / (n - 1)
        return rewards

    # --- opponents -------------------------------------------------------------------
    def heuristic_actions(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """``heuristic_actions`` for rows of observations and masks of this game, with the
        tie-break noise drawn as ``rng.random((B, 11))``."""
        noise = rng.random(np.shape(masks))
        return heuristic_actions(observations, masks, self.num_players, self.points, noise)
