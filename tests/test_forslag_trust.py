"""Förslag's invariants, determinisation and copies."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from envs.forslag.rules import DRAFT, NUM_TYPES, PLAY, ForslagState

MODES = ("in_turn", "simultaneous")
COPIES_EACH = 2  # copies of each card type in the deck

# --- invariants ---------------------------------------------------------------------------


@pytest.fixture
def mid_game(forslag):
    def mid_game(n: int = 4, mode: str = "in_turn", seed: int = 3, steps: int = 7) -> ForslagState:
        state = forslag.new_state(n, mode, seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            forslag.random_step(state, rng)
        state.check_invariants()
        return state

    return mid_game


def first_of(counts: np.ndarray) -> int:
    return int(np.flatnonzero(counts)[0])


def duplicate_a_hand_card(s: ForslagState) -> None:
    s.hands[0, first_of(s.hands[0])] += 1


def deal_a_deck_card_into_a_hand(s: ForslagState) -> None:
    s.hands[1, s.deck.pop()] += 1  # every card still in one place, but one too many in hand


def claim_a_drafted_card_not_in_hand(s: ForslagState) -> None:
    s.known[0, first_of(s.hands[0] == 0)] += 1


def forget_a_revealed_card(s: ForslagState) -> None:
    s.unrevealed[first_of(s.pool)] += 1


def a_future_round_card(s: ForslagState) -> None:
    card = first_of(s.pool)
    s.pool[card] -= 1
    s.round_cards[s.round + 1] = card


def wrong_first_round_card(s: ForslagState) -> None:
    s.round_cards[0] = (s.game_card + 1) % NUM_TYPES


def turn_a_deck_card_face_up(s: ForslagState) -> None:
    card = s.deck.pop()
    s.pool[card] += 1
    s.unrevealed[card] -= 1


def draft_without_a_turn(s: ForslagState) -> None:
    card = first_of(s.pool)
    s.pool[card] -= 1
    s.hands[0, card] += 1
    s.known[0, card] += 1


def take_back_a_board_card(s: ForslagState) -> None:
    seat = int(np.flatnonzero(s.boards[:, 0] >= 0)[0])
    card = int(s.boards[seat, 0])
    s.boards[seat, 0] = -1
    s.hands[seat, card] += 1
    s.unrevealed[card] += 1


def add_a_point(s: ForslagState) -> None:
    s.totals[0] += 1


def add_a_match_point(s: ForslagState) -> None:
    s.match_points[0] += 1


def blank_a_board_one_hot(s: ForslagState) -> None:
    s.board_features[s.boards >= 0] = 0


def blank_the_game_card_one_hot(s: ForslagState) -> None:
    s.round_card_features[0] = 0


def miscount_an_unseen_card(s: ForslagState) -> None:
    s.unseen[1, first_of(s.unseen[1])] -= 1


def mark_another_round(s: ForslagState) -> None:
    s.status[: s.game.num_players] = np.roll(s.status[: s.game.num_players], 1)


def cache_the_wrong_chooser(s: ForslagState) -> None:
    s.choosers = ((s.choosers[0] + 1) % s.game.num_players,)


def miscount_an_attribute(s: ForslagState) -> None:
    s.attribute_counts[0][0] += 1


def overstate_a_largest_set(s: ForslagState) -> None:
    s.largest[0] += 1


def forget_a_legal_draft(s: ForslagState) -> None:
    s.masks[-1, DRAFT + first_of(s.pool)] = False


def allow_playing_a_card_not_in_hand(s: ForslagState) -> None:
    s.masks[0, PLAY + first_of(s.hands[0] == 0)] = True


def mark_a_draft_in_a_hand_row(s: ForslagState) -> None:
    s.masks[0, DRAFT + first_of(s.pool)] = True  # hand rows mark play actions only


def miscount_the_pool(s: ForslagState) -> None:
    s.pool_size += 1


def miscount_the_pool_types(s: ForslagState) -> None:
    s.pool_kinds -= 1


def negative_pool(s: ForslagState) -> None:
    s.pool[first_of(s.pool == 0)] = -1


def turn_out_of_range(s: ForslagState) -> None:
    s.turn = s.game.num_players + 1


@pytest.mark.parametrize(
    "breaker, message",
    [
        (duplicate_a_hand_card, "cards per type"),
        (deal_a_deck_card_into_a_hand, "deck of"),
        (claim_a_drafted_card_not_in_hand, "drafted card is not in its hand"),
        (forget_a_revealed_card, "unrevealed copies"),
        (a_future_round_card, "Round Card from the future"),
        (wrong_first_round_card, "not the Game Card"),
        (turn_a_deck_card_face_up, "deck of"),
        (draft_without_a_turn, "pool of"),
        (take_back_a_board_card, "board cards, not"),
        (add_a_point, "running scores"),
        (add_a_match_point, "running match_points"),
        (blank_a_board_one_hot, "running boards"),
        (blank_the_game_card_one_hot, "running round_cards"),
        (miscount_an_unseen_card, "running unseen"),
        (mark_another_round, "running round"),
        (cache_the_wrong_chooser, "running choosers"),
        (miscount_an_attribute, "running attribute_counts"),
        (overstate_a_largest_set, "running largest"),
        (forget_a_legal_draft, "running masks"),
        (allow_playing_a_card_not_in_hand, "running masks"),
        (mark_a_draft_in_a_hand_row, "running masks"),
        (miscount_the_pool, "running pool_size"),
        (miscount_the_pool_types, "running pool_kinds"),
        (negative_pool, "negative count in pool"),
        (turn_out_of_range, "turn"),
    ],
)
def test_check_invariants_catches_each_broken_invariant(mid_game, breaker, message):
    state = mid_game()
    broken = state.clone()
    breaker(broken)
    with pytest.raises(AssertionError, match=message):
        broken.check_invariants()
    state.check_invariants()  # the clone was broken, not the original


def test_check_invariants_catches_a_wrong_status_table(forslag):
    # The status one-hots and choosers come from a table made once per game: check_invariants
    # recomputes them, so a wrong entry (here: round 1's first two turns swapped) shows.
    game = forslag.make_game(4)
    positions = [
        [[list(turns) for turns in starts] for starts in rounds] for rounds in game.positions
    ]
    for turns in positions[ForslagState.DRAFTING][0]:
        turns[0], turns[1] = turns[1], turns[0]
    game.positions = positions
    state = game.new_initial_state(np.random.default_rng(0))
    assert state.phase == state.DRAFTING and state.turn == 0
    with pytest.raises(AssertionError, match="running to_act"):
        state.check_invariants()


def test_legal_masks_are_fresh_copies(mid_game):
    for mode in MODES:
        state = mid_game(4, mode)
        for player in range(4):
            mask = state.legal_mask(player)
            expected = mask.copy()
            mask[:] = ~mask  # the caller may keep and change it
            assert np.array_equal(state.legal_mask(player), expected)
            assert state.legal_mask(player) is not state.legal_mask(player)
        state.check_invariants()


def test_new_games_share_no_array(forslag):
    game = forslag.make_game(4)
    a, b = (game.new_initial_state(np.random.default_rng(seed)) for seed in (0, 1))
    for name, value in vars(a).items():
        if isinstance(value, np.ndarray):
            assert not np.shares_memory(value, getattr(b, name)), name
            game_arrays = [v for v in vars(game).values() if isinstance(v, np.ndarray)]
            assert not any(np.shares_memory(value, v) for v in game_arrays), name


def test_hand_size_invariant_counts_drafts_and_plays(mid_game):
    # Pass a dealt card from one hand to another: every card is still in one place and
    # nothing public changed, but the hand sizes no longer follow from drafts and plays.
    state = mid_game(steps=4)
    giver = int(np.flatnonzero((state.hands - state.known).sum(1))[0])
    dealt = first_of(state.hands[giver] - state.known[giver])
    state.hands[giver, dealt] -= 1
    state.hands[(giver + 1) % 4, dealt] += 1
    with pytest.raises(AssertionError, match=r"holds \d cards after \d drafts and \d plays"):
        state.check_invariants()


# --- determinisation and copies -----------------------------------------------------------


@pytest.fixture
def dealt_state(forslag):
    def dealt_state(
        n: int, game_card: str, hands: list[list[str]], pool: list[str]
    ) -> ForslagState:
        """A consistent fresh deal (seat 0 starts): the deck is every other card, shuffled."""
        state = forslag.scripted(n, game_card, hands)
        state.pool[:] = forslag.type_counts([forslag.card(c) for c in pool])
        public = state.pool.copy()
        public[state.game_card] += 1
        rest = (COPIES_EACH - public - state.hands.sum(0)).astype(np.int64)
        state.deck = (
            np.random.default_rng(0).permutation(np.repeat(np.arange(NUM_TYPES), rest)).tolist()
        )
        state.unrevealed[:] = COPIES_EACH - public
        state.rebuild()
        state.check_invariants()
        return state

    return dealt_state


def test_resample_on_a_scripted_position(forslag, dealt_state, unseen_by):
    # Four players; seat 0 starts. After seat 0 and seat 1 have drafted and played, seat 2
    # drafts: everyone has seen seat 2's draft, not seat 2's or seat 3's dealt cards.
    state = dealt_state(
        4,
        "red circle",
        [
            ["red star", "blue star"],
            ["green star", "green heart"],
            ["yellow heart", "purple star"],
            ["blue circle", "blue square"],
        ],
        ["yellow square", "purple heart", "green circle", "red square", "red heart"],
    )
    state.apply({0: DRAFT + forslag.card("yellow square")})
    state.apply({0: PLAY + forslag.card("red star")})
    state.apply({1: DRAFT + forslag.card("purple heart")})
    state.apply({1: PLAY + forslag.card("green star")})
    state.apply({2: DRAFT + forslag.card("green circle")})
    game = state.game
    before = str(state), [game.observation(state, p).tobytes() for p in range(4)]

    rng = np.random.default_rng(0)
    seat3_hands, deck_tops, next_draws, seat3_views = set(), set(), set(), set()
    for _ in range(30):
        sample = state.resample(0, rng)
        sample.check_invariants()
        # Fixed: the observer's hand, every drafted card, the pool, boards, Match Board, sizes.
        assert sample.hands[0].tolist() == state.hands[0].tolist()
        assert sample.known.tolist() == state.known.tolist()
        assert sample.pool.tolist() == state.pool.tolist()
        assert sample.boards.tolist() == state.boards.tolist()
        assert sample.round_cards.tolist() == state.round_cards.tolist()
        assert sample.hands.sum(1).tolist() == state.hands.sum(1).tolist()
        assert len(sample.deck) == len(state.deck)
        assert sample.hands[1, forslag.card("purple heart")] >= 1  # drafted in view: still there
        assert sample.hands[2, forslag.card("green circle")] >= 1
        # Conserved: the multiset of cards seat 0 has not seen.
        assert unseen_by(sample, 0) == unseen_by(state, 0)
        assert game.observation(sample, 0).tobytes() == before[1][0]
        assert str(sample) == before[0]
        # Moved: the others' dealt cards and the deck order; the copy has its own RNG.
        seat3_hands.add(tuple(sample.hands[3].tolist()))
        seat3_views.add(game.observation(sample, 3).tobytes())
        deck_tops.add(tuple(sample.deck[-5:]))
        next_draws.add(int(sample.rng.integers(2**32)))
    assert len(seat3_hands) > 5 and len(seat3_views) > 5
    assert len(deck_tops) > 5 and len(next_draws) == 30
    # The real state is untouched.
    assert (str(state), [game.observation(state, p).tobytes() for p in range(4)]) == before
    # Seat 3's own determinisation keeps seat 3's dealt cards and moves seat 0's.
    seat0_hands = set()
    for _ in range(10):
        sample = state.resample(3, rng)
        assert sample.hands[3].tolist() == state.hands[3].tolist()
        seat0_hands.add(tuple(sample.hands[0].tolist()))
    assert len(seat0_hands) > 1


@pytest.fixture
def unseen_by(forslag):
    def unseen_by(state: ForslagState, player: int) -> list[int]:
        """Counts of the cards ``player`` has not seen: the deck and the others' dealt cards."""
        hidden = forslag.type_counts(state.deck)
        for seat in range(state.game.num_players):
            if seat != player:
                hidden = hidden + state.hands[seat] - state.known[seat]
        return hidden.tolist()

    return unseen_by


