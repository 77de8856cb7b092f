"""Easter collection: every rule of RULES.md's section, the rulebook's example, hidden
information, the observation layout, the heuristic and the expert."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest
from cases import random_play

import envs.easter_collection as easter
from envs.easter_collection.observation import DERIVED
from envs.easter_collection.rules import (
    PHASE_CHOOSE,
    PHASE_DONE,
    PHASE_PLACE,
    PLACE,
    POINTS,
    SUIT_OF,
    EasterCollectionGame,
    EasterCollectionState,
    card_index,
    card_name,
    positions_by_suit,
)
from training.agents.easter_collection import (
    DISCARD_COST,
    EasterCollectionExpert,
    EasterCollectionHeuristic,
)
from training.tournament import seat_rotated


def make(num_players: int = 2, **options) -> EasterCollectionGame:
    return EasterCollectionGame.from_options(num_players=num_players, **options)


def cards(names: str) -> list[int]:
    return [card_index(name) for name in names.split()]


def deal(
    game: EasterCollectionGame,
    table: str,
    hands: list[str],
    start: int = 0,
    rest: str | None = None,
) -> EasterCollectionState:
    """A state whose first round puts ``table`` on positions 1-4 and ``hands[seat]`` in each
    hand (dealt one at a time from ``start``); the deck then holds ``rest`` (default: every
    other card, in index order)."""
    n = game.num_players
    held = [cards(hand) for hand in hands]
    order = cards(table)
    for i in range(4):
        order += [held[(start + k) % n][i] for k in range(n)]
    if rest is None:
        order += [c for c in range(52) if c not in order]
    else:
        order += cards(rest)
    return EasterCollectionState(game, np.random.default_rng(0), deck=order, start_player=start)


def hand_of(state: EasterCollectionState, seat: int) -> set[str]:
    return {card_name(c) for c in np.flatnonzero(state.hands[seat])}


def pile_of(state: EasterCollectionState, seat: int) -> set[str]:
    return {card_name(c) for c in np.flatnonzero(state.piles[seat])}


def names(mask: np.ndarray) -> set[str]:
    return {card_name(c) for c in np.flatnonzero(mask)}


def play(state: EasterCollectionState, *choices: str) -> None:
    """Every seat, in seat order, plays the named card (standard variant)."""
    state.apply({seat: card_index(name) for seat, name in enumerate(choices)})


def play_out(state: EasterCollectionState, rng: np.random.Generator) -> list[tuple]:
    """Random legal play to the end; returns (round, start player) at every decision."""
    seen = []
    while not state.is_terminal():
        seen.append((state.round, state.start_player))
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    return seen


# --- the rulebook's example -------------------------------------------------------------


def test_rulebook_example():
    """Red bids a 6 on the 8 at position 2 and Green a Queen, which mirrors the 8 and beats
    the 6: Green collects all three. Yellow has no matching suit and discards. Blue is the
    only bidder at position 3 and takes the board card and the bid."""
    game = make(4)
    red, green, yellow, blue = range(4)
    state = deal(
        game,
        table="2S 8H 5D 9S",
        hands=["6H 2C 3C 4C", "QH 5C 6C 7C", "8C 9C 10C JC", "4D QC KC AC"],
    )
    play(state, "6H", "QH", "8C", "4D")  # every placement is forced: nobody is asked
    assert pile_of(state, green) == {"8H", "6H", "QH"}
    assert state.points[green] == 1 + 1 + 2
    assert pile_of(state, blue) == {"5D", "4D"}
    assert state.points[blue] == 2
    assert pile_of(state, red) == set() and state.points[red] == 0
    assert pile_of(state, yellow) == set() and names(state.discards) == {"8C"}
    assert names(state.played[yellow]) == {"8C"} and names(state.played[red]) == {"6H"}
    # Positions 1 and 4 are still there: the second bid follows.
    assert [card_name(c) if c >= 0 else "-" for c in state.table] == ["2S", "-", "-", "9S"]
    assert state.bid == 1 and state.phase == PHASE_CHOOSE
    assert state.scores().tolist() == [0.0, 4.0, 0.0, 2.0]


# --- bidding --------------------------------------------------------------------------


def first_bid(table: str, bids: list[str], **options) -> EasterCollectionState:
    """The first bid with one card per seat, every bid matching exactly one table card."""
    game = make(len(bids), **options)
    used = set(cards(table)) | set(cards(" ".join(bids)))
    fillers = iter(card_name(c) for c in range(52) if c not in used)
    hands = [" ".join([bid] + [next(fillers) for _ in range(3)]) for bid in bids]
    state = deal(game, table, hands)
    play(state, *bids)
    return state


@pytest.mark.parametrize(
    "table, bids, winner",
    [
        ("8H 2C 3C 4C", ["6H", "QH"], 1),  # Q mirrors 8 > 6
        ("9H 2C 3C 4C", ["10H", "KH"], 0),  # K mirrors 9 < 10
        ("8H 2C 3C 4C", ["JH", "KH", "QH"], 1),  # equal mirrors: K > Q > J
        ("8H 2C 3C 4C", ["JH", "QH"], 1),
        ("8H 2C 3C 4C", ["QH", "JH", "7H"], 0),
        ("QH 2C 3C 4C", ["KH", "2H"], 1),  # a face table card is worth 0
        ("QH 2C 3C 4C", ["JH", "KH"], 1),
    ],
)
def test_face_cards_mirror_the_table_card_and_break_ties_k_q_j(table, bids, winner):
    state = first_bid(table, bids)
    everything = {table.split()[0], *bids}
    assert pile_of(state, winner) == everything
    assert state.points[winner] == sum(POINTS[card_index(c)] for c in everything)
    assert all(not pile_of(state, s) for s in range(len(bids)) if s != winner)


def test_table_face_value_option_makes_face_table_cards_worth_their_rank():
    state = first_bid("QH 2C 3C 4C", ["KH", "10H"], table_face_value="rank")
    assert pile_of(state, 0) == {"QH", "KH", "10H"}
    default = first_bid("QH 2C 3C 4C", ["KH", "10H"])
    assert pile_of(default, 1) == {"QH", "KH", "10H"}


@pytest.mark.parametrize(
    "table, bids, winner",
    [
        ("5H 2C 3C 4C", ["AH", "2H"], 1),  # an Ace bids 1
        ("5H 2C 3C 4C", ["AH", "JH"], 1),  # J mirrors 5
        ("AH 2C 3C 4C", ["JH", "2H"], 1),  # an Ace table card is worth 1 to a face card
        ("AH 2C 3C 4C", ["JH", "QH"], 1),
        ("KH 2C 3C 4C", ["AH", "QH"], 0),  # Ace 1 beats a face card mirroring 0
    ],
)
def test_ace_bids_as_one(table, bids, winner):
    state = first_bid(table, bids)
    assert pile_of(state, winner) == {table.split()[0], *bids}


def test_lone_bid_collects_the_table_card_and_scores():
    state = first_bid("KH 2C 3C 4C", ["AH", "5D"])
    assert pile_of(state, 0) == {"KH", "AH"}
    assert state.points.tolist() == [2 + 3, 0]  # K 2 points, Ace 3
    assert names(state.discards) == {"5D"}  # no diamond on the table


def test_scoring_values():
    assert [POINTS[card_index(f"{r}S")] for r in ("A", "2", "9", "10", "J", "Q", "K")] == [
        3,
        1,
        1,
        1,
        2,
        2,
        2,
    ]
    assert sum(POINTS) == 72


# --- placing ----------------------------------------------------------------------------


def test_placement_is_restricted_to_matching_suits_and_asked_in_order_from_the_start():
    game = make(3)
    state = deal(
        game,
        table="2H 3S 9H 4C",
        hands=["5H KS 7D AC", "6H 2D 3D 4D", "7H 5D 6D 8D"],
        start=1,
    )
    play(state, "KS", "6H", "7H")
    # Seat 1 starts; seat 0's spade is placed without asking when its turn comes.
    assert state.phase == PHASE_PLACE and state.to_act() == (1,)
    assert state.legal_actions(1) == [PLACE + 0, PLACE + 2]  # the two hearts only
    assert state.legal_actions(0) == [] and state.legal_actions(2) == []
    with pytest.raises(ValueError, match="legal actions"):
        state.apply({1: PLACE + 1})  # the spade
    state.apply({1: PLACE + 2})
    assert state.to_act() == (2,)
    state.apply({2: PLACE + 2})
    # Both hearts lie beside the 9H; the 2H has no bid; the spade went beside the 3S.
    assert pile_of(state, 2) == {"9H", "6H", "7H"}
    assert pile_of(state, 0) == {"3S", "KS"}
    assert [card_name(c) if c >= 0 else "-" for c in state.table] == ["2H", "-", "-", "4C"]


def test_a_card_matching_no_table_card_is_discarded_face_up():
    game = make(2)
    state = deal(game, table="2H 3S 9H 4C", hands=["5D KS 7D AC", "6H 2D 3D 4D"])
    play(state, "5D", "2D")
    assert names(state.discards) == {"5D", "2D"}
    assert not state.piles.any() and state.points.tolist() == [0, 0]
    assert all(state.table[k] >= 0 for k in range(4)) and state.bid == 1


def test_discards_are_public_as_soon_as_they_happen_during_placing():
    game = make(2)
    state = deal(game, table="2H 3S 9H 4C", hands=["5D KS 7D AC", "6H 2D 3D 4D"], start=1)
    play(state, "5D", "6H")  # seat 1 must choose a heart; seat 0's diamond is discarded after
    assert state.to_act() == (1,) and not state.discards.any()
    state.apply({1: PLACE + 0})
    assert names(state.discards) == {"5D"} and state.target[0] == -1  # bid revealed, reset


def test_secret_positions_chips_must_match_the_suit_and_blank_means_discard():
    game = make(2, variant="secret_positions")
    state = deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    legal = {(a // 52, card_name(a % 52)) for a in state.legal_actions(0)}
    assert legal == {(0, "5H"), (1, "5H"), (2, "KS"), (3, "AC"), (4, "7D")}
    assert state.to_act() == (0, 1)
    state.apply({0: 0 * 52 + card_index("5H"), 1: 4 * 52 + card_index("2D")})
    assert pile_of(state, 0) == {"2H", "5H"}  # no placing step: revealed at once
    assert names(state.discards) == {"2D"}
    assert state.phase == PHASE_CHOOSE and state.bid == 1


def test_secret_positions_bids_on_one_position_compete():
    game = make(2, variant="secret_positions")
    state = deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "QH 2D 3D 4D"])
    state.apply({0: 1 * 52 + card_index("5H"), 1: 1 * 52 + card_index("QH")})
    assert pile_of(state, 1) == {"9H", "5H", "QH"}


def test_secret_positions_asks_every_player_even_with_one_card():
    game = make(3, variant="secret_positions")
    state = EasterCollectionState(game, np.random.default_rng(4), deck=list(range(22)))
    rng = np.random.default_rng(4)
    while not state.is_terminal():
        assert state.to_act() == (0, 1, 2)
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_single_choices_are_not_asked_in_the_standard_game(num_players):
    for seed in range(10):
        state = make(num_players).new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            for p in state.to_act():
                assert len(state.legal_actions(p)) >= 2
            if state.phase == PHASE_CHOOSE:
                assert state.hand_size >= 2
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


# --- rounds -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
@pytest.mark.parametrize("num_players", [2, 3])
def test_second_bid_always_happens_with_two_or_three_players(num_players, variant):
    for seed in range(20):
        state = make(num_players, variant=variant).new_initial_state(np.random.default_rng(seed))
        play_out(state, np.random.default_rng(seed))
        assert state.bids_per_round == [2] * len(state.bids_per_round)


def test_a_first_bid_that_takes_every_table_card_ends_the_round():
    game = make(4)
    state = deal(
        game,
        table="2C 2D 2H 2S",
        hands=["3C 4C 5C 6C", "3D 4D 5D 6D", "3H 4H 5H 6H", "3S 4S 5S 6S"],
    )
    play(state, "3C", "3D", "3H", "3S")
    assert state.bids_per_round == [1]
    assert [pile_of(state, s) for s in range(4)] == [
        {"2C", "3C"},
        {"2D", "3D"},
        {"2H", "3H"},
        {"2S", "3S"},
    ]
    # Round 2: the start passes left, four new table cards, each hand refilled by one.
    assert state.round == 1 and state.start_player == 1 and state.bid == 0
    assert all(c >= 0 for c in state.table)
    assert state.hands.sum(axis=1).tolist() == [4, 4, 4, 4]
    assert len(state.deck) - state.next_card == 52 - 20 - 4 - 4


@pytest.mark.parametrize(
    "num_players, rounds_with_two_bids", [(2, 6), (3, 5), (4, 4), (5, 3)]
)  # fmt: skip
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_number_of_rounds(num_players, rounds_with_two_bids, variant):
    """With a second bid in every round: 6, 5, 4 and 3 rounds. With 5 players a first bid
    that takes all four table cards leaves the hands fuller, so the deck lasts longer."""
    game = make(num_players, variant=variant)
    seen_one_bid = False
    for seed in range(40):
        state = game.new_initial_state(np.random.default_rng(seed))
        play_out(state, np.random.default_rng(seed))
        rounds = len(state.bids_per_round)
        if all(b == 2 for b in state.bids_per_round):
            assert rounds == rounds_with_two_bids
        else:
            seen_one_bid = True
            assert num_players >= 4 and rounds >= rounds_with_two_bids
        assert state.last_round and state.phase == PHASE_DONE
    if num_players == 5 and variant == "standard":
        assert seen_one_bid


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_start_player_passes_left_each_round(num_players):
    for seed in range(5):
        state = make(num_players).new_initial_state(np.random.default_rng(seed))
        first = state.start_player
        for round_, start in play_out(state, np.random.default_rng(seed)):
            assert start == (first + round_) % num_players


def test_first_start_player_is_drawn_from_the_rng():
    game = make(5)
    starts = {game.new_initial_state(np.random.default_rng(s)).start_player for s in range(40)}
    assert starts == set(range(5))


def test_dealing_starts_with_the_start_player_one_card_at_a_time():
    game = make(3)
    state = EasterCollectionState(
        game, np.random.default_rng(0), deck=list(range(52)), start_player=2
    )
    assert state.table == [0, 1, 2, 3]
    assert np.flatnonzero(state.hands[2]).tolist() == [4, 7, 10, 13]
    assert np.flatnonzero(state.hands[0]).tolist() == [5, 8, 11, 14]
    assert np.flatnonzero(state.hands[1]).tolist() == [6, 9, 12, 15]


# --- the deck running out -----------------------------------------------------------------


def test_short_deck_deals_one_card_each_and_discards_the_rest_unseen():
    game = make(2)
    deck = list(range(4 + 8 + 4 + 3))  # round 2: 3 cards after the table, 4 needed
    state = EasterCollectionState(game, np.random.default_rng(0), deck=deck, start_player=0)
    rng = np.random.default_rng(0)
    while state.round == 0:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.hands.sum(axis=1).tolist() == [3, 3]
    assert len(state.deck) - state.next_card == 0
    leftover = deck[-1]  # the one card that reached no hand
    assert not state.hands[:, leftover].any() and not state.discards[leftover]
    assert not state.piles[:, leftover].any()
    play_out(state, rng)
    assert state.bids_per_round == [2, 2]


def test_short_deck_deals_no_cards_when_not_everyone_can_get_one():
    game = make(3)
    deck = list(range(4 + 12 + 4 + 2))  # round 2: 2 cards after the table for 3 players
    state = EasterCollectionState(game, np.random.default_rng(0), deck=deck, start_player=0)
    rng = np.random.default_rng(0)
    while state.round == 0:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.hands.sum(axis=1).tolist() == [2, 2, 2]
    assert all(c >= 0 for c in state.table)
    assert not state.hands[:, deck[-2:]].any() and not state.discards[deck[-2:]].any()
    play_out(state, rng)
    assert state.bids_per_round == [2, 2]


def test_fewer_than_four_cards_go_to_the_table_and_no_hand_cards_are_dealt():
    game = make(2)
    deck = list(range(4 + 8 + 4 + 4 + 2))  # round 2 leaves 2 cards for round 3
    state = EasterCollectionState(game, np.random.default_rng(1), deck=deck, start_player=0)
    rng = np.random.default_rng(1)
    while state.round < 2:
        assert not state.last_round
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.table == [20, 21, -1, -1]
    assert state.hands.sum(axis=1).tolist() == [2, 2]
    play_out(state, rng)
    assert len(state.bids_per_round) == 3


def test_a_deck_used_up_exactly_makes_the_last_round():
    game = make(2)
    state = EasterCollectionState(game, np.random.default_rng(2), deck=list(range(20)))
    rng = np.random.default_rng(2)
    while state.round == 0:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.hands.sum(axis=1).tolist() == [4, 4]
    play_out(state, rng)
    assert len(state.bids_per_round) == 2


@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
@pytest.mark.parametrize(
    "num_players, deck_size, bids",
    [
        (2, 0, [0]),  # nothing to put on the table
        (2, 3, [0]),  # 3 table cards, no hand cards
        (3, 6, [0]),  # 4 table cards, 2 left for 3 players: no hand cards
        (2, 6, [1]),  # one card each, used up by the first bid
        (4, 8, [1]),
    ],
)
def test_a_short_deck_that_leaves_a_bid_without_cards_ends_the_game(
    num_players, deck_size, bids, variant
):
    """[decision] A bid needs a card in every hand and one on the table: a short scripted
    deck that reaches a bid without ends the round (its last) and the game there, the
    table cards discarded face up, instead of asking for a choice nobody can make."""
    game = make(num_players, variant=variant)
    deck = list(range(deck_size))
    state = EasterCollectionState(game, np.random.default_rng(0), deck=deck, start_player=0)
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        for p in state.to_act():
            assert state.legal_mask(p).any(), f"player {p} is asked to act and cannot"
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        state.check_invariants()
    state.check_invariants()
    assert state.phase == PHASE_DONE and state.to_act() == () and state.last_round
    assert state.bids_per_round == bids and all(c < 0 for c in state.table)
    on_table = set(deck[:4]) - set(np.flatnonzero(state.piles.any(axis=0)).tolist())
    assert set(np.flatnonzero(state.discards).tolist()) >= on_table  # discarded face up
    for p in range(num_players):
        views = game.observation_layout.views(game.observation(state, p))
        assert not views["phase"].any() and not views["bid"].any()


def test_own_hand_discarded_at_the_end_stays_seen_by_its_owner_only():
    """The hands left at the end are discarded face down: their owner has seen them (not
    ``unseen`` in its final observation), nobody else has (still ``unseen``), and nothing
    of another seat's discarded hand shows in any other view."""
    game = make(4)
    state = game.new_initial_state(np.random.default_rng(0))
    rng = np.random.default_rng(0)
    last_hands = None
    while not state.is_terminal():
        last_hands = state.hands.copy()
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    discarded = state.final_hands
    assert discarded.any(axis=1).all(), "every seat ends with cards in hand (seed 0)"
    assert not (discarded & ~(last_hands > 0)).any()  # what they held, nothing else
    for owner in range(4):
        mine = game.observation_layout.views(game.observation(state, owner))
        assert not mine["unseen"][discarded[owner]].any()  # seen by the owner
        assert not mine["hand"].any()
        for other in set(range(4)) - {owner}:
            theirs = game.observation_layout.views(game.observation(state, other))
            assert theirs["unseen"][discarded[owner]].all()  # never seen by the others
    # Seat 1's view is the same whichever cards the others discarded.
    moved = False
    for seed in range(10):
        sample = state.resample(1, np.random.default_rng(seed))
        sample.check_invariants()
        assert np.array_equal(game.observation(sample, 1), game.observation(state, 1))
        assert np.array_equal(sample.final_hands[1], discarded[1])  # own discard kept
        assert sample.final_hands.sum(axis=1).tolist() == discarded.sum(axis=1).tolist()
        moved |= not np.array_equal(sample.final_hands, discarded)
    assert moved


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_every_card_ends_in_one_place_and_scores_are_the_piles(num_players, variant):
    for seed in range(5):
        state = make(num_players, variant=variant).new_initial_state(np.random.default_rng(seed))
        play_out(state, np.random.default_rng(seed))
        places = state.piles.sum(axis=0) + state.discards
        assert places.max() <= 1  # what is in neither was discarded unseen from deck or hand
        assert state.scores().tolist() == (state.piles @ np.array(POINTS)).tolist()
        assert state.hands.sum() == 0 and all(c < 0 for c in state.table)


