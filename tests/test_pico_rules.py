"""Pico's rules, one test per rule in RULES.md, on scripted deals; the observation, the
heuristic and the registered ids."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from envs.core.game import IllegalActionError
from envs.pico.heuristic import PicoHeuristic
from envs.pico.rules import DEFAULT_POINTS, PicoGame, PicoState, winners
from training.evaluation.tournament import seat_rotated


@pytest.fixture
def scripted(pico):
    def scripted(*dealt: tuple[int, ...], aside: tuple[int, ...] = (), **options) -> PicoState:
        """A state whose dealt sets are ``dealt[d]`` for seat ``d``."""
        game = PicoGame.from_options(num_players=len(dealt), **options)
        state = game.new_initial_state(np.random.default_rng(0))
        state._deal(np.stack([pico.hand(*d) for d in dealt]), pico.hand(*aside))
        return state

    return scripted


@pytest.mark.parametrize(
    "cards, winner",
    [((10, 5), 0), ((4, 10), 0), ((16, 8), 0), ((7, 16), 0), ((5, 10), 1), ((10, 4), 1)],
)
def test_two_player_beats(cards, winner):
    """Higher wins unless more than twice the lower: 10 beats 5, 4 beats 10, 16 beats 8,
    7 beats 16 (and exactly twice still wins for the higher)."""
    assert winners(cards) == [winner]


def test_exactly_twice_goes_to_the_higher():
    assert winners((8, 4)) == [0]
    assert winners((4, 9)) == [0]


def test_three_player_pair_wins_together():
    assert winners((7, 13, 7)) == [0, 2]
    assert winners((16, 4, 4)) == [1, 2]


@pytest.mark.parametrize(
    "cards, expected",
    [
        ((16, 5, 6), [1]),  # 16 > 5 + 6: the lowest wins
        ((10, 4, 5), [1]),  # 10 > 9: the lowest wins
        ((9, 4, 5), [0]),  # 9 == 4 + 5: the highest wins [decision]
        ((8, 4, 5), [0]),  # 8 < 9: the highest wins
        ((3, 13, 10), [1]),  # 13 == 3 + 10: the highest wins
    ],
)
def test_three_player_sum_rule(cards, expected):
    assert winners(cards) == expected


def test_winning_card_scores_and_losing_card_returns_to_hand(pico, scripted):
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    pico.play(state, 10, 6)  # 10 beats 6
    assert state.hands[0].tolist() == pico.hand(2, 5, 8, 16).tolist()
    assert state.won[0].tolist() == pico.hand(10).tolist()
    assert state.hands[1].tolist() == pico.hand(3, 4, 6, 7, 9).tolist()  # 6 came back
    assert state.scores().tolist() == [DEFAULT_POINTS[10], 0]
    assert not state.legal_mask(0)[pico.card(10)]
    assert state.legal_mask(1)[pico.card(6)]


def test_only_cards_in_hand_are_legal_and_illegal_play_changes_nothing(pico, scripted):
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    assert state.legal_actions(0) == [pico.card(v) for v in (2, 5, 8, 10, 16)]
    before = state.clone()
    with pytest.raises(IllegalActionError, match="legal actions"):
        pico.play(state, 3, 4)
    assert np.array_equal(state.hands, before.hands) and state.round == before.round


def test_round_ends_when_a_player_has_one_card_then_hands_swap(pico, scripted):
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    for a, b in [(10, 6), (8, 7), (16, 9), (5, 4)]:
        assert state.round == 0
        pico.play(state, a, b)
    # 10>6, 8>7, 9 beats 16 (16 > 18? no: 16 < 18, so 16 wins), 5 beats 4: seat 0 holds one card.
    assert state.round == 1
    # Second round: the players swap their original five cards; won cards are back in them.
    assert state.hands[0].tolist() == pico.hand(3, 4, 6, 7, 9).tolist()
    assert state.hands[1].tolist() == pico.hand(2, 5, 8, 10, 16).tolist()
    assert state.won.sum() == 0
    assert state.scores().tolist() == [3 + 3 + 4 + 2, 0]


def test_game_ends_after_two_rounds_and_higher_total_wins(pico, scripted):
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    for a, b in [(10, 6), (8, 7), (16, 9), (5, 4)]:
        pico.play(state, a, b)
    # Round 2: seat 0 holds 3 4 6 7 9; seat 1 holds 2 5 8 10 16.
    # 3 beats 16 (16 > 6); 4 beats 10 (10 > 8); 2 beats 9 (9 > 4); 8 beats 7; 6 beats 5;
    # 10 beats 7; 16 beats 9, leaving seat 1 with one card.
    plays = [(3, 16), (4, 10), (9, 2), (7, 8), (6, 5), (7, 10), (9, 16)]
    for a, b in plays:
        assert not state.is_terminal()
        pico.play(state, a, b)
    assert state.is_terminal() and state.to_act() == ()
    assert state.scores().tolist() == [12 + 1 + 1 + 2, 1 + 3 + 3 + 4]


def test_round_ends_the_moment_a_player_holds_one_card(pico, scripted):
    state = scripted((2, 3, 4, 5, 6), (7, 8, 9, 10, 13), aside=(16,))
    # Seat 1 wins four times (the higher card, never more than twice the lower).
    for a, b in [(6, 7), (5, 8), (5, 9)]:
        pico.play(state, a, b)
        assert state.round == 0
    assert state.hands.sum(axis=1).tolist() == [5, 2]
    pico.play(state, 6, 10)
    assert state.round == 1  # seat 1 holds only the 13: the round is over at once
    assert state.scores().tolist() == [0, 2 + 3 + 3 + 3]


def test_three_players_deal_pass_left_then_right(pico):
    game = PicoGame.from_options(num_players=3)
    state = game.new_initial_state(np.random.default_rng(7))
    deck = state.sets.sum(axis=0) + state.aside
    # Two sets without both 2s and one 3: 19 cards.
    assert deck[pico.card(2)] == 0 and deck[pico.card(3)] == 1 and deck.sum() == 19
    assert (deck[pico.card(4) :] == 2).all()
    assert state.sets.sum(axis=1).tolist() == [6, 6, 6] and state.aside.sum() == 1
    # Round 1: each passed the dealt hand to the left, so seat p holds the set dealt to p-1.
    for p in range(3):
        assert state.hands[p].tolist() == state.sets[(p - 1) % 3].tolist()
    assert [state.set_held_by(p, 1) for p in range(3)] == [0, 1, 2]  # passed right
    assert [state.set_held_by(p, 2) for p in range(3)] == [1, 2, 0]  # right again


def test_three_players_play_three_rounds():
    state = PicoGame.from_options(num_players=3).new_initial_state(np.random.default_rng(1))
    rng = np.random.default_rng(1)
    rounds_seen = set()
    while not state.is_terminal():
        rounds_seen.add(state.round)
        held = [state.hands[p].tolist() for p in range(3)]
        expected = [state.sets[state.set_held_by(p)].tolist() for p in range(3)]
        if state.won.sum() == 0:
            assert held == expected
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in range(3)})
    assert rounds_seen == {0, 1, 2}


def test_three_player_pair_both_score(pico, scripted):
    state = scripted((7, 4, 5, 6, 8, 9), (7, 10, 13, 16, 4, 5), (3, 6, 8, 9, 10, 13), aside=(16,))
    # Round 1: seat p holds the set dealt to p - 1.
    pico.play(state, 13, 7, 7)  # seat 1 holds set 0 (has a 7), seat 2 holds set 1 (has a 7)
    assert state.last_winners.tolist() == [False, True, True]
    assert state.scores().tolist() == [0, 2, 2]


def test_points_option_changes_the_table_and_is_validated(pico, scripted):
    points = dict(DEFAULT_POINTS) | {10: 9}
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,), points=points)
    pico.play(state, 10, 6)
    assert state.scores().tolist() == [9, 0]
    with pytest.raises(ValueError, match="points"):
        PicoGame.from_options(points={2: 1})
    with pytest.raises(ValueError, match="allowed"):
        PicoGame.from_options(num_players=4)


def test_observation_shows_hands_won_cards_and_last_reveal_from_own_seat(pico, scripted):
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    pico.play(state, 10, 6)
    game = state.game
    views = game.observation_layout.views(game.observation(state, 1))
    assert views["hand"][0].tolist() == pico.hand(3, 4, 6, 7, 9).tolist()  # own seat first
    assert views["hand"][1].tolist() == pico.hand(2, 5, 8, 16).tolist()
    assert views["won"][1].tolist() == pico.hand(10).tolist()
    assert views["aside"].tolist() == pico.hand(13).tolist()
    assert (
        views["last_played"][0, pico.card(6)] == 1 and views["last_played"][1, pico.card(10)] == 1
    )
    assert views["last_winners"].tolist() == [0, 1]
    assert views["scores"].tolist() == [0, 3]
    assert views["round"].tolist() == [1, 0, 0]


def test_heuristic_beats_random():
    for n in (2, 3):
        game = PicoGame.from_options(num_players=n)
        lineup = [("heuristic", PicoHeuristic(game))] + [("random", RandomAgent(game))] * (n - 1)
        records = seat_rotated(game, lineup, num_games=150, seed=0)
        assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores)


def test_registered_ids_and_make():
    assert "hiddenhand/pico-v0" in envs.ids()
    assert "hiddenhand/Pico-v0" in envs.gym_ids()
    env = envs.make("hiddenhand/pico-v0", num_players=3)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    gym_env = envs.make("hiddenhand/Pico-v0", opponent="heuristic")
    obs, info = gym_env.reset(seed=0)
    assert obs.shape == gym_env.observation_space.shape
