"""Every registered id with every configuration it declares: the shared suites' cases."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from envs.core.game import Game

CASES = [
    pytest.param(env_id, config, id=f"{env_id}-{'-'.join(f'{k}={v}' for k, v in config.items())}")
    for env_id in envs.ids()
    for config in envs.get_spec(env_id).configurations
]


def assert_plays_only_legal_moves(game: Game, agent, games: int = 2) -> None:
    """Play ``games`` games with ``agent`` in one seat (a different one each game) and
    random players in the others, checking every choice it makes against the mask."""
    random_agent = RandomAgent(game)
    rng = np.random.default_rng(0)
    for g in range(games):
        state = game.new_initial_state(np.random.default_rng(g))
        seat = g % game.num_players
        while not state.is_terminal():
            joint = {}
            for p in state.to_act():
                mask = state.legal_mask(p).astype(np.int8)
                player = agent if p == seat else random_agent
                joint[p] = player.act(game.observation(state, p), mask, rng)
                assert mask[joint[p]], game.action_name(joint[p])
            state.apply(joint)


def random_play(game: Game, games: int):
    """Every decision of ``games`` games of random players: yields ``(state, player)``
    before that player's choice (the live state: read it, do not change it)."""
    rng = np.random.default_rng(0)
    for g in range(games):
        state = game.new_initial_state(np.random.default_rng(g))
        while not state.is_terminal():
            joint = {}
            for p in state.to_act():
                yield state, p
                joint[p] = int(rng.choice(np.flatnonzero(state.legal_mask(p))))
            state.apply(joint)