# --- hidden information --------------------------------------------------------------------


def placing_state(seat0_bid: str, seat1_bid: str):
    """Three players; seat 0's spade is placed by itself, seat 1 has placed a heart at
    position 1, seat 2 must place now."""
    game = make(3)
    state = deal(
        game,
        table="2H 3S 9H 4C",
        hands=[f"{seat0_bid} 7D AC 2D", f"{seat1_bid} 3D 4D 5D", "7H 6D 8D 9D"],
        start=0,
    )
    play(state, seat0_bid, seat1_bid, "7H")
    state.apply({1: PLACE + 0})
    assert state.to_act() == (2,)
    return game, state


def test_face_down_bids_are_hidden_from_observations_and_render():
    game, a = placing_state("KS", "5H")
    _, b = placing_state("QS", "6H")  # other face-down cards; KS and 5H stay in the deck
    assert np.array_equal(game.observation(a, 2), game.observation(b, 2))
    assert str(a) == str(b)
    assert "KS" not in str(a) and "5H" not in str(a)
    assert "face down: player_1" in str(a) and "face down: player_0" in str(a)
    # The owners do see their own bids, so the two states really differ.
    assert not np.array_equal(game.observation(a, 0), game.observation(b, 0))
    assert not np.array_equal(game.observation(a, 1), game.observation(b, 1))
    views = game.observation_layout.views(game.observation(a, 0))
    assert names(views["chosen"]) == {"KS"}


