"""Easter collection rules: pure, seeded, no RL imports. See the package docstring for the rules.

Cards are indices 0-51: ``card = suit * 13 + rank`` with ranks A, 2-10, J, Q, K (0-12)
and suits clubs, diamonds, hearts, spades (0-3).

The state keeps ``source``, its observation buffer (laid out as ``layout.source_layout``):
every move writes what it changes into it at the flat offsets of ``layout.SourceOffsets``
(``game.at``), so that ``EasterCollectionGame.observation`` is one gather from it
(``layout.gather_indices``). ``observation.encode`` is the plain reference encoder.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, require_choice
from envs.easter_collection import layout
from envs.easter_collection.layout import DERIVED, MAX_ROUNDS, NUM_CARDS, NUM_POSITIONS

NUM_RANKS = 13
HAND_SIZE = 4
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
JACK = 10
SUIT_OF = tuple(card // NUM_RANKS for card in range(NUM_CARDS))
RANK_OF = tuple(card % NUM_RANKS for card in range(NUM_CARDS))
#: Score points: 2-10 are 1, J/Q/K 2, Ace 3 [book].
POINTS = tuple(3 if r == 0 else 2 if r >= JACK else 1 for r in RANK_OF)

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


def positions_by_suit(table: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """For each suit, the positions of ``table`` (cards or -1) holding it."""
    found: tuple[list[int], ...] = ([], [], [], [])
    for position, card in enumerate(table):
        if card >= 0:
            found[SUIT_OF[card]].append(position)
    return tuple(map(tuple, found))


def chip_actions(suit_positions: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    """Secret positions: for each card, its legal actions ``chip * 52 + card`` given
    ``positions_by_suit`` of the table: the chips of the positions holding its suit, or
    the blank chip when none does."""
    return tuple(
        tuple(chip * NUM_CARDS + card for chip in suit_positions[SUIT_OF[card]] or (BLANK,))
        for card in range(NUM_CARDS)
    )


#: SUIT_OR_EMPTY[card] is the suit of a card; SUIT_OR_EMPTY[-1] (an empty position) is -1.
SUIT_OR_EMPTY = (*SUIT_OF, -1)
#: table_lookups by the suits on the table's four positions (at most 5**4 tables).
_TABLE_LOOKUPS: dict[tuple[int, ...], tuple[tuple[tuple[int, ...], ...], ...]] = {}


def table_lookups(
    table: Sequence[int],
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """``positions_by_suit(table)`` of a 4-position table and its ``chip_actions``, cached
    by the table's suits (the same tuples each time)."""
    a, b, c, d = table
    suits = (SUIT_OR_EMPTY[a], SUIT_OR_EMPTY[b], SUIT_OR_EMPTY[c], SUIT_OR_EMPTY[d])
    found = _TABLE_LOOKUPS.get(suits)
    if found is None:
        positions = positions_by_suit(table)
        found = _TABLE_LOOKUPS[suits] = (positions, chip_actions(positions))
    return found


def place_mask(positions: tuple[int, ...]) -> np.ndarray:
    """Standard: the legal mask (a new array) for placing beside one of ``positions``."""
    mask = _PLACE_MASKS.get(positions)
    if mask is None:
        mask = _PLACE_MASKS[positions] = np.zeros(PLACE + NUM_POSITIONS, dtype=bool)
        mask[[PLACE + position for position in positions]] = True
    return mask.copy()


_PLACE_MASKS: dict[tuple[int, ...], np.ndarray] = {}


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
        require_choice("variant", self.variant, VARIANTS)
        require_choice("table_face_value", self.table_face_value, TABLE_FACE_VALUES)


