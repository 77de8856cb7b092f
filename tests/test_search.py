"""The search agents (training.agents.search): legal play in every configuration, no
reading of hidden information, determinism, their distributions, and that search helps."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.agents import Position, RandomAgent, decide
from envs.core.game import Game, State
from training.agents.search import (
    DEFAULT_SAMPLES,
    HEURISTIC_SAMPLES,
    ISMCTS,
    PIMC,
    BatchedRollouts,
    HeuristicPIMC,
    outcomes,
)
from training.evaluation.tournament import head_to_head, make_agent, seat_rotated

CONFIGS = [
    pytest.param(spec, config, id=f"{spec.name}-{'-'.join(f'{k}={v}' for k, v in config.items())}")
    for spec in envs.GAMES
    for config in spec.configurations
]


KINDS = ["pimc", "pimc-batched", "ismcts"]


def small(kind: str, game: Game, **options) -> PIMC | ISMCTS:
    """A search agent with a tiny budget (PIMC: one world per decision; ``pimc-batched``
    rolls out on the game's batched engine)."""
    if kind == "ismcts":
        return ISMCTS(game, 3, **options)
    return PIMC(game, samples=1, batched=kind == "pimc-batched", **options)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("spec", "config"), CONFIGS)
def test_search_agents_play_legal_moves_in_every_configuration(spec, config, kind):
    game = spec.make_game(**config)
    lineup = [("search", small(kind, game))] + [("random", RandomAgent(game))] * (
        game.num_players - 1
    )
    # State.apply raises on any illegal action; two games put the agent in two seats.
    records = seat_rotated(game, lineup, num_games=2, seed=1)
    assert len(records["search"].wins) == 2


def decision_points(game: Game, count: int, seed: int = 0):
    """``count`` (state, player) pairs from random games, spread over the game."""
    rng = np.random.default_rng(seed)
    found: list[tuple[State, int]] = []
    game_seed = 0
    while len(found) < count:
        state = game.new_initial_state(np.random.default_rng(game_seed))
        game_seed += 1
        while not state.is_terminal() and len(found) < count:
            choosers = state.to_act()
            player = choosers[int(rng.integers(len(choosers)))]
            if state.legal_mask(player).sum() > 1 and rng.random() < 0.3:
                found.append((state.clone(), player))
            state.apply({p: int(rng.choice(np.flatnonzero(state.legal_mask(p)))) for p in choosers})
    return found


def decisions(agent, game: Game, state: State, player: int, position) -> tuple[int, np.ndarray]:
    observation = game.observation(state, player)
    mask = state.legal_mask(player).astype(np.int8)
    action = agent.act(observation, mask, np.random.default_rng(5), position=position)
    return action, agent.action_probabilities(observation, mask)


def hidden_cases() -> list:
    """Every configuration of each game with hidden state (and Pico's, where ``resample``
    only redraws the RNG)."""
    cases = []
    for spec in envs.GAMES:
        configs = [c for c in spec.configurations if spec.make_game(**c).has_hidden_state] or list(
            spec.configurations
        )
        for config in configs:
            name = "-".join(f"{k}={v}" for k, v in config.items())
            cases.append(pytest.param(spec, config, id=f"{spec.name}-{name}"))
    return cases


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("spec", "config"), hidden_cases())
def test_indistinguishable_states_give_the_same_decision(spec, config, kind):
    """A real state S and T = S.resample(player): the seat cannot tell them apart, so the
    search (same rng) must decide the same and give the same distribution."""
    game = spec.make_game(**config)
    agent = small(kind, game)
    for state, player in decision_points(game, 6):
        other = state.resample(player, np.random.default_rng(17))
        a, pa = decisions(agent, game, state, player, Position(state, player))
        b, pb = decisions(agent, game, other, player, Position(other, player))
        assert a == b
        np.testing.assert_array_equal(pa, pb)


