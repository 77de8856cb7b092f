"""Reference games and a batched engine played in lockstep, for the engines' tests
(``test_batched_every_game.py`` over every game, and a game's own file where it needs it):
the differential test's one implementation; and its make_vec form, ``make_vec``'s games
against Gymnasium views of the same deals (``compare_with_the_gymnasium_view``)."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import pytest

import envs
from envs.core.batched import random_actions
from envs.core.game import Game, State
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
    again from it: the engine draws its own. ``loader(states, rows)`` puts reference
    states into rows another way than ``engine.load`` (Pico's ``reset_from``)."""

    def __init__(
        self,
        engine,
        tables: dict[int, Table],
        refill: Callable[[], Table | None] | None = None,
        load: bool = True,
        loader: Callable[[list[State], list[int]], None] | None = None,
    ) -> None:
        self.engine, self.tables, self.refill, self.load = engine, dict(tables), refill, load
        self.loader = engine.load if loader is None else loader
        self.n = engine.num_players
        self.finished = 0
        if load:
            self.loader([t.state for t in self.tables.values()], list(self.tables))

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
                        self.loader([fresh.state], [b])
            elif table.state.rng.bit_generator.state != chance:  # the rules' own draw
                self.loader([table.state], [b])
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


# --- make_vec against the Gymnasium view ---------------------------------------------------
def by_observation(observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A deterministic opponent that reads its observation: a legal action picked by a hash
    of it (a different view would most likely choose differently)."""
    legal = np.flatnonzero(mask)
    return int(legal[zlib.crc32(np.ascontiguousarray(observation).tobytes()) % len(legal)])


@functools.cache
def untrained_policy(gym_id: str, options: tuple[tuple[str, Any], ...] = ()):
    """An untrained MaskablePPO policy of a configuration (``options`` as sorted items):
    a deterministic opponent with ``logits_batch``, one forward pass for every game."""
    from sb3_contrib import MaskablePPO

    from training.agents.policy import PolicyAgent

    vec_env = envs.make_vec(gym_id, num_envs=2, seed=0, **dict(options))
    return PolicyAgent(MaskablePPO("MlpPolicy", vec_env, seed=3, device="cpu"))


@dataclass
class Paths:
    """What a comparison went through: the games compared; the rows make_vec's ``step``
    stepped with the opponents alone (turns that leave the learner out) and the games
    that ended there; the learner's first steps that carried rewards revealed before its
    first choice; the games whose first observation was not the deal's (the opponents
    chose first)."""

    games: int = 0
    alone: int = 0
    ended_alone: int = 0
    carried: int = 0
    opponent_first: int = 0


def compare_with_the_gymnasium_view(
    gym_id: str,
    options: dict,
    reward_mode: str,
    opponent: Any,
    games: int,
    count: int = 6,
    chance: Callable[[Any, Callable[[int], State | None]], Any] | None = None,
) -> Paths:
    """``count`` games of ``make_vec`` and, for each, a Gymnasium view playing the same
    deal from the same seat against the same deterministic ``opponent``, compared step by
    step until ``games`` games have ended: the learner's masks, observations (the first
    one too, after the opponents' turns before its first choice), rewards, ends, final
    observations, scores and seats, and ``infos`` empty where nothing ended.

    The VecEnv's engine deals row ``b``'s games as the rules deal them from the seeds
    ``10_000 (b + 1)``, ``10_000 (b + 1) + 1``...: its ``_deal`` loads those initial
    states. So make_vec itself plays the opponents' turns before the learner's first
    choice, draws the learner's seat and carries the rewards to its first step; each
    view is made with make_vec's seat and reset with the row's seed. Where an engine draws
    chance during play (Pickup's new hands), ``chance(engine, state_of)`` gives it the
    views' draws (``state_of(b)``: view ``b``'s state, None when its game is over; the
    views step first).

    The rewards are equal in float32 but where make_vec adds two or more of the
    opponents' rewards after the learner's choice, in another order than the view: then
    to float32 precision."""
    spec = envs.get_spec(gym_id)
    game = spec.make_game(**options)
    vec_env = envs.make_vec(
        gym_id, num_envs=count, opponent=opponent, reward_mode=reward_mode, seed=0, **options
    )
    engine = vec_env.engine
    seeds = [iter(range(10_000 * (b + 1), 10_000 * (b + 2))) for b in range(count)]
    dealt: dict[int, tuple[int, State]] = {}  # row -> the seed and state of its new game

    def deal(rows: np.ndarray) -> None:
        states = []
        for b in rows.tolist():
            seed = next(seeds[b])
            dealt[b] = (seed, game.new_initial_state(np.random.default_rng(seed)))
            states.append(dealt[b][1])
        engine._load(rows, states)

    engine._deal = deal
    paths = Paths()
    sums = np.zeros(count, dtype=np.int64)  # the opponents' nonzero rewards added in a step
    step = engine.step

    def counted(actions: np.ndarray, rows: np.ndarray | None = None):
        rewards, terminated, info = step(actions, rows)
        if rows is not None:  # the opponents alone
            paths.alone += len(rows)
            paths.ended_alone += len(info["done"])
            sums[rows] += rewards[np.arange(len(rows)), vec_env.seats[rows]] != 0
        return rewards, terminated, info

    engine.step = counted
    views: list = [None] * count

    def start(b: int) -> tuple[np.ndarray, dict]:
        """View ``b``'s next game: the seed row ``b`` was just dealt, make_vec's seat."""
        seed, state = dealt.pop(b)
        seat = int(vec_env.seats[b])
        views[b] = gymnasium.make(
            gym_id, opponent=opponent, seat=seat, reward_mode=reward_mode, **options
        )
        observation, info = views[b].reset(seed=seed)
        assert info["seat"] == seat and not views[b].unwrapped.table.terminal
        paths.opponent_first += not np.array_equal(observation, game.observation(state, seat))
        return observation, info

    def state_of(b: int) -> State | None:
        table = views[b].unwrapped.table
        return None if table.terminal else table.state

    if chance is not None:
        chance(engine, state_of)
    observations = vec_env.reset()
    for b in range(count):
        observation, info = start(b)
        np.testing.assert_array_equal(observations[b], observation)
        np.testing.assert_array_equal(vec_env.action_masks()[b], info["action_mask"])
    rng = np.random.default_rng(0)
    while paths.games < games:
        masks = vec_env.action_masks()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        expected = []
        for b, view in enumerate(views):  # the views first: the engine may ask their draws
            np.testing.assert_array_equal(masks[b], view.unwrapped.action_masks())
            paths.carried += view.unwrapped._carried_reward != 0.0
            expected.append(view.step(int(actions[b])))
        sums[:] = 0
        observations, rewards, dones, infos = vec_env.step(actions)
        for b, (observation, reward, terminated, truncated, info) in enumerate(expected):
            if sums[b] < 2:
                assert rewards[b] == np.float32(reward), (b, rewards[b], reward)
            else:
                assert rewards[b] == pytest.approx(reward, rel=1e-6, abs=1e-6)
            assert dones[b] == terminated and not truncated
            if terminated:
                assert infos[b]["seat"] == info["seat"]
                np.testing.assert_array_equal(infos[b]["terminal_observation"], observation)
                scores = views[b].unwrapped.table.state.scores()
                np.testing.assert_array_equal(infos[b]["scores"], scores)
                observation, info = start(b)  # make_vec has dealt the next game already
                paths.games += 1
            else:
                assert infos[b] == {}
            np.testing.assert_array_equal(observations[b], observation)
            np.testing.assert_array_equal(vec_env.action_masks()[b], info["action_mask"])
    return paths
