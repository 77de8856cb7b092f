"""Easter collection's rules (RULES.md): the rulebook's example, bidding, placing,
rounds, the deck running out, options and determinism."""

from __future__ import annotations

import numpy as np
import pytest

from envs.easter_collection import SPEC, raw_env
from envs.easter_collection.rules import (
    PHASE_CHOOSE,
    PHASE_DONE,
    PHASE_PLACE,
    PLACE,
    POINTS,
    EasterCollectionState,
    card_index,
    card_name,
)


def pile_of(state: EasterCollectionState, seat: int) -> set[str]:
    return {card_name(c) for c in np.flatnonzero(state.piles[seat])}


# --- the rulebook's example ---------------------------------------------------------------


def test_rulebook_example(easter):
    """Red bids a 6 on the 8 at position 2 and Green a Queen, which mirrors the 8 and beats
    the 6: Green collects all three. Yellow has no matching suit and discards. Blue is the
    only bidder at position 3 and takes the board card and the bid."""
    game = easter.make(4)
    red, green, yellow, blue = range(4)
    state = easter.deal(
        game,
        table="2S 8H 5D 9S",
        hands=["6H 2C 3C 4C", "QH 5C 6C 7C", "8C 9C 10C JC", "4D QC KC AC"],
    )
    easter.play(state, "6H", "QH", "8C", "4D")  # every placement is forced: nobody is asked
    assert pile_of(state, green) == {"8H", "6H", "QH"}
    assert state.points[green] == 1 + 1 + 2
    assert pile_of(state, blue) == {"5D", "4D"}
    assert state.points[blue] == 2
    assert pile_of(state, red) == set() and state.points[red] == 0
    assert pile_of(state, yellow) == set() and easter.names(state.discards) == {"8C"}
    assert easter.names(state.played[yellow]) == {"8C"}
    assert easter.names(state.played[red]) == {"6H"}
    # Positions 1 and 4 are still there: the second bid follows.
    assert [card_name(c) if c >= 0 else "-" for c in state.table] == ["2S", "-", "-", "9S"]
    assert state.bid == 1 and state.phase == PHASE_CHOOSE
    assert state.scores().tolist() == [0.0, 4.0, 0.0, 2.0]


# --- bidding ------------------------------------------------------------------------------


@pytest.fixture
def first_bid(easter):
    def first_bid(table: str, bids: list[str], **options) -> EasterCollectionState:
        """The first bid with one card per seat, every bid matching exactly one table card."""
        game = easter.make(len(bids), **options)
        used = set(easter.cards(table)) | set(easter.cards(" ".join(bids)))
        fillers = iter(card_name(c) for c in range(52) if c not in used)
        hands = [" ".join([bid] + [next(fillers) for _ in range(3)]) for bid in bids]
        state = easter.deal(game, table, hands)
        easter.play(state, *bids)
        return state

    return first_bid


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
def test_face_cards_mirror_the_table_card_and_break_ties_k_q_j(first_bid, table, bids, winner):
    state = first_bid(table, bids)
    everything = {table.split()[0], *bids}
    assert pile_of(state, winner) == everything
    assert state.points[winner] == sum(POINTS[card_index(c)] for c in everything)
    assert all(not pile_of(state, s) for s in range(len(bids)) if s != winner)


def test_table_face_value_option_makes_face_table_cards_worth_their_rank(first_bid):
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
def test_ace_bids_as_one(first_bid, table, bids, winner):
    state = first_bid(table, bids)
    assert pile_of(state, winner) == {table.split()[0], *bids}


def test_lone_bid_collects_the_table_card_and_scores(easter, first_bid):
    state = first_bid("KH 2C 3C 4C", ["AH", "5D"])
    assert pile_of(state, 0) == {"KH", "AH"}
    assert state.points.tolist() == [2 + 3, 0]  # K 2 points, Ace 3
    assert easter.names(state.discards) == {"5D"}  # no diamond on the table


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


# --- placing ------------------------------------------------------------------------------


def test_placement_is_restricted_to_matching_suits_and_asked_in_order_from_the_start(easter):
    game = easter.make(3)
    state = easter.deal(
        game,
        table="2H 3S 9H 4C",
        hands=["5H KS 7D AC", "6H 2D 3D 4D", "7H 5D 6D 8D"],
        start=1,
    )
    easter.play(state, "KS", "6H", "7H")
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