def test_other_hands_are_hidden():
    game = make(2)
    a = deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    b = deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 5D"])
    assert np.array_equal(game.observation(a, 0), game.observation(b, 0))
    assert str(a) == str(b) and "2D" not in str(a)
    assert not np.array_equal(game.observation(a, 1), game.observation(b, 1))


def test_bids_are_public_after_the_reveal_and_views_are_relative():
    game, state = placing_state("KS", "5H")
    views = game.observation_layout.views(game.observation(state, 2))
    # Observer seat 2: rows are seats 2, 0, 1.
    assert views["bids"][1].tolist() == [0, 1, 0]  # seat 0 beside the 3S (position 2)
    assert views["bids"][0].tolist() == [0, 0, 1]  # seat 1 beside the 2H (position 1)
    assert views["placed"].tolist() == [0, 1, 1]
    assert views["start"].tolist() == [0, 1, 0]
    assert views["phase"].tolist() == [0, 1] and views["bid"].tolist() == [1, 0]
    assert names(views["hand"]) == {"6D", "8D", "9D"} and names(views["chosen"]) == {"7H"}
    unseen = names(views["unseen"])
    assert "KS" in unseen and "5H" in unseen and "7H" not in unseen and "2H" not in unseen
    state.apply({2: PLACE + 2})
    views = game.observation_layout.views(game.observation(state, 2))
    assert names(views["played"][1]) == {"KS"} and names(views["played"][2]) == {"5H"}
    assert names(views["score_piles"][1]) == {"3S", "KS"}
    assert views["scores"].tolist() == [2, 3, 2]  # 9H+7H, 3S+KS, 2H+5H
    assert not views["bids"].any() and views["bid"].tolist() == [0, 1]
    assert "KS" in str(state) and "5H" in str(state)


