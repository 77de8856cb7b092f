"""Easter collection's observations: what stays hidden, the fast observation (one gather
from the state's buffer) against the plain reference encoder
(``envs.easter_collection.observation.encode``), and the masks against obvious versions
(in copies too)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from envs.easter_collection import SPEC, observation
from envs.easter_collection.layout import DERIVED
from envs.easter_collection.rules import (
    PHASE_CHOOSE,
    PHASE_PLACE,
    PLACE,
    EasterCollectionGame,
    EasterCollectionState,
)

CONFIGS = [(c["num_players"], c["variant"]) for c in SPEC.configurations]

# --- hidden information -------------------------------------------------------------------


def test_face_down_bids_are_hidden_from_observations_and_render(easter):
    game, a = easter.placing_state("KS", "5H")
    _, b = easter.placing_state("QS", "6H")  # other face-down cards; KS and 5H stay in the deck
    assert np.array_equal(game.observation(a, 2), game.observation(b, 2))
    assert str(a) == str(b)
    assert "KS" not in str(a) and "5H" not in str(a)
    assert "face down: player_1" in str(a) and "face down: player_0" in str(a)
    # The owners do see their own bids, so the two states really differ.
    assert not np.array_equal(game.observation(a, 0), game.observation(b, 0))
    assert not np.array_equal(game.observation(a, 1), game.observation(b, 1))
    views = game.observation_layout.views(game.observation(a, 0))
    assert easter.names(views["chosen"]) == {"KS"}


def test_other_hands_are_hidden(easter):
    game = easter.make(2)
    a = easter.deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    b = easter.deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 5D"])
    assert np.array_equal(game.observation(a, 0), game.observation(b, 0))
    assert str(a) == str(b) and "2D" not in str(a)
    assert not np.array_equal(game.observation(a, 1), game.observation(b, 1))


def test_bids_are_public_after_the_reveal_and_views_are_relative(easter):
    game, state = easter.placing_state("KS", "5H")
    views = game.observation_layout.views(game.observation(state, 2))
    # Observer seat 2: rows are seats 2, 0, 1.
    assert views["bids"][1].tolist() == [0, 1, 0]  # seat 0 beside the 3S (position 2)
    assert views["bids"][0].tolist() == [0, 0, 1]  # seat 1 beside the 2H (position 1)
    assert views["placed"].tolist() == [0, 1, 1]
    assert views["start"].tolist() == [0, 1, 0]
    assert views["phase"].tolist() == [0, 1] and views["bid"].tolist() == [1, 0]
    assert easter.names(views["hand"]) == {"6D", "8D", "9D"}
    assert easter.names(views["chosen"]) == {"7H"}
    unseen = easter.names(views["unseen"])
    assert "KS" in unseen and "5H" in unseen and "7H" not in unseen and "2H" not in unseen
    state.apply({2: PLACE + 2})
    views = game.observation_layout.views(game.observation(state, 2))
    assert easter.names(views["played"][1]) == {"KS"} and easter.names(views["played"][2]) == {"5H"}
    assert easter.names(views["score_piles"][1]) == {"3S", "KS"}
    assert views["scores"].tolist() == [2, 3, 2]  # 9H+7H, 3S+KS, 2H+5H
    assert not views["bids"].any() and views["bid"].tolist() == [0, 1]
    assert "KS" in str(state) and "5H" in str(state)


# --- the fast observation against the reference encoder ----------------------------------


def check_observations(game: EasterCollectionGame, state: EasterCollectionState) -> None:
    """Every seat's observation (and the core's ``encode`` into views) is the reference
    encoder's."""
    for p in range(game.num_players):
        expected = observation.encode(state, p)
        fast = game.observation(state, p)
        assert fast.dtype == np.float32 and np.array_equal(fast, expected)
        flat = game.observation_layout.zeros()
        game.encode(state, p, game.observation_layout.views(flat))
        assert np.array_equal(flat, expected)


