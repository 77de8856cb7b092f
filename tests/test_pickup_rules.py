"""Pickup's rules (RULES.md, section "Pickup"): the deck and the deal, the worked example,
order of play, pickups, scores and the end, options and game length."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.game import counts
from envs.pickup import SPEC, raw_env
from envs.pickup.rules import (
    BOOK_TARGET,
    DECK_COUNTS,
    HAND_SIZE,
    NUM_RANKS,
    POOL_SIZE,
    PickupGame,
    PickupState,
)


def pile(state: PickupState, seat: int) -> list[int]:
    return sorted((np.repeat(np.arange(NUM_RANKS), state.piles[seat]) + 1).tolist())


@pytest.fixture
def state_with_dealer(pickup):
    def state_with_dealer(num_players: int, dealer: int) -> PickupState:
        for seed in range(100):
            state = pickup.new_state(num_players, seed)
            if state.dealer == dealer:
                return state
        raise AssertionError("no seed deals that dealer")

    return state_with_dealer


# --- deck, deal, rounds -------------------------------------------------------------------


def test_pairs_deck_has_55_cards_one_1_to_ten_10s():
    assert DECK_COUNTS.tolist() == list(range(1, 11))
    assert DECK_COUNTS.sum() == 55


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_hand_sizes_and_number_of_rounds(pickup, num_players):
    expected = {2: 7, 3: 6, 4: 6, 5: 5, 6: 5}[num_players]
    assert HAND_SIZE[num_players] == expected
    state = pickup.new_state(num_players, seed=num_players)
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
def test_cards_used_and_six_players_use_the_whole_deck(pickup, num_players):
    state = pickup.new_state(num_players, seed=1)
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


# --- the worked example -------------------------------------------------------------------


def test_rulebook_worked_example_pool_10_9_8_8_two_8s_played(pickup):
    """Pool 10-9-8-8 (after a 3 picked up a 2). Two 8s are played; the first (left of the
    last actor) picks up an 8, knocking out the other 8 in the pool and 8s in other piles;
    the second 8 is stacked and does not knock out the first player's 8."""
    state = pickup.new_state(3)
    state.round, state.last_actor = 2, 0
    pickup.set_table(
        state,
        hands=[(8, 1), (8, 1), (3, 1)],
        pool=(10, 9, 8, 8, 2),
        piles=[(8,), (8, 4), (8, 5)],
    )
    pickup.play(state, p0=8, p1=8, p2=3)
    # Seat 2's 3 acts first and takes the 2; it becomes the last actor, so of the tied 8s
    # seat 0 (first to its left) acts before seat 1 — with the round's starting last actor
    # (seat 0) it would have been seat 1.
    assert state.acted == [2, 0, 1]
    assert state.took == [7, 7, 1]
    assert pile(state, 2) == [2, 5]  # seat 2's 8 knocked out
    assert pile(state, 0) == [8, 8]  # its own 8 stays: knockouts spare the taker
    assert pile(state, 1) == [4, 8]  # its old 8 knocked out, the played 8 stacked
    assert state.stacked == [False, True, False]
    assert state.leftover == pickup.cards(10, 9).tolist()  # the pool was 10-9
    assert state.scores().tolist() == [16.0, 12.0, 7.0]
    assert state.last_actor == 1


# --- order of play ------------------------------------------------------------------------


@pytest.mark.parametrize("dealer, first", [(1, 2), (2, 0), (0, 1)])
def test_round_one_ties_start_left_of_the_dealer(pickup, state_with_dealer, dealer, first):
    state = state_with_dealer(3, dealer)
    assert state.round == 0 and state.last_actor == dealer
    pickup.set_table(state, hands=[(6, 1)] * 3, pool=(6, 10, 10, 10, 10))
    pickup.play(state, p0=6, p1=6, p2=6)
    # The first tied seat left of the dealer takes the only 6; the other two then stack.
    assert state.acted == [first, (first + 1) % 3, (first + 2) % 3]
    assert state.took[first] == 5 and not state.stacked[first]
    assert all(state.stacked[s] for s in range(3) if s != first)
    assert [pile(state, s) for s in range(3)] == [[6], [6], [6]]


def test_later_round_ties_start_left_of_the_previous_rounds_last_actor(pickup, state_with_dealer):
    state = state_with_dealer(3, 0)
    pickup.set_table(state, hands=[(2, 5), (2, 5), (9, 5)], pool=(1, 10, 10, 10, 10))
    pickup.play(state, p0=2, p1=2, p2=9)
    # Round 1: ties start left of the dealer (0): seat 1 then seat 0; seat 2's 9 acts last.
    assert state.acted == [1, 0, 2]
    assert state.last_actor == 2 and state.round == 1
    pickup.set_table(state, hands=[(5,), (5,), (5,)], pool=(5, 10, 10, 10, 10))
    pickup.play(state, p0=5, p1=5, p2=5)
    # Round 2: ties start left of seat 2 (the last actor of round 1): seat 0 first.
    assert state.acted == [0, 1, 2]
    assert state.took[0] == 4 and state.stacked[1] and state.stacked[2]


