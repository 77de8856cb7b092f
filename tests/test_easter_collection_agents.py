"""Easter collection's heuristic and expert: they win, and the expert's values are what
it chooses by."""

from __future__ import annotations

import numpy as np
import pytest

from envs.easter_collection import SPEC
from envs.easter_collection.heuristic import (
    DISCARD_COST,
    EasterCollectionExpert,
    EasterCollectionHeuristic,
)
from envs.easter_collection.rules import PHASE_CHOOSE, POINTS, SUIT_OF
from training.evaluation.tournament import seat_rotated


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_heuristic_beats_random(easter, num_players, variant):
    game = easter.make(num_players, variant=variant)
    lineup = [("heuristic", EasterCollectionHeuristic(game))] + [
        ("random", SPEC.agent_factory("random")(game))
    ] * (num_players - 1)
    records = seat_rotated(game, lineup, 120, seed=7)
    assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores) + 2


def test_expert_beats_the_heuristic(easter):
    game = easter.make(2)
    lineup = [
        ("expert", EasterCollectionExpert(game)),
        ("heuristic", EasterCollectionHeuristic(game)),
    ]
    records = seat_rotated(game, lineup, 300, seed=1)
    assert np.mean(records["expert"].wins) > 0.56  # about 0.66 over many games


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_expert_action_values_are_what_it_chooses_by(easter, random_play, num_players, variant):
    """Finite exactly on the legal actions; ``act`` takes one of the best; a card with no
    suit on the table (standard game; with more than two players, where no second bid is
    planned into the first) is valued as the discard's small cost."""
    game = easter.make(num_players, variant=variant)
    expert = EasterCollectionExpert(game)
    rng = np.random.default_rng(3)
    plain = variant == "standard" and num_players > 2
    discards = 0
    for state, player in random_play(game, 6):
        observation, mask = game.observation(state, player), state.legal_mask(player)
        values = expert.action_values(observation, mask)
        assert np.array_equal(np.isfinite(values), mask.astype(bool))
        assert values[expert.act(observation, mask, rng)] >= values.max() - 1e-5
        if plain and state.phase == PHASE_CHOOSE and mask.sum() > 1:
            table_suits = {SUIT_OF[c] for c in state.table if c >= 0}
            for card in np.flatnonzero(mask).tolist():
                if SUIT_OF[card] not in table_suits:
                    assert values[card] == pytest.approx(-DISCARD_COST * POINTS[card])
                    discards += 1
    assert discards or not plain