# --- options, determinism, documentation --------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 1},
        {"num_players": 6},
        {"num_players": 2.5},
        {"num_players": 2.0},
        {"num_players": "3"},
        {"num_players": True},
        {"variant": "speed"},
        {"variant": None},
        {"table_face_value": "high"},
        {"colour": "red"},
    ],
)
def test_bad_options_raise(options):
    with pytest.raises(ValueError, match="allowed"):
        easter.raw_env(**options)


def test_same_seed_same_game():
    def transcript(seed: int) -> list[str]:
        game = make(4)
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        frames = [str(state)]
        while not state.is_terminal():
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            frames.append(str(state))
        return frames

    assert transcript(3) == transcript(3) and transcript(3) != transcript(4)


def test_configurations_cover_every_player_count_and_variant():
    assert {(c["num_players"], c["variant"]) for c in easter.SPEC.configurations} == {
        (n, v) for n in (2, 3, 4, 5) for v in ("standard", "secret_positions")
    }


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_docstring_layout_table_matches_the_layout(num_players):
    layout = make(num_players).observation_layout
    assert layout.size == 428 + 111 * num_players
    documented = {}
    for span, name in re.findall(r"^\| ([0-9N+ -]+) \| `(\w+)` \|", easter.__doc__, re.M):
        parts = span.split(" - ") if " - " in span else span.split("-")
        bounds = [eval(re.sub(r"(\d)N", r"\1*N", p), {"N": num_players}) for p in parts]
        documented[name] = (bounds[0], bounds[-1])
    assert documented == {
        f.name: (f.start, f.stop - 1) for f in layout.fields.values()
    }  # fmt: skip


