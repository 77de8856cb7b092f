"""The shared conformance suite: every registered id, every configuration it declares.

New games join by registering; nothing here names a game.
"""

from __future__ import annotations

import copy
import pickle
import re

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import envs
from envs.core.aec import HiddenHandAEC
from envs.core.rewards import score_margins


def raw(env_id: str, **options) -> HiddenHandAEC:
    return HiddenHandAEC(envs.get_spec(env_id), **options)


def random_game(env, rng: np.random.Generator):
    """Play ``env`` (reset already) to the end with random legal actions; yield each agent."""
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        yield agent
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_pettingzoo_api(env_id, config):
    api_test(pettingzoo.make("aec", env_id, **config), num_cycles=1000)


def test_pettingzoo_parallel_api(env_id, config):
    parallel_api_test(pettingzoo.make("parallel", env_id, **config), num_cycles=1000)


def test_pettingzoo_seed(env_id, config):
    seed_test(lambda: pettingzoo.make("aec", env_id, **config), num_cycles=500)


def test_gymnasium_and_sb3_checks(env_id, config):
    gym_id = envs.get_spec(env_id).gym_id
    env = gymnasium.make(gym_id, **config)
    gym_check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(gymnasium.make(gym_id, **config).unwrapped)


def test_observations_fit_their_space(env_id, config):
    env = raw(env_id, **config)
    env.reset(seed=3)
    space = env.observation_space(env.possible_agents[0])
    for _ in random_game(env, np.random.default_rng(3)):
        for agent in env.agents:
            assert space.contains(env.observe(agent))
        assert env.state_space.contains(env.state().astype(np.float32))


def _views(env: HiddenHandAEC, agent: str):
    return (
        env.observe(agent),
        copy.deepcopy(env.infos),
        env.render(),
        env.state(),
        dict(env.rewards),
        dict(env._cumulative_rewards),
    )


def _assert_same(a, b):
    assert pickle.dumps(a) == pickle.dumps(b)


def test_hidden_commitments_stay_hidden(env_id, config):
    """At every simultaneous choice, whatever the earlier choosers commit, every later
    chooser's observation, infos, render, state() and rewards are the same."""
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(3):
        env = raw(env_id, render_mode="ansi", **config)
        env.reset(seed=seed)
        while env.agents:
            waiting = env.table.waiting_for()
            if len(waiting) > 1 and not env.table.pending:
                first = env.agent_selection
                first_mask = env.observe(first)["action_mask"]
                outcomes = {}
                for action in np.flatnonzero(first_mask)[:6]:
                    trial = copy.deepcopy(env)
                    trial.step(int(action))
                    later = trial.agent_selection
                    outcomes[int(action)] = [
                        (later, _views(trial, agent))
                        for agent in env.possible_agents
                        if agent != first
                    ]
                baseline = next(iter(outcomes.values()))
                for outcome in outcomes.values():
                    _assert_same(outcome, baseline)
                checked += 1
            agent = env.agent_selection
            if env.terminations[agent]:
                env.step(None)
            else:
                env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    if any(len(s) > 1 for s in _choosers_seen(env_id, config)):
        assert checked > 0


def _choosers_seen(env_id, config):
    env = raw(env_id, **config)
    env.reset(seed=0)
    seen = []
    rng = np.random.default_rng(1)
    while not env.table.state.is_terminal():
        seen.append(env.table.state.to_act())
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    return seen


def test_raw_env_rejects_illegal_action_and_stays_playable(env_id, config):
    env = raw(env_id, **config)
    env.reset(seed=5)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    before = (env.state().copy(), agent, env.observe(agent)["observation"].copy())
    bad_actions = [int(a) for a in np.flatnonzero(mask == 0)][:3] + [-1, env.game.num_actions]
    for bad in [*bad_actions, 1.5, None, "1"]:
        with pytest.raises(ValueError, match="legal actions|must be an integer|not choosing"):
            env.step(bad)
        assert np.array_equal(env.state(), before[0])
        assert env.agent_selection == before[1]
        assert np.array_equal(env.observe(agent)["observation"], before[2])
    legal = int(np.flatnonzero(mask)[0])
    error_text = ""
    if bad_actions[0] >= 0 and not mask[bad_actions[0]]:
        try:
            env.step(bad_actions[0])
        except ValueError as error:
            error_text = str(error)
        assert re.search(rf"\b{legal}\b", error_text), "the error names the legal actions"
    for _ in random_game(env, np.random.default_rng(0)):
        pass
    assert not env.agents


