"""Förslag rules: pure, seeded, no RL imports. See the package docstring for the rules.

Speed: the game is stepped millions of times, so the state keeps its card counts and
everything an observation shows (unseen counts, one-hots, status, running scores) in one
float32 buffer by absolute seat (``layout.state_layout``), up to date as the game goes: an
observation is one gather from it (``ForslagGame.observation``, through the index arrays of
``layout.gather_index``; ``observation.encode`` writes the same the plain way). The moves
write the buffer at flat offsets (``layout.buffer_offsets``). Per-card lookups use tuples of
Python ints. The legal moves are kept up to date too (``masks``, copied by ``legal_mask``),
with the pool's size and number of card types; the status one-hots and choosers of every
position are made once per game (``ForslagGame.positions``). ``check_invariants`` checks
the running values against a recomputation from scratch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from envs.core.game import Config, Game, State, counts, require_choice
from envs.forslag import layout
from envs.forslag.layout import (
    ATTRIBUTE_ROWS,
    ATTRIBUTES_OF,
    COLOUR_OF,
    COLOURS,
    COPIES,
    NUM_ATTRIBUTES,
    NUM_TYPES,
    SHAPE_OF,
    SHAPES,
)

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

#: ``MATCH[a, b]``: 2 if both attributes match, 1 if one does, 0 if none; index -1 (no card)
#: is the extra last row and column, which match nothing.
MATCH = np.zeros((NUM_TYPES + 1, NUM_TYPES + 1), dtype=np.int64)
MATCH[:NUM_TYPES, :NUM_TYPES] = (COLOUR_OF[:, None] == COLOUR_OF[None, :]).astype(np.int64) + (
    SHAPE_OF[:, None] == SHAPE_OF[None, :]
)
#: The same tables as Python ints, for the per-step bookkeeping.
MATCH_ROWS: tuple[tuple[int, ...], ...] = tuple(map(tuple, MATCH.tolist()))
#: The full deck, sorted (the game shuffles a copy).
FULL_DECK = np.repeat(np.arange(NUM_TYPES), COPIES)
#: The row of ``ForslagState.masks`` for drafting (the others are the seats' hands).
POOL_ROW = -1


def card_name(card: int) -> str:
    return f"{COLOURS[COLOUR_OF[card]]} {SHAPES[SHAPE_OF[card]]}"


def card_type(colour: str, shape: str) -> int:
    return COLOURS.index(colour) * len(SHAPES) + SHAPES.index(shape)


def max_score(num_players: int) -> int:
    """The most one board can score (the bound of the observed scores): each card matching
    both attributes on all three lines, and every card in the set."""
    per_card = 2 * (GAME_CARD_POINTS + ROUND_CARD_POINTS + NEIGHBOUR_POINTS) + LARGEST_SET_POINTS
    return per_card * num_players


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
        require_choice("num_players", self.num_players, PLAYER_COUNTS)
        require_choice("board_play", self.board_play, BOARD_PLAY_MODES)


class ForslagState(State):
    game: ForslagGame

    DRAFTING = 0
    PLAYING = 1

    def __init__(self, game: ForslagGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        #: Every count and everything an observation shows, by absolute seat, as one float32
        #: buffer (``layout.state_layout``); the fields below are named views into it.
        self.buffer = game.state_layout.zeros()
        self._bind_views()
        deck = FULL_DECK.copy()
        rng.shuffle(deck)
        #: The face-down deck; cards are drawn from the end.
        self.deck: list[int] = deck.tolist()
        for _ in range(HAND_SIZE):
            for p in range(n):
                self.hands[p, self.deck.pop()] += 1
        #: Legal moves: row ``p`` marks seat ``p``'s hand (the play actions), row ``POOL_ROW``
        #: the pool (the draft actions).
        self.masks = np.zeros((n + 1, NUM_ACTIONS), dtype=bool)
        self.masks[:n, PLAY:] = self.hands
        self.unrevealed[:] = COPIES
        self.game_card: int = self.deck.pop()
        self.unrevealed[self.game_card] -= 1
        #: Round Card of each round (-1: none); round 1's is the Game Card.
        self.round_cards = game.no_round_cards.copy()
        self.round_cards[0] = self.game_card
        self.round_card_features[0] = ATTRIBUTE_ROWS[self.game_card]
        #: Board card of each seat at each position (-1: not played yet).
        self.boards = game.empty_boards.copy()
        self.round = 0
        self.start_player = int(rng.integers(n))
        #: Position in this round's seat order (from the start player) of the seat to draft.
        self.turn = 0
        self.phase = self.DRAFTING
        # Nothing is on the boards yet (``rebuild`` would find the same, more slowly).
        np.subtract(self.unrevealed, self.hands, out=self.unseen)
        self.match_points: list[int] = [0] * n
        self.attribute_counts: list[list[int]] = [[0] * NUM_ATTRIBUTES for _ in range(n)]
        self.largest: list[int] = [0] * n
        #: The pool's number of cards and of card types (``_refill_pool`` sets them).
        self.pool_size = self.pool_kinds = 0
        self._refill_pool()
        self._settle()
        self._mark_status()

    #: The named views of ``buffer`` (``_bind_views``), not pickled (they would come back as
    #: separate arrays), and the layout field each shows. The card counts (``hands``,
    #: ``known``, ``pool``, ``unrevealed``) are rules fields; the rest is kept up to date
    #: from them as play goes.
    VIEWS: ClassVar[dict[str, str]] = {
        # Cards in each hand, and the drafted ones still there (public: everyone saw them).
        "hands": "hands",
        "known": "known",
        "pool": "pool",
        # Copies of each type whose identity is not public (deck and dealt hand cards).
        "unrevealed": "unrevealed",
        # Per seat: the copies of each type it has not seen (``unrevealed - hands + known``).
        "unseen": "unseen",
        # One-hots (colour, shape) of the Round Cards and of the board cards.
        "round_card_features": "round_cards",
        "board_features": "boards",
        # ``round``, ``start_player``, ``to_act`` (each ``n`` wide) and ``phase`` (2), one-hot.
        "status": "status",
        # ``scores()``, kept up to date as cards are played.
        "totals": "scores",
    }
    hands: np.ndarray
    known: np.ndarray
    pool: np.ndarray
    unrevealed: np.ndarray
    unseen: np.ndarray
    round_card_features: np.ndarray
    board_features: np.ndarray
    status: np.ndarray
    totals: np.ndarray

    def _bind_views(self) -> None:
        """Name the parts of ``buffer`` (``VIEWS``), from spans the game made once."""
        buffer = self.buffer
        for name, span, shape in self.game.view_spans:
            setattr(self, name, buffer[span] if shape is None else buffer[span].reshape(shape))

    #: The numpy fields, which copies must not share (the views are remade on the copy).
    ARRAYS = ("buffer", "round_cards", "boards", "masks")

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        for name in self.VIEWS:
            del state[name]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._bind_views()

    def clone(self) -> ForslagState:
        twin = self._copy_position()
        # The same RNG state in a new generator (a third of a deep copy's cost).
        bit_generator = type(self.rng.bit_generator)()
        bit_generator.state = self.rng.bit_generator.state
        twin.rng = np.random.Generator(bit_generator)
        return twin

    def _copy_position(self) -> ForslagState:
        """A copy sharing the immutable game and the RNG; every mutable field is copied."""
        twin = object.__new__(ForslagState)  # not copy.copy: __setstate__ would bind views
        twin.__dict__.update(self.__dict__)
        for name in self.ARRAYS:
            setattr(twin, name, getattr(self, name).copy())
        twin._bind_views()
        twin.deck = self.deck.copy()
        twin.match_points = self.match_points.copy()
        twin.largest = self.largest.copy()
        twin.attribute_counts = [row.copy() for row in self.attribute_counts]
        return twin

    def rebuild(self) -> None:
        """Recompute, from scratch, everything kept up to date from the rules fields: the
        unseen counts, one-hots, status, score parts, choosers, legal moves and pool counts.
        ``check_invariants`` compares the running values with it; code that sets rules
        fields by hand calls it afterwards."""
        self.unseen[:] = self.unrevealed - self.hands + self.known
        self.round_card_features[:] = ATTRIBUTE_ROWS[self.round_cards]
        self.board_features[:] = ATTRIBUTE_ROWS[self.boards]
        #: Running score parts: match points so far, each board's colour/shape counts and its
        #: largest set; ``totals`` is match points + 3 per card in the set.
        self.attribute_counts = self.board_features.sum(axis=1).astype(np.int64).tolist()
        self.largest = [largest_set(board) for board in self.boards]
        scores = score_boards(self.boards, self.game_card, self.round_cards)
        self.totals[:] = scores
        self.match_points = [
            int(score) - LARGEST_SET_POINTS * largest
            for score, largest in zip(scores, self.largest, strict=True)
        ]
        n = self.game.num_players
        self.masks.fill(False)
        self.masks[:n, PLAY:] = self.hands
        self.masks[POOL_ROW, :PLAY] = self.pool
        self.pool_size = int(self.pool.sum())
        self.pool_kinds = int(np.count_nonzero(self.pool))
        if self.round >= self.game.num_rounds:
            self._mark_status()
        else:  # made afresh, not looked up in the game's table (which it checks)
            self.choosers, self.status[:] = self.game.position(
                self.phase, self.round, self.start_player, self.turn
            )

    def _mark_status(self) -> None:
        """Find the choosers (``to_act()``) and write the status one-hots (round, start
        player, choosers, phase; all zeros at the end), both looked up in the game's table."""
        game = self.game
        if self.round >= game.num_rounds:
            self.choosers: tuple[int, ...] = ()
            self.status[:] = 0.0
            return
        self.choosers, status = game.positions[self.phase][self.round][self.start_player][self.turn]
        self.status[:] = status

    # --- queries ---------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return (self.start_player + self.turn) % self.game.num_players

    def to_act(self) -> tuple[int, ...]:
        return self.choosers

    def legal_mask(self, player: int) -> np.ndarray:
        if player not in self.choosers:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.masks[POOL_ROW if self.phase == self.DRAFTING else player].copy()

    def scores(self) -> np.ndarray:
        """The score as it stands: every board scored as if the game ended now."""
        return self.totals.astype(np.float64)

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
        self._mark_status()

    # The moves write the buffer at flat offsets (``ForslagGame.offsets``): one numpy object
    # touched instead of several views is most of the cost on a state not in the CPU cache.
    def _draft(self, player: int, card: int) -> None:
        # The hand and its known part both grow: no seat's unseen count changes.
        at, buffer = self.game.offsets, self.buffer
        i = at["pool"] + card
        left = buffer.item(i) - 1
        buffer[i] = left
        self.pool_size -= 1
        if not left:
            self.pool_kinds -= 1
            self.masks[POOL_ROW, DRAFT + card] = False
        i = at["hands"][player] + card
        buffer[i] = buffer.item(i) + 1
        self.masks[player, PLAY + card] = True
        i = at["known"][player] + card
        buffer[i] = buffer.item(i) + 1

    def _play(self, player: int, card: int) -> None:
        game = self.game
        at, buffer = game.offsets, self.buffer
        r = self.round
        i = at["hands"][player] + card
        held = buffer.item(i) - 1
        buffer[i] = held
        if not held:
            self.masks[player, PLAY + card] = False
        i = at["known"][player] + card
        drafted = buffer.item(i)
        if drafted:
            buffer[i] = drafted - 1
        else:  # a dealt card: now public, and seen by the other seats
            i = at["unrevealed"] + card
            buffer[i] = buffer.item(i) - 1
            for i in game.others_unseen[player]:
                i += card
                buffer[i] = buffer.item(i) - 1
        boards = self.boards
        boards[player, r] = card
        colour, shape = ATTRIBUTES_OF[card]
        i = at["boards"][player][r]
        buffer[i + colour] = 1.0
        buffer[i + shape] = 1.0
        # Match lines: this card against the Game Card, the round's Round Card and the
        # right-hand neighbour (seat - 1); it is also the left-hand neighbour's (seat + 1)
        # right-hand card, so that seat scores too if it has played a match at this position.
        match = MATCH_ROWS[card]
        right, left = game.neighbours[player]
        match_points, largest = self.match_points, self.largest
        match_points[player] += (
            GAME_CARD_POINTS * match[self.game_card]
            + ROUND_CARD_POINTS * match[self.round_cards.item(r)]
            + NEIGHBOUR_POINTS * match[boards.item(right, r)]
        )
        # Attribute counts only grow, so the largest set is a running maximum.
        attributes = self.attribute_counts[player]
        attributes[colour] += 1
        attributes[shape] += 1
        largest[player] = max(largest[player], attributes[colour], attributes[shape])
        i = at["scores"]
        buffer[i + player] = match_points[player] + LARGEST_SET_POINTS * largest[player]
        points = NEIGHBOUR_POINTS * match[boards.item(left, r)]
        if points:  # else the left-hand neighbour's score stands
            match_points[left] += points
            buffer[i + left] = match_points[left] + LARGEST_SET_POINTS * largest[left]

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
        if self.pool_size == 1:
            leftover = int(self.pool.argmax())
            self.round_cards[self.round] = leftover
            self.round_card_features[self.round] = ATTRIBUTE_ROWS[leftover]
        self._refill_pool()
        self.start_player = (self.start_player + 1) % self.game.num_players
        self.turn = 0
        self.phase = self.DRAFTING

    def _refill_pool(self) -> None:
        """Empty the pool, then deal it players + 1 cards from the deck (or what is left)."""
        pool, deck = self.pool, self.deck
        if self.pool_size:
            pool[:] = 0.0
        size = self.pool_size = min(self.game.num_players + 1, len(deck))
        drawn = deck[len(deck) - size :]
        del deck[len(deck) - size :]
        for card in drawn:
            pool[card] += 1.0
        self.pool_kinds = len(set(drawn))
        self.masks[POOL_ROW, :PLAY] = pool
        if size:
            # The pool holds just the drawn cards: take them off every unseen count at once.
            self.unrevealed -= pool
            self.unseen -= pool  # every seat sees them

    def _settle(self) -> None:
        """Resolve drafts that are no choice: an empty pool (the seat only plays) or a pool of
        a single card type. Plays are always asked: a forced play means a hidden pair in hand."""
        while self.phase == self.DRAFTING and self.round < self.game.num_rounds:
            kinds = self.pool_kinds
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
        hidden = (self.hands - self.known).astype(np.int64)
        hidden[player] = 0
        unknown = np.sort(  # sorted: the same draw from states the player cannot tell apart
            np.concatenate(
                [
                    np.asarray(self.deck, dtype=np.int64),
                    np.repeat(np.arange(NUM_TYPES), hidden.sum(0)),
                ]
            )
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
        sample.rebuild()  # the other seats' unseen counts changed
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

        # Everything kept up to date as the game goes (unseen counts, one-hots, status, score
        # parts, choosers) agrees with a recomputation from the rules fields.
        fresh = self._copy_position()
        fresh.rebuild()
        running = game.state_layout.views(self.buffer)
        for name, expected in game.state_layout.views(fresh.buffer).items():
            assert np.array_equal(running[name], expected), (
                f"running {name} {running[name].tolist()} but recomputed {expected.tolist()}"
            )
        assert np.array_equal(self.masks, fresh.masks), (
            f"running masks {np.flatnonzero(self.masks).tolist()} but recomputed "
            f"{np.flatnonzero(fresh.masks).tolist()}"
        )
        names = ("match_points", "attribute_counts", "largest", "pool_size", "pool_kinds")
        for name in (*names, "choosers"):
            assert getattr(self, name) == getattr(fresh, name), (
                f"running {name} {getattr(self, name)} but recomputed {getattr(fresh, name)}"
            )

    # --- the table -------------------------------------------------------------------
    def __str__(self) -> str:
        def cards(counts: np.ndarray) -> str:
            types = np.repeat(np.arange(NUM_TYPES), counts.astype(np.int64))
            return ", ".join(card_name(c) for c in types) or "-"

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
                f"hand {int(self.hands[p].sum())} cards (drafted: {cards(self.known[p])})"
            )
        if self.is_terminal():
            lines.append("game over")
        else:
            verb = "draft" if self.phase == self.DRAFTING else "play a board card"
            choosers = ", ".join(f"player_{p}" for p in self.to_act())
            lines.append(f"to {verb}: {choosers}")
        return "\n".join(lines)

    def private_view(self, player: int) -> str:
        """``player``'s whole hand: the dealt cards still held are theirs alone to see."""
        types = np.repeat(np.arange(NUM_TYPES), self.hands[player].astype(np.int64))
        hand = ", ".join(card_name(c) for c in types) or "-"
        return f"your hand (player_{player}): {hand}"


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
        #: Each seat's right-hand (seat - 1) and left-hand (seat + 1) neighbours.
        self.neighbours = tuple(((p - 1) % n, (p + 1) % n) for p in range(n))
        # Each of the n rounds asks every seat for at most one draft and one board card.
        self.max_decisions = 2 * n * n
        self.observation_layout = layout.observation_layout(n, max_score(n))
        self.state_layout = layout.state_layout(n, max_score(n))
        fields = self.state_layout.fields
        #: The status one-hots (round, start player, to act, phase) are one span of the buffer.
        self.status_span = layout.status_span(self.state_layout)
        #: ``ForslagState.VIEWS`` as (name, span of the buffer, shape; None: flat).
        view_spans: list[tuple[str, slice, tuple[int, ...] | None]] = []
        for name, field_name in ForslagState.VIEWS.items():
            if field_name == "status":
                view_spans.append((name, self.status_span, None))
            else:
                f = fields[field_name]
                shape = f.shape if len(f.shape) > 1 else None
                view_spans.append((name, slice(f.start, f.stop), shape))
        self.view_spans = tuple(view_spans)
        #: Templates of a new game's Round Cards and boards (-1: no card).
        self.no_round_cards = np.full(n, -1, dtype=np.int64)
        self.empty_boards = np.full((n, n), -1, dtype=np.int64)
        #: Per observer: where each entry of its observation is in the buffer.
        self.gather = tuple(
            layout.gather_index(self.state_layout, self.observation_layout, p) for p in range(n)
        )
        #: ``positions[phase][round][start_player][turn]``: the choosers and the status
        #: one-hots (``ForslagState.status``) of every position before the end.
        self.positions = tuple(
            tuple(
                tuple(
                    tuple(self.position(phase, r, start, turn) for turn in range(n + 1))
                    for start in range(n)
                )
                for r in range(self.num_rounds)
            )
            for phase in (ForslagState.DRAFTING, ForslagState.PLAYING)
        )
        #: Flat buffer offsets for the moves: of a field, or per seat of its row (per seat and
        #: position for the board one-hots); per seat, the other seats' unseen rows.
        self.offsets = layout.buffer_offsets(self.state_layout)
        self.others_unseen = layout.others_unseen(self.offsets)

    def position(
        self, phase: int, r: int, start: int, turn: int
    ) -> tuple[tuple[int, ...], np.ndarray]:
        """The choosers and status one-hots of a position before the end, made afresh
        (``positions`` holds them all; ``ForslagState.rebuild`` uses this to check it)."""
        n = self.num_players
        if phase == ForslagState.PLAYING and self.simultaneous:
            choosers = self.all_seats
        else:
            choosers = self.single_seats[(start + turn) % n]
        return choosers, layout.status_one_hots(n, phase, r, start, choosers)

    def new_initial_state(self, rng: np.random.Generator) -> ForslagState:
        return ForslagState(self, rng)

    def observation(self, state: ForslagState, player: int) -> np.ndarray:
        """``player``'s flat observation: one gather from the state's buffer (a new array)."""
        return state.buffer.take(self.gather[player])

    def action_name(self, action: int) -> str:
        if action < PLAY:
            return f"draft {card_name(action - DRAFT)}"
        return f"play {card_name(action - PLAY)}"