def test_most_recent_actor_updates_after_every_action(pickup):
    state = pickup.new_state(4)
    state.round, state.last_actor = 1, 0
    pickup.set_table(state, hands=[(9,), (5,), (1,), (5,)], pool=(5, 10, 10, 10, 10))
    pickup.play(state, p0=9, p1=5, p2=1, p3=5)
    # Seat 2's 1 acts first (stacks); the tie of 5s then starts left of seat 2, not of
    # seat 0: seat 3 takes the 5, seat 1 stacks its 5, and the 9 finds nothing and stacks.
    assert state.acted == [2, 3, 1, 0]
    assert state.stacked == [True, True, True, False]
    assert [pile(state, s) for s in range(4)] == [[9], [5], [1], [5]]


def test_lowest_card_acts_first_regardless_of_seat(pickup):
    state = pickup.new_state(3)
    state.round, state.last_actor = 1, 2
    pickup.set_table(state, hands=[(2,), (9,), (6,)], pool=(2, 6, 9, 10, 10))
    pickup.play(state, p0=2, p1=9, p2=6)
    assert state.acted == [0, 2, 1]
    assert (pile(state, 0), pile(state, 1), pile(state, 2)) == ([2], [9], [6])


# --- pickups, knockouts, stacking ---------------------------------------------------------


def test_pickup_choice_is_a_step_of_its_own_when_several_ranks_are_eligible(pickup):
    state = pickup.new_state(3)
    state.round, state.last_actor = 1, 2
    pickup.set_table(
        state,
        hands=[(8, 1), (2, 1), (10, 1)],
        pool=(3, 6, 6, 9, 10),
        piles=[(6, 4), (6, 6), (6, 3)],
    )
    pickup.play(state, p0=8, p1=2, p2=10)
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
    assert state.leftover == pickup.cards(9, 10).tolist()
    assert state.to_act() == (0, 1, 2) and state.round == 2


def test_single_eligible_rank_is_picked_up_without_asking_even_if_poor(pickup):
    state = pickup.new_state(2)
    state.round, state.last_actor = 1, 1
    pickup.set_table(state, hands=[(10, 1), (1, 1)], pool=(1, 10, 10, 10, 10))
    # Seat 1's 1 takes the 1; seat 0's 10 then must take a 10 (its only eligible rank).
    pickup.play(state, p0=10, p1=1)
    assert pile(state, 1) == [1]
    assert pile(state, 0) == [10]
    assert sum(state.leftover) == 0  # the other 10s were knocked out of the pool
    assert not any(state.stacked)


def test_pickup_is_compulsory_with_an_eligible_card(pickup):
    state = pickup.new_state(2)
    state.round, state.last_actor = 1, 1
    pickup.set_table(state, hands=[(10, 2), (9, 2)], pool=(1, 10, 10, 10, 10))
    nines_unshown = state.unshown[8]
    pickup.play(state, p0=10, p1=9)
    # The 9 acts first and must pick up the 1 rather than stack itself; the played 9 is
    # discarded. The 10 then takes a 10, knocking out the rest of the 10s.
    assert pile(state, 1) == [1]
    assert pile(state, 0) == [10]
    # The discarded 9 was seen (the next round's fresh pool may show more 9s).
    assert state.unshown[8] + state.pool[8] == nines_unshown - 1


def test_stacking_with_no_eligible_card_knocks_nothing_out(pickup):
    state = pickup.new_state(3)
    state.round, state.last_actor = 1, 0
    pickup.set_table(
        state,
        hands=[(4, 1), (9, 1), (9, 1)],
        pool=(8, 10, 10, 10, 10),
        piles=[(), (4,), (4, 4)],
    )
    pickup.play(state, p0=4, p1=9, p2=9)
    # The 4 finds nothing <= 4 and stacks; the others' 4s stay. Seat 1's 9 takes the 8;
    # seat 2's 9 then finds nothing <= 9 and stacks.
    assert state.acted == [0, 1, 2]
    assert state.stacked == [True, False, True]
    assert pile(state, 0) == [4]
    assert pile(state, 1) == [4, 8]
    assert pile(state, 2) == [4, 4, 9]


