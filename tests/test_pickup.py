"""Pickup rules, observations, render and heuristic (RULES.md, section "Pickup")."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from envs.core.agents import RandomAgent
from envs.core.game import counts
from envs.pickup import SPEC, raw_env
from envs.pickup.observation import build_table
from envs.pickup.rules import (
    BOOK_TARGET,
    DECK_COUNTS,
    HAND_SIZE,
    NUM_RANKS,
    POOL_SIZE,
    PickupGame,
    PickupState,
)
from training.agents.pickup import PickupHeuristic
from training.tournament import seat_rotated


# --- helpers ------------------------------------------------------------------------
def cards(*values: int) -> np.ndarray:
    """Counts per rank index of the cards with these face values."""
    return counts([v - 1 for v in values], NUM_RANKS)


def new_state(num_players: int = 3, seed: int = 0, **options) -> PickupState:
    game = PickupGame.from_options(num_players=num_players, **options)
    return game.new_initial_state(np.random.default_rng(seed))


def set_table(
    state: PickupState,
    *,
    hands: list[tuple[int, ...]],
    pool: tuple[int, ...],
    piles: list[tuple[int, ...]] | None = None,
) -> None:
    """Script a deal: the hands, the pool and the score piles (face values). Fields set by
    hand before the call (round, dealer ...) are taken in too."""
    for seat, hand in enumerate(hands):
        state.hands[seat] = cards(*hand).tolist()
    state.pool = cards(*pool).tolist()
    for seat, pile in enumerate(piles or [()] * len(hands)):
        state.piles[seat] = cards(*pile).tolist()
    state.refresh()  # the totals, bit sets and observation table follow the scripted fields


def play(state: PickupState, **played: int) -> None:
    """Reveal one card per seat, given by face value: ``play(state, p0=8, p1=3, ...)``."""
    state.apply({int(key[1:]): value - 1 for key, value in played.items()})


def pile(state: PickupState, seat: int) -> list[int]:
    return sorted((np.repeat(np.arange(NUM_RANKS), state.piles[seat]) + 1).tolist())


def state_with_dealer(num_players: int, dealer: int) -> PickupState:
    for seed in range(100):
        state = new_state(num_players, seed)
        if state.dealer == dealer:
            return state
    raise AssertionError("no seed deals that dealer")


# --- deck, deal, rounds -------------------------------------------------------------
def test_pairs_deck_has_55_cards_one_1_to_ten_10s():
    assert DECK_COUNTS.tolist() == list(range(1, 11))
    assert DECK_COUNTS.sum() == 55


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_hand_sizes_and_number_of_rounds(num_players):
    expected = {2: 7, 3: 6, 4: 6, 5: 5, 6: 5}[num_players]
    assert HAND_SIZE[num_players] == expected
    state = new_state(num_players, seed=num_players)
    assert np.sum(state.hands, axis=1).tolist() == [expected] * num_players
    assert sum(state.pool) == POOL_SIZE
    rng = np.random.default_rng(0)
    reveals = 0
    while not state.is_terminal():
        choosers = state.to_act()
        if len(choosers) == num_players:
            reveals += 1
            assert state.round == reveals - 1
            assert np.sum(state.hands, axis=1).tolist() == [expected - reveals + 1] * num_players
            assert sum(state.pool) == POOL_SIZE  # a fresh pool of five each round
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in choosers})
    assert reveals == expected
    assert np.sum(state.hands) == 0


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_cards_used_and_six_players_use_the_whole_deck(num_players):
    state = new_state(num_players, seed=1)
    size = HAND_SIZE[num_players]
    # Every card is somewhere: hands, pool or stock.
    total = np.sum(state.hands, axis=0) + np.array(state.pool) + counts(state.stock, NUM_RANKS)
    assert total.tolist() == DECK_COUNTS.tolist()
    used = size * (num_players + POOL_SIZE)
    assert used <= 55
    assert len(state.stock) == 55 - num_players * size - POOL_SIZE
    # The last round's pool is dealt from what is left; nothing is dealt twice.
    rng = np.random.default_rng(2)
    while state.round < size - 1:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert len(state.stock) == 55 - used
    if num_players == 6:
        assert used == 55 and state.stock == []


# --- the worked example -------------------------------------------------------------
def test_rulebook_worked_example_pool_10_9_8_8_two_8s_played():
    """Pool 10-9-8-8 (after a 3 picked up a 2). Two 8s are played; the first (left of the
    last actor) picks up an 8, knocking out the other 8 in the pool and 8s in other piles;
    the second 8 is stacked and does not knock out the first player's 8."""
    state = new_state(3)
    state.round, state.last_actor = 2, 0
    set_table(
        state,
        hands=[(8, 1), (8, 1), (3, 1)],
        pool=(10, 9, 8, 8, 2),
        piles=[(8,), (8, 4), (8, 5)],
    )
    play(state, p0=8, p1=8, p2=3)
    # Seat 2's 3 acts first and takes the 2; it becomes the last actor, so of the tied 8s
    # seat 0 (first to its left) acts before seat 1 — with the round's starting last actor
    # (seat 0) it would have been seat 1.
    assert state.acted == [2, 0, 1]
    assert state.took == [7, 7, 1]
    assert pile(state, 2) == [2, 5]  # seat 2's 8 knocked out
    assert pile(state, 0) == [8, 8]  # its own 8 stays: knockouts spare the taker
    assert pile(state, 1) == [4, 8]  # its old 8 knocked out, the played 8 stacked
    assert state.stacked == [False, True, False]
    assert state.leftover == cards(10, 9).tolist()  # the pool was 10-9
    assert state.scores().tolist() == [16.0, 12.0, 7.0]
    assert state.last_actor == 1


