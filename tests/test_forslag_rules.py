"""Förslag's rules (RULES.md, section "Förslag"): options, setup, turn order, scoring,
determinism and game length."""

from __future__ import annotations

import numpy as np
import pytest

import envs.forslag
from envs.core.game import IllegalActionError
from envs.forslag import SPEC
from envs.forslag.rules import (
    DRAFT,
    NUM_ACTIONS,
    PLAY,
    ForslagGame,
    ForslagState,
    card_name,
    card_type,
    largest_set,
    score_boards,
)

MODES = ("in_turn", "simultaneous")
CONFIGS = [(n, mode) for n in (3, 4, 5, 6) for mode in MODES]


@pytest.fixture
def run_round(forslag):
    def run_round(
        state: ForslagState, pool: list[str], drafts: dict[int, str], plays: dict[int, str]
    ) -> None:
        """Replace the pool, then play one round with the given drafts and board cards."""
        forslag.set_pool(state, pool)
        r = state.round
        while state.round == r and not state.is_terminal():
            choosers = state.to_act()
            if state.phase == state.DRAFTING:
                state.apply({p: DRAFT + forslag.card(drafts[p]) for p in choosers})
            else:
                state.apply({p: PLAY + forslag.card(plays[p]) for p in choosers})

    return run_round


def empty_boards(n: int) -> np.ndarray:
    return np.full((n, n), -1, dtype=np.int64)


# --- options ------------------------------------------------------------------------------


def test_defaults_and_bad_options():
    game = ForslagGame.from_options()
    assert game.num_players == 4 and game.config.board_play == "in_turn"
    assert game.num_actions == NUM_ACTIONS == 50
    for bad in (2, 7, 3.0, "4", True):
        with pytest.raises(ValueError, match="num_players.*allowed values: 3, 4, 5, 6"):
            ForslagGame.from_options(num_players=bad)
    for bad in ("together", None, 1):
        with pytest.raises(ValueError, match="board_play.*'in_turn', 'simultaneous'"):
            ForslagGame.from_options(board_play=bad)
    with pytest.raises(ValueError, match="unknown option.*'rounds'.*allowed options"):
        ForslagGame.from_options(rounds=3)


def test_spec_covers_every_player_count_and_mode():
    configs = {(c["num_players"], c["board_play"]) for c in SPEC.configurations}
    assert configs == set(CONFIGS)
    assert SPEC.aec_id == "hiddenhand/forslag-v0"
    assert SPEC.gym_id == "hiddenhand/Forslag-v0"


def test_action_names(forslag):
    game = forslag.make_game()
    assert game.action_name(0) == "draft red circle"
    assert game.action_name(PLAY + 24) == "play purple heart"
    assert card_name(card_type("blue", "star")) == "blue star"


# --- setup --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_setup_sizes(forslag, n):
    state = forslag.new_state(n, seed=n)
    assert (state.hands.sum(axis=1) == 2).all()
    assert state.known.sum() == 0
    assert state.pool.sum() == n + 1
    assert state.round_cards[0] == state.game_card and (state.round_cards[1:] == -1).all()
    assert len(state.deck) == 50 - 2 * n - 1 - (n + 1)
    assert (state.boards == -1).all() and state.round == 0
    # The deck is 5 colours x 5 shapes x 2 copies: every card is somewhere.
    everything = state.hands.sum(axis=0) + state.pool + forslag.type_counts(state.deck)
    everything[state.game_card] += 1
    assert (everything == 2).all()
    assert state.game.num_rounds == n


def test_start_player_is_drawn_from_the_seed(forslag):
    starts = {forslag.new_state(4, seed=seed).start_player for seed in range(40)}
    assert starts == {0, 1, 2, 3}
    assert forslag.new_state(4, seed=7).start_player == forslag.new_state(4, seed=7).start_player