def test_env_penalises_illegal_action(env_id, config):
    env = pettingzoo.make("aec", env_id, **config)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    # Play on until a decision with an illegal action.
    while not (env.observe(env.agent_selection)["action_mask"] == 0).any():
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    agent = env.agent_selection
    illegal = np.flatnonzero(env.observe(agent)["action_mask"] == 0)
    env.step(int(illegal[0]))
    assert all(env.terminations.values()) or all(env.truncations.values())
    assert env._cumulative_rewards[agent] == -1
    assert all(r == 0 for a, r in env._cumulative_rewards.items() if a != agent)


@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_rewards_zero_sum_and_score_mode_adds_to_margin(env_id, config, reward_mode):
    for seed in range(5):
        env = raw(env_id, reward_mode=reward_mode, **config)
        # Accumulate through last(), as a user does.
        env.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            totals[agent] += reward
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert abs(sum(totals.values())) < 1e-9
        final = env.table.state.scores()
        if reward_mode == "score":
            np.testing.assert_allclose(list(totals.values()), score_margins(final), atol=1e-9)
        else:
            winners = final == final.max()
            for seat, agent in enumerate(env.possible_agents):
                assert (totals[agent] > 0) == (winners[seat] and not winners.all())


@pytest.mark.parametrize("env_id", envs.ids())
def test_unknown_options_and_bad_player_counts_raise(env_id):
    spec = envs.get_spec(env_id)
    with pytest.raises(ValueError, match="allowed"):
        pettingzoo.make("aec", env_id, no_such_option=1)
    for bad in (0, 1, 7, 2.5, "2"):
        valid_counts = {c.get("num_players") for c in spec.configurations}
        if bad in valid_counts:
            continue
        with pytest.raises(ValueError, match="allowed"):
            pettingzoo.make("aec", env_id, num_players=bad)
    with pytest.raises(ValueError, match="allowed"):
        pettingzoo.make("aec", env_id, reward_mode="dense")
    with pytest.raises(ValueError, match="allowed"):
        pettingzoo.make("aec", env_id, render_mode="rgb_array_list")
    with pytest.raises(ValueError, match="allowed"):
        gymnasium.make(spec.gym_id, opponent="grandmaster")


def test_same_seed_same_game(env_id, config):
    def transcript(seed):
        env = raw(env_id, render_mode="ansi", **config)
        env.reset(seed=seed)
        frames = []
        for _ in random_game(env, np.random.default_rng(seed)):
            frames.append(env.render())
        return frames

    assert transcript(11) == transcript(11)
    assert transcript(11) != transcript(12)


def test_apply_legal_makes_the_move_apply_makes(env_id, config):
    """A search's unchecked move (``State.apply_legal``) leaves the state ``apply`` does:
    the same observations and scores at every step of random games."""
    spec = envs.get_spec(env_id)
    game = spec.make_game(**config)
    rng = np.random.default_rng(3)
    for seed in range(3):
        checked = game.new_initial_state(np.random.default_rng(seed))
        unchecked = checked.clone()
        while checked.to_act():
            joint = {p: int(rng.choice(checked.legal_actions(p))) for p in checked.to_act()}
            checked.apply(joint)
            unchecked.apply_legal(joint)
            assert unchecked.to_act() == checked.to_act()
            assert np.array_equal(unchecked.scores(), checked.scores())
            for p in range(game.num_players):
                assert np.array_equal(game.observation(unchecked, p), game.observation(checked, p))


def test_parallel_env_plays_to_the_end(env_id, config):
    env = pettingzoo.make("parallel", env_id, **config)
    observations, infos = env.reset(seed=2)
    rng = np.random.default_rng(2)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        for agent in env.agents:
            mask = observations[agent]["action_mask"]
            assert mask.sum() >= 1
            if not infos[agent]["choosing"]:
                assert mask.tolist() == [1] + [0] * (len(mask) - 1)
        actions = {
            a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in env.agents
        }
        observations, rewards, terms, truncs, infos = env.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
    assert abs(sum(totals.values())) < 1e-9