# --- order of play ------------------------------------------------------------------
@pytest.mark.parametrize("dealer, first", [(1, 2), (2, 0), (0, 1)])
def test_round_one_ties_start_left_of_the_dealer(dealer, first):
    state = state_with_dealer(3, dealer)
    assert state.round == 0 and state.last_actor == dealer
    set_table(state, hands=[(6, 1)] * 3, pool=(6, 10, 10, 10, 10))
    play(state, p0=6, p1=6, p2=6)
    # The first tied seat left of the dealer takes the only 6; the other two then stack.
    assert state.acted == [first, (first + 1) % 3, (first + 2) % 3]
    assert state.took[first] == 5 and not state.stacked[first]
    assert all(state.stacked[s] for s in range(3) if s != first)
    assert [pile(state, s) for s in range(3)] == [[6], [6], [6]]


def test_later_round_ties_start_left_of_the_previous_rounds_last_actor():
    state = state_with_dealer(3, 0)
    set_table(state, hands=[(2, 5), (2, 5), (9, 5)], pool=(1, 10, 10, 10, 10))
    play(state, p0=2, p1=2, p2=9)
    # Round 1: ties start left of the dealer (0): seat 1 then seat 0; seat 2's 9 acts last.
    assert state.acted == [1, 0, 2]
    assert state.last_actor == 2 and state.round == 1
    set_table(state, hands=[(5,), (5,), (5,)], pool=(5, 10, 10, 10, 10))
    play(state, p0=5, p1=5, p2=5)
    # Round 2: ties start left of seat 2 (the last actor of round 1): seat 0 first.
    assert state.acted == [0, 1, 2]
    assert state.took[0] == 4 and state.stacked[1] and state.stacked[2]


def test_most_recent_actor_updates_after_every_action():
    state = new_state(4)
    state.round, state.last_actor = 1, 0
    set_table(state, hands=[(9,), (5,), (1,), (5,)], pool=(5, 10, 10, 10, 10))
    play(state, p0=9, p1=5, p2=1, p3=5)
    # Seat 2's 1 acts first (stacks); the tie of 5s then starts left of seat 2, not of
    # seat 0: seat 3 takes the 5, seat 1 stacks its 5, and the 9 finds nothing and stacks.
    assert state.acted == [2, 3, 1, 0]
    assert state.stacked == [True, True, True, False]
    assert [pile(state, s) for s in range(4)] == [[9], [5], [1], [5]]


def test_lowest_card_acts_first_regardless_of_seat():
    state = new_state(3)
    state.round, state.last_actor = 1, 2
    set_table(state, hands=[(2,), (9,), (6,)], pool=(2, 6, 9, 10, 10))
    play(state, p0=2, p1=9, p2=6)
    assert state.acted == [0, 2, 1]
    assert (pile(state, 0), pile(state, 1), pile(state, 2)) == ([2], [9], [6])