def test_a_card_matching_no_table_card_is_discarded_face_up(easter):
    game = easter.make(2)
    state = easter.deal(game, table="2H 3S 9H 4C", hands=["5D KS 7D AC", "6H 2D 3D 4D"])
    easter.play(state, "5D", "2D")
    assert easter.names(state.discards) == {"5D", "2D"}
    assert not state.piles.any() and state.points.tolist() == [0, 0]
    assert all(state.table[k] >= 0 for k in range(4)) and state.bid == 1


def test_discards_are_public_as_soon_as_they_happen_during_placing(easter):
    game = easter.make(2)
    state = easter.deal(game, table="2H 3S 9H 4C", hands=["5D KS 7D AC", "6H 2D 3D 4D"], start=1)
    # Seat 1 must choose a heart; seat 0's diamond is discarded after.
    easter.play(state, "5D", "6H")
    assert state.to_act() == (1,) and not state.discards.any()
    state.apply({1: PLACE + 0})
    assert easter.names(state.discards) == {"5D"} and state.target[0] == -1  # bid revealed, reset


def test_secret_positions_chips_must_match_the_suit_and_blank_means_discard(easter):
    game = easter.make(2, variant="secret_positions")
    state = easter.deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    legal = {(a // 52, card_name(a % 52)) for a in state.legal_actions(0)}
    assert legal == {(0, "5H"), (1, "5H"), (2, "KS"), (3, "AC"), (4, "7D")}
    assert state.to_act() == (0, 1)
    state.apply({0: 0 * 52 + card_index("5H"), 1: 4 * 52 + card_index("2D")})
    assert pile_of(state, 0) == {"2H", "5H"}  # no placing step: revealed at once
    assert easter.names(state.discards) == {"2D"}
    assert state.phase == PHASE_CHOOSE and state.bid == 1


def test_secret_positions_bids_on_one_position_compete(easter):
    game = easter.make(2, variant="secret_positions")
    state = easter.deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "QH 2D 3D 4D"])
    state.apply({0: 1 * 52 + card_index("5H"), 1: 1 * 52 + card_index("QH")})
    assert pile_of(state, 1) == {"9H", "5H", "QH"}


def test_secret_positions_asks_every_player_even_with_one_card(easter):
    game = easter.make(3, variant="secret_positions")
    state = EasterCollectionState(game, np.random.default_rng(4), deck=list(range(22)))
    rng = np.random.default_rng(4)
    while not state.is_terminal():
        assert state.to_act() == (0, 1, 2)
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_single_choices_are_not_asked_in_the_standard_game(easter, num_players):
    for seed in range(10):
        state = easter.make(num_players).new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            for p in state.to_act():
                assert len(state.legal_actions(p)) >= 2
            if state.phase == PHASE_CHOOSE:
                assert state.hand_size >= 2
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


# --- rounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
@pytest.mark.parametrize("num_players", [2, 3])
def test_second_bid_always_happens_with_two_or_three_players(easter, num_players, variant):
    for seed in range(20):
        game = easter.make(num_players, variant=variant)
        state = game.new_initial_state(np.random.default_rng(seed))
        easter.play_out(state, np.random.default_rng(seed))
        assert state.bids_per_round == [2] * len(state.bids_per_round)


def test_a_first_bid_that_takes_every_table_card_ends_the_round(easter):
    game = easter.make(4)
    state = easter.deal(
        game,
        table="2C 2D 2H 2S",
        hands=["3C 4C 5C 6C", "3D 4D 5D 6D", "3H 4H 5H 6H", "3S 4S 5S 6S"],
    )
    easter.play(state, "3C", "3D", "3H", "3S")
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
def test_number_of_rounds(easter, num_players, rounds_with_two_bids, variant):
    """With a second bid in every round: 6, 5, 4 and 3 rounds. With 5 players a first bid
    that takes all four table cards leaves the hands fuller, so the deck lasts longer."""
    game = easter.make(num_players, variant=variant)
    seen_one_bid = False
    for seed in range(40):
        state = game.new_initial_state(np.random.default_rng(seed))
        easter.play_out(state, np.random.default_rng(seed))
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
def test_start_player_passes_left_each_round(easter, num_players):
    for seed in range(5):
        state = easter.make(num_players).new_initial_state(np.random.default_rng(seed))
        first = state.start_player
        for round_, start in easter.play_out(state, np.random.default_rng(seed)):
            assert start == (first + round_) % num_players


def test_first_start_player_is_drawn_from_the_rng(easter):
    game = easter.make(5)
    starts = {game.new_initial_state(np.random.default_rng(s)).start_player for s in range(40)}
    assert starts == set(range(5))


