"""Pickup's observations and render: what stays hidden, the observer's view, the fast
observation against the plain encoder (``observation.encode``) and the legal masks against
a plain reference."""

from __future__ import annotations

import numpy as np
import pytest

from envs.pickup import SPEC, observation
from envs.pickup.rules import NUM_RANKS, PickupGame, PickupState

# --- hidden information, observation, render ----------------------------------------------


def test_other_players_hands_and_the_stock_are_hidden(pickup):
    a = pickup.new_state(4, seed=7)
    b = a.clone()
    # Swap a card between seats 1 and 2 and reshuffle the stock: seat 0 sees nothing new.
    r1 = int(np.flatnonzero(b.hands[1])[0])
    r2 = int(np.flatnonzero(b.hands[2])[-1])
    b.hands[1][r1] -= 1
    b.hands[1][r2] += 1
    b.hands[2][r2] -= 1
    b.hands[2][r1] += 1
    b.stock = b.stock[::-1]
    b.refresh()  # edited by hand
    game = a.game
    if r1 != r2:
        assert not np.array_equal(game.observation(a, 1), game.observation(b, 1))
    assert np.array_equal(game.observation(a, 0), game.observation(b, 0))
    assert np.array_equal(game.observation(a, 3), game.observation(b, 3))
    assert str(a) == str(b)


def test_render_shows_public_information_only(pickup):
    state = pickup.new_state(3, seed=1)
    pickup.set_table(state, hands=[(9, 9, 9, 1, 1, 1)] * 3, pool=(2, 3, 4, 5, 6))
    text = str(state)
    assert "pool: 6 5 4 3 2" in text
    assert "6 in hand" in text
    assert "9 9 9" not in text
    pickup.play(state, p0=9, p1=1, p2=1)
    assert "player_0 chooses a pickup: 2 3 4 5 6" in str(state)
    state.apply({0: 5})
    text = str(state)
    assert "played 9, took 6 (acted 3rd)" in text and "played 1, stacked it (acted 1st)" in text
    assert "pool left over and discarded: 5 4 3 2" in text


def test_observation_is_from_the_observers_seat(pickup):
    state = pickup.new_state(3)
    state.round, state.last_actor = 1, 0
    state.dealer = 1
    pickup.set_table(
        state, hands=[(8, 1), (2, 1), (10, 1)], pool=(3, 6, 6, 9, 10), piles=[(7,), (), (4,)]
    )
    pickup.play(state, p0=8, p1=2, p2=10)
    assert state.to_act() == (0,)
    game = state.game
    views = game.observation_layout.views(game.observation(state, 2))
    # Seat 2 sees itself first, then seat 0, then seat 1.
    assert views["hand"].tolist() == pickup.cards(1).tolist()
    assert views["pool"].tolist() == pickup.cards(3, 6, 6, 9, 10).tolist()
    assert views["piles"][0].tolist() == pickup.cards(4).tolist()
    assert views["piles"][1].tolist() == pickup.cards(7).tolist()
    assert views["piles"][2].tolist() == pickup.cards(2).tolist()  # seat 1 stacked its 2
    assert views["revealed"].argmax(axis=1).tolist() == [9, 7, 1]
    assert views["order"].tolist() == [0, 0, 1]
    assert views["last_actor"].tolist() == [0, 0, 1]
    assert views["dealer"].tolist() == [0, 0, 1]
    assert views["chooser"].tolist() == [0, 1, 0]
    assert views["scores"].tolist() == [4, 7, 2]
    assert views["round"].tolist() == [0, 1, 0, 0, 0, 0]
    # Unseen for seat 2: the deck minus its hand, this hand's pools and the reveal. The
    # scripted table is not what was dealt, so check against the state's own bookkeeping.
    expected = np.subtract(state.unshown, state.hands[2])
    assert views["unseen"].tolist() == expected.tolist()
    assert state.unshown[7] < 8 and state.unshown[9] < 10  # the revealed 8 and 10 were seen


def test_unseen_counts_track_pools_and_reveals(pickup):
    state = pickup.new_state(2, seed=3)
    game = state.game
    views = game.observation_layout.views(game.observation(state, 0))
    assert views["unseen"].sum() == 55 - 7 - 5
    rng = np.random.default_rng(3)
    state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    while len(state.to_act()) == 1:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    views = game.observation_layout.views(game.observation(state, 0))
    # Own hand 6, two pools of 5, the opponent's revealed card; own played card is not
    # double counted (it left the hand when it was revealed).
    assert views["unseen"].sum() == 55 - 6 - 10 - 2
    assert (views["unseen"] >= 0).all()


# --- the fast observation against the plain reference encoder -----------------------------


@pytest.mark.parametrize("options", SPEC.configurations)
def test_observation_matches_the_plain_encoder(pickup, options):
    # The observation is gathered from the state's table (kept up to date by the rules);
    # observation.encode reads the state's fields plainly, and the Game.encode path into
    # named views must agree with both.
    game = PickupGame.from_options(**options)
    layout = game.observation_layout
    for seed in range(12):
        for state in pickup.random_game(game, seed):
            for player in range(game.num_players):
                expected = observation.encode(state, player)
                assert expected.dtype == np.float32 and expected.shape == (layout.size,)
                observed = game.observation(state, player)
                assert observed.dtype == np.float32
                assert observed.tobytes() == expected.tobytes()
                flat = layout.zeros()
                game.encode(state, player, layout.views(flat))
                assert flat.tobytes() == expected.tobytes()


def test_plain_encoder_reads_the_fields_not_the_table(pickup):
    # The reference must not share the fast path's table: a stale table shows the difference.
    state = pickup.new_state(3, seed=5)
    expected = observation.encode(state, 0)
    state.table[:] = 0
    assert observation.encode(state, 0).tobytes() == expected.tobytes()
    assert not np.array_equal(state.game.observation(state, 0), expected)


def reference_mask(state: PickupState, player: int) -> np.ndarray:
    """The documented mask, plainly: hand ranks while playing, eligible pool ranks for the
    chooser."""
    mask = np.zeros(NUM_RANKS, dtype=bool)
    if state.finished:
        return mask
    if state.chooser < 0:
        return np.array(state.hands[player]) > 0
    if player == state.chooser:
        for rank in range(state.played[player] + 1):
            mask[rank] = state.pool[rank] > 0
    return mask


@pytest.mark.parametrize("options", SPEC.configurations)
def test_legal_mask_matches_the_plain_reference(pickup, options):
    game = PickupGame.from_options(**options)
    for seed in range(12):
        for state in pickup.random_game(game, seed):
            for player in range(game.num_players):
                mask = state.legal_mask(player)
                assert mask.dtype == bool
                assert np.array_equal(mask, reference_mask(state, player))
                # A fresh array (masks are copies of shared ones): the caller may change it.
                mask[:] = ~mask
                assert np.array_equal(state.legal_mask(player), reference_mask(state, player))