# --- turn order ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 5])
def test_in_turn_order_and_start_player_passes_left(forslag, n):
    state = forslag.new_state(n, "in_turn", seed=1)
    rng = np.random.default_rng(1)
    first = state.start_player
    for r in range(n):
        start = (first + r) % n
        assert state.round == r and state.start_player == start
        for k in range(n):
            seat = (start + k) % n
            assert state.to_act() == (seat,)
            if state.phase == state.DRAFTING:
                assert len(np.flatnonzero(state.pool)) > 1
                assert (
                    state.legal_mask(seat)[:PLAY].any() and not state.legal_mask(seat)[PLAY:].any()
                )
                forslag.random_step(state, rng)
            # else: the pool held one card type and the draft was made for the seat.
            assert state.to_act() == (seat,) and state.phase == state.PLAYING
            assert state.hands[seat].sum() == 3
            assert state.legal_mask(seat)[PLAY:].any() and not state.legal_mask(seat)[:PLAY].any()
            assert not state.legal_mask((seat + 1) % n).any()
            forslag.random_step(state, rng)
            assert state.boards[seat, r] >= 0
    assert state.is_terminal() and (state.boards >= 0).all()
    assert (state.hands.sum(axis=1) == 2).all()


@pytest.mark.parametrize("n", [3, 4, 5])
def test_simultaneous_drafts_in_turn_then_all_play_together(forslag, n):
    state = forslag.new_state(n, "simultaneous", seed=2)
    rng = np.random.default_rng(2)
    first = state.start_player
    for r in range(n):
        start = (first + r) % n
        assert state.start_player == start
        for k in range(n):
            assert state.to_act() == ((start + k) % n,) and state.phase == state.DRAFTING
            forslag.random_step(state, rng)
        assert state.to_act() == tuple(range(n)) and state.phase == state.PLAYING
        assert (state.boards[:, r] == -1).all()
        assert all(state.legal_mask(p)[PLAY:].sum() >= 2 for p in range(n))
        forslag.random_step(state, rng)
        assert (state.boards[:, r] >= 0).all()
    assert state.is_terminal()


def test_simultaneous_play_needs_every_seat(forslag):
    state = forslag.new_state(3, "simultaneous", seed=3)
    rng = np.random.default_rng(3)
    while state.phase == state.DRAFTING:
        forslag.random_step(state, rng)
    partial = {p: state.legal_actions(p)[0] for p in (0, 1)}
    with pytest.raises(IllegalActionError, match="expected one action for each of players"):
        state.apply(partial)
    with pytest.raises(IllegalActionError, match="legal actions"):
        state.apply({p: DRAFT for p in range(3)} | {0: DRAFT + 0})


def test_drafting_moves_a_pool_card_into_hand_publicly(forslag):
    state = forslag.scripted(
        3, "red circle", [["red star", "blue star"], ["green star"] * 2, ["red heart"] * 2]
    )
    forslag.set_pool(state, ["yellow square", "purple heart", "blue circle", "red square"])
    state.apply({0: DRAFT + forslag.card("purple heart")})
    assert state.pool[forslag.card("purple heart")] == 0 and state.pool.sum() == 3
    assert state.hands[0, forslag.card("purple heart")] == 1 and state.hands[0].sum() == 3
    game = state.game
    for observer in (1, 2):
        views = game.observation_layout.views(game.observation(state, observer))
        row = (0 - observer) % 3
        assert (
            views["hands"][row].tolist()
            == forslag.type_counts([forslag.card("purple heart")]).tolist()
        )
    # The drafted card is played: it leaves the known part of the hand.
    state.apply({0: PLAY + forslag.card("purple heart")})
    assert state.known[0].sum() == 0 and state.boards[0, 0] == forslag.card("purple heart")


def test_round_end_leftover_becomes_round_card_and_pool_refills(forslag, run_round):
    state = forslag.scripted(
        3, "red circle", [["red star", "blue star"], ["green star"] * 2, ["red heart"] * 2]
    )
    deck_before = len(state.deck)
    run_round(
        state,
        ["yellow square", "purple heart", "blue circle", "red square"],
        {0: "yellow square", 1: "purple heart", 2: "blue circle"},
        {0: "red star", 1: "green star", 2: "red heart"},
    )
    assert state.round == 1 and state.start_player == 1
    assert state.round_cards[1] == forslag.card("red square")
    assert state.pool.sum() == 4 and len(state.deck) == deck_before - 4
    assert state.to_act() == (1,) and state.phase == state.DRAFTING


