"""Pickup's invariants, determinisation and copies, and the bookkeeping the state keeps
against a recomputation."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from envs.core.game import counts
from envs.pickup import SPEC
from envs.pickup.observation import build_table
from envs.pickup.rules import NUM_RANKS, PickupGame, PickupState

# --- invariants ---------------------------------------------------------------------------


@pytest.fixture
def position(pickup):
    def position(num_players: int = 3, *, choosing: bool = False, **options) -> PickupState:
        """A real mid-hand position of a seeded random game: in the play phase of round 3 or
        later, or (``choosing``) waiting for a pickup choice with two seats still to act."""
        game = PickupGame.from_options(num_players=num_players, **options)
        for seed in range(200):
            for state in pickup.random_game(game, seed):
                if choosing and state.chooser >= 0 and len(state.acted) <= num_players - 2:
                    return state
                if not choosing and len(state.to_act()) == num_players and state.round >= 2:
                    return state
        raise AssertionError("no such position")

    return position


@pytest.mark.parametrize("options", SPEC.configurations)
def test_invariants_hold_over_random_play(pickup, options):
    game = PickupGame.from_options(**options)
    for seed in range(3):
        for state in pickup.random_game(game, seed):
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
def test_check_invariants_catches_each_break(position, name):
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


def test_check_invariants_catches_a_bad_pickup_choice(position):
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


def test_check_invariants_catches_longer_game_bookkeeping(position):
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


# --- determinisation and copies -----------------------------------------------------------


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
def test_resample_redraws_the_other_hands_and_the_stock_only(position, choosing):
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


def test_resample_at_the_end_of_a_hand_only_reshuffles_the_stock(pickup):
    game = PickupGame.from_options(num_players=2)
    *_, final = pickup.random_game(game, 3)
    assert final.is_terminal() and np.sum(final.hands) == 0
    sample = final.resample(0, np.random.default_rng(0))
    assert sorted(sample.stock) == sorted(final.stock)
    assert sample.scores().tolist() == final.scores().tolist()
    sample.check_invariants()


def test_resampled_games_continue_legally(position):
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


def fields(state: PickupState) -> dict:
    """Every rules field of ``state`` (its RNG as its bit generator's state)."""
    kept = {k: v for k, v in pickle.loads(pickle.dumps(state)).__dict__.items() if k != "game"}
    kept["rng"] = state.rng.bit_generator.state
    kept["table"] = state.table.tobytes()
    return {k: v for k, v in kept.items() if not k.startswith("_table")}


def test_clone_is_independent_continues_identically_and_shares_the_game(position):
    state = position(3)
    before = fields(state)
    twin = state.clone()
    assert twin.game is state.game and fields(twin) == before
    twin.apply({p: int(twin.legal_actions(p)[0]) for p in twin.to_act()})
    assert twin.round != state.round or twin.acted != state.acted
    for _ in random_game_from(twin, 0):  # the twin plays to the end
        pass
    assert fields(state) == before  # nothing of the original moved
    state.check_invariants()
    # A clone and its original, given the same actions, stay equal (chance included).
    twin = state.clone()
    rng = np.random.default_rng(3)
    while state.to_act():
        joint = {p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()}
        state.apply(joint)
        twin.apply(joint)
        assert fields(twin) == fields(state)


# --- the bookkeeping against a recomputation ----------------------------------------------


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
def test_kept_table_and_totals_match_a_recomputation_over_random_play(pickup, position, options):
    game = PickupGame.from_options(**options)
    for seed in range(8):
        for state in pickup.random_game(game, seed):
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
