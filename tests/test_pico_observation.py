"""Pico's fast observation (one gather from the state's public table) against the plain
reference encoder shipped beside it (``envs.pico.observation.encode``)."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.game import Game
from envs.pico import layout, rules
from envs.pico.observation import encode


@pytest.mark.parametrize(
    "config",
    envs.pico.SPEC.configurations,
    ids=lambda config: "-".join(f"{k}={v}" for k, v in config.items()),
)
def test_fast_observation_equals_the_reference_encoder(pico, config):
    """For every seat at every position (every decision, and the end) of random games."""
    positions = 0
    for game, state, _ in pico.random_games(games=60, **config):
        for p in range(game.num_players):
            expected = encode(state, p)
            assert expected.dtype == np.float32
            assert expected.shape == (game.observation_layout.size,)
            assert game.observation(state, p).tobytes() == expected.tobytes()
            # The core's path through ``Game.encode`` gives the same vector.
            assert Game.observation(game, state, p).tobytes() == expected.tobytes()
        positions += 1
    assert positions > 60 * 5


def test_encode_returns_a_new_array_and_leaves_the_state_alone(pico):
    for config in envs.pico.SPEC.configurations:
        for game, state, _ in pico.random_games(games=3, **config):
            public = state.public.copy()
            first = encode(state, 0)
            first[:] = 9
            assert encode(state, 0).tobytes() == game.observation(state, 0).tobytes()
            assert state.public.tobytes() == public.tobytes()


def test_shared_names_are_declared_once_in_the_layout():
    """The rules take the card values and the round counts from the layout module."""
    assert rules.VALUES is layout.VALUES and rules.NUM_CARDS == layout.NUM_CARDS
    assert rules.NUM_ROUNDS is layout.NUM_ROUNDS
    for n in (2, 3):
        game = rules.PicoGame.from_options(num_players=n)
        assert game.observation_layout.fields["round"].shape == (max(layout.NUM_ROUNDS.values()),)