def test_action_names():
    assert make(2).action_name(card_index("10H")) == "play 10H"
    assert make(2).action_name(PLACE + 3) == "place at position 4"
    secret = make(2, variant="secret_positions")
    assert secret.action_name(2 * 52 + card_index("QS")) == "play QS with chip 3"
    assert "blank" in secret.action_name(4 * 52 + card_index("AC"))


# --- heuristic ------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_heuristic_beats_random(num_players, variant):
    game = make(num_players, variant=variant)
    lineup = [("heuristic", EasterCollectionHeuristic(game))] + [
        ("random", easter.SPEC.agent_factory("random")(game))
    ] * (num_players - 1)
    records = seat_rotated(game, lineup, 120, seed=7)
    assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores) + 2


def test_expert_beats_the_heuristic():
    game = make(2)
    lineup = [
        ("expert", EasterCollectionExpert(game)),
        ("heuristic", EasterCollectionHeuristic(game)),
    ]
    records = seat_rotated(game, lineup, 300, seed=1)
    assert np.mean(records["expert"].wins) > 0.56  # about 0.66 over many games


# --- determinisation -------------------------------------------------------------------------


def unknown_to(state: EasterCollectionState, player: int) -> set[int]:
    """Cards ``player`` cannot place: the deck, other hands, others' face-down bids, buried."""
    cards_ = set(state.deck[state.next_card :]) | set(np.flatnonzero(state.buried).tolist())
    for seat in range(state.game.num_players):
        if seat != player:
            cards_ |= set(np.flatnonzero(state.hands[seat]).tolist())
    return cards_ | {state.chosen[s] for s in state.hidden_bids(player)}