class OnlyResample:
    """A position with nothing but ``player`` and ``resample``: no way to the real state."""

    __slots__ = ("player", "resample")

    def __init__(self, state: State, player: int) -> None:
        self.player = player
        self.resample = lambda rng: state.resample(player, rng)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("spec", "config"), [p for p in CONFIGS if p.values[0].name != "pico"][::3]
)
def test_the_position_is_only_resampled(spec, config, kind):
    """The agents reach the state through ``resample`` alone, and use nothing else."""
    game = spec.make_game(**config)
    agent = small(kind, game)
    for state, player in decision_points(game, 3, seed=2):
        real = decisions(agent, game, state, player, Position(state, player))
        bare = decisions(agent, game, state, player, OnlyResample(state, player))
        assert real[0] == bare[0]
        np.testing.assert_array_equal(real[1], bare[1])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["pickup", "easter_collection", "forslag"])
def test_deterministic_given_the_rng_and_probabilities_are_distributions(name, kind):
    spec = envs.get_spec(f"hiddenhand/{name}-v0")
    game = spec.make_game()
    agent = PIMC(game, samples=20) if kind == "pimc" else ISMCTS(game, iterations=20)
    for state, player in decision_points(game, 3, seed=3):
        observation = game.observation(state, player)
        mask = state.legal_mask(player).astype(np.int8)
        position = Position(state, player)
        first = [agent.act(observation, mask, np.random.default_rng(9), position=position)]
        stored = agent.action_probabilities(observation, mask)
        first.append(agent.act(observation, mask, np.random.default_rng(9), position=position))
        assert first[0] == first[1] and mask[first[0]]
        searched = agent.action_probabilities(
            observation, mask, position=position, rng=np.random.default_rng(9)
        )
        np.testing.assert_array_equal(stored, searched)
        assert np.all(stored >= 0) and stored.sum() == pytest.approx(1.0)
        assert np.all(stored[mask == 0] == 0)
        assert stored[first[0]] == stored.max()
    with pytest.raises(ValueError, match="position"):
        agent.action_probabilities(observation, 1 - mask)
    with pytest.raises(ValueError, match="position"):
        agent.act(observation, mask, np.random.default_rng(0))


def test_a_single_legal_action_is_played_without_search():
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    state = game.new_initial_state(np.random.default_rng(0))
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[np.flatnonzero(state.legal_mask(0))[0]] = 1
    for agent in (PIMC(game), ISMCTS(game)):
        action = agent.act(None, mask, np.random.default_rng(0), position=Position(state, 0))
        assert action == np.flatnonzero(mask)[0]
        assert agent.action_probabilities(None, mask)[action] == 1.0


def test_heuristic_rollouts_and_leads():
    spec = envs.get_spec("hiddenhand/pickup-v0")
    game = spec.make_game(num_players=2)
    for agent in (
        PIMC(game, samples=4, rollout="heuristic", outcome="lead"),
        ISMCTS(game, iterations=4, rollout="heuristic", outcome="lead", exploration=3.0),
    ):
        seat_rotated(game, [("search", agent), ("random", RandomAgent(game))], 1)
    with pytest.raises(ValueError, match="rollout"):
        PIMC(game, rollout="greedy")
    with pytest.raises(ValueError, match="outcome"):
        ISMCTS(game, outcome="points")


