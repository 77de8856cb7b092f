"""Förslag rules: pure, seeded, no RL imports. See the package docstring for the rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, require_choice
from envs.forslag import observation

COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue", "purple")
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "heart")
#: A card type is ``colour * 5 + shape``; the deck holds two copies of each type.
NUM_TYPES = len(COLOURS) * len(SHAPES)
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
        #: Copies of each type whose identity is public (pool, boards, Match Board, drafts).
        self.revealed = np.zeros(NUM_TYPES, dtype=np.int64)
        self.game_card = self.deck.pop()
        self.revealed[self.game_card] += 1
        #: Round Card of each round (-1: none); round 1's is the Game Card.
        self.round_cards = np.full(n, -1, dtype=np.int64)
        self.round_cards[0] = self.game_card
        self.pool = np.zeros(NUM_TYPES, dtype=np.int64)
        self._refill_pool()
        #: Board card of each seat at each position (-1: not played yet).
        self.boards = np.full((n, n), -1, dtype=np.int64)
        #: Running score parts: match points so far and colour/shape counts of each board.
        self.match_points = np.zeros(n, dtype=np.int64)
        self.attribute_counts = np.zeros((n, len(COLOURS) + len(SHAPES)), dtype=np.int64)
        self.round = 0
        self.start_player = int(rng.integers(n))
        #: Position in this round's seat order (from the start player) of the seat to draft.
        self.turn = 0
        self.phase = self.DRAFTING
        self._settle()

    # --- queries ---------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return (self.start_player + self.turn) % self.game.num_players

    def to_act(self) -> tuple[int, ...]:
        if self.round >= self.game.num_rounds:
            return ()
        if self.phase == self.PLAYING and self.game.simultaneous:
            return self.game.all_seats
        return (self.current_player,)

    def legal_mask(self, player: int) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if player not in self.to_act():
            return mask
        if self.phase == self.DRAFTING:
            mask[DRAFT:PLAY] = self.pool > 0
        else:
            mask[PLAY:] = self.hands[player] > 0
        return mask

    def scores(self) -> np.ndarray:
        """The score as it stands: every board scored as if the game ended now."""
        largest = self.attribute_counts.max(axis=1)
        return (self.match_points + LARGEST_SET_POINTS * largest).astype(np.float64)

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
            self.revealed[card] += 1
        self.boards[player, r] = card
        points = GAME_CARD_POINTS * MATCH[card, self.game_card]
        points += ROUND_CARD_POINTS * MATCH[card, self.round_cards[r]]
        # Right-hand neighbour (seat - 1) scores for this seat; this card scores for the left.
        points += NEIGHBOUR_POINTS * MATCH[card, self.boards[(player - 1) % n, r]]
        left = (player + 1) % n
        self.match_points[left] += NEIGHBOUR_POINTS * MATCH[self.boards[left, r], card]
        self.match_points[player] += points
        self.attribute_counts[player, COLOUR_OF[card]] += 1
        self.attribute_counts[player, len(COLOURS) + SHAPE_OF[card]] += 1

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
        leftover = np.flatnonzero(self.pool)
        self.round_cards[self.round] = leftover[0] if self.pool.sum() == 1 else -1
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
            self.revealed[card] += 1

    def _settle(self) -> None:
        """Resolve drafts that are no choice: an empty pool (the seat only plays) or a pool of
        a single card type. Plays are always asked: a forced play means a hidden pair in hand."""
        while self.phase == self.DRAFTING and self.round < self.game.num_rounds:
            types = np.flatnonzero(self.pool)
            if len(types) > 1:
                return
            if len(types) == 1:
                self._draft(self.current_player, int(types[0]))
            self._after_draft()

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
        self.num_rounds = config.num_players
        self.simultaneous = config.board_play == "simultaneous"
        self.all_seats = tuple(range(config.num_players))
        self.observation_layout = observation.layout(self)

    def new_initial_state(self, rng: np.random.Generator) -> ForslagState:
        return ForslagState(self, rng)

    def encode(self, state: ForslagState, player: int, views: dict[str, np.ndarray]) -> None:
        observation.encode(state, player, views)

    def action_name(self, action: int) -> str:
        if action < PLAY:
            return f"draft {card_name(action - DRAFT)}"
        return f"play {card_name(action - PLAY)}"