def test_six_players_short_deck(forslag):
    state = forslag.new_state(6, "in_turn", seed=4)
    rng = np.random.default_rng(4)
    pools = []
    while not state.is_terminal():
        if state.turn == 0 and state.phase == state.DRAFTING and state.round == len(pools):
            pools.append(int(state.pool.sum()))
        forslag.random_step(state, rng)
    # 30 cards after setup: four refills of 7, then the last 2 for round 6.
    assert pools == [7, 7, 7, 7, 7, 2]
    assert state.deck == [] and (state.boards >= 0).all()
    # Round 6: the first two players drafted (hands back to 2), the other four only played.
    hand_sizes = sorted(state.hands.sum(axis=1).tolist())
    assert hand_sizes == [1, 1, 1, 1, 2, 2]


def test_six_players_last_round_only_two_draft(forslag):
    state = forslag.new_state(6, "simultaneous", seed=5)
    rng = np.random.default_rng(5)
    while state.round < 5:
        forslag.random_step(state, rng)
    start = state.start_player
    assert state.pool.sum() == 2
    seen = []
    while state.phase == state.DRAFTING:
        seen.append(state.to_act())
        forslag.random_step(state, rng)
    # The second drafter may get a forced draft (two identical cards left) made for them.
    assert seen[0] == (start,) and len(seen) <= 2 and state.pool.sum() == 0
    assert state.to_act() == tuple(range(6))


def test_short_deck_without_leftover_leaves_no_round_card(forslag, run_round):
    state = forslag.scripted(
        4,
        "red circle",
        [["red star", "blue star"], ["green star"] * 2, ["red heart"] * 2, ["blue heart"] * 2],
    )
    run_round(
        state,
        ["yellow square", "purple heart", "blue circle", "red square", "green square"],
        {0: "yellow square", 1: "purple heart", 2: "blue circle", 3: "red square"},
        {0: "red star", 1: "green star", 2: "red heart", 3: "blue heart"},
    )
    assert state.round_cards[1] == forslag.card("green square")
    # Round 2 with a pool of only 3: the fourth seat in order only plays, no card is left.
    state.deck = [
        forslag.card(c)
        for c in ("yellow star", "blue star", "red star", "green heart", "purple star")
    ]
    run_round(
        state,
        ["yellow heart", "purple square", "yellow triangle"],
        {1: "yellow heart", 2: "purple square", 3: "yellow triangle"},
        {1: "green star", 2: "red heart", 3: "blue heart", 0: "blue star"},
    )
    assert state.round == 2 and state.round_cards[2] == -1
    assert state.pool.sum() == 5 and state.deck == []
    # Round 3 has no Round Card: seat 2 (board red heart, red heart; hand blue circle, purple
    # square) plays blue circle and scores only its Game Card match.
    before = state.scores().copy()
    state.apply({2: DRAFT + forslag.card("blue star")})
    state.apply({2: PLAY + forslag.card("blue circle")})
    assert state.boards[1, 2] == -1  # the right-hand neighbour has not played yet
    assert state.scores()[2] - before[2] == 1
    assert score_boards(state.boards, state.game_card, state.round_cards)[2] == state.scores()[2]


def test_forced_draft_is_made_and_empty_pool_skipped(forslag):
    state = forslag.scripted(
        3, "red circle", [["red star", "blue star"], ["green star"] * 2, ["red heart"] * 2]
    )
    forslag.set_pool(state, ["yellow square", "purple heart", "purple heart"])
    state.apply({0: DRAFT + forslag.card("yellow square")})
    state.apply({0: PLAY + forslag.card("red star")})
    # Seat 1 drafts from a pool of one type: done for them; seat 1 plays next.
    assert state.to_act() == (1,) and state.phase == state.PLAYING
    assert state.hands[1, forslag.card("purple heart")] == 1 and state.pool.sum() == 1
    state.apply({1: PLAY + forslag.card("green star")})
    assert state.hands[2, forslag.card("purple heart")] == 1 and state.pool.sum() == 0
    # A play from two identical cards is still asked (it would reveal the hidden pair).
    state.hands[2] = forslag.type_counts([forslag.card("red heart")] * 2)
    state.rebuild()
    assert state.to_act() == (2,) and state.legal_actions(2) == [PLAY + forslag.card("red heart")]


# --- scoring ------------------------------------------------------------------------------