# --- pickups, knockouts, stacking ----------------------------------------------------
def test_pickup_choice_is_a_step_of_its_own_when_several_ranks_are_eligible():
    state = new_state(3)
    state.round, state.last_actor = 1, 2
    set_table(
        state,
        hands=[(8, 1), (2, 1), (10, 1)],
        pool=(3, 6, 6, 9, 10),
        piles=[(6, 4), (6, 6), (6, 3)],
    )
    play(state, p0=8, p1=2, p2=10)
    # Seat 1's 2 stacks (nothing <= 2); then seat 0's 8 may take a 3 or a 6: a choice.
    assert state.to_act() == (0,)
    mask = state.legal_mask(0)
    assert np.flatnonzero(mask).tolist() == [2, 5]  # ranks 3 and 6
    assert not state.legal_mask(1).any() and not state.legal_mask(2).any()
    with pytest.raises(ValueError, match="legal actions"):
        state.apply({0: 8})  # a 9 is not eligible for an 8
    state.apply({0: 5})  # pick up a 6
    # Knockouts: the other 6 in the pool, and the 6s of seats 1 and 2; seat 0 keeps its own.
    assert pile(state, 0) == [4, 6, 6]
    assert pile(state, 1) == [2]
    assert pile(state, 2) == [3]
    # Seat 2's 10 now chooses between 3, 9 and 10.
    assert state.to_act() == (2,)
    assert np.flatnonzero(state.legal_mask(2)).tolist() == [2, 8, 9]
    state.apply({2: 2})  # takes the 3: its own 3 stays
    assert pile(state, 2) == [3, 3]
    assert state.leftover == cards(9, 10).tolist()
    assert state.to_act() == (0, 1, 2) and state.round == 2


def test_single_eligible_rank_is_picked_up_without_asking_even_if_poor():
    state = new_state(2)
    state.round, state.last_actor = 1, 1
    set_table(state, hands=[(10, 1), (1, 1)], pool=(1, 10, 10, 10, 10))
    # Seat 1's 1 takes the 1; seat 0's 10 then must take a 10 (its only eligible rank).
    play(state, p0=10, p1=1)
    assert pile(state, 1) == [1]
    assert pile(state, 0) == [10]
    assert sum(state.leftover) == 0  # the other 10s were knocked out of the pool
    assert not any(state.stacked)


def test_pickup_is_compulsory_with_an_eligible_card():
    state = new_state(2)
    state.round, state.last_actor = 1, 1
    set_table(state, hands=[(10, 2), (9, 2)], pool=(1, 10, 10, 10, 10))
    nines_unshown = state.unshown[8]
    play(state, p0=10, p1=9)
    # The 9 acts first and must pick up the 1 rather than stack itself; the played 9 is
    # discarded. The 10 then takes a 10, knocking out the rest of the 10s.
    assert pile(state, 1) == [1]
    assert pile(state, 0) == [10]
    # The discarded 9 was seen (the next round's fresh pool may show more 9s).
    assert state.unshown[8] + state.pool[8] == nines_unshown - 1


def test_stacking_with_no_eligible_card_knocks_nothing_out():
    state = new_state(3)
    state.round, state.last_actor = 1, 0
    set_table(
        state,
        hands=[(4, 1), (9, 1), (9, 1)],
        pool=(8, 10, 10, 10, 10),
        piles=[(), (4,), (4, 4)],
    )
    play(state, p0=4, p1=9, p2=9)
    # The 4 finds nothing <= 4 and stacks; the others' 4s stay. Seat 1's 9 takes the 8;
    # seat 2's 9 then finds nothing <= 9 and stacks.
    assert state.acted == [0, 1, 2]
    assert state.stacked == [True, False, True]
    assert pile(state, 0) == [4]
    assert pile(state, 1) == [4, 8]
    assert pile(state, 2) == [4, 4, 9]


def test_stacking_with_an_empty_pool():
    state = new_state(3)
    state.round, state.last_actor = 1, 2
    set_table(state, hands=[(2, 1), (2, 1), (3, 1)], pool=(2, 2, 2, 2, 2))
    play(state, p0=2, p1=2, p2=3)
    # Seat 0 takes a 2 and knocks out the other four: the pool is empty for the rest.
    assert state.acted == [0, 1, 2]
    assert pile(state, 0) == [2]
    assert state.stacked == [False, True, True]
    assert pile(state, 1) == [2] and pile(state, 2) == [3]
    assert sum(state.leftover) == 0


def test_stacked_card_knocked_out_by_a_later_pickup_of_its_rank():
    state = new_state(2)
    state.round, state.last_actor = 1, 1
    set_table(state, hands=[(3, 7), (5, 7)], pool=(6, 8, 9, 10, 10))
    play(state, p0=3, p1=5)
    assert all(state.stacked)
    assert pile(state, 0) == [3] and pile(state, 1) == [5]
    set_table(state, hands=[(7,), (7,)], pool=(5, 9, 10, 10, 10), piles=[(3,), (5,)])
    play(state, p0=7, p1=7)
    # Seat 0 (left of last actor seat 1) takes the only eligible card, the 5: seat 1's
    # stacked 5 is knocked out; seat 1 then stacks its 7.
    assert state.acted == [0, 1]
    assert pile(state, 0) == [3, 5]
    assert pile(state, 1) == [7]


