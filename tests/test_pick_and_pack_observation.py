"""Pick & Pack's observations and render: hidden trays and tiles, the observer's frame,
the masks, and the fast observation against the plain reference encoder (``encode``)."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.game import Game
from envs.pick_and_pack import SPEC, observation, raw_env
from envs.pick_and_pack.rules import (
    BLUE,
    MOVE,
    MOVING,
    NUM_ACTIONS,
    PLACE_TRAY,
    RED,
    SIZE,
    fresh_view,
)

# --- observations and render --------------------------------------------------------------


def test_opponent_buried_trays_are_hidden_unless_full(pick_and_pack):
    for crates, hidden in (("visible", True), ("full", False)):
        state = pick_and_pack.scripted(opponent_crates=crates)
        pick_and_pack.fill(state, BLUE, [[1, 2, 6], [4], [], []])
        other = state.clone()
        pick_and_pack.fill(other, BLUE, [[5, 5, 6], [4], [], []])
        game = state.game
        same = np.array_equal(game.observation(state, RED), game.observation(other, RED))
        assert same == hidden
        assert (str(state) == str(other)) == hidden
        views = game.observation_layout.views(game.observation(state, RED))
        assert views["crate_top"][1].tolist() == [6, 4, 0, 0]
        assert views["crate_count"][1].tolist() == [3, 1, 0, 0]
        # Own crates are always shown in full.
        own = game.observation_layout.views(game.observation(state, BLUE))
        assert own["crate_stack"][0, 0, :4].tolist() == [1, 2, 6, 0]


def test_observation_is_in_the_observers_frame(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[4, 3] = 5  # on blue's column, row 4
    state.refresh()
    game = state.game
    red = game.observation_layout.views(game.observation(state, RED))
    blue = game.observation_layout.views(game.observation(state, BLUE))
    assert red["trays"][4, 3] == 5 and blue["trays"][3, 4] == 5
    assert red["grabber"][2, 3] == 1 and blue["grabber"][3, 2] == 1
    assert blue["to_act"].tolist() == [1, 0] and red["to_act"].tolist() == [0, 1]
    assert blue["color"].tolist() == [0, 1]
    assert blue["phase"][MOVING] == 1
    # Blue moves along its row of its frame: line 4 reaches the 5.
    pick_and_pack.act(state, MOVE + 4)
    assert state.grabber == (4, 3) and state.holding == 5 and state.phase == PLACE_TRAY


def test_a_single_legal_move_is_made_without_asking(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(0, 3), player=BLUE)
    state.apples[2, :] = 0
    state.apples[2, 3] = 3  # blue grabs it, leaving the grabber on row 2
    state.apples[2, 5] = 4  # then red's only target
    for line in range(SIZE):
        pick_and_pack.use_line(state, RED, line)
    pick_and_pack.fill(state, RED, [[1], [1], [], [1]])
    pick_and_pack.move(state, 2)
    assert state.grabber == (2, 5) and state.crates[RED][2] == [4]
    assert state.player == BLUE and state.phase == MOVING


@pytest.mark.parametrize("options", [{}, {"placement": "random"}])
def test_legal_masks_are_fresh_copies(pick_and_pack, options):
    """The masks built from what the state keeps (placement masks, legal choices) are new
    arrays: changing one changes neither the state nor the next mask."""
    state = pick_and_pack.make_game(**options).new_initial_state(np.random.default_rng(0))
    player = state.to_act()[0]
    mask = state.legal_mask(player)
    expected = mask.copy()
    mask[:] = ~mask
    assert mask.dtype == bool and np.array_equal(state.legal_mask(player), expected)
    state.check_invariants()


def test_action_mask_is_empty_for_the_waiting_player_and_sized(pick_and_pack):
    state = pick_and_pack.scripted(player=RED)
    assert state.legal_mask(BLUE).shape == (NUM_ACTIONS,) and not state.legal_mask(BLUE).any()


def test_env_render_is_the_board():
    env = raw_env(render_mode="ansi", placement="random")
    env.reset(seed=0)
    text = env.render()
    assert "[6]" in text and "red crates" in text and "to act" in text


# --- the fast observation agrees with the reference encoder -------------------------------


@pytest.mark.parametrize(
    "config",
    [*SPEC.configurations, {"targetless_actions": "unplayable", "chain_rush_orders": False}],
)
def test_fast_encoding_matches_the_plain_one_through_whole_games(config):
    """The gather from the state's view, and the fields written after it, against the
    shipped reference encoder ``observation.encode``, at every state of whole random games
    (clones and determinisations too), for both observers; the core's ``encode`` path
    gives the same vector."""
    game = SPEC.make_game(**config)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(rng)
        while True:
            others = (state.clone(), state.resample(RED, rng), state.resample(BLUE, rng))
            for player in (RED, BLUE):
                fast = game.observation(state, player)
                assert fast.dtype == np.float32
                assert np.array_equal(fast, observation.encode(state, player))
                assert np.array_equal(Game.observation(game, state, player), fast)
                for other in others:
                    assert np.array_equal(
                        game.observation(other, player), observation.encode(other, player)
                    )
            if state.is_terminal():
                break
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


def test_reference_encoder_reads_the_plain_fields_not_the_view(pick_and_pack):
    """``encode`` works from the grid, tiles and crates alone: a view spoilt by hand changes
    nothing in it; it returns a new float32 vector of the layout's size."""
    state = pick_and_pack.mid_game(opponent_crates="full")
    expected = [observation.encode(state, player) for player in (RED, BLUE)]
    state.view[:] = 7
    for player in (RED, BLUE):
        encoded = observation.encode(state, player)
        assert encoded.dtype == np.float32
        assert encoded.shape == (state.game.observation_layout.size,)
        assert np.array_equal(encoded, expected[player])
    encoded[:] = -1
    assert np.array_equal(observation.encode(state, BLUE), expected[BLUE])


@pytest.mark.parametrize("options", [{}, {"placement": "random", "opponent_crates": "full"}])
def test_view_kept_move_by_move_is_the_one_computed_afresh(pick_and_pack, options):
    """The rules write each change into ``view``: it equals a recomputation from scratch
    after every step, and a clone's view is its own."""
    game = pick_and_pack.make_game(**options)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(rng)
        while not state.is_terminal():
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            assert np.array_equal(state.view, fresh_view(state))
        twin = state.clone()
        twin.view[:] = 7
        assert np.array_equal(state.view, fresh_view(state))


def test_observation_is_a_new_array_each_time(pick_and_pack):
    state = pick_and_pack.mid_game()
    first = state.game.observation(state, RED)
    first[:] = -1
    assert np.array_equal(state.game.observation(state, RED), observation.encode(state, RED))