def test_rulebook_worked_example_scores_14(forslag, run_round):
    # Player 1's board: red square, green triangle, yellow square. Game Card red circle;
    # Round Cards (leftovers) blue triangle then yellow star; right neighbour is seat 0.
    state = forslag.scripted(
        3,
        "red circle",
        [
            ["blue star", "purple circle"],
            ["red square", "green triangle"],
            ["green heart", "purple star"],
        ],
    )
    run_round(
        state,
        ["purple square", "yellow square", "blue heart", "blue triangle"],
        {0: "purple square", 1: "yellow square", 2: "blue heart"},
        {0: "blue star", 1: "red square", 2: "green heart"},
    )
    run_round(
        state,
        ["purple heart", "yellow circle", "green circle", "yellow star"],
        {1: "purple heart", 2: "yellow circle", 0: "green circle"},
        {1: "green triangle", 2: "purple star", 0: "purple circle"},
    )
    run_round(
        state,
        ["red heart", "red triangle", "blue square", "green square"],
        {2: "red heart", 0: "red triangle", 1: "blue square"},
        {2: "blue heart", 0: "purple square", 1: "yellow square"},
    )
    assert state.is_terminal()
    assert [card_name(c) for c in state.round_cards] == [
        "red circle",
        "blue triangle",
        "yellow star",
    ]
    # Card 1: 1 + 2; card 2: 2; card 3: 2 + 1 (purple square); largest set: 2 squares, 6.
    assert state.scores()[1] == 14
    assert score_boards(state.boards, state.game_card, state.round_cards)[1] == 14
    assert state.hands[1].sum() == 2  # cards left in hand score nothing


@pytest.fixture
def boards_with(forslag):
    def boards_with(n: int, cards: dict[tuple[int, int], str]) -> np.ndarray:
        boards = empty_boards(n)
        for (seat, position), name in cards.items():
            boards[seat, position] = forslag.card(name)
        return boards

    return boards_with


def test_game_card_line_and_its_doubling(forslag, boards_with):
    round_cards = np.array([forslag.card("red circle"), forslag.card("purple heart"), -1])
    gc = forslag.card("red circle")
    # Position 1 (round 2): the Round Card is purple heart, matching neither card below.
    one = score_boards(boards_with(3, {(0, 1): "red star"}), gc, round_cards)
    both = score_boards(boards_with(3, {(0, 1): "red circle"}), gc, round_cards)
    none = score_boards(boards_with(3, {(0, 1): "blue star"}), gc, round_cards)
    assert one[0] - 3 == 1 and both[0] - 3 == 2 and none[0] - 3 == 0


def test_round_card_line_and_its_doubling(forslag, boards_with):
    gc = forslag.card("red circle")
    round_cards = np.array([gc, forslag.card("blue star"), forslag.card("green square")])
    assert score_boards(boards_with(3, {(0, 1): "yellow star"}), gc, round_cards)[0] == 2 + 3
    assert score_boards(boards_with(3, {(0, 1): "blue star"}), gc, round_cards)[0] == 4 + 3
    # The Round Card of the card's own round: blue star at position 2 matches nothing.
    assert score_boards(boards_with(3, {(0, 2): "blue star"}), gc, round_cards)[0] == 0 + 3


def test_round_one_game_card_is_also_the_round_card(forslag, boards_with):
    gc = forslag.card("red circle")
    round_cards = np.array([gc, -1, -1])
    assert score_boards(boards_with(3, {(0, 0): "red star"}), gc, round_cards)[0] == 1 + 2 + 3
    assert score_boards(boards_with(3, {(0, 0): "red circle"}), gc, round_cards)[0] == 2 + 4 + 3
    state = forslag.scripted(
        3, "red circle", [["red circle", "blue star"], ["green star"] * 2, ["green heart"] * 2]
    )
    forslag.set_pool(state, ["yellow square", "purple heart", "blue heart"])
    state.apply({0: DRAFT + forslag.card("yellow square")})
    state.apply({0: PLAY + forslag.card("red circle")})
    assert state.scores()[0] == 2 + 4 + 3


