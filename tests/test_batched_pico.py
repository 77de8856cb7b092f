"""The batched Pico engine (envs/pico/batched.py) against the rules, and make_vec.

Differential tests: from the same dealt cards and the same actions, ``PicoVector``
gives the same observations, masks, rewards (both modes), terminations and scores as
``envs.core.table.Table`` over ``envs/pico/rules.py``; its batched heuristic makes the
same choices as ``envs.pico.heuristic.PicoHeuristic`` and values the cards as a plain
per-game reckoning does; ``make_vec`` shows the learner
what the Gymnasium view shows it.
"""

from __future__ import annotations

import dataclasses
import itertools

import gymnasium
import numpy as np
import pytest

import envs
from envs.core.batched import random_actions
from envs.core.table import Table
from envs.pico.batched import PicoVector
from envs.pico.heuristic import PicoHeuristic, heuristic_actions, heuristic_values
from envs.pico.rules import DECK_COUNTS, VALUES, PicoGame, winners

PICO = "hiddenhand/Pico-v0"


def new_table(game: PicoGame, reward_mode: str, seed: int) -> Table:
    table = Table(game, reward_mode)
    table.reset(np.random.default_rng(seed))
    return table


class Lockstep:
    """``count`` reference tables and an engine of ``count`` games dealt the same cards; a
    finished reference game is replaced by a new one, dealt into the engine's row."""

    def __init__(self, num_players: int, reward_mode: str, count: int, seed: int) -> None:
        self.game = PicoGame.from_options(num_players=num_players)
        self.reward_mode, self.seed, self.dealt = reward_mode, seed, 0
        self.tables = [self.new_table() for _ in range(count)]
        self.engine = PicoVector(count, num_players=num_players, reward_mode=reward_mode, seed=1)
        self.engine.reset_from(
            np.stack([t.state.sets for t in self.tables]),
            np.stack([t.state.aside for t in self.tables]),
        )
        self.finished = 0

    def new_table(self) -> Table:
        self.dealt += 1
        return new_table(self.game, self.reward_mode, self.seed * 100_003 + self.dealt)

    def check_views(self) -> None:
        engine, n = self.engine, self.game.num_players
        observations, masks = engine.observations(), engine.masks()
        assert observations.dtype == np.float32 and masks.dtype == bool
        for b, table in enumerate(self.tables):
            for p in range(n):
                np.testing.assert_array_equal(observations[b, p], table.observation(p))
                np.testing.assert_array_equal(masks[b, p], table.legal_mask(p).astype(bool))
            np.testing.assert_array_equal(engine.scores()[b], table.state.scores())

    def step(self, actions: np.ndarray) -> None:
        n = self.game.num_players
        rewards, terminated, info = self.engine.step(actions)
        done = info["done"].tolist()
        assert done == np.flatnonzero(terminated).tolist()
        for b, table in enumerate(self.tables):
            for p in range(n):
                expected = table.commit(p, int(actions[b, p]))
            np.testing.assert_array_equal(rewards[b], expected)
            assert bool(terminated[b]) == table.terminal
            if table.terminal:
                i = done.index(b)
                for p in range(n):
                    final = info["terminal_observations"][i, p]
                    np.testing.assert_array_equal(final, table.observation(p))
                np.testing.assert_array_equal(info["terminal_scores"][i], table.state.scores())
                self.tables[b] = table = self.new_table()
                self.engine.reset_from(table.state.sets[None], table.state.aside[None], [b])
                self.finished += 1


@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_two_hundred_games_match_the_rules(num_players: int, reward_mode: str) -> None:
    lockstep = Lockstep(num_players, reward_mode, count=50, seed=num_players)
    rng = np.random.default_rng(7)
    while lockstep.finished < 200:
        lockstep.check_views()
        masks = lockstep.engine.masks()
        keys = np.where(masks, rng.random(masks.shape), -1.0)
        lockstep.step(np.argmax(keys, axis=2))
    lockstep.check_views()


