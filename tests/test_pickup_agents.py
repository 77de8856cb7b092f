"""Pickup's heuristic against random players."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.agents import RandomAgent
from envs.pickup.heuristic import PickupHeuristic
from envs.pickup.rules import PickupGame
from training.evaluation.tournament import seat_rotated


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_heuristic_beats_random(num_players):
    game = PickupGame.from_options(num_players=num_players)
    lineup = [("heuristic", PickupHeuristic(game))] + [("random", RandomAgent(game))] * (
        num_players - 1
    )
    records = seat_rotated(game, lineup, 120, seed=num_players)
    heuristic, random_agent = records["heuristic"], records["random"]
    assert np.mean(heuristic.scores) > np.mean(random_agent.scores) + 2
    assert np.mean(heuristic.wins) > 1 / num_players
