"""The fast paths that the search agents take play exactly as the plain ones: Pick &
Pack's ``random_play_out`` (a random rollout without masks), ``legal_actions`` and
determinisations with a generator made when asked for, its batched engine without
observations (``observed=False``, a search's rollouts), and ``best_legal`` (how the
batched rollouts pick every seat's action). ``tests/test_shipped_choices.py`` checks the
search agents' decisions themselves."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import pytest

import envs
from envs.core.game import State
from envs.pick_and_pack.batched import PickAndPackVector
from envs.pick_and_pack.rules import PickAndPackState
from training.agents.search import best_legal

CONFIGS = [
    {},
    {"placement": "alternate"},
    {"placement": "random"},
    {"targetless_actions": "unplayable"},
    {"chain_rush_orders": False},
    {"opponent_crates": "full"},
]


def make_game(options: dict):
    return envs.get_spec("hiddenhand/pick_and_pack-v0").make_game(**options)


def positions(game, seeds: int, every: int = 4) -> Iterator[PickAndPackState]:
    """Every ``every``-th position of random games (copies), from the deal on."""
    for seed in range(seeds):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed + 100)
        step = 0
        while not state.is_terminal():
            if step % every == 0:
                yield state.clone()
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            step += 1


@pytest.mark.parametrize("options", CONFIGS, ids=str)
def test_random_play_out_is_the_generic_rollout(options):
    for i, state in enumerate(positions(make_game(options), seeds=3)):
        plain, fast = state.clone(), state.clone()
        plain_rng, fast_rng = np.random.default_rng(i), np.random.default_rng(i)
        scores = State.random_play_out(plain, plain_rng)  # the core's generic rollout
        assert fast.random_play_out(fast_rng).tolist() == scores.tolist()
        assert fast.position() == plain.position()
        assert np.array_equal(fast.view, plain.view)
        assert fast_rng.bit_generator.state == plain_rng.bit_generator.state
        fast.check_invariants()


@pytest.mark.parametrize("options", CONFIGS, ids=str)
def test_legal_actions_are_those_of_the_mask(options):
    for state in positions(make_game(options), seeds=2, every=1):
        for player in (0, 1):
            assert state.legal_actions(player) == np.flatnonzero(state.legal_mask(player)).tolist()


@pytest.mark.parametrize("options", [{}, {"placement": "random"}], ids=str)
def test_a_determinisation_makes_its_generator_from_the_seed_it_drew(options):
    for i, state in enumerate(positions(make_game(options), seeds=2, every=7)):
        rng = np.random.default_rng(i)
        seed = copy.deepcopy(rng).integers(2**63)  # resample's first draw
        sample = state.resample(i % 2, rng)
        sample.check_invariants()
        twin = sample.clone()  # before the generator is made: the same seed
        expected = np.random.default_rng(seed).bit_generator.state
        assert sample.rng.bit_generator.state == expected
        assert twin.rng.bit_generator.state == expected
        assert sample.clone().rng is not sample.rng


@pytest.mark.parametrize("options", CONFIGS, ids=str)
def test_the_engine_plays_alike_without_observations(options):
    game = make_game(options)
    states = [s for s in positions(game, seeds=4, every=9) if not s.is_terminal()][:48]
    observed = PickAndPackVector(len(states), seed=0, **options)
    unobserved = PickAndPackVector(len(states), seed=0, **options)
    unobserved.observed = False
    for engine in (observed, unobserved):
        engine.load(states)
    rng = np.random.default_rng(1)
    active = np.arange(len(states))
    while len(active):
        masks = observed.masks()[active]
        assert np.array_equal(unobserved.masks()[active], masks)
        assert np.array_equal(unobserved.choosers(), observed.choosers())
        keys = rng.random(masks.shape)
        actions = np.argmax(np.where(masks, keys, -1.0), axis=2)
        ended = observed.advance(actions, active)
        assert np.array_equal(unobserved.advance(actions, active), ended)
        assert np.array_equal(unobserved.scores(), observed.scores())
        active = active[~ended]
    with pytest.raises(ValueError, match="observations"):
        unobserved.observations()


def test_best_legal_is_the_argmax_of_the_legal_keys():
    rng = np.random.default_rng(0)
    for _ in range(300):
        rows, seats, size = (int(n) for n in rng.integers(1, (40, 4, 20)))
        worlds = int(rng.integers(1, 8))
        world_of_row = rng.integers(worlds, size=rows)
        masks = rng.random((rows, seats, size)) < rng.random()
        keys = np.floor(rng.random((worlds, seats, size)) * 4) / 4  # ties too
        expected = np.argmax(np.where(masks, keys[world_of_row], -1.0), axis=2)
        assert np.array_equal(best_legal(masks, keys, world_of_row), expected)