@pytest.mark.parametrize("num_players", [2, 3])
def test_own_deals_are_whole_decks_and_seeded(num_players: int) -> None:
    engine = PicoVector(500, num_players=num_players, seed=3)
    again = PicoVector(500, num_players=num_players, seed=3)
    np.testing.assert_array_equal(engine.observations(), again.observations())
    deck = engine.sets.sum(axis=1) + engine.aside
    assert (deck == DECK_COUNTS[num_players]).all()
    assert len({s.tobytes() for s in engine.sets}) > 400  # the games are dealt apart
    rng = np.random.default_rng(0)
    for _ in range(60):  # auto-reset deals too
        masks = engine.masks()
        _, terminated, info = engine.step(np.argmax(rng.random(masks.shape) * masks, axis=2))
        assert (engine.sets.sum(axis=1) + engine.aside == DECK_COUNTS[num_players]).all()
        assert (engine.round[info["done"]] == 0).all()
        assert engine.hand_sizes.min() >= 2 and engine.masks().any(axis=2).all()


def reference_card_values(game: PicoGame, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The heuristic's values, reckoned game by game: every combination of the opponents'
    distinct values, each seat's points won in it."""
    hands = game.observation_layout.views(observation)["hand"]
    opponent_cards = [np.flatnonzero(hand) for hand in hands[1:]]
    combos = list(itertools.product(*opponent_cards))
    values = np.full(len(mask), -np.inf)
    for card in np.flatnonzero(mask):
        value = 0.0
        for combo in combos:
            played = [card, *combo]
            won = winners([VALUES[c] for c in played])
            gain = sum(game.card_points[played[s]] for s in won if s == 0)
            loss = sum(game.card_points[played[s]] for s in won if s != 0) / len(combo)
            value += gain - loss
        values[card] = value / len(combos)
    return values


@pytest.mark.parametrize("num_players", [2, 3])
def test_batched_heuristic_makes_the_heuristics_choices(num_players: int) -> None:
    engine = PicoVector(40, num_players=num_players, seed=5)
    heuristic = PicoHeuristic(engine.game)
    rng = np.random.default_rng(11)
    checked = ties = 0
    for step in range(30):
        observations = engine.observations().reshape(-1, engine.observation_size)
        masks = engine.masks().reshape(-1, 11)
        values = heuristic_values(observations, masks, num_players, engine.points)
        noise = np.zeros(masks.shape)
        single = []
        for i in range(len(masks)):
            np.testing.assert_array_equal(
                values[i], reference_card_values(engine.game, observations[i], masks[i])
            )
            seed = step * 1000 + i
            # The per-game heuristic draws one number per legal card, in card order.
            noise[i, masks[i]] = np.random.default_rng(seed).random(int(masks[i].sum()))
            single.append(
                heuristic.act(
                    observations[i], masks[i].astype(np.int8), np.random.default_rng(seed)
                )
            )
            best = values[i][masks[i]]
            ties += int((best == best.max()).sum() > 1)
        batched = heuristic_actions(observations, masks, num_players, engine.points, noise)
        np.testing.assert_array_equal(batched, single)
        checked += len(masks)
        engine.step(np.argmax(rng.random(engine.masks().shape) * engine.masks(), axis=2))
    assert checked >= 2000 and ties > 0  # exact ties occur, and are broken alike


# --- make_vec -------------------------------------------------------------------------
def without_an_engine(patch: pytest.MonkeyPatch, name: str = "pickup") -> None:
    """Take a game's batched engine away for a test (its spec, under both ids)."""
    from envs.core import spec as specs

    spec = envs.get_spec(f"hiddenhand/{name}-v0")
    for env_id in (spec.aec_id, spec.gym_id):
        patch.setitem(specs._SPECS, env_id, dataclasses.replace(spec, engine=None))


def test_make_vec_refuses_games_without_an_engine(monkeypatch) -> None:
    without_an_engine(monkeypatch)
    with pytest.raises(ValueError, match="hiddenhand/Pico-v0"):
        envs.make_vec("hiddenhand/Pickup-v0", num_envs=2)
    with pytest.raises(ValueError, match="seat"):
        envs.make_vec(PICO, num_envs=2, seat=2)
    with pytest.raises(ValueError, match="num_players"):
        envs.make_vec(PICO, num_envs=2, num_players=4)


def untrained_policy(num_players: int):
    from sb3_contrib import MaskablePPO

    from training.agents.policy import PolicyAgent

    vec_env = envs.make_vec(PICO, num_envs=2, num_players=num_players, seed=0)
    return PolicyAgent(MaskablePPO("MlpPolicy", vec_env, seed=3, device="cpu"))


@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_make_vec_matches_the_gymnasium_view(num_players: int, reward_mode: str) -> None:
    """The same deals, seats and (deterministic) opponent: the learner sees and earns the
    same in the VecEnv as in the Gymnasium view, game by game."""
    policy = untrained_policy(num_players)
    count = 6
    views = [
        gymnasium.make(PICO, opponent=policy, reward_mode=reward_mode, num_players=num_players)
        for _ in range(count)
    ]
    vec_env = envs.make_vec(
        PICO, num_envs=count, opponent=policy, reward_mode=reward_mode, num_players=num_players
    )
    rng = np.random.default_rng(0)
    started = [view.reset(seed=10 + i) for i, view in enumerate(views)]
    vec_env.reset()

    def align(b: int) -> None:  # the VecEnv's game b dealt as view b's, same seat
        state = views[b].unwrapped.table.state
        vec_env.engine.reset_from(state.sets[None], state.aside[None], [b])
        vec_env.seats[b] = views[b].unwrapped.learner

    for b in range(count):
        align(b)
    observations = vec_env.engine.observations_of(vec_env.seats)
    for b in range(count):
        np.testing.assert_array_equal(observations[b], started[b][0])
    games = 0
    while games < 30:
        masks = vec_env.action_masks()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        observations, rewards, dones, infos = vec_env.step(actions)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(masks[b], view.unwrapped.action_masks())
            observation, reward, terminated, _, _ = view.step(int(actions[b]))
            assert rewards[b] == np.float32(reward) and dones[b] == terminated
            if terminated:
                np.testing.assert_array_equal(infos[b]["terminal_observation"], observation)
                np.testing.assert_array_equal(
                    infos[b]["scores"], view.unwrapped.table.state.scores()
                )
                view.reset(seed=1000 + games)
                align(b)
                games += 1
        observations = vec_env.engine.observations_of(vec_env.seats)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(observations[b], view.unwrapped._observe())


def test_make_vec_opponents_and_seats() -> None:
    vec_env = envs.make_vec(PICO, num_envs=64, opponent="heuristic", seed=4, num_players=3)
    vec_env.reset()
    assert set(vec_env.seats.tolist()) == {0, 1, 2}
    fixed = envs.make_vec(PICO, num_envs=8, opponent=["random", "heuristic"], seat=1, num_players=3)
    fixed.reset()
    for _ in range(20):
        _, _, dones, _ = fixed.step(np.argmax(fixed.action_masks(), axis=1))
        assert (fixed.seats == 1).all()
    masks = fixed.env_method("action_masks")
    assert len(masks) == 8 and masks[0].shape == (11,)


def test_the_trainer_runs_on_the_batched_engine(tmp_path):
    """Any opponent mix, self-play snapshots included, on the batched engine."""
    from training import train

    common = ["--env", "hiddenhand/Pico-v0", "--total-timesteps", "1024", "--n-envs", "32"]
    common += ["--n-steps", "16", "--batch-size", "256", "--eval-every", "0", "--run-dir"]
    common += [str(tmp_path), "--final-eval-games", "4", "--no-progress-bar", "--vec", "batched"]
    run = train.train(train.parse_args([*common, "--opponents", "heuristic:1"]))
    assert (run / "model.zip").is_file()
    mix = ["--opponents", "heuristic:1,self:1,latest:1", "--snapshot-every", "512"]
    run = train.train(train.parse_args([*common, *mix, "--run-name", "mix"]))
    assert len(list((run / "snapshots").glob("*.zip"))) == 2
    with pytest.raises(ValueError, match="subproc"):
        train.check(train.parse_args([*common, "--subproc", "--run-name", "x"]))
    with pytest.MonkeyPatch.context() as patch:
        without_an_engine(patch)
        with pytest.raises(ValueError, match="batched engine|Pico"):
            train.check(train.parse_args(["--env", "hiddenhand/pickup-v0", "--vec", "batched"]))


def test_snapshot_opponents_play_random_then_the_snapshots(tmp_path):
    from sb3_contrib import MaskablePPO

    from training.agents.policy import policy_metadata, save_policy
    from training.train import SnapshotOpponent

    game = envs.get_spec(PICO).make_game()
    opponent = SnapshotOpponent("latest", tmp_path, game, "hiddenhand/pico-v0", seed=0)
    observations = np.zeros((3, game.observation_layout.size), dtype=np.float32)
    assert not opponent.deterministic and not opponent.logits_batch(observations).any()
    opponent.refresh()  # nothing saved yet: still random
    assert opponent.policy is None
    model = MaskablePPO("MlpPolicy", envs.make_vec(PICO, num_envs=2), seed=0, device="cpu")
    for step in (1, 2):
        save_policy(model, tmp_path / f"step_{step:09d}", policy_metadata(PICO, game, {}))
    opponent.refresh()
    assert opponent.deterministic and opponent.logits_batch(observations).shape == (3, 11)


def test_make_vec_draws_each_seat_from_a_mix_at_every_deal() -> None:
    vec_env = envs.make_vec(
        PICO, num_envs=400, opponent={"random": 1, "heuristic": 3}, num_players=3, seed=2
    )
    vec_env.reset()
    share = (vec_env.assignment == 1).mean()  # the heuristic's index in the mix
    assert 0.7 < share < 0.8
    first = vec_env.assignment.copy()
    for _ in range(40):  # games end and are dealt again, with new draws
        vec_env.step(np.argmax(vec_env.action_masks(), axis=1))
    assert (vec_env.assignment != first).any()
    with pytest.raises(ValueError, match="weights"):
        envs.make_vec(PICO, num_envs=2, opponent={"random": 0})


@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_face_down_games_match_the_rules(reward_mode: str) -> None:
    """``aside="face_down"``: round 1 hides the other hand's unshown cards and the aside
    card, in every seat's view, exactly as the rules' observation does."""
    game = PicoGame.from_options(num_players=2, aside="face_down")
    rng = np.random.default_rng(8)
    count, dealt, finished = 20, 0, 0

    def table() -> Table:
        nonlocal dealt
        dealt += 1
        return new_table(game, reward_mode, 500 + dealt)

    tables = [table() for _ in range(count)]
    engine = PicoVector(count, num_players=2, aside="face_down", reward_mode=reward_mode)
    engine.load([t.state for t in tables])
    hidden = 0
    while finished < 60:
        observations, masks = engine.observations(), engine.masks()
        for b, t in enumerate(tables):
            for p in range(2):
                np.testing.assert_array_equal(observations[b, p], t.observation(p))
                np.testing.assert_array_equal(masks[b, p], t.legal_mask(p).astype(bool))
            hidden += int(t.state.round == 0)
        actions = random_actions(masks, rng)
        rewards, terminated, info = engine.step(actions)
        for b, t in enumerate(tables):
            for p in range(2):
                expected = t.commit(p, int(actions[b, p]))
            np.testing.assert_array_equal(rewards[b], expected)
            assert terminated[b] == t.terminal
            if t.terminal:
                i = info["done"].tolist().index(b)
                for p in range(2):
                    np.testing.assert_array_equal(
                        info["terminal_observations"][i, p], t.observation(p)
                    )
                tables[b] = table()
                engine.load([tables[b].state], [b])
                finished += 1
    assert hidden > 100  # round 1 was checked often


def test_face_down_make_vec_plays_the_heuristic_game_by_game() -> None:
    vec_env = envs.make_vec(PICO, num_envs=8, opponent="heuristic", aside="face_down", seed=0)
    assert type(vec_env.opponents[0]).__name__ == "_PerGameOpponent"
    observation = vec_env.reset()
    unseen = vec_env.engine.observation_layout.fields["unseen"]
    assert (observation[:, unseen.start : unseen.stop].sum(axis=1) == 6).all()  # 5 + aside
    for _ in range(40):
        vec_env.step(np.argmax(vec_env.action_masks(), axis=1))