def test_resample_redeals_what_the_player_has_not_seen_and_keeps_the_rest():
    game, state = placing_state("KS", "5H")  # seat 2 places; seat 0's spade, seat 1's heart
    before = pickle.dumps(state)
    pool = unknown_to(state, 2)
    bids0, bids1, hands0, decks = set(), set(), set(), set()
    for seed in range(40):
        sample = state.resample(2, np.random.default_rng(seed))
        sample.check_invariants()
        assert np.array_equal(game.observation(sample, 2), game.observation(state, 2))
        assert str(sample) == str(state) and sample.to_act() == (2,)
        # Fixed: own hand and bid, the table, who placed where, sizes, piles.
        assert hand_of(sample, 2) == {"6D", "8D", "9D"} and sample.chosen[2] == card_index("7H")
        assert sample.table == state.table and sample.target == state.target
        assert len(sample.deck) - sample.next_card == len(state.deck) - state.next_card
        assert sample.hands.sum(axis=1).tolist() == [3, 3, 3]
        assert np.array_equal(sample.piles, state.piles)
        # Moved, within the pool of unknown cards and keeping the public suits.
        assert unknown_to(sample, 2) == pool
        assert card_name(sample.chosen[0])[-1] == "S" and card_name(sample.chosen[1])[-1] == "H"
        bids0.add(sample.chosen[0])
        bids1.add(sample.chosen[1])
        hands0.add(frozenset(np.flatnonzero(sample.hands[0]).tolist()))
        decks.add(tuple(sample.deck[sample.next_card :]))
    assert len(bids0) > 5 and len(bids1) > 5 and len(hands0) == 40 and len(decks) == 40
    assert pickle.dumps(state) == before  # the real state is untouched


def test_resample_keeps_the_placing_seats_bid_in_a_suit_matching_twice():
    game = make(3)
    # Hearts lie twice on the table, spades and clubs once, diamonds not at all.
    state = deal(
        game,
        table="2H 3S 9H 4C",
        hands=["KS 7D AC 2D", "5H 3D 4D 5D", "7H 6D 8D 9D"],
        start=0,
    )
    play(state, "KS", "5H", "7H")
    assert state.to_act() == (1,)  # seat 0's spade is placed; seat 1 must choose a heart
    for seed in range(30):
        sample = state.resample(0, np.random.default_rng(seed))
        sample.check_invariants()
        assert card_name(sample.chosen[1])[-1] == "H"  # asked, so a heart
        assert sample.chosen[0] == card_index("KS")  # own bid
        assert sample.target[2] == -1 and sample.chosen[2] >= 0  # not placed yet: any card
        assert np.array_equal(game.observation(sample, 0), game.observation(state, 0))
    suits = {
        card_name(state.resample(0, np.random.default_rng(s)).chosen[2])[-1] for s in range(40)
    }
    assert len(suits) >= 3  # seat 2's unplaced bid may be any suit