# --- scores and the end ----------------------------------------------------------------
def test_scores_are_face_values_and_single_hand_ends_when_hands_are_empty():
    state = new_state(2)
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 0
    set_table(state, hands=[(10,), (6,)], pool=(3, 9, 9, 10, 10), piles=[(4, 4), (7,)])
    play(state, p0=10, p1=6)
    assert state.to_act() == (0,)  # the 10 chooses between 9 and 10 after the 6 took the 3
    assert pile(state, 1) == [3, 7]
    state.apply({0: 8})
    assert state.is_terminal() and state.to_act() == ()
    assert state.scores().tolist() == [17.0, 10.0]
    assert not state.legal_mask(0).any()


def test_book_targets_by_player_count():
    assert BOOK_TARGET == {2: 150, 3: 100, 4: 100, 5: 75, 6: 75}
    for n, target in BOOK_TARGET.items():
        assert PickupGame.from_options(num_players=n, target_score="book").target == target
    assert PickupGame.from_options(num_players=3).target is None
    assert PickupGame.from_options(num_players=3, target_score=np.int64(40)).target == 40


def test_longer_game_repeats_hands_dealer_passing_left_until_target():
    state = new_state(3, seed=4, target_score=100)
    rng = np.random.default_rng(4)
    first_dealer = state.dealer
    hands_seen = []
    previous = (state.hand_number, state.banked.copy())
    while not state.is_terminal():
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        if state.hand_number != previous[0]:
            # A new hand: the totals so far banked, all below the target; a fresh deal; the
            # dealer one to the left.
            assert max(state.banked) < 100
            assert all(b >= a for a, b in zip(previous[1], state.banked, strict=True))
            assert sum(state.banked) > sum(previous[1])
            assert state.scores().tolist() == state.banked
            assert np.sum(state.piles) == 0 and state.round == 0
            assert np.sum(state.hands, axis=1).tolist() == [6, 6, 6]
            assert state.dealer == (first_dealer + state.hand_number) % 3
            assert state.last_actor == state.dealer
            hands_seen.append(state.hand_number)
        previous = (state.hand_number, state.banked.copy())
    assert hands_seen == list(range(1, state.hand_number + 1))
    assert state.hand_number >= 1
    assert state.scores().max() >= 100


def test_longer_game_ends_at_the_end_of_the_hand_reaching_the_target():
    state = new_state(2, target_score=30)
    state.banked[:] = [25, 10]
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 1
    set_table(state, hands=[(5,), (1,)], pool=(5, 8, 8, 9, 9), piles=[(), ()])
    play(state, p0=5, p1=1)
    assert state.is_terminal()
    assert state.scores().tolist() == [30.0, 11.0]
    # Below the target: another hand is dealt, the dealer passing left.
    state = new_state(2, target_score=31)
    dealer = state.dealer
    state.banked[:] = [25, 10]
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 1
    set_table(state, hands=[(5,), (1,)], pool=(5, 8, 8, 9, 9), piles=[(), ()])
    play(state, p0=5, p1=1)
    assert not state.is_terminal()
    assert state.hand_number == 1 and state.dealer == (dealer + 1) % 2
    assert state.banked == [30, 11]


# --- options ------------------------------------------------------------------------
def test_default_is_four_players_and_a_single_hand():
    game = PickupGame.from_options()
    assert game.num_players == 4 and game.target is None and game.hand_size == 6


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 1},
        {"num_players": 7},
        {"num_players": "3"},
        {"num_players": 3.0},
        {"num_players": True},
        {"target_score": 0},
        {"target_score": -5},
        {"target_score": 50.5},
        {"target_score": "default"},
        {"target_score": True},
        {"points": 3},
    ],
)
def test_bad_options_raise_with_what_is_allowed(options):
    with pytest.raises(ValueError, match="allowed"):
        PickupGame.from_options(**options)


# --- hidden information, observation, render -------------------------------------------
def test_other_players_hands_and_the_stock_are_hidden():
    a = new_state(4, seed=7)
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


def test_render_shows_public_information_only():
    state = new_state(3, seed=1)
    set_table(state, hands=[(9, 9, 9, 1, 1, 1)] * 3, pool=(2, 3, 4, 5, 6))
    text = str(state)
    assert "pool: 6 5 4 3 2" in text
    assert "6 in hand" in text
    assert "9 9 9" not in text
    play(state, p0=9, p1=1, p2=1)
    assert "player_0 chooses a pickup: 2 3 4 5 6" in str(state)
    state.apply({0: 5})
    text = str(state)
    assert "played 9, took 6 (3)" in text and "played 1, stacked (1)" in text
    assert "pool left over and discarded: 5 4 3 2" in text