def test_clone_is_independent_and_continues_identically(forslag, mid_game):
    state = mid_game(5, "simultaneous", seed=8, steps=6)
    twin = state.clone()
    # No mutable field is shared (clone copies field by field, so a new field must be added).
    mutable = [name for name, value in vars(state).items() if isinstance(value, (list, np.ndarray))]
    assert set(ForslagState.ARRAYS) < set(mutable)
    for name in mutable:
        assert getattr(twin, name) is not getattr(state, name), name
    # The named views are of the copy's own buffer.
    arrays = [value for value in vars(twin).values() if isinstance(value, np.ndarray)]
    assert not any(np.shares_memory(a, state.buffer) for a in arrays)
    assert all(np.shares_memory(getattr(twin, name), twin.buffer) for name in ("hands", "pool"))
    for copied in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
        assert all(np.shares_memory(getattr(copied, v), copied.buffer) for v in state.VIEWS)
        assert not np.shares_memory(copied.buffer, state.buffer)
    rows = zip(twin.attribute_counts, state.attribute_counts, strict=True)
    assert all(a is not b for a, b in rows)
    assert twin.game is state.game and twin.rng is not state.rng
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    while not state.is_terminal():
        forslag.random_step(state, rng_a)
        forslag.random_step(twin, rng_b)
        assert str(twin) == str(state)
        assert twin.hands.tolist() == state.hands.tolist() and twin.deck == state.deck
    assert twin.rng.integers(2**32) == state.rng.integers(2**32)