def test_resample_in_the_last_round_redeals_the_cards_discarded_unseen():
    game = make(3)  # the last round has 2 cards for 3 players: both are buried
    state = EasterCollectionState(game, np.random.default_rng(0), deck=list(range(52)))
    rng = np.random.default_rng(0)
    while not state.last_round:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    buried = set(np.flatnonzero(state.buried).tolist())
    assert buried and len(state.deck) == state.next_card
    moved = False
    for seed in range(20):
        sample = state.resample(0, np.random.default_rng(seed))
        sample.check_invariants()
        assert unknown_to(sample, 0) == unknown_to(state, 0)
        assert hand_of(sample, 0) == hand_of(state, 0)
        moved |= set(np.flatnonzero(sample.buried).tolist()) != buried
    assert moved
    play_out(state, rng)
    final = state.resample(1, np.random.default_rng(0))
    assert np.array_equal(final.buried, state.buried) and final.is_terminal()


def test_resampled_games_play_on_with_their_own_chance():
    game = make(4)
    state = game.new_initial_state(np.random.default_rng(3))
    a = state.resample(0, np.random.default_rng(1))
    b = state.resample(0, np.random.default_rng(2))
    assert a.rng is not state.rng and a.rng.random() != b.rng.random()
    for sample in (a, b):
        play_out(sample, np.random.default_rng(0))
        sample.check_invariants()


def test_clone_continues_identically_and_independently():
    game = make(3)
    state = game.new_initial_state(np.random.default_rng(8))
    play(state, *[card_name(int(np.flatnonzero(state.hands[p])[0])) for p in range(3)])
    twin = state.clone()
    assert twin.game is state.game and pickle.dumps(twin) == pickle.dumps(state)
    play_out(twin, np.random.default_rng(1))
    assert not twin.piles.any() or not np.array_equal(twin.piles, state.piles)
    assert not state.is_terminal()  # playing the twin left the original alone
    play_out(state, np.random.default_rng(1))
    assert pickle.dumps(twin) == pickle.dumps(state)


@pytest.mark.parametrize("how", ["clone", "resample", "pickle", "deepcopy"])
def test_copies_keep_their_rules_arrays_bound_to_their_own_buffer(how):
    """The rules' card arrays are views of the state's observation buffer: a copy must
    rebind them to its own buffer, so that its observations follow its own play."""
    game = make(3)
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


# --- invariants ------------------------------------------------------------------------------


def corrupt(state: EasterCollectionState, corruption: str) -> str:
    """Break one invariant of the 3-player placing state; return the expected message."""
    n = state.game.num_players
    next_in_deck = state.deck[state.next_card]
    in_hand = int(np.flatnonzero(state.hands[0])[0])
    if corruption == "a card in two places":
        state.hands[0, next_in_deck] = True
        return f"{card_name(next_in_deck)} is in 2 places"
    if corruption == "a card lost":
        state.deck.remove(next_in_deck)
        return f"{card_name(next_in_deck)} is in 0 places"
    if corruption == "hands of different sizes":
        state.hands[0, in_hand], state.hands[1, in_hand] = False, True
        return "hands hold"
    if corruption == "points the piles do not explain":
        state.points[:] += 1
        return "points .* but piles say"
    if corruption == "a card played by two seats":
        state.played[:, card_index("8D")] = 1
        return "played by two seats"
    if corruption == "a played card still in a hand":
        state.played[0, in_hand] = 1
        return "neither in a pile nor discarded"
    if corruption == "hand_cards out of date":
        state.hand_cards[0].remove(in_hand)
        return r"hand_cards\[0\] .* are not the hand"
    if corruption == "a card in a hand's padding":
        state.view["hands"][0, 52] = 1
        return "padding is not zero"
    if corruption.startswith("observation field out of date: "):
        name = corruption.split(": ")[1]
        state.view[name].reshape(-1)[
            {
                "unseen": next_in_deck * n,  # (card, seat 0): unseen already, now 2
                "own_bid": n * 52 - 1,  # seat 2's bid is the 7H, not the KS
                "table": 0,  # position 1 holds the 2H
                "deck": 0,
                "bid": 1,
                "round": 0,
                "last_round": 0,
                "phase": 1,
                "start": 1,
                "bids": n + 2,  # seat 2 has not placed yet
                "placed": 1,  # seat 1 has placed
            }[name]
        ] += 1
        return rf"observation source out of date: \['{name}'\]"
    if corruption == "suit positions out of date":
        state.suit_positions = ((), (), (0, 2, 3), (1,))
        return "suit positions out of date"
    if corruption == "a bid beside a table card of another suit":
        state.target[1] = 3  # seat 1's heart beside the 4C
        return "seat 1 off suit"
    if corruption == "the wrong seat placing":
        state.placing = 1
        return "placing seat"
    assert corruption == "a seat placed out of turn"
    state.target[2] = 0
    return "seat 2 placed out of turn"