def test_observation_is_from_the_observers_seat():
    state = new_state(3)
    state.round, state.last_actor = 1, 0
    state.dealer = 1
    set_table(state, hands=[(8, 1), (2, 1), (10, 1)], pool=(3, 6, 6, 9, 10), piles=[(7,), (), (4,)])
    play(state, p0=8, p1=2, p2=10)
    assert state.to_act() == (0,)
    game = state.game
    views = game.observation_layout.views(game.observation(state, 2))
    # Seat 2 sees itself first, then seat 0, then seat 1.
    assert views["hand"].tolist() == cards(1).tolist()
    assert views["pool"].tolist() == cards(3, 6, 6, 9, 10).tolist()
    assert views["piles"][0].tolist() == cards(4).tolist()
    assert views["piles"][1].tolist() == cards(7).tolist()
    assert views["piles"][2].tolist() == cards(2).tolist()  # seat 1 stacked its 2
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


def test_unseen_counts_track_pools_and_reveals():
    state = new_state(2, seed=3)
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


def test_same_seed_same_game_and_env_render():
    def transcript(seed: int) -> list[str]:
        env = raw_env(num_players=4, render_mode="ansi")
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        frames = []
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            frames.append(env.render())
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return frames

    assert transcript(5) == transcript(5)
    assert transcript(5) != transcript(6)


def test_spec_covers_every_player_count_and_the_longer_game():
    counts_covered = sorted({c["num_players"] for c in SPEC.configurations})
    assert counts_covered == [2, 3, 4, 5, 6]
    assert any("target_score" in c for c in SPEC.configurations)


# --- dealing and game length --------------------------------------------------------
def test_deal_gives_each_seat_its_slice_of_the_shuffled_deck():
    # The deal, replayed by hand from the same seed: the dealer is drawn, then the deck
    # shuffled; seat p gets cards p*H .. (p+1)*H - 1 and the pool is dealt from the end.
    rng = np.random.default_rng(11)
    dealer = int(rng.integers(4))
    deck = np.repeat(np.arange(NUM_RANKS), DECK_COUNTS)
    rng.shuffle(deck)
    state = new_state(4, seed=11)
    assert state.dealer == dealer
    for seat in range(4):
        assert state.hands[seat] == counts(deck[seat * 6 : seat * 6 + 6], 10).tolist()
    assert state.stock == deck[24:50].tolist()
    assert state.pool == counts(deck[50:], NUM_RANKS).tolist()
    assert state.unshown == (DECK_COUNTS - counts(deck[50:], NUM_RANKS)).tolist()


def test_at_most_four_pickup_choices_in_a_round():
    # Five 10s against a pool of five ranks: each pickup removes a rank, so four players
    # choose and the fifth gets the last rank without a choice.
    state = new_state(5)
    state.round, state.last_actor = 1, 0
    set_table(state, hands=[(10, 1)] * 5, pool=(1, 2, 3, 4, 5))
    play(state, p0=10, p1=10, p2=10, p3=10, p4=10)
    choices = []
    while len(state.to_act()) == 1:
        (seat,) = state.to_act()
        choices.append((seat, len(state.legal_actions(seat))))
        state.apply({seat: state.legal_actions(seat)[-1]})  # the highest eligible rank
    assert choices == [(1, 5), (2, 4), (3, 3), (4, 2)]
    assert state.acted == [1, 2, 3, 4, 0] and state.took[0] == 0  # seat 0 took the 1
    assert state.round == 2


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"num_players": 2}, 7 * (2 + 2)),
        ({"num_players": 3}, 6 * (3 + 3)),
        ({"num_players": 4}, 6 * (4 + 4)),
        ({"num_players": 5}, 5 * (5 + 4)),
        ({"num_players": 6}, 5 * (6 + 4)),
        ({"num_players": 3, "target_score": 100}, (3 * 99 + 1) * 6 * (3 + 3)),
        ({"num_players": 2, "target_score": "book"}, (2 * 149 + 1) * 7 * (2 + 2)),
    ],
)
def test_max_decisions(options, expected):
    assert PickupGame.from_options(**options).max_decisions == expected


@pytest.mark.parametrize("options", SPEC.configurations + ({"num_players": 2, "target_score": 1},))
def test_games_stay_within_max_decisions(options):
    game = PickupGame.from_options(**options)
    for seed in range(5):
        decisions = sum(len(s.to_act()) for s in random_game(game, seed))
        assert decisions <= game.max_decisions


# --- invariants -----------------------------------------------------------------------
def random_game(game: PickupGame, seed: int):
    """Every state of one random game (the same state object, advanced)."""
    rng = np.random.default_rng(seed + 100)
    state = game.new_initial_state(np.random.default_rng(seed))
    yield state
    while not state.is_terminal():
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        yield state