def check_masks(game: EasterCollectionGame, state: EasterCollectionState) -> None:
    """Every seat's legal mask is the one computed the obvious way, and a new array."""
    for p in range(game.num_players):
        mask = np.zeros(game.num_actions, dtype=bool)
        if p in state.to_act() and state.phase == PHASE_CHOOSE:
            for card in np.flatnonzero(state.hands[p]):
                suits = [k for k, t in enumerate(state.table) if t >= 0 and t // 13 == card // 13]
                if game.secret:  # a suit's positions, else the blank chip
                    for chip in suits or [4]:
                        mask[chip * 52 + card] = True
                else:
                    mask[card] = True
        elif p in state.to_act():
            for k, t in enumerate(state.table):
                mask[PLACE + k] = t >= 0 and t // 13 == state.chosen[p] // 13
        legal = state.legal_mask(p)
        assert legal.dtype == bool and np.array_equal(legal, mask)
        legal[:] = True  # a new array each time: changing it changes no later mask
        assert np.array_equal(state.legal_mask(p), mask)


@pytest.mark.parametrize("num_players, variant", CONFIGS)
def test_fast_observation_matches_the_reference_encoder_and_masks_the_obvious_ones(
    easter, num_players, variant
):
    """At every decision of random games (and of a determinisation of each position),
    for every seat."""
    game = easter.make(num_players, variant=variant)
    for seed in range(6):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while True:
            check_observations(game, state)
            check_masks(game, state)
            # Determinisations rewrite the other seats' private fields from scratch.
            sample = state.resample(seed % num_players, np.random.default_rng(seed))
            check_observations(game, sample)
            check_masks(game, sample)
            if state.is_terminal():
                break
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


def test_reference_encoder_reads_the_rules_fields_not_the_buffers_mirrors(easter):
    """``encode`` works from the rules' fields: with the buffer's fields that only mirror
    them (``DERIVED``), the hand rows and the points scrambled, it writes the same
    observation (the fast one changes); it returns a new float32 vector each time."""
    game = easter.make(3)
    state = game.new_initial_state(np.random.default_rng(0))
    rng = np.random.default_rng(0)
    # Play on to a seat placing its bid after another has placed, with cards in the piles.
    while not (state.phase == PHASE_PLACE and state.num_placed and state.piles.any()):
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    expected = [observation.encode(state, p) for p in range(3)]
    assert all(np.array_equal(game.observation(state, p), expected[p]) for p in range(3))
    scrambled = state.clone()
    for name in (*DERIVED, "hands", "points"):
        scrambled.view[name][...] = 7.0
    for p in range(3):
        assert not np.array_equal(game.observation(scrambled, p), expected[p])
        encoded = observation.encode(scrambled, p)
        assert encoded.dtype == np.float32 and encoded.shape == (game.observation_layout.size,)
        assert np.array_equal(encoded, expected[p])
    encoded[:] = -1
    assert np.array_equal(observation.encode(state, 2), expected[2])


@pytest.mark.parametrize("how", ["clone", "resample", "pickle", "deepcopy"])
def test_copies_keep_their_rules_arrays_bound_to_their_own_buffer(easter, how):
    """The rules' card arrays are views of the state's observation buffer: a copy must
    rebind them to its own buffer, so that its observations follow its own play."""
    game = easter.make(3)
    state = game.new_initial_state(np.random.default_rng(3))
    state.apply({p: int(np.flatnonzero(state.legal_mask(p))[0]) for p in state.to_act()})
    before = pickle.dumps(state)
    twin = {
        "clone": state.clone,
        "resample": lambda: state.resample(0, np.random.default_rng(0)),
        "pickle": lambda: pickle.loads(pickle.dumps(state)),
        "deepcopy": lambda: copy.deepcopy(state),
    }[how]()
    for name in ("hands", "piles", "played", "points", "discards"):
        assert np.shares_memory(getattr(twin, name), twin.source)
        assert not np.shares_memory(getattr(twin, name), state.source)
    # The rules write through ``cells``, a memoryview that must be of the copy's own buffer.
    assert np.shares_memory(np.asarray(twin.cells), twin.source)
    assert not np.shares_memory(np.asarray(twin.cells), state.source)
    rng = np.random.default_rng(0)
    while not twin.is_terminal():
        check_observations(game, twin)
        twin.apply({p: int(rng.choice(twin.legal_actions(p))) for p in twin.to_act()})
    check_observations(game, twin)
    assert pickle.dumps(state) == before