class EasterCollectionState(State):
    """One position. ``deck`` (cards in dealing order) and ``start_player`` may be given to
    script a deal; by default both are drawn from ``rng``. A scripted deck may be short: the
    cards it leaves out are set aside (``unused``) and take no part in the game. A bid needs
    a card in every hand and one on the table; a short deck can reach a bid without (a
    first round that deals no hand cards, or one card each, used up by the first bid): the
    round, always the last one then, ends there and so does the game.

    Every observation field lives in one float32 buffer, ``source`` (laid out by
    ``layout.source_layout``), kept up to date move by move so that an observation is
    one gather. The rules' card arrays ``hands``, ``piles``, ``played``, ``points`` and
    ``discards`` are views of it (0/1 floats; points count)."""

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
        #: Cards left out of a scripted short deck (never in play).
        self.unused = np.zeros(NUM_CARDS, dtype=bool)
        if len(self.deck) < NUM_CARDS:
            self.unused[:] = True
            self.unused[self.deck] = False
        self.source = game.initial_source.copy()  # nothing seen yet, round 1
        #: ``source`` as a memoryview: the rules write single entries through it (a
        #: fraction of the cost of numpy's scalar writes). Rebound by every copy.
        self.cells = memoryview(self.source)
        self.cells[game.at.start + self.start_player] = 1.0
        self.hand_size = 0  # every hand always holds the same number of cards
        #: The cards in each hand (as ``hands``; kept for the legal masks), in dealing order.
        self.hand_cards: list[list[int]] = [[] for _ in range(n)]
        #: The card at each table position, -1 when empty.
        self.table = [-1] * NUM_POSITIONS
        #: Cards discarded unseen: the rest of the deck in the last round, hands at the end.
        self.buried = np.zeros(NUM_CARDS, dtype=bool)
        #: The cards each seat discarded from hand at the end (buried, seen by their owner).
        self.final_hands = np.zeros((n, NUM_CARDS), dtype=bool)
        self.round = 0
        self.bid = 0
        self.phase = PHASE_CHOOSE
        self.last_round = False
        #: How many bids each finished round had.
        self.bids_per_round: list[int] = []
        #: The last reveal: (seats, chosen, targets, table before, winners); see last_result.
        self.last_reveal: tuple = ()
        self._start_round()

    # --- views of the source buffer (new views each time; writes go through) -----------
    @property
    def view(self) -> dict[str, np.ndarray]:
        """Every field of ``source`` by name (``layout.source_layout``)."""
        return self.game.source_layout.views(self.source)

    def _field(self, name: str) -> np.ndarray:
        field = self.game.source_layout.fields[name]
        return self.source[field.start : field.stop].reshape(field.shape)

    @property
    def hands(self) -> np.ndarray:
        """hands[seat]: the cards in each hand."""
        return self._field("hands")[:, :NUM_CARDS]

    @property
    def piles(self) -> np.ndarray:
        """piles[seat]: the cards in each seat's score pile."""
        return self._field("piles")

    @property
    def played(self) -> np.ndarray:
        """played[seat]: the cards each seat has played that were turned face up (bids and
        discards)."""
        return self._field("played")

    @property
    def points(self) -> np.ndarray:
        """The points in each seat's score pile."""
        return self._field("points")

    @property
    def discards(self) -> np.ndarray:
        """The face-up discard pile (unmatched bids, leftover table cards)."""
        return self._field("discards")

    # --- flow ----------------------------------------------------------------------
    def _start_round(self) -> None:
        game, cells, deck = self.game, self.cells, self.deck
        at, n = game.at, game.num_players
        remaining = len(deck) - self.next_card
        on_table = min(NUM_POSITIONS, remaining)
        self.table = deck[self.next_card : self.next_card + on_table]
        for position, card in enumerate(self.table):
            cells[at.table[position] + card] = 1.0
            for index in at.unseen_cells[card]:  # shown to everyone
                cells[index] = 0.0
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
        # One card at a time from the start player: the k-th card dealt goes to seats[k % n].
        seats, hand_at, unseen_at = game.seat_orders[self.start_player], at.hand, at.unseen
        dealt = deck[self.next_card : self.next_card + per_player * n]
        for k, seat in enumerate(seats):
            self.hand_cards[seat] += dealt[k::n]
        for seat, card in zip(seats * per_player, dealt, strict=True):
            cells[hand_at[seat] + card] = 1.0
            cells[unseen_at + card * n + seat] = 0.0
        self.next_card += len(dealt)
        self.hand_size += per_player
        if self.last_round:  # the rest of the deck is discarded unseen
            self.buried[deck[self.next_card :]] = True
            self.next_card = len(deck)
            cells[at.last_round] = 1.0
        cells[at.deck] = len(deck) - self.next_card
        self.bid = 0
        self._start_bid()

    def _start_bid(self) -> None:
        n = self.game.num_players
        self.chosen = [-1] * n
        #: Where each seat's bid went this bid: -1 not yet, a position 0-3, or DISCARD.
        self.target = [-1] * n
        #: The table positions holding each suit, and (secret positions) each card's legal
        #: actions (``chip_actions``), fixed during a bid.
        self.suit_positions, self.chip_actions = table_lookups(self.table)
        self.num_placed = 0
        self.placing = -1
        if self.hand_size == 0 or max(self.table) < 0:
            # Nothing to bid with or for (only a short scripted deck gets here, in its last
            # round): the round, and so the game, ends.
            self._end_round()
            return
        self.phase = PHASE_CHOOSE
        cells, at = self.cells, self.game.at
        cells[at.bid + self.bid] = 1.0
        cells[at.bid + 1 - self.bid] = 0.0
        cells[at.phase + PHASE_CHOOSE] = 1.0
        cells[at.phase + PHASE_PLACE] = 0.0
        # Standard: a single card in hand is played without asking (hand sizes are public).
        # Secret positions always ask, since the legal chips depend on the hidden card.
        if not self.game.secret and self.hand_size == 1:
            self._choose({p: hand[0] for p, hand in enumerate(self.hand_cards)})

    def _choose(self, cards: Mapping[int, int]) -> None:
        cells, at, chosen, hands = self.cells, self.game.at, self.chosen, self.hand_cards
        for seat, card in cards.items():
            hands[seat].remove(card)
            cells[at.hand[seat] + card] = 0.0
            cells[at.own_bid[seat] + card] = 1.0
            chosen[seat] = card
        self.hand_size -= 1
        self.phase = PHASE_PLACE
        cells[at.phase + PHASE_CHOOSE] = 0.0
        cells[at.phase + PHASE_PLACE] = 1.0
        self._advance_placing()

    def matching_positions(self, card: int) -> tuple[int, ...]:
        """The table positions whose card has the suit of ``card``."""
        return self.suit_positions[SUIT_OF[card]]

    def _advance_placing(self) -> None:
        """Place from the start player clockwise; stop at a seat with a real choice."""
        order = self.game.seat_orders[self.start_player]
        suit_positions, chosen = self.suit_positions, self.chosen
        for placed in range(self.num_placed, len(order)):
            seat = order[placed]
            matches = suit_positions[SUIT_OF[chosen[seat]]]
            if len(matches) > 1:
                self.num_placed, self.placing = placed, seat
                return
            if matches:
                self._place(seat, matches[0])
            else:
                self._discard_bid(seat)
        self.num_placed, self.placing = len(order), -1
        self._reveal()

    def _place(self, seat: int, position: int) -> None:
        """Lay ``seat``'s bid face down beside table ``position`` (standard)."""
        self.target[seat] = position
        cells, at = self.cells, self.game.at
        cells[at.placed + seat] = 1.0
        cells[at.bids[position] + seat] = 1.0

    def _discard_bid(self, seat: int) -> None:
        card = self.chosen[seat]
        self.target[seat] = DISCARD
        cells, at = self.cells, self.game.at
        cells[at.discards + card] = 1.0
        cells[at.played[seat] + card] = 1.0
        cells[at.placed + seat] = 1.0
        for index in at.unseen_cells[card]:  # shown to everyone
            cells[index] = 0.0

    def _reveal(self) -> None:
        game, cells = self.game, self.cells
        at, n = game.at, game.num_players
        seats = game.seat_orders[self.start_player]
        chosen, target, table = self.chosen, self.target, self.table
        before = tuple(table)
        bidders: tuple[list[int], ...] = ([], [], [], [])
        for seat in seats:
            card, position = chosen[seat], target[seat]
            # Clear the bid's face-down entries (own_bid, placed, bids): the only ones set.
            cells[at.own_bid[seat] + card] = 0.0
            cells[at.placed + seat] = 0.0
            if position != DISCARD:  # a discard is face up already
                cells[at.bids[position] + seat] = 0.0
                cells[at.played[seat] + card] = 1.0
                for index in at.unseen_cells[card]:  # shown to everyone
                    cells[index] = 0.0
                bidders[position].append(seat)
        winners = []
        for position, group in enumerate(bidders):
            if not group:
                continue
            card = table[position]
            if len(group) == 1:
                winner = group[0]
            else:
                strength = game.bid_strength[card]
                winner = max(group, key=lambda seat: strength[chosen[seat]])
            winners.append(winner)
            pile = at.pile[winner]
            cells[pile + card] = 1.0
            gained = POINTS[card]
            for seat in group:
                cells[pile + chosen[seat]] = 1.0
                gained += POINTS[chosen[seat]]
            cells[at.points + winner] += gained
            cells[at.table[position] + card] = 0.0
            table[position] = -1
        # Kept raw (the render alone reads it, through last_result).
        self.last_reveal = (seats, tuple(chosen), tuple(target), before, tuple(winners))
        self.bid += 1
        if self.bid < 2 and max(table) >= 0:
            self._start_bid()
        else:
            self.chosen = [-1] * n
            self.target = [-1] * n
            self._end_round()

    def _end_round(self) -> None:
        cells, at, table = self.cells, self.game.at, self.table
        for position, card in enumerate(table):
            if card >= 0:
                cells[at.discards + card] = 1.0
                cells[at.table[position] + card] = 0.0
                table[position] = -1
        self.bids_per_round.append(self.bid)
        n = self.game.num_players
        if self.last_round:
            self.phase = PHASE_DONE
            for index in (at.bid, at.bid + 1, at.phase, at.phase + 1):
                cells[index] = 0.0
            # The players discard what is left in hand face down: buried, still unseen by
            # the others and still seen by their owner.
            for seat, hand in enumerate(self.hand_cards):
                for card in hand:
                    cells[at.hand[seat] + card] = 0.0
                    self.buried[card] = True
                    self.final_hands[seat, card] = True
                hand.clear()
            self.hand_size = 0
            self.suit_positions = table_lookups(table)[0]
            return
        cells[at.start + self.start_player] = 0.0
        self.start_player = (self.start_player + 1) % n
        cells[at.start + self.start_player] = 1.0
        cells[at.round + min(self.round, MAX_ROUNDS - 1)] = 0.0
        self.round += 1
        cells[at.round + min(self.round, MAX_ROUNDS - 1)] = 1.0
        self._start_round()

    # --- State interface -----------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        if self.phase == PHASE_CHOOSE:
            return self.game.everyone
        if self.phase == PHASE_PLACE:
            return (self.placing,)
        return ()

    def legal_mask(self, player: int) -> np.ndarray:
        game = self.game
        if self.phase == PHASE_CHOOSE:
            if game.secret:  # each hand card with the chips its suit allows
                mask = np.zeros(game.num_actions, dtype=bool)
                actions = self.chip_actions
                for card in self.hand_cards[player]:
                    for action in actions[card]:
                        mask[action] = True
                return mask
            # The hand row is padded with zeros to the 56 actions: cards only.
            return self.source[game.at.hand_rows[player]].astype(bool)
        if self.phase == PHASE_PLACE and player == self.placing:
            return place_mask(self.suit_positions[SUIT_OF[self.chosen[player]]])
        return np.zeros(game.num_actions, dtype=bool)

    def _apply(self, joint: Mapping[int, int]) -> None:
        if self.phase == PHASE_PLACE:
            self._place(self.placing, joint[self.placing] - PLACE)
            self.num_placed += 1
            self._advance_placing()
        elif not self.game.secret:
            self._choose(joint)
        else:
            cells, hand_at, hands = self.cells, self.game.at.hand, self.hand_cards
            for seat, action in joint.items():
                chip, card = divmod(action, NUM_CARDS)
                hands[seat].remove(card)
                cells[hand_at[seat] + card] = 0.0
                self.chosen[seat] = card
                if chip == BLANK:
                    self._discard_bid(seat)
                else:
                    self.target[seat] = chip  # revealed at once: never observed face down
            self.hand_size -= 1
            self._reveal()

    def scores(self) -> np.ndarray:
        return self.source[self.game.at.points_span].astype(np.float64)

    # --- copies, determinisations, invariants --------------------------------------
    def clone(self) -> EasterCollectionState:
        return self._copy(copy.deepcopy(self.rng))

    def _copy(self, rng: np.random.Generator) -> EasterCollectionState:
        """A copy sharing only the game and immutable values, with ``rng``."""
        other = copy.copy(self)
        other.rng = rng
        for name in ("source", "unused", "buried", "final_hands"):
            setattr(other, name, getattr(self, name).copy())
        other.cells = memoryview(other.source)
        for name in ("deck", "table", "chosen", "target", "bids_per_round"):
            setattr(other, name, list(getattr(self, name)))
        other.hand_cards = [list(hand) for hand in self.hand_cards]
        return other

    def __getstate__(self) -> dict:
        """For pickle and copy: everything but ``cells`` (``__setstate__`` rebinds it)."""
        state = self.__dict__.copy()
        del state["cells"]  # a memoryview cannot be pickled
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.cells = memoryview(self.source)

    def _rebuild_derived(self) -> None:
        """Write the ``DERIVED`` source fields again from scratch, from the rules' fields."""
        view = self.view
        for name in DERIVED:
            view[name][...] = 0.0
        shown = (self.discards > 0) | self.piles.any(axis=0)
        for position, card in enumerate(self.table):
            if card >= 0:
                view["table"][position, card] = 1.0
                shown[card] = True
        view["unseen"][:] = (~shown & (self.hands == 0) & ~self.final_hands).T
        if self.phase == PHASE_PLACE:
            for seat, card in enumerate(self.chosen):
                view["own_bid"][seat, card] = 1.0
                view["unseen"][card, seat] = 0.0
                if self.target[seat] >= 0:
                    view["placed"][seat] = 1.0
                    if self.target[seat] != DISCARD:
                        view["bids"][self.target[seat], seat] = 1.0
        view["deck"][0] = len(self.deck) - self.next_card
        view["round"][min(self.round, MAX_ROUNDS - 1)] = 1.0
        view["last_round"][0] = self.last_round
        if self.phase != PHASE_DONE:
            view["bid"][self.bid] = 1.0
            view["phase"][self.phase] = 1.0
        view["start"][self.start_player] = 1.0

    def hidden_bids(self, player: int) -> list[int]:
        """Seats other than ``player`` whose bid lies face down (standard, placing phase)."""
        if self.phase != PHASE_PLACE:
            return []
        return [
            s for s in range(self.game.num_players) if s != player and self.target[s] != DISCARD
        ]

    def resample(self, player: int, rng: np.random.Generator) -> EasterCollectionState:
        """Deal the cards ``player`` has not seen (the deck, the other hands, the others'
        face-down bids, the cards discarded unseen, the others' hands discarded at the end)
        again at random. A bid placed beside a table card keeps that card's suit, and the bid
        of the seat now placing keeps a suit that matches several table cards (that is why
        it was asked). ``player``'s own hand discarded at the end stays theirs."""
        sample = self._copy(np.random.default_rng(rng.integers(2**63)))
        n = self.game.num_players
        others = [s for s in range(n) if s != player]
        bids = self.hidden_bids(player)
        remaining = self.deck[self.next_card :]
        pool = [self.chosen[s] for s in bids] + remaining
        for seat in others:
            pool += np.flatnonzero(self.hands[seat]).tolist()
        pool += np.flatnonzero(self.buried & ~self.final_hands[player]).tolist()
        pool = sorted(pool)  # the same draw from states the player cannot tell apart
        pool = [pool[i] for i in rng.permutation(len(pool))]

        def draw(suits: tuple[int, ...] | None) -> int:
            """The first card of the shuffled pool with one of ``suits`` (any if None)."""
            for i, card in enumerate(pool):
                if suits is None or SUIT_OF[card] in suits:
                    return pool.pop(i)
            raise AssertionError(f"no card of suits {suits} left to resample")

        # Most constrained first, so that a draw never leaves a later bid without a card:
        # placed bids need one suit, the placing seat one of the suits matching twice.
        placed = [s for s in bids if self.target[s] >= 0]
        for seat in placed:
            sample.chosen[seat] = draw((SUIT_OF[self.table[self.target[seat]]],))
        if self.placing in bids:
            several = tuple(s for s in range(4) if len(self.suit_positions[s]) > 1)
            sample.chosen[self.placing] = draw(several)
        for seat in bids:
            if seat not in placed and seat != self.placing:
                sample.chosen[seat] = draw(None)
        for seat in others:
            sample.hand_cards[seat] = pool[: self.hand_size]
            sample.hands[seat] = False
            sample.hands[seat, pool[: self.hand_size]] = True
            del pool[: self.hand_size]
        for seat in others:  # the hands discarded at the end (empty before)
            size = int(self.final_hands[seat].sum())
            sample.final_hands[seat] = False
            sample.final_hands[seat, pool[:size]] = True
            del pool[:size]
        sample.deck = pool[: len(remaining)]
        sample.next_card = 0
        sample.buried[:] = self.final_hands[player]
        sample.buried[pool[len(remaining) :]] = True
        sample.buried |= sample.final_hands.any(axis=0)
        sample._rebuild_derived()  # other seats' hands and bids changed
        return sample

    def check_invariants(self) -> None:
        n, game = self.game.num_players, self.game
        # Every card is in exactly one place.
        places: list[list[str]] = [[] for _ in range(NUM_CARDS)]
        for card in self.deck[self.next_card :]:
            places[card].append("deck")
        for seat in range(n):
            for card in np.flatnonzero(self.hands[seat]):
                places[card].append(f"hand {seat}")
            for card in np.flatnonzero(self.piles[seat]):
                places[card].append(f"pile {seat}")
        if self.phase == PHASE_PLACE:
            for seat in range(n):
                if self.target[seat] != DISCARD:  # a discarded bid is in the discards
                    places[self.chosen[seat]].append(f"bid {seat}")
        for position, card in enumerate(self.table):
            if card >= 0:
                places[card].append(f"table {position + 1}")
        for name in ("discards", "buried", "unused"):
            for card in np.flatnonzero(getattr(self, name)):
                places[card].append(name)
        for card, where in enumerate(places):
            assert len(where) == 1, f"{card_name(card)} is in {len(where)} places: {where}"
        final = self.final_hands
        assert not (final & ~self.buried).any(), "a hand discarded at the end is not buried"
        assert final.sum(axis=0).max() <= 1, "a card discarded from two hands"
        assert self.phase == PHASE_DONE or not final.any(), "hands discarded before the end"
        assert 0 <= self.next_card <= len(self.deck), f"next_card {self.next_card} out of range"
        # Hands, piles and what everyone has seen.
        assert 0 <= self.hand_size <= HAND_SIZE, f"hand size {self.hand_size}"
        held = self.hands.sum(axis=1).tolist()
        assert held == [self.hand_size] * n, f"hands hold {held}, not {self.hand_size} each"
        recomputed = (self.piles @ np.array(POINTS)).tolist()
        assert recomputed == self.points.tolist(), (
            f"points {self.points} but piles say {recomputed}"
        )
        assert self.scores().tolist() == recomputed, "scores() disagree with the piles"
        face_up = self.piles.any(axis=0) | (self.discards > 0)
        assert self.played.sum(axis=0).max() <= 1, "a card was played by two seats"
        assert not ((self.played > 0) & ~face_up).any(), (
            "a played card is neither in a pile nor discarded"
        )
        for seat, hand in enumerate(self.hand_cards):
            assert sorted(hand) == np.flatnonzero(self.hands[seat]).tolist(), (
                f"hand_cards[{seat}] {hand} are not the hand"
            )
        assert self.suit_positions == positions_by_suit(self.table), "suit positions out of date"
        if game.secret and self.phase == PHASE_CHOOSE:
            for card in range(NUM_CARDS):
                chips = [
                    k for k, t in enumerate(self.table) if t >= 0 and SUIT_OF[t] == SUIT_OF[card]
                ] or [BLANK]
                assert self.chip_actions[card] == tuple(k * NUM_CARDS + card for k in chips), (
                    f"{card_name(card)} goes with the wrong chips"
                )
        # The phase.
        assert 0 <= self.start_player < n, f"start player {self.start_player}"
        if self.phase != PHASE_DONE:
            assert self.bid in (0, 1), f"bid {self.bid} of a round"
        if self.phase == PHASE_CHOOSE:
            assert self.chosen == [-1] * n and self.target == [-1] * n, "bids before choosing"
            assert max(self.table) >= 0, "a bid with an empty table"
            assert self.hand_size >= (1 if game.secret else 2), "asked to choose with no choice"
        elif self.phase == PHASE_PLACE:
            assert not game.secret, "secret positions has no placing step"
            assert 0 <= self.num_placed < n, f"num_placed {self.num_placed}"
            assert self.placing == (self.start_player + self.num_placed) % n, "placing seat"
            assert len(self.matching_positions(self.chosen[self.placing])) > 1, "forced place"
            for k in range(n):
                seat = (self.start_player + k) % n
                target, card = self.target[seat], self.chosen[seat]
                assert card >= 0, f"seat {seat} has no bid"
                if k >= self.num_placed:
                    assert target == -1, f"seat {seat} placed out of turn"
                elif target == DISCARD:
                    assert not self.matching_positions(card), f"seat {seat} discarded a match"
                    assert self.discards[card] and self.played[seat, card], "discard not shown"
                else:
                    assert target in self.matching_positions(card), f"seat {seat} off suit"
        else:
            assert self.phase == PHASE_DONE, f"phase {self.phase}"
            assert self.last_round and max(self.table) < 0, "game over with cards on the table"
            assert self.next_card == len(self.deck), "game over with cards in the deck"
        # The observation fields kept move by move: as written again from scratch.
        assert not self.view["hands"][:, NUM_CARDS:].any(), "a hand's padding is not zero"
        fresh = self._copy(self.rng)
        fresh._rebuild_derived()
        stale = [k for k in DERIVED if not np.array_equal(self.view[k], fresh.view[k])]
        assert not stale, f"observation source out of date: {stale}"

    @property
    def last_result(self) -> list[tuple[int, int, int, bool]]:
        """The last reveal, for the render: (seat, card, table card or -1, won)."""
        if not self.last_reveal:
            return []
        seats, chosen, target, table, winners = self.last_reveal
        return [
            (s, chosen[s], table[target[s]] if target[s] != DISCARD else -1, s in winners)
            for s in seats
        ]

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
                f"player_{p}: {int(self.points[p]):>2} points, {self.hand_size} in hand, "
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

    def private_view(self, player: int) -> str:
        """``player``'s hand and, while bids are placed (standard), their own face-down bid.
        (With secret positions a card and its chip are revealed in the same step.)"""
        hand = " ".join(card_name(c) for c in np.flatnonzero(self.hands[player])) or "-"
        lines = [f"your hand (player_{player}): {hand}"]
        card, where = self.chosen[player], self.target[player]
        if self.phase == PHASE_PLACE and card >= 0 and where != DISCARD:
            if where >= 0:
                status = f"beside position {where + 1}"
            elif player == self.placing:
                status = "you place it now"
            else:
                status = "waiting to be placed"
            lines.append(f"your face-down bid: {card_name(card)} ({status})")
        return "\n".join(lines)