CORRUPTIONS = [
    "a card in two places",
    "a card lost",
    "hands of different sizes",
    "points the piles do not explain",
    "a card played by two seats",
    "a played card still in a hand",
    "hand_cards out of date",
    "a card in a hand's padding",
    *[f"observation field out of date: {name}" for name in DERIVED],
    "suit positions out of date",
    "a bid beside a table card of another suit",
    "the wrong seat placing",
    "a seat placed out of turn",
]


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_check_invariants_catches_each_broken_invariant(corruption):
    _, state = placing_state("KS", "5H")
    state.check_invariants()
    message = corrupt(state, corruption)
    with pytest.raises(AssertionError, match=message):
        state.check_invariants()


def test_check_invariants_catches_bids_while_choosing_and_cards_left_at_the_end():
    game = make(2)
    state = deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    state.check_invariants()
    state.target[1] = 2
    with pytest.raises(AssertionError, match="before choosing"):
        state.check_invariants()
    state = game.new_initial_state(np.random.default_rng(0))
    play_out(state, np.random.default_rng(0))
    state.check_invariants()
    card = int(np.flatnonzero(state.discards)[0])
    state.discards[card] = False
    state.table[0] = card
    state.suit_positions = positions_by_suit(state.table)
    with pytest.raises(AssertionError, match="game over with cards on the table"):
        state.check_invariants()


def test_check_invariants_catches_wrong_chips_in_secret_positions():
    game = make(2, variant="secret_positions")
    state = deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    state.check_invariants()
    state.chip_actions = tuple((4 * 52 + card,) for card in range(52))  # all blank
    with pytest.raises(AssertionError, match="AC goes with the wrong chips"):
        state.check_invariants()


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_invariants_and_the_decision_bound_hold_over_random_play(num_players, variant):
    game = make(num_players, variant=variant)
    expected = (2 if variant == "standard" else 1) * num_players * (48 // num_players)
    assert game.max_decisions == expected
    for seed in range(8):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        decisions = 0
        while not state.is_terminal():
            state.check_invariants()
            decisions += len(state.to_act())
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        state.check_invariants()
        assert decisions <= game.max_decisions


# --- the fast encoder against an obvious one -------------------------------------------------


def reference_observation(game: EasterCollectionGame, state: EasterCollectionState, player: int):
    """The observation written the slow, obvious way from the public rules fields."""
    n = game.num_players
    flat = game.observation_layout.zeros()
    v = game.observation_layout.views(flat)
    seats = [(player + k) % n for k in range(n)]
    v["hand"][:] = state.hands[player]
    known = (state.hands[player] > 0) | (state.discards > 0) | state.piles.any(axis=0)
    known |= state.final_hands[player]  # own cards discarded at the end were seen
    if state.phase == PHASE_PLACE:
        v["chosen"][state.chosen[player]] = 1
        known[state.chosen[player]] = True
        for row, seat in enumerate(seats):
            if state.target[seat] >= 0:
                v["placed"][row] = 1
                if state.target[seat] < 4:
                    v["bids"][state.target[seat], row] = 1
    for position, card in enumerate(state.table):
        if card >= 0:
            v["table"][position, card] = 1
            known[card] = True
    v["discards"][:] = state.discards
    v["unseen"][:] = ~known
    v["deck"][0] = len(state.deck) - state.next_card
    v["round"][min(state.round, 5)] = 1
    v["last_round"][0] = state.last_round
    if state.phase != PHASE_DONE:
        v["bid"][state.bid] = 1
        v["phase"][state.phase] = 1
    v["start"][seats.index(state.start_player)] = 1
    for row, seat in enumerate(seats):
        v["score_piles"][row] = state.piles[seat]
        v["played"][row] = state.played[seat]
        v["scores"][row] = state.points[seat]
    return flat


def check_observations(game: EasterCollectionGame, state: EasterCollectionState) -> None:
    """Every seat's observation (and its ``encode`` into views) is the reference one."""
    for p in range(game.num_players):
        expected = reference_observation(game, state, p)
        assert np.array_equal(game.observation(state, p), expected)
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


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_encoder_and_masks_match_the_obvious_versions(num_players, variant):
    game = make(num_players, variant=variant)
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


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_expert_action_values_are_what_it_chooses_by(num_players, variant):
    """Finite exactly on the legal actions; ``act`` takes one of the best; a card with no
    suit on the table (standard game; with more than two players, where no second bid is
    planned into the first) is valued as the discard's small cost."""
    game = make(num_players, variant=variant)
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
