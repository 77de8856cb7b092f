"""Easter collection's determinisation, copies and invariants."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from envs.easter_collection.layout import DERIVED
from envs.easter_collection.rules import (
    EasterCollectionState,
    card_index,
    card_name,
    positions_by_suit,
)


def hand_of(state: EasterCollectionState, seat: int) -> set[str]:
    return {card_name(c) for c in np.flatnonzero(state.hands[seat])}


# --- determinisation and copies -----------------------------------------------------------


def unknown_to(state: EasterCollectionState, player: int) -> set[int]:
    """Cards ``player`` cannot place: the deck, other hands, others' face-down bids, buried."""
    cards_ = set(state.deck[state.next_card :]) | set(np.flatnonzero(state.buried).tolist())
    for seat in range(state.game.num_players):
        if seat != player:
            cards_ |= set(np.flatnonzero(state.hands[seat]).tolist())
    return cards_ | {state.chosen[s] for s in state.hidden_bids(player)}


def test_resample_redeals_what_the_player_has_not_seen_and_keeps_the_rest(easter):
    game, state = easter.placing_state("KS", "5H")  # seat 2 places; seat 0's spade, seat 1's heart
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


def test_resample_keeps_the_placing_seats_bid_in_a_suit_matching_twice(easter):
    game = easter.make(3)
    # Hearts lie twice on the table, spades and clubs once, diamonds not at all.
    state = easter.deal(
        game,
        table="2H 3S 9H 4C",
        hands=["KS 7D AC 2D", "5H 3D 4D 5D", "7H 6D 8D 9D"],
        start=0,
    )
    easter.play(state, "KS", "5H", "7H")
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


def test_resample_in_the_last_round_redeals_the_cards_discarded_unseen(easter):
    game = easter.make(3)  # the last round has 2 cards for 3 players: both are buried
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
    easter.play_out(state, rng)
    final = state.resample(1, np.random.default_rng(0))
    assert np.array_equal(final.buried, state.buried) and final.is_terminal()


def test_resampled_games_play_on_with_their_own_chance(easter):
    game = easter.make(4)
    state = game.new_initial_state(np.random.default_rng(3))
    a = state.resample(0, np.random.default_rng(1))
    b = state.resample(0, np.random.default_rng(2))
    assert a.rng is not state.rng and a.rng.random() != b.rng.random()
    for sample in (a, b):
        easter.play_out(sample, np.random.default_rng(0))
        sample.check_invariants()


def test_clone_continues_identically_and_independently(easter):
    game = easter.make(3)
    state = game.new_initial_state(np.random.default_rng(8))
    easter.play(state, *[card_name(int(np.flatnonzero(state.hands[p])[0])) for p in range(3)])
    twin = state.clone()
    assert twin.game is state.game and pickle.dumps(twin) == pickle.dumps(state)
    easter.play_out(twin, np.random.default_rng(1))
    assert not twin.piles.any() or not np.array_equal(twin.piles, state.piles)
    assert not state.is_terminal()  # playing the twin left the original alone
    easter.play_out(state, np.random.default_rng(1))
    assert pickle.dumps(twin) == pickle.dumps(state)


# --- invariants ---------------------------------------------------------------------------


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
def test_check_invariants_catches_each_broken_invariant(easter, corruption):
    _, state = easter.placing_state("KS", "5H")
    state.check_invariants()
    message = corrupt(state, corruption)
    with pytest.raises(AssertionError, match=message):
        state.check_invariants()


def test_check_invariants_catches_bids_while_choosing_and_cards_left_at_the_end(easter):
    game = easter.make(2)
    state = easter.deal(game, table="2H 3S 9H 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    state.check_invariants()
    state.target[1] = 2
    with pytest.raises(AssertionError, match="before choosing"):
        state.check_invariants()
    state = game.new_initial_state(np.random.default_rng(0))
    easter.play_out(state, np.random.default_rng(0))
    state.check_invariants()
    card = int(np.flatnonzero(state.discards)[0])
    state.discards[card] = False
    state.table[0] = card
    state.suit_positions = positions_by_suit(state.table)
    with pytest.raises(AssertionError, match="game over with cards on the table"):
        state.check_invariants()


def test_check_invariants_catches_wrong_chips_in_secret_positions(easter):
    game = easter.make(2, variant="secret_positions")
    state = easter.deal(game, table="2H 9H 3S 4C", hands=["5H KS 7D AC", "6H 2D 3D 4D"])
    state.check_invariants()
    state.chip_actions = tuple((4 * 52 + card,) for card in range(52))  # all blank
    with pytest.raises(AssertionError, match="AC goes with the wrong chips"):
        state.check_invariants()


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
@pytest.mark.parametrize("variant", ["standard", "secret_positions"])
def test_invariants_and_the_decision_bound_hold_over_random_play(easter, num_players, variant):
    game = easter.make(num_players, variant=variant)
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
