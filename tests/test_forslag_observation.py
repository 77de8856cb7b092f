"""Förslag's observations: what stays hidden, the observer's view, the documented size,
and the fast encoder (one gather from the state's buffer) against the plain one
(``envs.forslag.observation.encode``)."""

from __future__ import annotations

import numpy as np
import pytest

import envs.forslag
from envs.forslag import SPEC, observation
from envs.forslag.rules import ForslagState

CONFIGS = [(c["num_players"], c["board_play"]) for c in SPEC.configurations]

# --- hidden information -------------------------------------------------------------------


def swap_hidden_card(state: ForslagState, seat: int) -> ForslagState | None:
    """A copy where one of ``seat``'s dealt (undrafted) cards is swapped with a deck card."""
    hidden = state.hands[seat] - state.known[seat]
    for mine in np.flatnonzero(hidden):
        for i, other in enumerate(state.deck):
            if other != mine:
                twin = state.clone()
                twin.hands[seat, mine] -= 1
                twin.hands[seat, other] += 1
                twin.deck[i] = int(mine)
                return twin
    return None


@pytest.mark.parametrize("n, mode", [(3, "in_turn"), (4, "simultaneous"), (6, "in_turn")])
def test_no_observation_or_render_reveals_dealt_hand_cards(forslag, n, mode):
    game = forslag.make_game(n, mode)
    checked = 0
    for seed in range(2):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            for seat in range(n):
                twin = swap_hidden_card(state, seat)
                if twin is None:
                    continue
                checked += 1
                assert str(twin) == str(state)
                for observer in range(n):
                    same = np.array_equal(
                        game.observation(twin, observer), game.observation(state, observer)
                    )
                    assert same == (observer != seat)
            forslag.random_step(state, rng)
    assert checked > 10


def test_unseen_counts_what_the_observer_has_not_seen(forslag):
    game = forslag.make_game(4)
    state = game.new_initial_state(np.random.default_rng(9))
    rng = np.random.default_rng(9)
    for _ in range(9):
        forslag.random_step(state, rng)
    for observer in range(4):
        views = game.observation_layout.views(game.observation(state, observer))
        hidden = forslag.type_counts(state.deck)
        for seat in range(4):
            if seat != observer:
                hidden = hidden + state.hands[seat] - state.known[seat]
        assert views["unseen"].tolist() == hidden.tolist()
        assert views["hands"][0].tolist() == state.hands[observer].tolist()


def test_observation_is_from_the_observers_seat(forslag):
    game = forslag.make_game(4, "in_turn")
    state = game.new_initial_state(np.random.default_rng(6))
    rng = np.random.default_rng(6)
    for _ in range(5):
        forslag.random_step(state, rng)
    for observer in range(4):
        views = game.observation_layout.views(game.observation(state, observer))
        for row in range(4):
            seat = (observer + row) % 4
            assert views["hands"][row, :].sum() == (
                state.hands[seat].sum() if row == 0 else state.known[seat].sum()
            )
            for position in range(4):
                cell = views["boards"][row, position]
                played = state.boards[seat, position]
                assert cell.sum() == (2 if played >= 0 else 0)
                if played >= 0:
                    assert cell[played // 5] == 1 and cell[5 + played % 5] == 1
        assert views["start_player"][(state.start_player - observer) % 4] == 1
        assert views["to_act"][(state.current_player - observer) % 4] == 1
        assert (
            views["scores"].tolist()
            == state.scores()[[(observer + k) % 4 for k in range(4)]].tolist()
        )
        assert views["round"][state.round] == 1 and views["phase"][state.phase] == 1


# --- documentation ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_docstring_size_formula(forslag, n):
    size = forslag.make_game(n).observation_layout.size
    assert size == 10 * n * n + 39 * n + 62
    assert f"{size} ({n}" in envs.forslag.__doc__


# --- the fast encoder against the plain one -----------------------------------------------


@pytest.mark.parametrize("n, mode", CONFIGS)
def test_fast_encoder_and_bookkeeping_match_the_plain_encoder(forslag, n, mode):
    game = forslag.make_game(n, mode)
    for seed in range(3):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while True:
            state.check_invariants()
            for player in range(n):
                expected = observation.encode(state, player)
                fast = game.observation(state, player)
                assert fast.dtype == np.float32 and np.array_equal(fast, expected)
                # The core's other entry point writes the same into zeroed views.
                flat = game.observation_layout.zeros()
                game.encode(state, player, game.observation_layout.views(flat))
                assert np.array_equal(flat, expected)
            if state.is_terminal():
                break
            forslag.random_step(state, rng)


def test_plain_encoder_reads_only_the_rules_fields(forslag):
    """The reference does not read what the state keeps up to date for the fast encoder:
    with those parts of the buffer scrambled, it writes the same observation."""
    game = forslag.make_game(5, "simultaneous")
    state = game.new_initial_state(np.random.default_rng(4))
    rng = np.random.default_rng(4)
    for _ in range(12):
        forslag.random_step(state, rng)
    scrambled = state.clone()
    for name in ("unseen", "round_card_features", "board_features", "status", "totals"):
        getattr(scrambled, name)[...] = 7.0
    for player in range(5):
        expected = game.observation(state, player)
        assert not np.array_equal(game.observation(scrambled, player), expected)
        assert np.array_equal(observation.encode(scrambled, player), expected)