def test_neighbour_line_is_seat_minus_one_at_the_same_position(forslag, boards_with):
    gc = forslag.card("red circle")
    round_cards = np.array([gc, forslag.card("purple heart"), forslag.card("purple heart")])
    # Seat 1's right-hand neighbour is seat 0; seat 2's card is seat 1's left neighbour.
    right = score_boards(
        boards_with(3, {(1, 1): "yellow star", (0, 1): "green star"}), gc, round_cards
    )
    assert right[1] == 1 + 3 and right[0] == 3
    double = score_boards(
        boards_with(3, {(1, 1): "yellow star", (0, 1): "yellow star"}), gc, round_cards
    )
    assert double[1] == 2 + 3
    left = score_boards(
        boards_with(3, {(1, 1): "yellow star", (2, 1): "green star"}), gc, round_cards
    )
    assert left[1] == 3 and left[2] == 1 + 3
    other_position = score_boards(
        boards_with(3, {(1, 1): "yellow star", (0, 2): "yellow star"}), gc, round_cards
    )
    assert other_position[1] == 3
    # Seat 0's right-hand neighbour wraps round to the last seat.
    wrap = score_boards(
        boards_with(4, {(0, 1): "yellow star", (3, 1): "blue star"}), gc, np.array([gc, -1, -1, -1])
    )
    assert wrap[0] == 1 + 3 and wrap[3] == 3


def test_neighbour_points_arrive_whenever_the_neighbour_plays(forslag):
    state = forslag.scripted(
        3,
        "red circle",
        [["green heart", "blue star"], ["yellow star", "blue star"], ["purple heart"] * 2],
    )
    forslag.set_pool(state, ["yellow square", "purple square", "blue circle", "red square"])
    state.apply({0: DRAFT + forslag.card("yellow square")})
    state.apply({0: PLAY + forslag.card("blue star")})
    before = state.scores()[1]
    state.apply({1: DRAFT + forslag.card("purple square")})
    state.apply({1: PLAY + forslag.card("yellow star")})  # matches seat 0's blue star by shape
    assert state.scores()[1] - before == 1 + 3
    assert state.scores()[0] == 3
    state.apply({2: DRAFT + forslag.card("blue circle")})
    # Seat 2's right neighbour is seat 1: no match.
    state.apply({2: PLAY + forslag.card("blue circle")})
    # Seat 0's right neighbour (seat 2) played after seat 0: seat 0 gains its point then.
    assert state.scores().tolist() == [1 + 3, 1 + 3, 1 + 2 + 3]  # seat 2: Game+Round Card, set


def test_largest_set_is_the_best_single_attribute(forslag):
    board = [forslag.card(c) for c in ("red circle", "blue circle", "green circle", "red star")]
    assert largest_set(board) == 3  # three circles beat two reds; colours and shapes never add
    three_reds = [forslag.card(c) for c in ("red circle", "red star", "red heart", "blue star")]
    assert largest_set(three_reds) == 3
    assert largest_set([forslag.card(c) for c in ("red circle", "blue star")]) == 1
    assert largest_set([]) == 0
    gc = forslag.card("purple heart")
    boards = empty_boards(4)
    boards[0] = board
    assert score_boards(boards, gc, np.array([gc, -1, -1, -1]))[0] == 3 * 3


@pytest.mark.parametrize("n, mode", CONFIGS)
def test_running_score_is_the_full_scoring_of_the_boards(forslag, n, mode):
    for seed in range(4):
        state = forslag.new_state(n, mode, seed=seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            forslag.random_step(state, rng)
            expected = score_boards(state.boards, state.game_card, state.round_cards)
            assert state.scores().tolist() == expected.tolist()
        assert (state.boards >= 0).all()


# --- determinism and game length ----------------------------------------------------------


def test_same_seed_same_game(forslag):
    def transcript(seed: int) -> list[str]:
        state = forslag.new_state(5, "simultaneous", seed=seed)
        rng = np.random.default_rng(seed)
        frames = [str(state)]
        while not state.is_terminal():
            forslag.random_step(state, rng)
            frames.append(str(state))
        return frames

    assert transcript(3) == transcript(3)
    assert transcript(3) != transcript(4)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_max_decisions_bounds_every_game(forslag, n):
    for mode in MODES:
        game = forslag.make_game(n, mode)
        assert game.max_decisions == 2 * n * n
        for seed in range(5):
            state = game.new_initial_state(np.random.default_rng(seed))
            rng = np.random.default_rng(seed)
            decisions = 0
            while not state.is_terminal():
                decisions += len(state.to_act())
                forslag.random_step(state, rng)
            # Every round: at most one draft and one board card per seat.
            assert n * n <= decisions <= game.max_decisions
    assert "2N²" in envs.forslag.__doc__