def position(num_players: int = 3, *, choosing: bool = False, **options) -> PickupState:
    """A real mid-hand position of a seeded random game: in the play phase of round 3 or
    later, or (``choosing``) waiting for a pickup choice with two seats still to act."""
    game = PickupGame.from_options(num_players=num_players, **options)
    for seed in range(200):
        for state in random_game(game, seed):
            if choosing and state.chooser >= 0 and len(state.acted) <= num_players - 2:
                return state
            if not choosing and len(state.to_act()) == num_players and state.round >= 2:
                return state
    raise AssertionError("no such position")


@pytest.mark.parametrize("options", SPEC.configurations)
def test_invariants_hold_over_random_play(options):
    game = PickupGame.from_options(**options)
    for seed in range(3):
        for state in random_game(game, seed):
            state.check_invariants()


def first(array) -> int:
    return int(np.flatnonzero(array)[0])


def recount_scores(state: PickupState) -> None:
    state.totals = (np.array(state.banked) + np.array(state.piles) @ np.arange(1, 11)).tolist()


def move_discard_to_pile(state: PickupState) -> None:
    for rank in range(NUM_RANKS):
        state.piles[0][rank] += state.discard[rank]
        state.discard[rank] = 0
    recount_scores(state)


def hand_card_to_stock(state: PickupState) -> None:
    rank = first(state.hands[0])
    state.hands[0][rank] -= 1
    state.stock.append(rank)


def pool_card_to_discard(state: PickupState) -> None:
    rank = next(r for r in range(NUM_RANKS) if state.pool[r])
    state.pool[rank] -= 1
    state.discard[rank] += 1


def knock_out_without_rescoring(state: PickupState) -> None:
    seat, rank = np.argwhere(np.array(state.piles) > 0)[0].tolist()
    state.discard[rank] += state.piles[seat][rank]
    state.piles[seat][rank] = 0


def duplicate_pile_cards(state: PickupState) -> None:
    for pile in state.piles:
        for rank, count in enumerate(pile):
            pile[rank] = count + (count > 0)


def overstate_pick_up(state: PickupState) -> None:
    state.played[0], state.took[0], state.stacked[0] = 0, 5, False


def stack_other_card(state: PickupState) -> None:
    state.stacked[0] = True
    state.took[0] = (state.played[0] + 1) % NUM_RANKS


BREAKS = {
    "duplicate a hand card": (lambda s: s.hands[0].__setitem__(first(s.hands[0]), 9), "deck"),
    "lose a stock card": (lambda s: s.stock.pop(), "deck"),
    "duplicate a pile card": (duplicate_pile_cards, "deck"),
    "discard a card still in the stock": (lambda s: s.discard.__setitem__(s.stock[0], 9), "deck"),
    "miscount the unseen cards": (lambda s: s.unshown.__setitem__(0, 0), "shown this hand"),
    "take a hand card back to the stock": (hand_card_to_stock, "hand sizes"),
    "discard a pool card before the reveal": (pool_card_to_discard, "in the pool before"),
    "grow a pile beyond one card a round": (move_discard_to_pile, "pile larger"),
    "stale score": (lambda s: s.totals.__setitem__(1, s.totals[1] + 3), "scores"),
    "stale score after a knockout": (knock_out_without_rescoring, "scores"),
    "stale hand bits": (lambda s: s.hand_bits.__setitem__(1, s.hand_bits[1] ^ 1), "hand bits"),
    "stale pool bits": (lambda s: setattr(s, "pool_bits", s.pool_bits ^ (1 << 9)), "pool bits"),
    "stale observation table": (lambda s: s.table.__setitem__(3, s.table[3] + 1), "stale"),
    "finish mid-hand": (lambda s: setattr(s, "finished", True), "finished"),
    "a seat acts twice": (lambda s: s.acted.append(s.acted[0]), "acted twice"),
    "wrong last actor": (lambda s: setattr(s, "last_actor", s.acted[0]), "last actor"),
    "forget who took": (lambda s: s.took.__setitem__(s.acted[0], -1), "disagrees"),
    "stack a card not played": (stack_other_card, "stacked another card"),
    "pick up above the played card": (overstate_pick_up, "higher rank"),
}


@pytest.mark.parametrize("name", BREAKS)
def test_check_invariants_catches_each_break(name):
    state = position(3)
    state.check_invariants()
    if name == "stale score after a knockout":
        assert np.any(state.piles)
    if name == "grow a pile beyond one card a round":
        assert sum(state.discard) > state.round
    if name == "pick up above the played card":
        assert state.took[0] != state.played[0] or not state.stacked[0]
    breaking, message = BREAKS[name]
    breaking(state)
    with pytest.raises(AssertionError, match=message):
        state.check_invariants()


