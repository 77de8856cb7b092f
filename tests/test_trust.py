"""Trust: hidden information stays hidden, invariants hold, no input breaks a game.

Every test runs over every registered id and configuration, so a new game is
held to all of it by registering.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium
import numpy as np
import pettingzoo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envs
from envs.core.aec import HiddenHandAEC, HiddenHandParallel
from envs.core.game import State

GAME_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def make_game(env_id: str, config: dict):
    return envs.get_spec(env_id).make_game(**config)


def random_states(game, seed: int):
    """Every state of one random game, from the first to the terminal one."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(np.random.default_rng(seed))
    yield state
    while not state.is_terminal():
        joint = {p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()}
        state.apply(joint)
        yield state


def views(game, state: State, player: int) -> tuple:
    return (
        game.observation(state, player).tobytes(),
        state.legal_mask(player).tobytes(),
        state.to_act(),
        str(state),
    )


# --- hidden information ----------------------------------------------------------------
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=GAME_SEEDS)
def test_views_are_identical_in_every_determinisation(env_id, config, seed):
    """At every decision, each player's observation, mask, choosers and render are the
    same in the real state and in determinisations sampled for that player."""
    game = make_game(env_id, config)
    rng = np.random.default_rng(seed)
    for step, state in enumerate(random_states(game, seed)):
        if step % 3:
            continue  # every third state keeps the test quick; seeds vary the rest
        for player in range(game.num_players):
            expected = views(game, state, player)
            for _ in range(2):
                sample = state.resample(player, rng)
                assert views(game, sample, player) == expected
                sample.check_invariants()
                # Scores are public (rewards are made of them).
                assert np.array_equal(sample.scores(), state.scores())


def test_determinisations_really_resample_hidden_information(env_id, config):
    """Somewhere in a game, another player's view differs between the real state and a
    determinisation: hidden information is drawn again, not copied."""
    game = make_game(env_id, config)
    if not game.has_hidden_state:  # nothing to resample: every view stays the same
        for state in random_states(game, 0):
            sample = state.resample(0, np.random.default_rng(1))
            for q in range(game.num_players):
                assert views(game, sample, q) == views(game, state, q)
        return
    rng = np.random.default_rng(0)
    differs = False
    for state in random_states(game, 0):
        if state.is_terminal():
            break
        for player in range(game.num_players):
            sample = state.resample(player, rng)
            others = [q for q in range(game.num_players) if q != player]
            if any(
                not np.array_equal(game.observation(sample, q), game.observation(state, q))
                for q in others
            ):
                differs = True
                break
        if differs:
            break
    assert differs, "no determinisation ever changed what another player sees"


def test_resample_leaves_the_real_state_alone(env_id, config):
    game = make_game(env_id, config)
    for state in random_states(game, 1):
        before = pickle.dumps(state)
        state.resample(0, np.random.default_rng(5))
        assert pickle.dumps(state) == before
        if not state.is_terminal() and len(state.to_act()) > 0:
            break


# --- invariants ------------------------------------------------------------------------
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=GAME_SEEDS)
def test_invariants_hold_over_random_play(env_id, config, seed):
    game = make_game(env_id, config)
    decisions = 0
    for state in random_states(game, seed):
        state.check_invariants()
        for player in state.to_act():
            assert state.legal_mask(player).any(), f"player {player} must act but cannot"
        decisions += len(state.to_act())
        assert decisions <= game.max_decisions
        scores = state.scores()
        assert np.isfinite(scores).all()


# --- bad input -------------------------------------------------------------------------
def first_legal(env: HiddenHandAEC) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("factory", ["raw_env", "env"])
def test_bad_actions_are_clear_errors_and_the_game_goes_on(env_id, config, factory):
    spec = envs.get_spec(env_id)
    env = HiddenHandAEC(
        spec, illegal_action="raise" if factory == "raw_env" else "penalize", **config
    )
    env.reset(seed=0)
    n = env.game.num_actions
    not_integers = (1.0, 0.5, None, "0", [0], np.array([0, 1]), np.array(0.0), True)
    for bad in (-1, n, 10**9, *not_integers):
        snapshot = pickle.dumps(env.table.state)
        with pytest.raises(ValueError, match="must be an integer|legal actions|action"):
            env.step(bad)
        assert pickle.dumps(env.table.state) == snapshot
    env.step(np.int64(first_legal(env)))  # numpy integers are fine
    for _ in range(3):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        env.step(first_legal(env))
    assert env.agents


def test_steps_after_the_end_and_before_reset_are_clear(env_id, config):
    env = HiddenHandAEC(envs.get_spec(env_id), **config)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe(env.possible_agents[0])
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.agents and not env.terminations[env.agent_selection]:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    with pytest.raises(ValueError, match="None"):
        env.step(0)  # a done agent may only pass None (PettingZoo's rule)
    while env.agents:
        env.step(None)
    with pytest.raises(ValueError, match="reset"):
        env.step(None)
    env.reset(seed=4)
    assert env.agents == env.possible_agents