def test_dealing_starts_with_the_start_player_one_card_at_a_time(easter):
    game = easter.make(3)
    state = EasterCollectionState(
        game, np.random.default_rng(0), deck=list(range(52)), start_player=2
    )
    assert state.table == [0, 1, 2, 3]
    assert np.flatnonzero(state.hands[2]).tolist() == [4, 7, 10, 13]
    assert np.flatnonzero(state.hands[0]).tolist() == [5, 8, 11, 14]
    assert np.flatnonzero(state.hands[1]).tolist() == [6, 9, 12, 15]


# --- the deck running out -----------------------------------------------------------------


def test_short_deck_deals_one_card_each_and_discards_the_rest_unseen(easter):
    game = easter.make(2)
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
    easter.play_out(state, rng)
    assert state.bids_per_round == [2, 2]


def test_short_deck_deals_no_cards_when_not_everyone_can_get_one(easter):
    game = easter.make(3)
    deck = list(range(4 + 12 + 4 + 2))  # round 2: 2 cards after the table for 3 players
    state = EasterCollectionState(game, np.random.default_rng(0), deck=deck, start_player=0)
    rng = np.random.default_rng(0)
    while state.round == 0:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.hands.sum(axis=1).tolist() == [2, 2, 2]
    assert all(c >= 0 for c in state.table)
    assert not state.hands[:, deck[-2:]].any() and not state.discards[deck[-2:]].any()
    easter.play_out(state, rng)
    assert state.bids_per_round == [2, 2]


def test_fewer_than_four_cards_go_to_the_table_and_no_hand_cards_are_dealt(easter):
    game = easter.make(2)
    deck = list(range(4 + 8 + 4 + 4 + 2))  # round 2 leaves 2 cards for round 3
    state = EasterCollectionState(game, np.random.default_rng(1), deck=deck, start_player=0)
    rng = np.random.default_rng(1)
    while state.round < 2:
        assert not state.last_round
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.table == [20, 21, -1, -1]
    assert state.hands.sum(axis=1).tolist() == [2, 2]
    easter.play_out(state, rng)
    assert len(state.bids_per_round) == 3


def test_a_deck_used_up_exactly_makes_the_last_round(easter):
    game = easter.make(2)
    state = EasterCollectionState(game, np.random.default_rng(2), deck=list(range(20)))
    rng = np.random.default_rng(2)
    while state.round == 0:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert state.last_round and state.hands.sum(axis=1).tolist() == [4, 4]
    easter.play_out(state, rng)
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
    easter, num_players, deck_size, bids, variant
):
    """[decision] A bid needs a card in every hand and one on the table: a short scripted
    deck that reaches a bid without ends the round (its last) and the game there, the
    table cards discarded face up, instead of asking for a choice nobody can make."""
    game = easter.make(num_players, variant=variant)
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


def test_own_hand_discarded_at_the_end_stays_seen_by_its_owner_only(easter):
    """The hands left at the end are discarded face down: their owner has seen them (not
    ``unseen`` in its final observation), nobody else has (still ``unseen``), and nothing
    of another seat's discarded hand shows in any other view."""
    game = easter.make(4)
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
def test_every_card_ends_in_one_place_and_scores_are_the_piles(easter, num_players, variant):
    for seed in range(5):
        game = easter.make(num_players, variant=variant)
        state = game.new_initial_state(np.random.default_rng(seed))
        easter.play_out(state, np.random.default_rng(seed))
        places = state.piles.sum(axis=0) + state.discards
        assert places.max() <= 1  # what is in neither was discarded unseen from deck or hand
        assert state.scores().tolist() == (state.piles @ np.array(POINTS)).tolist()
        assert state.hands.sum() == 0 and all(c < 0 for c in state.table)


# --- options, determinism, action names ---------------------------------------------------


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
        raw_env(**options)


def test_same_seed_same_game(easter):
    def transcript(seed: int) -> list[str]:
        game = easter.make(4)
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        frames = [str(state)]
        while not state.is_terminal():
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            frames.append(str(state))
        return frames

    assert transcript(3) == transcript(3) and transcript(3) != transcript(4)


def test_configurations_cover_every_player_count_and_variant():
    assert {(c["num_players"], c["variant"]) for c in SPEC.configurations} == {
        (n, v) for n in (2, 3, 4, 5) for v in ("standard", "secret_positions")
    }


def test_action_names(easter):
    assert easter.make(2).action_name(card_index("10H")) == "play 10H"
    assert easter.make(2).action_name(PLACE + 3) == "place at position 4"
    secret = easter.make(2, variant="secret_positions")
    assert secret.action_name(2 * 52 + card_index("QS")) == "play QS with chip 3"
    assert "blank" in secret.action_name(4 * 52 + card_index("AC"))
