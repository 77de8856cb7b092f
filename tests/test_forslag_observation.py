"""Förslag's observations: what stays hidden, the observer's view, the documented size,
and the fast encoder against the plain definitions."""

from __future__ import annotations

import numpy as np
import pytest

import envs.forslag
from envs.forslag.rules import NUM_TYPES, ForslagState, score_boards

CONFIGS = [(n, mode) for n in (3, 4, 5, 6) for mode in ("in_turn", "simultaneous")]

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


# --- the fast encoder against the plain definitions ---------------------------------------


@pytest.fixture
def reference_observation(forslag):
    def reference_observation(state: ForslagState, player: int) -> np.ndarray:
        """The observation written the plain way, from the rules fields (the encoder is fast)."""
        game = state.game
        n = game.num_players
        flat = game.observation_layout.zeros()
        views = game.observation_layout.views(flat)
        seats = [(player + k) % n for k in range(n)]
        rows = np.zeros((NUM_TYPES + 1, 10), dtype=np.float32)
        for t in range(NUM_TYPES):
            rows[t, t // 5] = rows[t, 5 + t % 5] = 1
        views["hands"][:] = state.known[seats]
        views["hands"][0] = state.hands[player]
        views["pool"][:] = state.pool
        unseen = forslag.type_counts(state.deck)
        for seat in range(n):
            if seat != player:
                unseen = unseen + state.hands[seat] - state.known[seat]
        views["unseen"][:] = unseen
        views["game_card"][:] = rows[state.game_card]
        views["round_cards"][:] = rows[state.round_cards]
        views["boards"][:] = rows[state.boards[seats]]
        views["scores"][:] = score_boards(state.boards, state.game_card, state.round_cards)[seats]
        if not state.is_terminal():
            views["round"][state.round] = 1
            views["start_player"][seats.index(state.start_player)] = 1
            for seat in state.to_act():
                views["to_act"][seats.index(seat)] = 1
            views["phase"][state.phase] = 1
        return flat

    return reference_observation


@pytest.mark.parametrize("n, mode", CONFIGS)
def test_fast_encoder_and_bookkeeping_match_the_plain_definitions(
    forslag, reference_observation, n, mode
):
    game = forslag.make_game(n, mode)
    for seed in range(3):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while True:
            state.check_invariants()
            for player in range(n):
                expected = reference_observation(state, player)
                observation = game.observation(state, player)
                assert observation.dtype == np.float32 and np.array_equal(observation, expected)
                # The core's other entry point writes the same into zeroed views.
                flat = game.observation_layout.zeros()
                game.encode(state, player, game.observation_layout.views(flat))
                assert np.array_equal(flat, expected)
            if state.is_terminal():
                break
            forslag.random_step(state, rng)