def test_outcomes_share_wins_and_measure_leads():
    scores = np.array([3.0, 7.0, 7.0, 1.0])
    np.testing.assert_allclose(outcomes(scores, "win"), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(outcomes(scores, "lead"), [-4, 0, 0, -6])
    np.testing.assert_allclose(outcomes(np.array([5.0, 2.0]), "lead"), [3, -3])
    # Any number of games at once, seats on the last axis.
    both = np.array([scores, [1.0, 2.0, 3.0, 4.0]])
    for kind in ("win", "lead"):
        np.testing.assert_array_equal(outcomes(both, kind)[0], outcomes(scores, kind))
    np.testing.assert_allclose(outcomes(both, "lead")[1], [-3, -2, -1, 1])


def test_registered_in_every_game():
    for spec in envs.GAMES:
        game = spec.make_game()
        assert isinstance(make_agent(spec, game, "pimc"), PIMC)
        assert isinstance(make_agent(spec, game, "ismcts"), ISMCTS)
        teacher = make_agent(spec, game, "pimc_heuristic")
        assert isinstance(teacher, HeuristicPIMC)
        assert teacher.rollout.agent is not None and teacher.outcome == "lead"
        # The budget follows the rollouts' cost: cheap on a batched heuristic.
        batched = spec.name in ("pico", "pickup")
        assert (teacher.batched is not None) == batched
        assert teacher.samples == (DEFAULT_SAMPLES if batched else HEURISTIC_SAMPLES)


def test_search_agents_are_called_with_a_position_by_decide():
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    state = game.new_initial_state(np.random.default_rng(0))
    mask = state.legal_mask(1).astype(np.int8)
    rng = np.random.default_rng(0)
    action = decide(PIMC(game, samples=5), state, 1, game.observation(state, 1), mask, rng)
    assert mask[action]


@pytest.mark.parametrize(
    "make", [lambda game: PIMC(game, samples=30), lambda game: ISMCTS(game, iterations=30)]
)
def test_search_beats_random_in_pico(make):
    """With a working search the win rate against random is far above 1/2 (about 0.7-0.8
    at these budgets); a search that picked its actions badly would not reach 0.6."""
    game = envs.get_spec("hiddenhand/pico-v0").make_game(num_players=2)
    result = head_to_head(game, make(game), RandomAgent(game), 100, seed=0)
    assert result["win_rate"] > 0.6, result


@pytest.mark.parametrize("name", ["pico", "pickup", "easter_collection"])
def test_batched_rollouts_value_actions_as_the_plain_ones(name):
    """PIMC's rollouts on the batched engine estimate the same action values as its
    rollouts one state at a time (late positions, where the values differ; 1,200
    rollouts each way, so the two estimates agree within Monte Carlo noise)."""
    spec = envs.get_spec(f"hiddenhand/{name}-v0")
    game = spec.make_game()
    plain, batched = PIMC(game, samples=1200, batched=False), PIMC(game, samples=1200)
    assert batched.batched is not None
    checked = 0
    for state, player in decision_points(game, 40, seed=3)[-25:]:
        legal = np.flatnonzero(state.legal_mask(player))
        if not 2 <= len(legal) <= 6:
            continue
        a = plain.action_values(Position(state, player), legal, np.random.default_rng(1))
        b = batched.action_values(Position(state, player), legal, np.random.default_rng(2))
        assert np.abs(a - b).max() < 0.15, (a, b)
        checked += 1
        if checked == 3:
            break
    assert checked == 3


@pytest.mark.parametrize("name", ["pico", "pickup"])
def test_batched_heuristic_rollouts_value_actions_as_the_plain_ones(name):
    """Heuristic rollouts on the batched engine (``heuristic_actions``) estimate the same
    score leads as the heuristic agent's rollouts one state at a time (600 each way),
    and not those of random rollouts, which differ by points somewhere."""
    spec = envs.get_spec(f"hiddenhand/{name}-v0")
    game = spec.make_game()
    plain, batched, random = (
        PIMC(game, samples=600, rollout="heuristic", outcome="lead", batched=False),
        PIMC(game, samples=600, rollout="heuristic", outcome="lead"),
        PIMC(game, samples=600, outcome="lead"),
    )
    assert batched.batched is not None and batched.batched.heuristic
    unlike_random = 0.0
    checked = 0
    for state, player in decision_points(game, 40, seed=3)[-25:]:
        legal = np.flatnonzero(state.legal_mask(player))
        if not 2 <= len(legal) <= 6:
            continue
        position = Position(state, player)
        a = plain.action_values(position, legal, np.random.default_rng(1))
        b = batched.action_values(position, legal, np.random.default_rng(2))
        c = random.action_values(position, legal, np.random.default_rng(2))
        assert np.abs(a - b).max() < 1.0, (a, b)
        unlike_random = max(unlike_random, np.abs(a - c).max())
        checked += 1
        if checked == 3:
            break
    assert checked == 3 and unlike_random > 2.0


def test_heuristic_rollouts_stay_one_state_at_a_time_without_a_batched_heuristic():
    """Face-down Pico's engine has no batched heuristic, nor Easter collection's: their
    heuristic rollouts are played state by state."""
    pico = envs.get_spec("hiddenhand/pico-v0").make_game(aside="face_down")
    easter = envs.get_spec("hiddenhand/easter_collection-v0").make_game()
    for game in (pico, easter):
        assert PIMC(game, rollout="heuristic").batched is None
        assert PIMC(game).batched is not None
    with pytest.raises(ValueError, match="kind='greedy' is not allowed"):
        BatchedRollouts(easter, 4, kind="greedy")
