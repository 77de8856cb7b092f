"""Reference games and a batched engine played in lockstep, for the engines' tests
(``test_batched_every_game.py`` over every game, and a game's own file where it needs it):
the differential test's one implementation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envs.core.batched import random_actions
from envs.core.game import Game
from envs.core.table import Table


def new_table(game: Game, reward_mode: str, seed: int) -> Table:
    table = Table(game, reward_mode)
    table.reset(np.random.default_rng(seed))
    return table


def play_part_way(table: Table, rng: np.random.Generator, decisions: int) -> None:
    """Up to ``decisions`` random joint choices (fewer where the game ends)."""
    for _ in range(decisions):
        for p in table.waiting_for():
            if not table.terminal:
                table.commit(p, int(rng.choice(np.flatnonzero(table.legal_mask(p)))))


class Dealer:
    """New reference tables of one game from consecutive seeds."""

    def __init__(self, game: Game, reward_mode: str, seed: int) -> None:
        self.game, self.reward_mode, self.seed, self.dealt = game, reward_mode, seed, 0

    def __call__(self) -> Table:
        self.dealt += 1
        return new_table(self.game, self.reward_mode, self.seed * 100_003 + self.dealt)


class Lockstep:
    """Reference tables in rows of one engine (``tables``: row -> table; the other rows
    play their own games), compared before and after every step: every seat's
    observation, mask and choosing, the scores, rewards, terminations and final views.

    A finished reference game is replaced by ``refill()`` (loaded into its row, unless
    ``load=False``: the engine deals it itself), or its row is let go (no ``refill``). A
    row whose reference drew chance during the step (a new hand's shuffle) is loaded
    again from it: the engine draws its own."""

    def __init__(
        self,
        engine,
        tables: dict[int, Table],
        refill: Callable[[], Table | None] | None = None,
        load: bool = True,
    ) -> None:
        self.engine, self.tables, self.refill, self.load = engine, dict(tables), refill, load
        self.n = engine.num_players
        self.finished = 0
        if load:
            engine.load([t.state for t in self.tables.values()], list(self.tables))

    def check_views(self, rng: np.random.Generator) -> None:
        engine, n = self.engine, self.n
        observations, masks, choosers = engine.observations(), engine.masks(), engine.choosers()
        scores = engine.scores()
        assert observations.dtype == np.float32 and masks.dtype == bool
        assert scores.dtype == np.float64
        for b, table in self.tables.items():
            assert choosers[b].tolist() == [p in table.choosers for p in range(n)]
            for p in range(n):
                np.testing.assert_array_equal(observations[b, p], table.observation(p))
                np.testing.assert_array_equal(masks[b, p], table.legal_mask(p).astype(bool))
            np.testing.assert_array_equal(scores[b], table.state.scores())
        rows = rng.permutation(engine.num_envs)  # observe: any rows, any seats, any order
        seats = rng.integers(n, size=len(rows))
        np.testing.assert_array_equal(engine.observe(rows, seats), observations[rows, seats])

    def step(
        self, rng: np.random.Generator, actions: np.ndarray | None = None, every_row: bool = False
    ) -> tuple[np.ndarray, np.ndarray, dict]:
        """One step of every row, or now and then (unless ``every_row``) of a random subset
        of them, with ``actions`` (default: random legal ones); the seats that do not
        choose send anything (it is ignored). Returns what the engine's ``step`` did."""
        engine, n = self.engine, self.n
        if actions is None:
            actions = random_actions(engine.masks(), rng)
        actions = np.where(engine.choosers(), actions, rng.integers(-3, 300, actions.shape))
        games = np.arange(engine.num_envs)
        if not every_row and rng.random() < 0.2:
            games = np.flatnonzero(rng.random(engine.num_envs) < 0.5)
        rewards, terminated, info = engine.step(actions[games], games)
        done = info["done"].tolist()
        assert done == games[terminated].tolist()
        assert info["terminal_observations"].shape == (len(done), n, engine.observation_size)
        for i, b in enumerate(games.tolist()):
            table = self.tables.get(b)
            if table is None:
                continue
            chance = table.state.rng.bit_generator.state
            for p in table.waiting_for():
                expected = table.commit(p, int(actions[b, p]))
            np.testing.assert_array_equal(rewards[i], expected)
            assert bool(terminated[i]) == table.terminal
            if table.terminal:
                j = done.index(b)
                final = np.stack([table.observation(p) for p in range(n)])
                np.testing.assert_array_equal(info["terminal_observations"][j], final)
                np.testing.assert_array_equal(info["terminal_scores"][j], table.state.scores())
                self.finished += 1
                fresh = self.refill() if self.refill else None
                if fresh is None:
                    del self.tables[b]
                else:
                    self.tables[b] = fresh
                    if self.load:
                        engine.load([fresh.state], [b])
            elif table.state.rng.bit_generator.state != chance:  # the rules' own draw
                engine.load([table.state], [b])
        return rewards, terminated, info

    def play(self, rng: np.random.Generator, games: int) -> None:
        """Random play until ``games`` reference games have finished."""
        while self.finished < games:
            self.check_views(rng)
            self.step(rng)

    def play_to_the_end(self, rng: np.random.Generator) -> None:
        """Random play until every reference game has finished (no ``refill``)."""
        games = self.finished + len(self.tables)
        self.play(rng, games)
        assert not self.tables