@pytest.mark.parametrize("env_id", envs.ids())
@pytest.mark.parametrize("seed", [-1, 1.5, "7", True, [1]])
def test_bad_seeds_are_rejected_and_the_env_still_works(env_id, seed):
    env = pettingzoo.make("aec", env_id)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)
    env.reset(seed=1)
    assert env.agents
    gym_env = gymnasium.make(envs.get_spec(env_id).gym_id)
    with pytest.raises(ValueError, match="seed"):
        gym_env.reset(seed=seed)
    gym_env.reset(seed=1)
    assert gym_env.unwrapped.action_masks().any()


@pytest.mark.parametrize("env_id", envs.ids())
def test_parallel_env_rejects_wrong_agents_and_missing_actions(env_id):
    env: HiddenHandParallel = pettingzoo.make("parallel", env_id)
    observations, infos = env.reset(seed=0)
    actions = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in env.agents}
    with pytest.raises(ValueError, match="not in the game"):
        env.step(actions | {"player_99": 0})
    chooser = next(a for a in env.agents if infos[a]["choosing"])
    with pytest.raises(ValueError, match="no action"):
        env.step({a: v for a, v in actions.items() if a != chooser})
    env.step(actions)  # still playable


@pytest.mark.parametrize("env_id", envs.ids())
def test_bad_constructor_arguments_are_clear(env_id):
    spec = envs.get_spec(env_id)
    for bad in ({"num_players": 3.0}, {"num_players": None}, {"reward_mode": 1}, {"colour": "red"}):
        with pytest.raises(ValueError, match="allowed"):
            pettingzoo.make("aec", env_id, **bad)
    with pytest.raises(ValueError, match="allowed"):
        gymnasium.make(spec.gym_id, seat=99)
    with pytest.raises(TypeError, match="opponent"):
        gymnasium.make(spec.gym_id, opponent=42)


# --- round trips -----------------------------------------------------------------------
def play_on(env, rng: np.random.Generator, steps: int) -> list:
    trace = []
    for _ in range(steps):
        if not env.agents:
            break
        agent = env.agent_selection
        obs, reward, term, trunc, _ = env.last()
        trace.append((agent, obs["observation"].tobytes(), reward, term))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return trace


@pytest.mark.parametrize("method", ["pickle", "deepcopy"])
def test_mid_game_copies_continue_identically(env_id, config, method):
    env = pettingzoo.make("aec", env_id, **config)
    env.reset(seed=9)
    play_on(env, np.random.default_rng(0), 7)
    twin = pickle.loads(pickle.dumps(env)) if method == "pickle" else copy.deepcopy(env)
    assert play_on(env, np.random.default_rng(1), 10_000) == play_on(
        twin, np.random.default_rng(1), 10_000
    )
    env.reset()  # the RNG carried over too: both deal the same next game
    twin.reset()
    assert env.state().tobytes() == twin.state().tobytes()


def test_table_determinisation_redraws_pending_commitments(env_id, config):
    """In the middle of a simultaneous choice, a determinisation for a later chooser keeps
    everything that chooser sees, keeps no trace of the earlier commitments, and
    resolves to a legal game."""
    env = HiddenHandAEC(envs.get_spec(env_id), render_mode="ansi", **config)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while env.agents and len(env.table.waiting_for()) < 2:
        agent = env.agent_selection
        env.step(None if env.terminations[agent] else first_legal(env))
    if not env.agents:
        return  # the game ended without a simultaneous choice: nothing is ever pending
    env.step(first_legal(env))  # the first chooser commits
    later = env.table.next_chooser()
    committed = dict(env.table.pending)
    redrawn = set()
    later_agent = env.possible_agents[later]
    for _ in range(20):
        twin = env.table.determinise(later, rng)
        assert set(twin.pending) == set(committed)
        # The env seen through the determinised table: every view of the later chooser.
        twin_env = copy.copy(env)
        twin_env.table = twin
        for key in ("observation", "action_mask"):
            assert (
                twin_env.observe(later_agent)[key].tobytes()
                == env.observe(later_agent)[key].tobytes()
            )
        assert twin_env.infos[later_agent] == env.infos[later_agent]
        assert twin_env.render() == env.render()
        redrawn |= {tuple(sorted(twin.pending.items()))}
        for other, action in twin.pending.items():
            assert twin.state.legal_mask(other)[action]
    first_mask = env.table.state.legal_mask(next(iter(committed)))
    assert len(redrawn) > 1 or first_mask.sum() == 1
    assert env.table.pending == committed  # the real table is untouched
