"""Förslag rules: pure, seeded, no RL imports. See the package docstring for the rules.

Speed: the game is stepped millions of times, so the state keeps its running scores and
the observation's board one-hots up to date as cards are played, both stored twice over so
that any seat's view of them is one slice, and per-card lookups use tuples of Python ints.
``check_invariants`` checks all of it against the boards, rescored from scratch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, counts, require_choice
from envs.forslag import observation

COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue", "purple")
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "heart")
#: A card type is ``colour * 5 + shape``; the deck holds two copies of each type.
NUM_TYPES = len(COLOURS) * len(SHAPES)
NUM_ATTRIBUTES = len(COLOURS) + len(SHAPES)
COPIES = 2
HAND_SIZE = 2
#: Actions: ``DRAFT + t`` drafts a pool card of type ``t``; ``PLAY + t`` plays a hand card.
DRAFT = 0
PLAY = NUM_TYPES
NUM_ACTIONS = 2 * NUM_TYPES
BOARD_PLAY_MODES = ("in_turn", "simultaneous")
PLAYER_COUNTS = (3, 4, 5, 6)
#: Points of each scoring line for a one-attribute match (doubled when both match).
GAME_CARD_POINTS = 1
ROUND_CARD_POINTS = 2
NEIGHBOUR_POINTS = 1
LARGEST_SET_POINTS = 3

COLOUR_OF = np.arange(NUM_TYPES) // len(SHAPES)
SHAPE_OF = np.arange(NUM_TYPES) % len(SHAPES)
#: ``MATCH[a, b]``: 2 if both attributes match, 1 if one does, 0 if none; index -1 (no card)
#: is the extra last row and column, which match nothing.
MATCH = np.zeros((NUM_TYPES + 1, NUM_TYPES + 1), dtype=np.int64)
MATCH[:NUM_TYPES, :NUM_TYPES] = (COLOUR_OF[:, None] == COLOUR_OF[None, :]).astype(np.int64) + (
    SHAPE_OF[:, None] == SHAPE_OF[None, :]
)
#: The same tables as Python ints, for the per-step bookkeeping.
MATCH_ROWS: tuple[tuple[int, ...], ...] = tuple(map(tuple, MATCH.tolist()))
#: The two attribute indices (colour, then 5 + shape) of each card type.
ATTRIBUTES_OF: tuple[tuple[int, int], ...] = tuple(
    (t // len(SHAPES), len(COLOURS) + t % len(SHAPES)) for t in range(NUM_TYPES)
)


def card_name(card: int) -> str:
    return f"{COLOURS[COLOUR_OF[card]]} {SHAPES[SHAPE_OF[card]]}"


def card_type(colour: str, shape: str) -> int:
    return COLOURS.index(colour) * len(SHAPES) + SHAPES.index(shape)


def largest_set(board: list[int] | np.ndarray) -> int:
    """How many cards share the board's most common single attribute (a colour or a shape)."""
    cards = [c for c in board if c >= 0]
    if not cards:
        return 0
    colours = np.bincount(COLOUR_OF[cards], minlength=len(COLOURS))
    shapes = np.bincount(SHAPE_OF[cards], minlength=len(SHAPES))
    return int(max(colours.max(), shapes.max()))


def score_boards(boards: np.ndarray, game_card: int, round_cards: np.ndarray) -> np.ndarray:
    """Score every board from scratch (``-1`` = empty position or no Round Card).

    Each card at position ``r`` scores 1 for matching the Game Card, 2 for the Round Card of
    round ``r`` and 1 for the right-hand neighbour's (seat ``i - 1``) card at position ``r``,
    each doubled when both attributes match; then 3 per card in the largest set.
    """
    n, positions = boards.shape
    scores = np.zeros(n, dtype=np.int64)
    for seat in range(n):
        right = (seat - 1) % n
        for r in range(positions):
            card = boards[seat, r]
            if card < 0:
                continue
            scores[seat] += GAME_CARD_POINTS * MATCH[card, game_card]
            scores[seat] += ROUND_CARD_POINTS * MATCH[card, round_cards[r]]
            scores[seat] += NEIGHBOUR_POINTS * MATCH[card, boards[right, r]]
        scores[seat] += LARGEST_SET_POINTS * largest_set(boards[seat])
    return scores