def test_check_invariants_catches_a_bad_pickup_choice():
    state = position(3, choosing=True)
    state.check_invariants()
    # A choice of a single rank should have been made by the rules.
    eligible = state.eligible(state.played[state.chooser])
    broken = state.clone()
    for rank in eligible[1:]:
        broken.discard[rank] += broken.pool[rank]
        broken.pool[rank] = 0
    with pytest.raises(AssertionError, match="choice of one rank"):
        broken.check_invariants()
    # The chooser must not have acted already.
    broken = state.clone()
    broken.chooser = broken.acted[0]
    with pytest.raises(AssertionError, match="already acted"):
        broken.check_invariants()
    # A card waiting to act is face up in front of its player, not lost.
    broken = state.clone()
    waiting = next(s for s in range(3) if broken.took[s] == -1 and s != broken.chooser)
    broken.played[waiting] = (broken.played[waiting] + 1) % NUM_RANKS
    with pytest.raises(AssertionError, match="deck"):
        broken.check_invariants()


def test_check_invariants_catches_longer_game_bookkeeping():
    state = position(3, target_score=100)
    state.check_invariants()
    state.banked[1] = 100  # a hand dealt although a total had reached the target
    recount_scores(state)
    with pytest.raises(AssertionError, match="after the target"):
        state.check_invariants()
    single = position(3)
    single.banked[2] = 5  # banked points in a single-hand game
    recount_scores(single)
    with pytest.raises(AssertionError, match="banked points"):
        single.check_invariants()


# --- determinisation ----------------------------------------------------------------
def known_to(state: PickupState, player: int) -> tuple:
    """Everything ``player`` has seen."""
    return (
        state.hands[player].copy(),
        np.sum(state.hands, axis=1).tolist(),
        state.pool,
        [pile.copy() for pile in state.piles],
        state.discard,
        state.unshown.copy(),
        state.played,
        state.acted,
        state.took,
        state.stacked,
        state.leftover,
        state.totals.copy(),
        state.banked.copy(),
        (state.round, state.hand_number, state.dealer, state.last_actor, state.chooser),
        len(state.stock),
    )


def unknown_to(state: PickupState, player: int) -> list[int]:
    """Cards of each rank in the other hands and the stock."""
    others = np.sum(state.hands, axis=0) - state.hands[player]
    return (others + counts(state.stock, NUM_RANKS)).tolist()


@pytest.mark.parametrize("choosing", [False, True])
def test_resample_redraws_the_other_hands_and_the_stock_only(choosing):
    state = position(4, choosing=choosing)
    before = state.clone()
    game = state.game
    moved_hands = moved_stock = 0
    for k in range(20):
        sample = state.resample(1, np.random.default_rng(k))
        sample.check_invariants()
        # Fixed: all that seat 1 has seen, and so its observation, mask and the render.
        assert known_to(sample, 1) == known_to(state, 1)
        assert np.array_equal(game.observation(sample, 1), game.observation(state, 1))
        assert np.array_equal(sample.legal_mask(1), state.legal_mask(1))
        assert str(sample) == str(state)
        # Redrawn: the same unknown cards, dealt again into the other hands and the stock.
        assert unknown_to(sample, 1) == unknown_to(state, 1)
        # The unknown cards are what seat 1 counts as unseen.
        assert unknown_to(sample, 1) == np.subtract(state.unshown, state.hands[1]).tolist()
        moved_hands += not np.array_equal(sample.hands, state.hands)
        moved_stock += sample.stock != state.stock
        # Its own RNG: future chance events are drawn afresh.
        assert sample.rng is not state.rng
        assert sample.game is state.game
    assert moved_hands >= 15 and moved_stock >= 15
    # The real state is untouched.
    assert known_to(state, 1) == known_to(before, 1)
    assert state.hands == before.hands and state.stock == before.stock


def test_resample_at_the_end_of_a_hand_only_reshuffles_the_stock():
    game = PickupGame.from_options(num_players=2)
    *_, final = random_game(game, 3)
    assert final.is_terminal() and np.sum(final.hands) == 0
    sample = final.resample(0, np.random.default_rng(0))
    assert sorted(sample.stock) == sorted(final.stock)
    assert sample.scores().tolist() == final.scores().tolist()
    sample.check_invariants()


def test_resampled_games_continue_legally():
    state = position(3)
    sample = state.resample(0, np.random.default_rng(4))
    for later in random_game_from(sample, 9):
        later.check_invariants()
    assert sample.is_terminal()


def random_game_from(state: PickupState, seed: int):
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        yield state


def test_clone_is_independent_and_shares_the_game():
    state = position(3)
    twin = state.clone()
    assert twin.game is state.game
    twin.apply({p: int(twin.legal_actions(p)[0]) for p in twin.to_act()})
    assert twin.round != state.round or twin.acted != state.acted
    state.check_invariants()
    twin.check_invariants()


