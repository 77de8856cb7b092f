"""Easter collection rules: pure, seeded, no RL imports. See the package docstring for the rules.

Cards are indices 0-51: ``card = suit * 13 + rank`` with ranks A, 2-10, J, Q, K (0-12)
and suits clubs, diamonds, hearts, spades (0-3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, require_choice
from envs.easter_collection import observation

NUM_CARDS = 52
NUM_RANKS = 13
NUM_POSITIONS = 4
HAND_SIZE = 4
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
JACK = 10
SUIT_OF = tuple(card // NUM_RANKS for card in range(NUM_CARDS))
RANK_OF = tuple(card % NUM_RANKS for card in range(NUM_CARDS))
#: Score points: 2-10 are 1, J/Q/K 2, Ace 3 [book].
POINTS = tuple(3 if r == 0 else 2 if r >= JACK else 1 for r in RANK_OF)
#: SUIT_MASK[s] marks the 13 cards of suit s.
SUIT_MASK = np.stack([np.array(SUIT_OF) == s for s in range(4)])

VARIANTS = ("standard", "secret_positions")
TABLE_FACE_VALUES = ("zero", "rank")

#: Where a bid went: a table position 0-3, or discarded face up.
DISCARD = NUM_POSITIONS
#: Secret positions: action ``chip * 52 + card``; chips 0-3 name positions 1-4, 4 is blank.
BLANK = NUM_POSITIONS
NUM_CHIPS = NUM_POSITIONS + 1
#: Standard: action ``card`` plays a card, ``PLACE + k`` places it beside position k + 1.
PLACE = NUM_CARDS

PHASE_CHOOSE, PHASE_PLACE, PHASE_DONE = 0, 1, 2


def card_name(card: int) -> str:
    return RANKS[RANK_OF[card]] + SUITS[SUIT_OF[card]]


def card_index(name: str) -> int:
    """The index of a card named like ``"10H"`` or ``"QS"``."""
    return SUITS.index(name[-1]) * NUM_RANKS + RANKS.index(name[:-1])


@dataclass(frozen=True)
class EasterCollectionConfig(Config):
    """Options: ``num_players`` 2-5; ``variant`` ``"standard"`` or ``"secret_positions"``;
    ``table_face_value`` ``"zero"`` (a J/Q/K table card is worth 0 to a mirroring face card)
    or ``"rank"`` (worth 11/12/13)."""

    num_players: int = 2
    variant: str = "standard"
    table_face_value: str = "zero"

    def validate(self) -> None:
        require_choice("num_players", self.num_players, (2, 3, 4, 5))
        if not isinstance(self.num_players, (int, np.integer)):
            raise ValueError(
                f"num_players={self.num_players!r} is not allowed; allowed values: 2, 3, 4, 5"
            )
        require_choice("variant", self.variant, VARIANTS)
        require_choice("table_face_value", self.table_face_value, TABLE_FACE_VALUES)


class EasterCollectionState(State):
    """One position. ``deck`` (cards in dealing order) and ``start_player`` may be given to
    script a deal; by default both are drawn from ``rng``."""

    game: EasterCollectionGame

    def __init__(
        self,
        game: EasterCollectionGame,
        rng: np.random.Generator,
        deck: Sequence[int] | None = None,
        start_player: int | None = None,
    ) -> None:
        super().__init__(game, rng)
        n = game.num_players
        self.start_player = int(rng.integers(n)) if start_player is None else int(start_player)
        if deck is None:
            deck = rng.permutation(NUM_CARDS).tolist()
        elif len(set(deck)) != len(deck) or not all(0 <= c < NUM_CARDS for c in deck):
            raise ValueError(f"a deck must hold distinct cards 0-{NUM_CARDS - 1}, got {deck!r}")
        #: The deck in dealing order; ``deck[next_card:]`` is still to be dealt.
        self.deck = [int(c) for c in deck]
        self.next_card = 0
        self.hands = np.zeros((n, NUM_CARDS), dtype=bool)
        self.hand_size = 0  # every hand always holds the same number of cards
        #: The card at each table position, -1 when empty.
        self.table = [-1] * NUM_POSITIONS
        self.piles = np.zeros((n, NUM_CARDS), dtype=bool)
        #: Cards each seat has played that were turned face up (bids and discards).
        self.played = np.zeros((n, NUM_CARDS), dtype=bool)
        #: The face-up discard pile (unmatched bids, leftover table cards).
        self.discards = np.zeros(NUM_CARDS, dtype=bool)
        self.points = np.zeros(n, dtype=np.int64)
        self.round = 0
        self.bid = 0
        self.phase = PHASE_CHOOSE
        self.last_round = False
        #: How many bids each finished round had.
        self.bids_per_round: list[int] = []
        #: The last reveal, for the render: (seat, card, table card or -1, won).
        self.last_result: list[tuple[int, int, int, bool]] = []
        self._everyone = tuple(range(n))
        self._start_round()

    # --- flow ----------------------------------------------------------------------
    def _start_round(self) -> None:
        n = self.game.num_players
        remaining = len(self.deck) - self.next_card
        on_table = min(NUM_POSITIONS, remaining)
        self.table = self.deck[self.next_card : self.next_card + on_table]
        self.table += [-1] * (NUM_POSITIONS - on_table)
        self.next_card += on_table
        remaining -= on_table
        need = n * (HAND_SIZE - self.hand_size)
        if on_table < NUM_POSITIONS:
            per_player, self.last_round = 0, True
        elif remaining >= need:
            per_player, self.last_round = HAND_SIZE - self.hand_size, remaining == need
        else:
            per_player, self.last_round = (1 if remaining >= n else 0), True
        for _ in range(per_player):
            for k in range(n):
                self.hands[(self.start_player + k) % n, self.deck[self.next_card]] = True
                self.next_card += 1
        self.hand_size += per_player
        if self.last_round:
            self.next_card = len(self.deck)  # the rest is discarded unseen
        self.bid = 0
        self._start_bid()

    def _start_bid(self) -> None:
        n = self.game.num_players
        self.chosen = [-1] * n
        #: Where each seat's bid went this bid: -1 not yet, a position 0-3, or DISCARD.
        self.target = [-1] * n
        self.num_placed = 0
        self.placing = -1
        self.phase = PHASE_CHOOSE
        # Standard: a single card in hand is played without asking (hand sizes are public).
        # Secret positions always ask, since the legal chips depend on the hidden card.
        if not self.game.secret and self.hand_size == 1:
            self._choose({p: int(np.flatnonzero(self.hands[p])[0]) for p in range(n)})

    def _choose(self, cards: Mapping[int, int]) -> None:
        for seat, card in cards.items():
            self.hands[seat, card] = False
            self.chosen[seat] = card
        self.hand_size -= 1
        self.phase = PHASE_PLACE
        self._advance_placing()

    def matching_positions(self, card: int) -> list[int]:
        suit = SUIT_OF[card]
        return [k for k, t in enumerate(self.table) if t >= 0 and SUIT_OF[t] == suit]

    def _advance_placing(self) -> None:
        """Place from the start player clockwise; stop at a seat with a real choice."""
        n = self.game.num_players
        while self.num_placed < n:
            seat = (self.start_player + self.num_placed) % n
            matches = self.matching_positions(self.chosen[seat])
            if len(matches) > 1:
                self.placing = seat
                return
            if matches:
                self.target[seat] = matches[0]
            else:
                self._discard_bid(seat)
            self.num_placed += 1
        self.placing = -1
        self._reveal()

    def _discard_bid(self, seat: int) -> None:
        card = self.chosen[seat]
        self.target[seat] = DISCARD
        self.discards[card] = True
        self.played[seat, card] = True

    def _reveal(self) -> None:
        n = self.game.num_players
        seats = [(self.start_player + k) % n for k in range(n)]
        won = dict.fromkeys(seats, False)
        table_card = dict.fromkeys(seats, -1)
        for position, card in enumerate(self.table):
            bidders = [s for s in seats if self.target[s] == position]
            if not bidders:
                continue
            winner = max(bidders, key=lambda s: self.game.bid_key(self.chosen[s], card))
            won[winner] = True
            self.piles[winner, card] = True
            self.points[winner] += POINTS[card]
            for seat in bidders:
                table_card[seat] = card
                self.piles[winner, self.chosen[seat]] = True
                self.points[winner] += POINTS[self.chosen[seat]]
            self.table[position] = -1
        for seat in seats:
            self.played[seat, self.chosen[seat]] = True
        self.last_result = [(s, self.chosen[s], table_card[s], won[s]) for s in seats]
        self.chosen = [-1] * n
        self.target = [-1] * n
        self.bid += 1
        if self.bid < 2 and max(self.table) >= 0:
            self._start_bid()
        else:
            self._end_round()

    def _end_round(self) -> None:
        for position, card in enumerate(self.table):
            if card >= 0:
                self.discards[card] = True
                self.table[position] = -1
        self.bids_per_round.append(self.bid)
        if self.last_round:
            self.phase = PHASE_DONE
            self.hands[:] = False  # the players discard what is left in hand
            self.hand_size = 0
            return
        self.start_player = (self.start_player + 1) % self.game.num_players
        self.round += 1
        self._start_round()

    # --- State interface -----------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        if self.phase == PHASE_CHOOSE:
            return self._everyone
        if self.phase == PHASE_PLACE:
            return (self.placing,)
        return ()

    def legal_mask(self, player: int) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, dtype=bool)
        if self.phase == PHASE_CHOOSE:
            hand = self.hands[player]
            if not self.game.secret:
                mask[:NUM_CARDS] = hand
                return mask
            chips = mask.reshape(NUM_CHIPS, NUM_CARDS)
            unmatched = hand.copy()
            for position, card in enumerate(self.table):
                if card >= 0:
                    suit = SUIT_MASK[SUIT_OF[card]]
                    chips[position] = hand & suit
                    unmatched &= ~suit
            chips[BLANK] = unmatched
        elif self.phase == PHASE_PLACE and player == self.placing:
            for position in self.matching_positions(self.chosen[player]):
                mask[PLACE + position] = True
        return mask

    def _apply(self, joint: Mapping[int, int]) -> None:
        if self.phase == PHASE_PLACE:
            self.target[self.placing] = joint[self.placing] - PLACE
            self.num_placed += 1
            self._advance_placing()
        elif not self.game.secret:
            self._choose(joint)
        else:
            for seat, action in joint.items():
                chip, card = divmod(action, NUM_CARDS)
                self.hands[seat, card] = False
                self.chosen[seat] = card
                if chip == BLANK:
                    self._discard_bid(seat)
                else:
                    self.target[seat] = chip
            self.hand_size -= 1
            self._reveal()

    def scores(self) -> np.ndarray:
        return self.points.astype(np.float64)

    def __str__(self) -> str:
        n = self.game.num_players

        def cards(mask: np.ndarray) -> str:
            return " ".join(card_name(c) for c in np.flatnonzero(mask)) or "-"

        if self.phase == PHASE_DONE:
            status = "game over"
        else:
            bid = ("first", "second")[self.bid]
            status = f"{bid} bid, " + (
                "choosing cards" if self.phase == PHASE_CHOOSE else f"player_{self.placing} places"
            )
        last = ", last round" if self.last_round else ""
        lines = [
            f"Easter collection ({self.game.config.variant}), round {self.round + 1}{last}; "
            f"{status}; start player player_{self.start_player}; "
            f"deck {len(self.deck) - self.next_card}",
        ]
        slots = []
        for position, card in enumerate(self.table):
            bidders = [f"player_{s}" for s in range(n) if self.target[s] == position]
            face_down = f" (face down: {', '.join(bidders)})" if bidders else ""
            slots.append(f"[{position + 1}] {card_name(card) if card >= 0 else '-'}{face_down}")
        lines.append("table: " + "  ".join(slots))
        for p in range(n):
            lines.append(
                f"player_{p}: {self.points[p]:>2} points, {self.hand_size} in hand, "
                f"pile [{cards(self.piles[p])}]"
            )
        lines.append(f"discards: {cards(self.discards)}")
        if self.last_result:
            shown = []
            for seat, card, table_card, won in self.last_result:
                if table_card < 0:
                    shown.append(f"player_{seat} discarded {card_name(card)}")
                else:
                    outcome = "won" if won else "lost"
                    shown.append(
                        f"player_{seat} {card_name(card)} on {card_name(table_card)} {outcome}"
                    )
            lines.append("last reveal: " + "; ".join(shown))
        return "\n".join(lines)


class EasterCollectionGame(Game):
    name = "easter_collection"
    config_class = EasterCollectionConfig

    def __init__(self, config: EasterCollectionConfig) -> None:
        super().__init__(config)
        self.secret = config.variant == "secret_positions"
        self.num_actions = NUM_CHIPS * NUM_CARDS if self.secret else NUM_CARDS + NUM_POSITIONS
        faces = (0, 0, 0) if config.table_face_value == "zero" else (11, 12, 13)
        #: What a card is worth as a table card (face bids mirror it): A 1, 2-10 face value.
        self.table_value = tuple(faces[r - JACK] if r >= JACK else r + 1 for r in RANK_OF)
        self.observation_layout = observation.layout(self)

    def bid_key(self, bid: int, table_card: int) -> int:
        """Strength of ``bid`` on ``table_card``: numbers bid their value (Ace 1), J/Q/K mirror
        the table card and break ties K > Q > J."""
        rank = RANK_OF[bid]
        if rank >= JACK:
            return 4 * self.table_value[table_card] + rank - JACK + 1
        return 4 * (rank + 1)

    def new_initial_state(self, rng: np.random.Generator) -> EasterCollectionState:
        return EasterCollectionState(self, rng)

    def encode(
        self, state: EasterCollectionState, player: int, views: dict[str, np.ndarray]
    ) -> None:
        observation.encode(state, player, views)

    def action_name(self, action: int) -> str:
        if self.secret:
            chip, card = divmod(action, NUM_CARDS)
            where = "the blank chip (discard)" if chip == BLANK else f"chip {chip + 1}"
            return f"play {card_name(card)} with {where}"
        if action < NUM_CARDS:
            return f"play {card_name(action)}"
        return f"place at position {action - PLACE + 1}"
