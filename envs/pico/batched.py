"""Pico, batched: thousands of games in lockstep as numpy arrays.

``PicoVector`` plays ``B`` games of Pico (two or three players, any ``points``, the
two-player aside card face up or face down) at once, on ``envs.core.batched.BatchedEngine`` (which documents
the interface). In Pico every seat chooses at every reveal.

It is checked against the rules (``envs/pico/rules.py``) by differential tests
(``tests/test_batched_every_game.py``, ``tests/test_batched_pico.py``): from the same dealt cards and the same actions it
gives the same observations, masks, rewards, terminations and scores.

As in ``PicoState``, the engine keeps seat 0's observation of every game (``public``,
shape ``(B, obs_size)``), written in place at every reveal, and a seat's observation
is a gather from it through the same ``seat_permutations`` (``envs/pico/layout.py``).

Dealing: a deal of ``k`` games is one call ``rng.random((k, deck_size))``: each row's
``argsort`` orders that game's deck; set ``d`` is cards ``d * hand_size`` to
``(d + 1) * hand_size`` of it and the rest is the aside card. ``reset_from(sets,
aside)`` starts games from given dealt sets, ``load(states)`` from any position.

``heuristic_actions`` plays ``envs.pico.heuristic.PicoHeuristic`` in many rows at once
(its ``heuristic_actions``, drawing the tie-break noise here).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.pico.heuristic import heuristic_actions
from envs.pico.layout import NUM_CARDS, last_reveal
from envs.pico.rules import DECK_COUNTS, HAND_SIZE, PicoGame, PicoState, card_winners


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


class PicoVector(BatchedEngine):
    """``num_envs`` games of Pico in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``num_players``, ``points``, ``aside``).
    """

    game_class = PicoGame
    #: The generator draws only at the deal (see the module docstring).
    draws_after_deal = False
    state_arrays = ("public", "sets", "aside", "round", "hand_sizes", "_scores", "shown")

    def _allocate(self) -> None:
        game, b, n = self.game, self.num_envs, self.num_players
        self.face_down = game.face_down
        #: Cards each seat has revealed in round 1 (as ``FaceDownPicoState.shown``; kept
        #: only face down, where round 1 hides the other hand: see ``observe``).
        self.shown = np.zeros((b, n, NUM_CARDS), dtype=np.float32)
        if self.face_down:
            self._hidden = game.hidden_index
            #: The batched heuristic reads both hands; face down, the heuristic agent
            #: plays game by game instead (``make_vec`` falls back to it).
            self.heuristic_actions = None
        self.points = game.points
        self._card_points = game.card_points.astype(np.float64)
        self._wins, self._shown = reveal_tables(n)
        self._code_weights = NUM_CARDS ** np.arange(n - 1, -1, -1)
        self._at = at = game.public_index
        self._hand_rows = np.array(at.hand_rows)[None, :]  # + card: a seat's hand column
        self._won_offset = np.array(at.won_rows) - np.array(at.hand_rows)
        self._permutations = np.stack(game.seat_permutations)  # (N, obs_size)
        #: Per round, the dealt set each seat holds (``held_set``).
        self._held = np.array(game.held_sets)  # (rounds, N)
        self._deck = np.repeat(np.arange(NUM_CARDS), DECK_COUNTS[n])
        self._hand_size = HAND_SIZE[n]
        self.num_rounds = game.num_rounds
        self.public = np.zeros((b, self.observation_size), dtype=np.float32)
        self.sets = np.zeros((b, n, NUM_CARDS), dtype=np.int64)
        self.aside = np.zeros((b, NUM_CARDS), dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)
        self.hand_sizes = np.zeros((b, n), dtype=np.int64)
        self._scores = np.zeros((b, n), dtype=np.float64)
        self._everyone = np.ones((b, n), dtype=bool)

    # --- dealing ---------------------------------------------------------------------
    def _deal(self, games: np.ndarray) -> None:
        n, size = self.num_players, self._hand_size
        keys = self.rng.random((len(games), len(self._deck)))
        deck = self._deck[np.argsort(keys, axis=1)]
        one_hot = deck[:, :, None] == np.arange(NUM_CARDS)  # (k, deck, 11)
        sets = one_hot[:, : n * size].reshape(len(games), n, size, NUM_CARDS).sum(axis=2)
        self._start(games, sets, one_hot[:, n * size :].sum(axis=1))

    def _load(self, games: np.ndarray, states: Sequence[PicoState]) -> None:
        self.sets[games] = np.stack([s.sets for s in states])
        self.aside[games] = np.stack([s.aside for s in states])
        self.public[games] = np.stack([s.public for s in states])
        self.round[games] = [s.round for s in states]
        self.hand_sizes[games] = [s.hand_sizes for s in states]
        self._scores[games] = np.stack([s.scores() for s in states])
        if self.face_down:
            self.shown[games] = np.stack([s.shown for s in states])

    def reset_from(
        self, sets: np.ndarray, aside: np.ndarray, games: np.ndarray | None = None
    ) -> None:
        """Start games from given dealt sets (``(k, N, 11)`` counts: set ``d`` dealt to seat
        ``d``, as ``PicoState.sets``) and aside cards (``(k, 11)``): the games ``games``
        (``k`` indices), or all ``B`` by default. The generator is not used."""
        sets = np.asarray(sets, dtype=np.int64)
        aside = np.asarray(aside, dtype=np.int64)
        games = self._all if games is None else np.asarray(games, dtype=np.int64)
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
        self._started(games)

    def _start(self, games: np.ndarray, sets: np.ndarray, aside: np.ndarray) -> None:
        at = self._at
        self.sets[games] = sets
        self.aside[games] = aside
        self.public[games] = 0.0
        self.public[games, at.aside] = aside
        self.round[games] = 0
        self._scores[games] = 0.0
        if self.face_down:
            self.shown[games] = 0.0
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
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        observed = self.public[games[:, None], self._permutations[seats]]
        if self.face_down:
            hiding = np.flatnonzero(self.round[games] == 0)
            if len(hiding):  # round 1: as ``HiddenIndex.hide``, for many rows at once
                at, rows = self._hidden, observed[hiding]
                shown = self.shown[games[hiding], 1 - seats[hiding]]
                other = rows[:, at.other_hand]
                rows[:, at.unseen] = other * (1.0 - shown) + rows[:, at.aside]
                rows[:, at.other_hand] = other * shown
                rows[:, at.aside] = 0.0
                observed[hiding] = rows
        return observed

    def observations(self) -> np.ndarray:
        if self.face_down:
            return self._every_seat(self._all)
        return self.public[:, self._permutations]

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, N, 11)`` bool (the values in its hand)."""
        return self.public[:, self._at.hands].reshape(-1, self.num_players, NUM_CARDS) > 0

    def choosers(self) -> np.ndarray:
        """Every seat chooses at every reveal."""
        return self._everyone

    def scores(self) -> np.ndarray:
        """Game points of every seat: ``(B, N)`` float64 (a copy)."""
        return self._scores.copy()

    # --- playing ---------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        public, at, n = self.public, self._at, self.num_players
        rows = games[:, None]
        hand_cols = self._hand_rows + actions
        code = actions @ self._code_weights
        won = self._wins[code]  # (k, N)
        public[games, at.last_reveal] = self._shown[code]
        delta = won.astype(np.float32)
        public[rows, hand_cols] -= delta
        public[rows, hand_cols + self._won_offset] += delta
        self._scores[games] += self._card_points[actions] * won
        public[games, at.scores : at.scores + n] = self._scores[games]
        self.hand_sizes[games] -= won
        ended = (self.hand_sizes[games] == 1).any(axis=1)
        terminated = np.zeros(len(games), dtype=bool)
        if ended.any():
            self.round[games[ended]] += 1
            terminated = ended & (self.round[games] >= self.num_rounds)
            next_round = games[ended & ~terminated]
            if len(next_round):
                self._start_round(next_round)
        if self.face_down:  # round 1's reveals, once the round goes on (as the rules)
            first = self.round[games] == 0
            self.shown[rows[first], np.arange(n)[None, :], actions[first]] = 1.0
        done = games[terminated]
        if len(done):
            public[done, at.rounds] = 0.0
        return terminated

    # --- opponents -------------------------------------------------------------------
    def heuristic_actions(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """``heuristic_actions`` for rows of observations and masks of this game, with the
        tie-break noise drawn as ``rng.random((B, 11))``."""
        noise = rng.random(np.shape(masks))
        return heuristic_actions(observations, masks, self.num_players, self.points, noise)