def test_stacking_with_an_empty_pool(pickup):
    state = pickup.new_state(3)
    state.round, state.last_actor = 1, 2
    pickup.set_table(state, hands=[(2, 1), (2, 1), (3, 1)], pool=(2, 2, 2, 2, 2))
    pickup.play(state, p0=2, p1=2, p2=3)
    # Seat 0 takes a 2 and knocks out the other four: the pool is empty for the rest.
    assert state.acted == [0, 1, 2]
    assert pile(state, 0) == [2]
    assert state.stacked == [False, True, True]
    assert pile(state, 1) == [2] and pile(state, 2) == [3]
    assert sum(state.leftover) == 0


def test_stacked_card_knocked_out_by_a_later_pickup_of_its_rank(pickup):
    state = pickup.new_state(2)
    state.round, state.last_actor = 1, 1
    pickup.set_table(state, hands=[(3, 7), (5, 7)], pool=(6, 8, 9, 10, 10))
    pickup.play(state, p0=3, p1=5)
    assert all(state.stacked)
    assert pile(state, 0) == [3] and pile(state, 1) == [5]
    pickup.set_table(state, hands=[(7,), (7,)], pool=(5, 9, 10, 10, 10), piles=[(3,), (5,)])
    pickup.play(state, p0=7, p1=7)
    # Seat 0 (left of last actor seat 1) takes the only eligible card, the 5: seat 1's
    # stacked 5 is knocked out; seat 1 then stacks its 7.
    assert state.acted == [0, 1]
    assert pile(state, 0) == [3, 5]
    assert pile(state, 1) == [7]


# --- scores and the end -------------------------------------------------------------------


def test_scores_are_face_values_and_single_hand_ends_when_hands_are_empty(pickup):
    state = pickup.new_state(2)
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 0
    pickup.set_table(state, hands=[(10,), (6,)], pool=(3, 9, 9, 10, 10), piles=[(4, 4), (7,)])
    pickup.play(state, p0=10, p1=6)
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


def test_longer_game_repeats_hands_dealer_passing_left_until_target(pickup):
    state = pickup.new_state(3, seed=4, target_score=100)
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


def test_longer_game_ends_at_the_end_of_the_hand_reaching_the_target(pickup):
    state = pickup.new_state(2, target_score=30)
    state.banked[:] = [25, 10]
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 1
    pickup.set_table(state, hands=[(5,), (1,)], pool=(5, 8, 8, 9, 9), piles=[(), ()])
    pickup.play(state, p0=5, p1=1)
    assert state.is_terminal()
    assert state.scores().tolist() == [30.0, 11.0]
    # Below the target: another hand is dealt, the dealer passing left.
    state = pickup.new_state(2, target_score=31)
    dealer = state.dealer
    state.banked[:] = [25, 10]
    state.round = HAND_SIZE[2] - 1
    state.last_actor = 1
    pickup.set_table(state, hands=[(5,), (1,)], pool=(5, 8, 8, 9, 9), piles=[(), ()])
    pickup.play(state, p0=5, p1=1)
    assert not state.is_terminal()
    assert state.hand_number == 1 and state.dealer == (dealer + 1) % 2
    assert state.banked == [30, 11]


# --- options and determinism --------------------------------------------------------------


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


# --- dealing and game length --------------------------------------------------------------


def test_deal_gives_each_seat_its_slice_of_the_shuffled_deck(pickup):
    # The deal, replayed by hand from the same seed: the dealer is drawn, then the deck
    # shuffled; seat p gets cards p*H .. (p+1)*H - 1 and the pool is dealt from the end.
    rng = np.random.default_rng(11)
    dealer = int(rng.integers(4))
    deck = np.repeat(np.arange(NUM_RANKS), DECK_COUNTS)
    rng.shuffle(deck)
    state = pickup.new_state(4, seed=11)
    assert state.dealer == dealer
    for seat in range(4):
        assert state.hands[seat] == counts(deck[seat * 6 : seat * 6 + 6], 10).tolist()
    assert state.stock == deck[24:50].tolist()
    assert state.pool == counts(deck[50:], NUM_RANKS).tolist()
    assert state.unshown == (DECK_COUNTS - counts(deck[50:], NUM_RANKS)).tolist()


def test_at_most_four_pickup_choices_in_a_round(pickup):
    # Five 10s against a pool of five ranks: each pickup removes a rank, so four players
    # choose and the fifth gets the last rank without a choice.
    state = pickup.new_state(5)
    state.round, state.last_actor = 1, 0
    pickup.set_table(state, hands=[(10, 1)] * 5, pool=(1, 2, 3, 4, 5))
    pickup.play(state, p0=10, p1=10, p2=10, p3=10, p4=10)
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
def test_games_stay_within_max_decisions(pickup, options):
    game = PickupGame.from_options(**options)
    for seed in range(5):
        decisions = sum(len(s.to_act()) for s in pickup.random_game(game, seed))
        assert decisions <= game.max_decisions