@dataclass(frozen=True)
class ForslagConfig(Config):
    """Options: ``num_players`` 3-6; ``board_play`` ``"in_turn"`` or ``"simultaneous"``."""

    num_players: int = 4
    board_play: str = "in_turn"

    def validate(self) -> None:
        # require_choice alone would accept 3.0 (== 3); a player count must be an int.
        if isinstance(self.num_players, bool) or not isinstance(
            self.num_players, (int, np.integer)
        ):
            raise ValueError(
                f"num_players={self.num_players!r} is not allowed; allowed values: "
                + ", ".join(map(str, PLAYER_COUNTS))
            )
        require_choice("num_players", self.num_players, PLAYER_COUNTS)
        require_choice("board_play", self.board_play, BOARD_PLAY_MODES)


class ForslagState(State):
    game: ForslagGame

    DRAFTING = 0
    PLAYING = 1

    def __init__(self, game: ForslagGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        deck = np.repeat(np.arange(NUM_TYPES), COPIES)
        rng.shuffle(deck)
        #: The face-down deck; cards are drawn from the end.
        self.deck: list[int] = deck.tolist()
        self.hands = np.zeros((n, NUM_TYPES), dtype=np.int64)
        for _ in range(HAND_SIZE):
            for p in range(n):
                self.hands[p, self.deck.pop()] += 1
        #: Drafted cards still in each hand: public, everyone saw them taken.
        self.known = np.zeros((n, NUM_TYPES), dtype=np.int64)
        #: Copies of each type whose identity is not public (deck and dealt hand cards).
        self.unrevealed = np.full(NUM_TYPES, COPIES, dtype=np.int64)
        self.game_card: int = self.deck.pop()
        self.unrevealed[self.game_card] -= 1
        #: Round Card of each round (-1: none); round 1's is the Game Card.
        self.round_cards = np.full(n, -1, dtype=np.int64)
        self.round_cards[0] = self.game_card
        self.pool = np.zeros(NUM_TYPES, dtype=np.int64)
        self._refill_pool()
        #: Board card of each seat at each position (-1: not played yet).
        self.boards = np.full((n, n), -1, dtype=np.int64)
        #: The boards as the observation shows them (colour one-hot, shape one-hot per card),
        #: twice over: rows ``n..2n-1`` repeat rows ``0..n-1``, so that the rows seen from any
        #: seat (``p, p+1, ...`` wrapping round) are the one slice ``[p : p + n]``.
        self.board_features = np.zeros((2 * n, n, NUM_ATTRIBUTES), dtype=np.float32)
        #: Running score parts: match points so far, each board's colour/shape counts and
        #: its largest set, and the totals (``scores()``; twice over, as ``board_features``).
        self.match_points: list[int] = [0] * n
        self.attribute_counts: list[list[int]] = [[0] * NUM_ATTRIBUTES for _ in range(n)]
        self.largest: list[int] = [0] * n
        self.totals = np.zeros(2 * n, dtype=np.float64)
        self.round = 0
        self.start_player = int(rng.integers(n))
        #: Position in this round's seat order (from the start player) of the seat to draft.
        self.turn = 0
        self.phase = self.DRAFTING
        self._settle()

    #: The numpy fields, which copies must not share.
    ARRAYS = (
        "hands",
        "known",
        "unrevealed",
        "round_cards",
        "pool",
        "boards",
        "board_features",
        "totals",
    )

    def clone(self) -> ForslagState:
        twin = self._copy_position()
        # The same RNG state in a new generator (a third of a deep copy's cost).
        bit_generator = type(self.rng.bit_generator)()
        bit_generator.state = self.rng.bit_generator.state
        twin.rng = np.random.Generator(bit_generator)
        return twin

    def _copy_position(self) -> ForslagState:
        """A copy sharing the immutable game and the RNG; every mutable field is copied."""
        twin = copy.copy(self)
        for name in self.ARRAYS:
            setattr(twin, name, getattr(self, name).copy())
        twin.deck = self.deck.copy()
        twin.match_points = self.match_points.copy()
        twin.largest = self.largest.copy()
        twin.attribute_counts = [row.copy() for row in self.attribute_counts]
        return twin

    # --- queries ---------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return (self.start_player + self.turn) % self.game.num_players

    def to_act(self) -> tuple[int, ...]:
        game = self.game
        if self.round >= game.num_rounds:
            return ()
        if self.phase == self.PLAYING and game.simultaneous:
            return game.all_seats
        return game.single_seats[(self.start_player + self.turn) % game.num_players]

    def legal_mask(self, player: int) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if player not in self.to_act():
            return mask
        if self.phase == self.DRAFTING:
            np.greater(self.pool, 0, out=mask[DRAFT:PLAY])
        else:
            np.greater(self.hands[player], 0, out=mask[PLAY:])
        return mask

    def scores(self) -> np.ndarray:
        """The score as it stands: every board scored as if the game ended now."""
        return self.totals[: self.game.num_players].copy()

    # --- moves -----------------------------------------------------------------------
    def _apply(self, joint: Mapping[int, int]) -> None:
        if self.phase == self.DRAFTING:
            player, action = next(iter(joint.items()))
            self._draft(player, action - DRAFT)
            self._after_draft()
        else:
            for player, action in joint.items():
                self._play(player, action - PLAY)
            self._after_play()
        self._settle()

    def _draft(self, player: int, card: int) -> None:
        self.pool[card] -= 1
        self.hands[player, card] += 1
        self.known[player, card] += 1

    def _play(self, player: int, card: int) -> None:
        n = self.game.num_players
        r = self.round
        self.hands[player, card] -= 1
        if self.known[player, card] > 0:
            self.known[player, card] -= 1
        else:
            self.unrevealed[card] -= 1
        self.boards[player, r] = card
        colour, shape = ATTRIBUTES_OF[card]
        for row in (player, player + n):
            self.board_features[row, r, colour] = 1.0
            self.board_features[row, r, shape] = 1.0
        # Match lines: this card against the Game Card, the round's Round Card and the
        # right-hand neighbour (seat - 1); it is also the left-hand neighbour's (seat + 1)
        # right-hand card, so that seat scores too if it has played at this position.
        match = MATCH_ROWS[card]
        left = (player + 1) % n
        self.match_points[player] += (
            GAME_CARD_POINTS * match[self.game_card]
            + ROUND_CARD_POINTS * match[self.round_cards[r]]
            + NEIGHBOUR_POINTS * match[self.boards[(player - 1) % n, r]]
        )
        self.match_points[left] += NEIGHBOUR_POINTS * match[self.boards[left, r]]
        # Attribute counts only grow, so the largest set is a running maximum.
        attributes = self.attribute_counts[player]
        attributes[colour] += 1
        attributes[shape] += 1
        self.largest[player] = max(self.largest[player], attributes[colour], attributes[shape])
        for seat in (player, left):
            total = self.match_points[seat] + LARGEST_SET_POINTS * self.largest[seat]
            self.totals[seat] = self.totals[seat + n] = total

    def _after_draft(self) -> None:
        if self.game.simultaneous:
            self.turn += 1
            if self.turn == self.game.num_players:
                self.phase = self.PLAYING
        else:
            self.phase = self.PLAYING

    def _after_play(self) -> None:
        if self.game.simultaneous:
            self._end_round()
            return
        self.turn += 1
        self.phase = self.DRAFTING
        if self.turn == self.game.num_players:
            self._end_round()

    def _end_round(self) -> None:
        self.round += 1
        if self.round >= self.game.num_rounds:
            return
        # The one leftover pool card (none if the short deck ran the pool dry) is the next
        # round's Round Card; then refill and pass the start player to the left.
        self.round_cards[self.round] = self.pool.argmax() if self.pool.sum() == 1 else -1
        self.pool[:] = 0
        self._refill_pool()
        self.start_player = (self.start_player + 1) % self.game.num_players
        self.turn = 0
        self.phase = self.DRAFTING

    def _refill_pool(self) -> None:
        """Deal players + 1 cards to the pool, or what is left of the deck."""
        for _ in range(min(self.game.num_players + 1, len(self.deck))):
            card = self.deck.pop()
            self.pool[card] += 1
            self.unrevealed[card] -= 1

    def _settle(self) -> None:
        """Resolve drafts that are no choice: an empty pool (the seat only plays) or a pool of
        a single card type. Plays are always asked: a forced play means a hidden pair in hand."""
        while self.phase == self.DRAFTING and self.round < self.game.num_rounds:
            kinds = np.count_nonzero(self.pool)
            if kinds > 1:
                return
            if kinds == 1:
                self._draft(self.current_player, int(self.pool.argmax()))
            self._after_draft()

    # --- determinisation and checks ------------------------------------------------
    def resample(self, player: int, rng: np.random.Generator) -> ForslagState:
        """A state ``player`` cannot tell from this one: the cards they have not seen (the
        deck and the other seats' dealt cards still in hand) are shuffled and dealt back,
        each seat keeping its number of hidden cards. Drafted cards stay where they are."""
        sample = self._copy_position()
        sample.rng = np.random.default_rng(rng.integers(2**63))
        hidden = self.hands - self.known
        hidden[player] = 0
        unknown = np.concatenate(
            [np.asarray(self.deck, dtype=np.int64), np.repeat(np.arange(NUM_TYPES), hidden.sum(0))]
        )
        rng.shuffle(unknown)
        dealt = 0
        for seat in range(self.game.num_players):
            size = int(hidden[seat].sum())
            if seat == player or not size:
                continue
            sample.hands[seat] = self.known[seat] + counts(unknown[dealt : dealt + size], NUM_TYPES)
            dealt += size
        sample.deck = unknown[dealt:].tolist()
        return sample

    def check_invariants(self) -> None:
        game = self.game
        n, rounds = game.num_players, game.num_rounds
        assert 0 <= self.round <= rounds, f"round {self.round} outside 0..{rounds}"
        assert 0 <= self.start_player < n and 0 <= self.turn <= n and self.phase in (0, 1), (
            f"start player {self.start_player}, turn {self.turn}, phase {self.phase}"
        )
        for name in ("hands", "known", "pool", "unrevealed"):
            assert (getattr(self, name) >= 0).all(), f"negative count in {name}"
        assert (self.known <= self.hands).all(), "a drafted card is not in its hand"

        # Every card is in exactly one place.
        board_cards = self.boards[self.boards >= 0]
        later_round_cards = self.round_cards[1:][self.round_cards[1:] >= 0]
        public = (
            self.pool
            + self.known.sum(0)
            + counts(board_cards, NUM_TYPES)
            + counts(later_round_cards, NUM_TYPES)
        )
        public[self.game_card] += 1
        dealt = (self.hands - self.known).sum(0)
        places = public + dealt + counts(self.deck, NUM_TYPES)
        assert (places == COPIES).all(), (
            f"cards per type over deck, hands, pool, boards and Match Board: {places.tolist()}"
        )
        assert (self.unrevealed == COPIES - public).all(), (
            f"unrevealed copies {self.unrevealed.tolist()} but public {public.tolist()}"
        )

        # Match Board: the Game Card opens it; no Round Card for rounds not reached yet.
        assert self.round_cards[0] == self.game_card, "round 1's Round Card is not the Game Card"
        assert (self.round_cards[self.round + 1 :] == -1).all(), "a Round Card from the future"

        # Deck and pool sizes follow from the round: players + 1 per refill while it lasts,
        # minus one card per draft this round.
        def pool_size(r: int) -> int:
            return max(0, min(n + 1, 49 - 2 * n - (n + 1) * r))

        refills = min(self.round + 1, rounds)
        drafts = 0  # drafts made this round
        assert len(self.deck) == max(0, 49 - 2 * n - (n + 1) * refills), (
            f"deck of {len(self.deck)} cards after {refills} pools"
        )
        if self.round < rounds:
            done = self.turn + (self.phase == self.PLAYING and not game.simultaneous)
            drafts = min(done, pool_size(self.round))
            assert self.pool.sum() == pool_size(self.round) - drafts, (
                f"pool of {self.pool.sum()} cards after {drafts} drafts in round {self.round}"
            )
        else:
            assert self.pool.sum() == max(0, pool_size(rounds - 1) - n), "final leftover pool"

        # Boards fill in round order; this round, the seats in order up to the chooser.
        for seat in range(n):
            filled = self.boards[seat] >= 0
            played = int(filled.sum())
            assert filled[:played].all(), f"player {seat}'s board has a gap"
            order = (seat - self.start_player) % n
            if self.round >= rounds:
                expected = rounds
            elif game.simultaneous:
                expected = self.round
            else:
                expected = self.round + (order < self.turn)
            assert played == expected, f"player {seat} has {played} board cards, not {expected}"
            # Hand: 2 dealt + one per draft - one per play (a seat drafts while the pool lasts).
            drafted = 0
            for r in range(min(self.round + 1, rounds)):
                # The start player passed left after every round but the last.
                position = (seat - self.start_player + min(self.round, rounds - 1) - r) % n
                drafted += position < (pool_size(r) if r < self.round else drafts)
            hand = int(self.hands[seat].sum())
            assert hand == HAND_SIZE + drafted - played, (
                f"player {seat} holds {hand} cards after {drafted} drafts and {played} plays"
            )

        # Running scores and the observation's board one-hots agree with the boards.
        expected_scores = score_boards(self.boards, self.game_card, self.round_cards)
        assert (self.totals == np.tile(expected_scores, 2)).all(), (
            f"running scores {self.totals.tolist()} (twice) but the boards score "
            f"{expected_scores.tolist()}"
        )
        features = observation.ATTRIBUTE_ROWS[self.boards]
        assert (self.board_features == np.tile(features, (2, 1, 1))).all(), (
            "board one-hots (twice) differ from the boards"
        )
        for seat in range(n):
            attributes = features[seat].sum(0).astype(np.int64).tolist()
            assert self.attribute_counts[seat] == attributes, f"player {seat}'s attribute counts"
            assert self.largest[seat] == largest_set(self.boards[seat]), f"player {seat}'s set"

    # --- the table -------------------------------------------------------------------
    def __str__(self) -> str:
        def cards(counts: np.ndarray) -> str:
            return ", ".join(card_name(c) for c in np.repeat(np.arange(NUM_TYPES), counts)) or "-"

        n = self.game.num_players
        rounds = self.game.num_rounds
        match_board = " | ".join(card_name(c) if c >= 0 else "-" for c in self.round_cards)
        lines = [
            f"Förslag ({self.game.config.board_play}), round {min(self.round + 1, rounds)} "
            f"of {rounds}, start player player_{self.start_player}",
            f"Game Card: {card_name(self.game_card)}; Round Cards: {match_board}",
            f"pool: {cards(self.pool)}; deck: {len(self.deck)} cards",
        ]
        scores = self.scores()
        for p in range(n):
            board = ", ".join(card_name(c) if c >= 0 else "." for c in self.boards[p])
            lines.append(
                f"player_{p}: score {scores[p]:>3g}  board [{board}]  "
                f"hand {self.hands[p].sum()} cards (drafted: {cards(self.known[p])})"
            )
        if self.is_terminal():
            lines.append("game over")
        else:
            verb = "draft" if self.phase == self.DRAFTING else "play a board card"
            choosers = ", ".join(f"player_{p}" for p in self.to_act())
            lines.append(f"to {verb}: {choosers}")
        return "\n".join(lines)


class ForslagGame(Game):
    name = "forslag"
    config_class = ForslagConfig
    num_actions = NUM_ACTIONS

    def __init__(self, config: ForslagConfig) -> None:
        super().__init__(config)
        n = config.num_players
        self.num_rounds = n
        self.simultaneous = config.board_play == "simultaneous"
        self.all_seats = tuple(range(n))
        self.single_seats = tuple((p,) for p in range(n))
        # Each of the n rounds asks every seat for at most one draft and one board card.
        self.max_decisions = 2 * n * n
        self.observation_layout = observation.layout(self)

    def new_initial_state(self, rng: np.random.Generator) -> ForslagState:
        return ForslagState(self, rng)

    def encode(self, state: ForslagState, player: int, views: dict[str, np.ndarray]) -> None:
        observation.encode(state, player, views)

    def action_name(self, action: int) -> str:
        if action < PLAY:
            return f"draft {card_name(action - DRAFT)}"
        return f"play {card_name(action - PLAY)}"