class EasterCollectionGame(Game):
    name = "easter_collection"
    config_class = EasterCollectionConfig

    def __init__(self, config: EasterCollectionConfig) -> None:
        super().__init__(config)
        n = config.num_players
        self.secret = config.variant == "secret_positions"
        self.every_seat_chooses = self.secret  # no placing in turn
        self.num_actions = NUM_CHIPS * NUM_CARDS if self.secret else NUM_CARDS + NUM_POSITIONS
        # Every bid takes one card from each hand, and the hands get at most the 48 cards
        # left after the first round's table: at most 48 // n bids. A bid asks each seat
        # to choose and, in the standard game, at most each seat once more to place.
        self.max_decisions = (1 if self.secret else 2) * n * ((NUM_CARDS - NUM_POSITIONS) // n)
        faces = (0, 0, 0) if config.table_face_value == "zero" else (11, 12, 13)
        #: What a card is worth as a table card (face bids mirror it): A 1, 2-10 face value.
        self.table_value = tuple(faces[r - JACK] if r >= JACK else r + 1 for r in RANK_OF)
        #: bid_strength[table card][bid]: precomputed ``bid_key``.
        self.bid_strength = tuple(
            tuple(self.bid_key(b, t) for b in range(NUM_CARDS)) for t in range(NUM_CARDS)
        )
        self.everyone = tuple(range(n))
        #: seat_orders[s]: the seats going left from seat s.
        self.seat_orders = tuple(tuple((s + k) % n for k in range(n)) for s in range(n))
        self.observation_layout = layout.observation_layout(n)
        #: The layout of each state's ``source`` buffer, and each seat's gather from it.
        self.source_layout = layout.source_layout(n)
        self.observation_gather = layout.gather_indices(
            self.source_layout, self.observation_layout, n
        )
        #: Flat indices into the source for the rules' writes, and spans of it.
        self.at = layout.source_offsets(self.source_layout, n)
        #: A new state's source: every card unseen by every seat, round 1 (read-only).
        self.initial_source = layout.initial_source(self.source_layout)

    def bid_key(self, bid: int, table_card: int) -> int:
        """Strength of ``bid`` on ``table_card``: numbers bid their value (Ace 1), J/Q/K mirror
        the table card and break ties K > Q > J."""
        rank = RANK_OF[bid]
        if rank >= JACK:
            return 4 * self.table_value[table_card] + rank - JACK + 1
        return 4 * (rank + 1)

    def new_initial_state(self, rng: np.random.Generator) -> EasterCollectionState:
        return EasterCollectionState(self, rng)

    def observation(self, state: EasterCollectionState, player: int) -> np.ndarray:
        """``player``'s flat observation (a new float32 array), the fast way: one gather from
        the state's buffer. The indices are all in range, so ``mode="wrap"`` gathers what the
        default would, without its bounds check. ``observation.encode`` writes the same from
        the state's plain fields."""
        return state.source.take(self.observation_gather[player], mode="wrap")

    def action_name(self, action: int) -> str:
        if self.secret:
            chip, card = divmod(action, NUM_CARDS)
            where = "the blank chip (discard)" if chip == BLANK else f"chip {chip + 1}"
            return f"play {card_name(card)} with {where}"
        if action < NUM_CARDS:
            return f"play {card_name(action)}"
        return f"place at position {action - PLACE + 1}"