# --- the encoder against a plain reference ---------------------------------------------
def reference_observation(state: PickupState, player: int) -> np.ndarray:
    """The documented observation, written plainly (the encoder is written for speed)."""
    game = state.game
    n = game.num_players
    flat = game.observation_layout.zeros()
    views = game.observation_layout.views(flat)
    views["hand"][:] = state.hands[player]
    views["pool"][:] = state.pool
    others = [q for q in range(n) if q != player]
    views["unseen"][:] = np.sum([state.hands[q] for q in others], axis=0) + counts(
        state.stock, NUM_RANKS
    )
    for row in range(n):
        seat = (player + row) % n
        views["piles"][row] = state.piles[seat]
        if state.played[seat] >= 0:
            views["revealed"][row, state.played[seat]] = 1
        if seat in state.acted:
            views["order"][row] = state.acted.index(seat) + 1
        views["last_actor"][row] = seat == state.last_actor
        views["dealer"][row] = seat == state.dealer
        views["chooser"][row] = seat == state.chooser
        pile_points = sum((rank + 1) * c for rank, c in enumerate(state.piles[seat]))
        views["scores"][row] = state.banked[seat] + pile_points
    if not state.finished:
        views["round"][state.round] = 1
    return flat


@pytest.mark.parametrize("options", SPEC.configurations)
def test_encoder_matches_the_plain_reference(options):
    # The observation is gathered from the state's table (kept up to date by the rules);
    # the Game.encode path into named views must agree with it as well.
    game = PickupGame.from_options(**options)
    layout = game.observation_layout
    for seed in range(12):
        for state in random_game(game, seed):
            for player in range(game.num_players):
                expected = reference_observation(state, player)
                observed = game.observation(state, player)
                assert observed.dtype == np.float32
                assert observed.tobytes() == expected.tobytes()
                flat = layout.zeros()
                game.encode(state, player, layout.views(flat))
                assert flat.tobytes() == expected.tobytes()


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
def test_legal_mask_matches_the_plain_reference(options):
    game = PickupGame.from_options(**options)
    for seed in range(12):
        for state in random_game(game, seed):
            for player in range(game.num_players):
                mask = state.legal_mask(player)
                assert mask.dtype == bool
                assert np.array_equal(mask, reference_mask(state, player))
                # A fresh array (masks are copies of shared ones): the caller may change it.
                mask[:] = ~mask
                assert np.array_equal(state.legal_mask(player), reference_mask(state, player))


def bits(counts: list[int]) -> int:
    """The bit set of the ranks with a nonzero count."""
    return sum(2**rank for rank in range(NUM_RANKS) if counts[rank] > 0)


def assert_bookkeeping_fresh(state: PickupState) -> None:
    """The kept totals, bit sets and observation table equal a recomputation from scratch."""
    piles = np.array(state.piles)
    assert state.totals == (np.array(state.banked) + piles @ np.arange(1, 11)).tolist()
    assert state.hand_bits == [bits(hand) for hand in state.hands]
    assert state.pool_bits == bits(state.pool)
    assert state.table.tobytes() == build_table(state).tobytes()
    # The memoryview the rules write cells through, and the views used to recompute
    # ``unseen``, are views of this state's own table.
    assert state._table_view.obj is state.table
    for view in (state._table_hands, state._table_unseen, state._table_unshown):
        assert view.base is state.table


@pytest.mark.parametrize("options", SPEC.configurations + ({"num_players": 2, "target_score": 30},))
def test_kept_table_and_totals_match_a_recomputation_over_random_play(options):
    game = PickupGame.from_options(**options)
    for seed in range(8):
        for state in random_game(game, seed):
            assert_bookkeeping_fresh(state)
    # Copies (clone, resample, pickle) get their own table, bound and kept up to date.
    state = position(game.num_players, **{k: v for k, v in options.items() if k != "num_players"})
    before = state.table.copy()
    for twin in (
        state.clone(),
        state.resample(0, np.random.default_rng(1)),
        pickle.loads(pickle.dumps(state)),
    ):
        assert_bookkeeping_fresh(twin)
        for later in random_game_from(twin, 5):
            assert_bookkeeping_fresh(later)
    assert state.table.tobytes() == before.tobytes()
    assert_bookkeeping_fresh(state)


# --- heuristic ------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_heuristic_beats_random(num_players):
    game = PickupGame.from_options(num_players=num_players)
    lineup = [("heuristic", PickupHeuristic(game))] + [("random", RandomAgent(game))] * (
        num_players - 1
    )
    records = seat_rotated(game, lineup, 120, seed=num_players)
    heuristic, random_agent = records["heuristic"], records["random"]
    assert np.mean(heuristic.scores) > np.mean(random_agent.scores) + 2
    assert np.mean(heuristic.wins) > 1 / num_players