def test_parallel_env_same_seed_same_game(env_id, config):
    """Seeded determinism of the parallel env over whole games with masked actions (PettingZoo's
    ``parallel_seed_test`` draws unmasked ones, so games end at the first illegal move; the
    AEC env's whole games are compared in ``test_same_seed_same_game``)."""

    def transcript(seed: int) -> list:
        env = pettingzoo.make("parallel", env_id, render_mode="ansi", **config)
        observations, infos = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps = [(observations, infos)]
        while env.agents:
            actions = {
                a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"])))
                for a in env.agents
            }
            observations, rewards, terms, truncs, infos = env.step(actions)
            steps.append((actions, observations, rewards, terms, truncs, infos, env.render()))
        assert all(terms.values()) and not any(truncs.values())  # played out, no illegal move
        return steps

    def same(a, b) -> bool:
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return np.array_equal(a, b)

    first = transcript(11)
    assert len(first) > 2
    assert same(first, transcript(11))
    assert not same(first, transcript(12))


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_single_agent_view_plays_every_seat(env_id, config, opponent):
    gym_id = envs.get_spec(env_id).gym_id
    env = gymnasium.make(gym_id, opponent=opponent, **config)
    seats = set()
    for episode in range(12):
        obs, info = env.reset(seed=episode)
        seats.add(info["seat"])
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            assert mask.any()
            assert np.array_equal(mask, info["action_mask"].astype(bool))
            action = int(np.flatnonzero(mask)[0])
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    assert len(seats) > 1


def test_single_agent_illegal_action_ends_episode_with_penalty(env_id, config):
    env = gymnasium.make(envs.get_spec(env_id).gym_id, **config)
    env.reset(seed=0)
    illegal = np.flatnonzero(~env.unwrapped.action_masks())
    _, reward, terminated, _, info = env.step(int(illegal[0]))
    assert terminated and reward == -1.0 and "illegal_action" in info
    env.reset(seed=1)  # still usable
    assert env.unwrapped.action_masks().any()


@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_single_agent_learner_receives_its_result_in_every_seat(env_id, config, reward_mode):
    """Whichever seat learns, and whoever's move ends the game, the learner's rewards add up
    to its own outcome."""
    from envs.core.rewards import score_margins, win_rewards

    gym_id = envs.get_spec(env_id).gym_id
    num_players = envs.get_spec(env_id).make_game(**config).num_players
    for seat in range(num_players):
        env = gymnasium.make(gym_id, seat=seat, reward_mode=reward_mode, **config).unwrapped
        for episode in range(3):
            env.reset(seed=100 * seat + episode)
            total, done = 0.0, False
            while not done:
                action = int(np.flatnonzero(env.action_masks())[-1])
                _, reward, done, _, info = env.step(action)
                total += reward
            final = env.table.state.scores()
            expected = win_rewards(final) if reward_mode == "win" else score_margins(final)
            assert info["seat"] == seat
            assert total == pytest.approx(expected[seat])


@pytest.mark.parametrize("env_id", envs.ids())
def test_human_render_prints_the_ansi_text(env_id, capsys):
    ansi = pettingzoo.make("aec", env_id, render_mode="ansi")
    human = pettingzoo.make("aec", env_id, render_mode="human")
    ansi.reset(seed=4)
    human.reset(seed=4)
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out.strip() == ansi.render().strip()
    gym_env = gymnasium.make(envs.get_spec(env_id).gym_id, render_mode="ansi")
    gym_env.reset(seed=4)
    assert isinstance(gym_env.render(), str) and gym_env.render()


def test_encode_writes_the_observation_into_the_views(env_id, config):
    """The core's ``encode`` (for games that gather their observation directly) fills the
    named views with exactly what ``observation`` returns."""
    game = envs.get_spec(env_id).make_game(**config)
    state = game.new_initial_state(np.random.default_rng(0))
    for player in range(game.num_players):
        flat = game.observation_layout.zeros()
        game.encode(state, player, game.observation_layout.views(flat))
        assert flat.tobytes() == game.observation(state, player).tobytes()


def test_a_game_without_encode_or_observation_says_so():
    from envs.core.game import Game

    class Blank(Game):
        name = "blank"

        def new_initial_state(self, rng):
            raise AssertionError("not reached")

    game = Blank.from_options()
    with pytest.raises(NotImplementedError, match="must implement encode"):
        game.encode(None, 0, {})


def test_every_rule_based_agent_plays_only_legal_moves(
    assert_plays_only_legal_moves, env_id, config
):
    """The heuristic, and any other agent a game names (e.g. an expert teacher). The one
    agent made for some configurations only, ``nash`` (two-player Pico with the aside card
    face up), refuses the others with a clear error."""
    spec = envs.get_spec(env_id)
    game = spec.make_game(**config)
    from training.agents import GAME_AGENTS

    for name in [*spec.rule_agents, *GAME_AGENTS.get(spec.name, {})]:
        if name == "nash" and (game.num_players != 2 or game.config.aside != "face_up"):
            with pytest.raises(ValueError, match="two-player|aside"):
                spec.agent_factory(name)(game)
            continue
        assert_plays_only_legal_moves(game, spec.agent_factory(name)(game))
