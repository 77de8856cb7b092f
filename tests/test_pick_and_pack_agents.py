"""Pick & Pack's heuristic, expert and tactician: they win, play legally, and choose by
their action values."""

from __future__ import annotations

import numpy as np
import pytest

from envs.pick_and_pack import SPEC
from envs.pick_and_pack.heuristic import (
    Board,
    PickAndPackExpert,
    PickAndPackHeuristic,
    PickAndPackTactician,
)
from envs.pick_and_pack.rules import (
    MALFUNCTION_TARGET,
    MOVE,
    MOVING,
    PLACE_TRAY,
    PLACING,
    RUSH_CHOICE,
    RUSH_DECLINE,
    RUSH_USE,
    SIZE,
)
from training.evaluation.tournament import seat_rotated


@pytest.mark.parametrize("config", SPEC.configurations[::2])
def test_heuristic_beats_random(config):
    game = SPEC.make_game(**config)
    lineup = [
        ("heuristic", PickAndPackHeuristic(game)),
        ("random", SPEC.agent_factory("random")(game)),
    ]
    records = seat_rotated(game, lineup, 100, seed=1)
    assert np.mean(records["heuristic"].wins) > 0.8
    assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores) + 10


def test_expert_plays_only_legal_moves_under_the_other_rule_options(assert_plays_only_legal_moves):
    # The conformance suite covers SPEC.configurations; these options change the expert's
    # search (one Rush Order a turn; tiles with no target cannot be activated).
    game = SPEC.make_game(chain_rush_orders=False, targetless_actions="unplayable")
    assert_plays_only_legal_moves(game, PickAndPackExpert(game), games=4)


def test_expert_beats_the_heuristic():
    game = SPEC.make_game()
    lineup = [("expert", PickAndPackExpert(game)), ("heuristic", PickAndPackHeuristic(game))]
    records = seat_rotated(game, lineup, 100, seed=1)
    assert np.mean(records["expert"].wins) > 0.75  # about 0.95 over many games


def test_expert_action_values_are_what_it_chooses_by(random_play):
    """-inf where illegal; ``act`` takes a best one; every line with a tray is valued in a
    move, the plan's one tile in a placement (or every tile, the plan out of reach after
    random placements), both answers to a Rush Order."""
    game = SPEC.make_game()
    expert = PickAndPackExpert(game)
    rng = np.random.default_rng(0)
    seen = set()
    for state, player in random_play(game, 3):
        observation, mask = game.observation(state, player), state.legal_mask(player)
        values = expert.action_values(observation, mask)
        assert not np.isfinite(values[mask == 0]).any()
        assert values[expert.act(observation, mask, rng)] == values.max() > -np.inf
        seen.add(state.phase)
        if state.phase == MOVING:
            frame = game.observation_layout.views(observation)
            row = int(np.argmax(frame["grabber"])) // SIZE
            for line in np.flatnonzero(mask[MOVE : MOVE + SIZE]).tolist():
                assert np.isfinite(values[MOVE + line]) or frame["trays"][row, line] == 0
        elif state.phase == PLACING and mask.sum() > 1:
            assert np.isfinite(values).sum() in (1, mask.sum())  # all: the plan is out of reach
        elif state.phase == RUSH_CHOICE:
            assert np.isfinite(values[[RUSH_USE, RUSH_DECLINE]]).all()
    assert {PLACING, MOVING, MALFUNCTION_TARGET} <= seen


def test_tactician_moves_as_the_heuristic_and_decides_the_rest_as_the_expert(random_play):
    game = SPEC.make_game()
    tactician, expert = PickAndPackTactician(game), PickAndPackExpert(game)
    heuristic = PickAndPackHeuristic(game)
    phases = set()
    for state, player in random_play(game, 2):
        observation, mask = game.observation(state, player), state.legal_mask(player)
        teacher = heuristic if state.phase == MOVING else expert
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        assert tactician.act(observation, mask, rng_a) == teacher.act(observation, mask, rng_b)
        values = tactician.action_values(observation, mask)
        if state.phase == MOVING:
            board = Board(game.observation_layout.views(observation))
            for line in np.flatnonzero(mask[MOVE : MOVE + SIZE]).tolist():
                assert values[MOVE + line] == board.move_value(line)
        else:
            assert np.array_equal(values, expert.action_values(observation, mask))
        phases.add(state.phase)
    assert {MOVING, MALFUNCTION_TARGET, PLACE_TRAY} <= phases
