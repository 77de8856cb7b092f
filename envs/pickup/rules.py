"""Pickup rules: pure, seeded, no RL imports. See the package docstring for the rules.

The state keeps every count where the rules read it fastest and updates it as cards
move, never recounting. The rules' fields are plain Python ints and lists (read and
written one entry at a time: several times cheaper than numpy scalars): per-seat hand
and pile counts per rank, the pool, the discard and the reveal bookkeeping. Derived and
kept up to date as well: the totals, bit sets of the ranks in each hand and in the pool
(the masks and the resolution read them), and the observation table (its fields and
cells in ``layout.py``), one float32 vector of every seat's observation fields that each
move writes a few cells of (through a memoryview: scalar writes at a third of numpy's
cost); an observation is one gather from it. ``build_table`` writes the table plainly
from the rules' fields: ``refresh()`` recomputes it and the rest from scratch (after
editing a state by hand); ``check_invariants`` checks they are current.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, not_allowed, require_choice
from envs.pickup.layout import (
    NUM_RANKS,
    POOL_SIZE,
    Cells,
    gather_index,
    observation_layout,
    table_layout,
)

#: Face value (points) of each rank index.
RANK_VALUES = np.arange(1, NUM_RANKS + 1, dtype=np.int64)
#: The Pairs deck: one 1, two 2s, ... ten 10s (55 cards).
DECK_COUNTS = RANK_VALUES.copy()
DECK_SIZE = int(DECK_COUNTS.sum())
#: The deck in rank order; every hand shuffles a copy of it.
RANK_INDEX = np.arange(NUM_RANKS)
DECK = np.repeat(RANK_INDEX, DECK_COUNTS)
PLAYER_COUNTS = (2, 3, 4, 5, 6)
#: Cards dealt to each player (and rounds per hand), by player count [book].
HAND_SIZE = {2: 7, 3: 6, 4: 6, 5: 5, 6: 5}
#: The longer game's target by player count [book; 75 for 5-6 is a decision: lost in the copy].
BOOK_TARGET = {2: 150, 3: 100, 4: 100, 5: 75, 6: 75}
NO_SEAT = -1


@dataclass(frozen=True)
class PickupConfig(Config):
    """Options: ``num_players`` 2-6 (default 4); ``target_score`` None (one hand, default),
    ``"book"`` (150 / 100 / 75 by player count) or an integer >= 1 (play hands until a
    total reaches it)."""

    num_players: int = 4
    target_score: int | str | None = None

    def validate(self) -> None:
        require_choice("num_players", self.num_players, PLAYER_COUNTS)
        target = self.target_score
        if target is None or (isinstance(target, str) and target == "book"):
            return
        integer = isinstance(target, (int, np.integer)) and not isinstance(target, (bool, np.bool_))
        if not integer or target < 1:
            raise not_allowed(
                "target_score",
                target,
                "None (a single hand), 'book' (150 for 2 players, 100 for 3-4, 75 for 5-6) "
                "or an integer >= 1",
            )

    @property
    def target(self) -> int | None:
        """The target total, or None for a single hand."""
        if self.target_score == "book":
            return BOOK_TARGET[self.num_players]
        return None if self.target_score is None else int(self.target_score)


def counts_of(ranks: list[int]) -> list[int]:
    """Cards of each rank index among ``ranks``."""
    out = [0] * NUM_RANKS
    for rank in ranks:
        out[rank] += 1
    return out


def bits_of(counts: list[int]) -> int:
    """The bit set of the rank indices with a nonzero count (bit ``r`` for rank ``r``)."""
    return sum(1 << rank for rank, count in enumerate(counts) if count)


def _mask(bits: int) -> np.ndarray:
    mask = np.array([(bits >> rank) & 1 for rank in range(NUM_RANKS)], dtype=bool)
    mask.flags.writeable = False  # shared: legal_mask hands out copies
    return mask


#: Bit ``r`` of a bit set of ranks, for each rank index ``r``.
RANK_BITS = 1 << RANK_INDEX
#: The bool mask of every bit set of ranks.
MASKS = [_mask(bits) for bits in range(1 << NUM_RANKS)]
#: The bit set of the ranks a played card may pick up: its own rank and lower.
AT_MOST = [(2 << rank) - 1 for rank in range(NUM_RANKS)]


class PickupState(State):
    game: PickupGame

    def __init__(self, game: PickupGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        #: Points from earlier hands (the longer game).
        self.banked = [0] * n
        #: The seat choosing which rank to pick up, or NO_SEAT.
        self.chooser = NO_SEAT
        self.hand_number = 0
        self.finished = False
        self.dealer = int(rng.integers(n))
        #: Every seat's observation fields (``layout.table_layout``), kept up to date.
        self._bind_table(np.zeros(game.table_layout.size, dtype=np.float32))
        self._start_hand()

    # --- dealing ---------------------------------------------------------------------
    def _start_hand(self) -> None:
        game = self.game
        n = game.num_players
        deck = DECK.copy()
        self.rng.shuffle(deck)
        dealt = n * game.hand_size
        # Seat p gets deck[p * size : (p + 1) * size]: one bincount over (seat, rank) cells.
        dealt_cells = np.bincount(game.deal_offsets + deck[:dealt], minlength=n * NUM_RANKS)
        hands = dealt_cells.reshape(n, NUM_RANKS)
        #: Cards in hand: counts per rank, one list per seat.
        self.hands = hands.tolist()
        #: Undealt cards (rank indices); pools are dealt from the end.
        self.stock = deck[dealt:].tolist()
        #: Score piles of this hand, counts per rank, one list per seat.
        self.piles = [[0] * NUM_RANKS for _ in range(n)]
        #: Game points: banked plus the score pile (kept up to date after every step).
        self.totals = self.banked.copy()
        #: Bit sets of the ranks in each hand and in the pool (kept up to date).
        self.hand_bits = ((hands > 0) @ RANK_BITS).tolist()
        self.pool_bits = 0
        #: Cards of each rank not yet shown face up this hand (in a pool dealt or a reveal).
        self.unshown = DECK_COUNTS.tolist()
        #: Cards of each rank discarded this hand (played cards that picked up, knockouts,
        #: leftover pools).
        self.discard = [0] * NUM_RANKS
        # The latest reveal (this round's once revealed, else the previous round's):
        #: the rank index each seat played (NO_SEAT: none yet this hand),
        self.played = [NO_SEAT] * n
        #: the seats that have acted, in order,
        self.acted: list[int] = []
        #: the rank each seat added to its pile (NO_SEAT: not yet) and whether it was stacked,
        self.took = [NO_SEAT] * n
        self.stacked = [False] * n
        #: the round it belongs to, and the pool left over and discarded at its end.
        self.reveal_round = NO_SEAT
        self.leftover = [0] * NUM_RANKS
        self.round = 0
        # Round 1 ties start to the left of the dealer.
        self.last_actor = self.dealer
        # The table of a new hand, written directly (``build_table`` would be slower):
        # the hands, the unshown deck, the scores (banked) and the one-hot cells.
        cells, table, view = game.cells, self.table, self._table_view
        table.fill(0)
        table[cells.hands : cells.hands + n * NUM_RANKS] = dealt_cells
        table[cells.unshown : cells.unshown + NUM_RANKS] = DECK_COUNTS
        for seat, points in enumerate(self.banked):
            view[cells.scores + seat] = points
        view[cells.last_actor + self.dealer] = 1
        view[cells.dealer + self.dealer] = 1
        view[cells.round] = 1
        self._start_round()  # the pool and the cards it shows
        self._refresh_unseen()

    def _start_round(self) -> None:
        """Deal the pool from the end of the stock; its cards are shown."""
        cells, stock, unshown, view = self.game.cells, self.stock, self.unshown, self._table_view
        in_pool, in_unshown = cells.pool, cells.unshown
        pool = [0] * NUM_RANKS
        bits = 0
        for _ in range(POOL_SIZE):
            rank = stock.pop()
            count = pool[rank] + 1
            pool[rank] = count
            view[in_pool + rank] = count
            left = unshown[rank] - 1
            unshown[rank] = left
            view[in_unshown + rank] = left
            bits |= 1 << rank
        self.pool = pool
        self.pool_bits = bits

    def refresh(self) -> None:
        """Recompute what is derived from the rules' fields: the totals, the bit sets and
        the observation table (the rules keep them up to date: call it after editing a
        state by hand)."""
        self.totals = [
            banked + sum(count * (rank + 1) for rank, count in enumerate(pile))
            for banked, pile in zip(self.banked, self.piles, strict=True)
        ]
        self.hand_bits = [bits_of(hand) for hand in self.hands]
        self.pool_bits = bits_of(self.pool)
        self._bind_table(build_table(self))

    def _bind_table(self, table: np.ndarray) -> None:
        """Use ``table``: a memoryview of it for the rules' writes of single cells, and
        views of the parts that ``unseen`` is computed from."""
        self.table = table
        self._table_view = memoryview(table)
        fields = self.game.table_layout.fields
        hands, unseen, unshown = fields["hands"], fields["unseen"], fields["unshown"]
        self._table_hands = table[hands.start : hands.stop].reshape(hands.shape)
        self._table_unseen = table[unseen.start : unseen.stop].reshape(unseen.shape)
        self._table_unshown = table[unshown.start : unshown.stop]

    def _refresh_unseen(self) -> None:
        # One float32 ufunc over the table's own rows (every seat: unshown minus its hand).
        np.subtract(self._table_unshown, self._table_hands, out=self._table_unseen)

    def __getstate__(self) -> dict[str, object]:
        # Views would be copied as separate arrays (and a memoryview cannot be copied at
        # all): drop them, and bind the copied table.
        state = self.__dict__.copy()
        for name in ("_table_view", "_table_hands", "_table_unseen", "_table_unshown"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._bind_table(self.table)

    # --- the State interface ---------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        if self.finished:
            return ()
        if self.chooser != NO_SEAT:
            return (self.chooser,)
        return self.game.all_seats

    def eligible(self, card: int) -> list[int]:
        """Rank indices in the pool that a played ``card`` (rank index) may pick up."""
        pool = self.pool
        return [rank for rank in range(card + 1) if pool[rank]]

    def legal_mask(self, player: int) -> np.ndarray:
        # Copies of shared masks, looked up by bit set: the ranks in hand while playing,
        # the chooser's eligible pool ranks.
        if self.chooser == NO_SEAT:
            if self.finished or not 0 <= player < self.game.num_players:
                return np.zeros(NUM_RANKS, dtype=bool)
            return MASKS[self.hand_bits[player]].copy()
        if player != self.chooser:
            return np.zeros(NUM_RANKS, dtype=bool)
        return MASKS[self.pool_bits & AT_MOST[self.played[player]]].copy()

    def _apply(self, joint: Mapping[int, int]) -> None:
        cells, view = self.game.cells, self._table_view
        round_before = self.round
        revealing = self.chooser == NO_SEAT
        if not revealing:
            seat, self.chooser = self.chooser, NO_SEAT
            view[cells.chooser + seat] = 0
            self._pick_up(seat, joint[seat])
        else:
            n = self.game.num_players
            order = cells.order
            for seat in self.acted:  # the previous reveal's order is cleared
                view[order + seat] = 0
            self.acted = []
            self.took = [NO_SEAT] * n
            self.stacked = [False] * n
            self.leftover = [0] * NUM_RANKS
            self.reveal_round = self.round
            hands, hand_bits, unshown, played = (
                self.hands,
                self.hand_bits,
                self.unshown,
                self.played,
            )
            in_hands, in_unshown, revealed = cells.hands, cells.unshown, cells.revealed
            for seat, card in joint.items():
                row = seat * NUM_RANKS
                hand = hands[seat]
                left = hand[card] - 1
                hand[card] = left
                if not left:
                    hand_bits[seat] ^= 1 << card
                view[in_hands + row + card] = left
                left = unshown[card] - 1
                unshown[card] = left
                view[in_unshown + card] = left
                if played[seat] != NO_SEAT:
                    view[revealed + row + played[seat]] = 0
                view[revealed + row + card] = 1
                played[seat] = card
        self._resolve()
        if revealing or self.round != round_before:  # cards shown: a reveal or a new pool
            self._refresh_unseen()

    def scores(self) -> np.ndarray:
        return np.array(self.totals, dtype=np.float64)

    # --- resolution ------------------------------------------------------------------
    def next_actor(self) -> int:
        """The seat that acts next this round: the lowest card; ties go to the tied seat
        reached first going left from the most recent actor. NO_SEAT when all have acted."""
        took, played = self.took, self.played
        best, best_card = NO_SEAT, NUM_RANKS
        # Seats in the order going left from the last actor: the first of tied cards wins.
        for seat in self.game.left_of[self.last_actor]:
            if took[seat] == NO_SEAT and played[seat] < best_card:
                best, best_card = seat, played[seat]
        return best

    def _resolve(self) -> None:
        """Let the played cards act in order until a pickup choice is needed or the round ends."""
        while (seat := self.next_actor()) != NO_SEAT:
            card = self.played[seat]
            eligible = self.pool_bits & AT_MOST[card]
            if eligible & (eligible - 1):  # two ranks or more: the player chooses
                self.chooser = seat
                self._table_view[self.game.cells.chooser + seat] = 1
                return
            if eligible:
                self._pick_up(seat, eligible.bit_length() - 1)
            else:
                self._stack(seat, card)
        self._end_round()

    def _pick_up(self, seat: int, rank: int) -> None:
        """Take one ``rank`` from the pool; knock out the rest of that rank in the pool and in
        the other players' score piles. The played card is discarded."""
        cells, view, totals = self.game.cells, self._table_view, self.totals
        value = rank + 1
        knocked = 0
        for other, pile in enumerate(self.piles):
            count = pile[rank]
            if count and other != seat:  # knocked out
                knocked += count
                pile[rank] = 0
                view[cells.piles + other * NUM_RANKS + rank] = 0
                total = totals[other] - value * count
                totals[other] = total
                view[cells.scores + other] = total
        self.discard[rank] += knocked + self.pool[rank] - 1
        self.discard[self.played[seat]] += 1
        self.pool[rank] = 0
        self.pool_bits ^= 1 << rank
        view[cells.pool + rank] = 0
        own = self.piles[seat][rank] + 1
        self.piles[seat][rank] = own
        view[cells.piles + seat * NUM_RANKS + rank] = own
        total = totals[seat] + value
        totals[seat] = total
        view[cells.scores + seat] = total
        self._acted(seat, rank)

    def _stack(self, seat: int, card: int) -> None:
        """No eligible pool card: the played card goes to the player's own pile."""
        cells, view, totals = self.game.cells, self._table_view, self.totals
        count = self.piles[seat][card] + 1
        self.piles[seat][card] = count
        view[cells.piles + seat * NUM_RANKS + card] = count
        total = totals[seat] + card + 1
        totals[seat] = total
        view[cells.scores + seat] = total
        self.stacked[seat] = True
        self._acted(seat, card)

    def _acted(self, seat: int, rank: int) -> None:
        cells, view = self.game.cells, self._table_view
        self.took[seat] = rank
        self.acted.append(seat)
        view[cells.order + seat] = len(self.acted)
        view[cells.last_actor + self.last_actor] = 0
        view[cells.last_actor + seat] = 1
        self.last_actor = seat

    def _end_round(self) -> None:
        cells, view = self.game.cells, self._table_view
        pool, discard = self.pool, self.discard
        self.leftover = pool  # the leftover pool is discarded
        for rank, count in enumerate(pool):
            if count:
                discard[rank] += count
                view[cells.pool + rank] = 0
        self.pool = [0] * NUM_RANKS
        self.pool_bits = 0
        view[cells.round + self.round] = 0
        self.round += 1
        if self.round < self.game.hand_size:
            view[cells.round + self.round] = 1
            self._start_round()
            return
        target = self.game.target
        if target is None or max(self.totals) >= target:
            self.finished = True
            return
        self.banked = self.totals.copy()
        self.hand_number += 1
        self.dealer = (self.dealer + 1) % self.game.num_players
        self._start_hand()

    # --- search and checks -----------------------------------------------------------
    def clone(self) -> PickupState:
        return self._copy(copy.deepcopy(self.rng))

    def _copy(self, rng: np.random.Generator) -> PickupState:
        """A copy with ``rng`` sharing only the game and immutable values: the fields are
        ints, bools, lists of them or lists of such lists, and the table (a third of a
        deep copy's cost)."""
        other = object.__new__(PickupState)
        for name, value in self.__dict__.items():
            if type(value) is list:
                value = [list(v) if type(v) is list else v for v in value]
            other.__dict__[name] = value
        other.rng = rng
        other._bind_table(self.table.copy())
        return other

    def resample(self, player: int, rng: np.random.Generator) -> PickupState:
        """The other hands and the stock order drawn again: the cards unknown to ``player``
        (not in its hand, not shown this hand) are shuffled and dealt back into the other
        hands, each keeping its size, and the stock."""
        sample = self._copy(np.random.default_rng(rng.integers(2**63)))
        others = [q for q in self.game.all_seats if q != player]
        unknown = np.sort(  # sorted: the same draw from states the player cannot tell apart
            np.concatenate(
                [np.repeat(RANK_INDEX, self.hands[q]) for q in others]
                + [np.array(self.stock, dtype=np.int64)]
            )
        )
        rng.shuffle(unknown)
        start = 0
        for q in others:
            size = sum(self.hands[q])
            hand = np.bincount(unknown[start : start + size], minlength=NUM_RANKS)
            sample.hands[q] = hand.tolist()
            start += size
        sample.stock = unknown[start:].tolist()
        sample.refresh()  # the other seats' hand bits, and hand and unseen rows of the table
        return sample

    def check_invariants(self) -> None:
        game = self.game
        n, size = game.num_players, game.hand_size
        hands, piles = np.array(self.hands, dtype=np.int64), np.array(self.piles, dtype=np.int64)
        assert hands.shape == piles.shape == (n, NUM_RANKS), "a hand or pile of the wrong shape"
        assert (hands >= 0).all() and (piles >= 0).all(), "negative hand or pile count"
        assert min(self.pool) >= 0 and min(self.discard) >= 0, "negative pool or discard count"
        # Every card is in exactly one place. Revealed cards that have not acted yet (during
        # a pickup choice) lie face up in front of their players.
        waiting = counts_of(
            [
                self.played[s]
                for s in range(n)
                if self.chooser != NO_SEAT and self.took[s] == NO_SEAT
            ]
        )
        stock = np.array(counts_of(self.stock), dtype=np.int64)
        face_up = np.array(self.pool) + piles.sum(axis=0) + np.array(self.discard) + waiting
        where = hands.sum(axis=0) + face_up + stock
        assert (where == DECK_COUNTS).all(), (
            f"cards per rank in hands, pool, piles, discard, reveal and stock {where.tolist()} "
            f"are not the deck {DECK_COUNTS.tolist()}"
        )
        # What was shown this hand is exactly what is face up or discarded.
        shown = DECK_COUNTS - np.array(self.unshown)
        assert (shown == face_up).all(), (
            f"cards shown this hand {shown.tolist()} are not the pool, piles, discard and "
            f"waiting reveal {face_up.tolist()}"
        )
        # One card played per round; the pools come from the stock.
        assert 0 <= self.round <= size and self.finished == (self.round == size), (
            f"round {self.round} of {size} with finished={self.finished}"
        )
        choosing = self.chooser != NO_SEAT
        in_hand = size - self.round - choosing
        assert (hands.sum(axis=1) == in_hand).all(), (
            f"hand sizes {hands.sum(axis=1).tolist()}, expected {in_hand} each"
        )
        pools_dealt = min(self.round + 1, size)
        assert len(self.stock) == DECK_SIZE - n * size - POOL_SIZE * pools_dealt, (
            f"{len(self.stock)} cards in the stock after {pools_dealt} pools"
        )
        pool_cards = sum(self.pool)
        if self.finished:
            assert pool_cards == 0, "cards left in the pool at the end"
        elif not choosing:
            assert pool_cards == POOL_SIZE, f"{pool_cards} cards in the pool before a reveal"
        # Each seat adds one card per round to its pile; knockouts only remove.
        for seat in range(n):
            actions = self.round + (choosing and seat in self.acted)
            assert piles[seat].sum() <= actions, f"seat {seat} pile larger than its actions"
        # Scores are the banked points plus the piles.
        totals = np.array(self.banked, dtype=np.int64) + piles @ RANK_VALUES
        assert self.totals == totals.tolist() and (self.scores() == totals).all(), (
            f"scores {self.scores().tolist()} are not banked + piles {totals.tolist()}"
        )
        # The reveal: who has acted, in what order, and the pending choice.
        acted = self.acted
        assert len(set(acted)) == len(acted), f"a seat acted twice: {acted}"
        assert all((self.took[s] != NO_SEAT) == (s in acted) for s in range(n)), (
            f"took {self.took} disagrees with the seats that acted {acted}"
        )
        if self.played[0] == NO_SEAT:
            assert not acted and all(p == NO_SEAT for p in self.played), "acted without a reveal"
        else:
            assert all(0 <= p < NUM_RANKS for p in self.played), f"played {self.played}"
        if acted:
            assert self.last_actor == acted[-1], "the last actor is not the last seat that acted"
        for seat in range(n):
            if self.stacked[seat]:
                assert self.took[seat] == self.played[seat], f"seat {seat} stacked another card"
            elif self.took[seat] != NO_SEAT:
                assert self.took[seat] <= self.played[seat], f"seat {seat} took a higher rank"
        if choosing:
            assert self.chooser not in acted, "the chooser has already acted"
            assert len(self.eligible(self.played[self.chooser])) >= 2, "a choice of one rank"
        elif not self.finished and self.played[0] != NO_SEAT:
            assert len(acted) == n, "a round ended before every seat acted"
        # The longer game goes on only while every total is below the target.
        target = game.target
        if target is None:
            assert not any(self.banked) and self.hand_number == 0, "banked points in one hand"
        elif self.finished:
            assert totals.max() >= target, "the game ended below the target"
        else:
            assert max(self.banked) < target, "a hand was dealt after the target was reached"
        assert 0 <= self.dealer < n and 0 <= self.last_actor < n, "a seat out of range"
        # The bit sets and the observation table the rules keep are the ones recomputed
        # from scratch.
        hand_bits = [bits_of(hand) for hand in self.hands]
        assert self.hand_bits == hand_bits, f"hand bits {self.hand_bits} are not {hand_bits}"
        pool_bits = bits_of(self.pool)
        assert self.pool_bits == pool_bits, f"pool bits {self.pool_bits} are not {pool_bits}"
        built = build_table(self)
        stale = np.flatnonzero(self.table != built).tolist()
        assert not stale, f"observation table cells {stale} are stale"

    # --- the spectator's view --------------------------------------------------------
    def __str__(self) -> str:
        def cards(count_row: list[int]) -> str:
            ranks = np.repeat(RANK_INDEX, count_row)[::-1]
            return " ".join(str(r + 1) for r in ranks) or "-"

        game = self.game
        n, size = game.num_players, game.hand_size
        round_text = "game over" if self.finished else f"round {self.round + 1} of {size}"
        target = f" (playing to {game.target})" if game.target is not None else ""
        lines = [
            f"Pickup, hand {self.hand_number + 1}{target}, {round_text}; "
            f"dealer player_{self.dealer}; last to act player_{self.last_actor}",
            f"pool: {cards(self.pool)}",
        ]
        for p in range(n):
            line = (
                f"player_{p}: score {self.totals[p]:>3}  {sum(self.hands[p])} in hand"
                f"  pile [{cards(self.piles[p])}]"
            )
            if self.played[p] != NO_SEAT:
                line += f"  round {self.reveal_round + 1}: played {self.played[p] + 1}"
                if p in self.acted:  # which card acted when: lowest played first
                    turn = ordinal(self.acted.index(p) + 1)
                    done = "stacked it" if self.stacked[p] else f"took {self.took[p] + 1}"
                    line += f", {done} (acted {turn})"
            lines.append(line)
        if self.chooser != NO_SEAT:
            options = " ".join(str(r + 1) for r in self.eligible(self.played[self.chooser]))
            lines.append(f"player_{self.chooser} chooses a pickup: {options}")
        elif self.reveal_round != NO_SEAT:
            lines.append(
                f"round {self.reveal_round + 1}: pool left over and discarded: "
                f"{cards(self.leftover)}"
            )
        return "\n".join(lines)

    def private_view(self, player: int) -> str:
        """``player``'s hand (the only private cards in Pickup), highest first."""
        ranks = np.repeat(RANK_INDEX, self.hands[player])[::-1]
        return f"your hand (player_{player}): " + (" ".join(str(r + 1) for r in ranks) or "-")


def ordinal(k: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... (up to six seats)."""
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k, 'th') }"


def build_table(state: PickupState) -> np.ndarray:
    """The observation table of ``state`` (``layout.table_layout``), written plainly from
    the rules' fields."""
    layout = state.game.table_layout
    table = np.zeros(layout.size, dtype=np.float32)
    views = layout.views(table)
    views["hands"][:] = state.hands
    views["unseen"][:] = np.subtract(state.unshown, state.hands)
    views["unshown"][:] = state.unshown
    views["pool"][:] = state.pool
    views["piles"][:] = state.piles
    for seat, card in enumerate(state.played):
        if card >= 0:
            views["revealed"][seat, card] = 1
    for position, seat in enumerate(state.acted, start=1):
        views["order"][seat] = position
    views["last_actor"][state.last_actor] = 1
    views["dealer"][state.dealer] = 1
    if state.chooser >= 0:
        views["chooser"][state.chooser] = 1
    views["scores"][:] = state.totals
    if not state.finished:
        views["round"][state.round] = 1
    return table


class PickupGame(Game):
    name = "pickup"
    config_class = PickupConfig
    num_actions = NUM_RANKS

    def __init__(self, config: PickupConfig) -> None:
        super().__init__(config)
        n = config.num_players
        self.hand_size = size = HAND_SIZE[n]
        self.target = config.target
        self.all_seats = tuple(range(n))
        #: Per seat, every seat in the order going left from it (itself last): tie order.
        self.left_of = [tuple((seat + k) % n for k in range(1, n + 1)) for seat in range(n)]
        # Decisions per round: every seat plays a card, and at most min(n, 4) pickup choices
        # follow (a choice needs two ranks in the 5-card pool, and every pickup empties the
        # pool of a rank). Every hand adds at least 1 point to the sum of the totals (the
        # last card to act keeps its place in its pile) and another hand is dealt only while
        # every total is below the target: at most n * (target - 1) + 1 hands.
        hands = 1 if self.target is None else n * (self.target - 1) + 1
        self.max_decisions = hands * size * (n + min(n, POOL_SIZE - 1))
        #: Dealing: the (seat, rank) cell offset of each of the n * size dealt cards.
        self.deal_offsets = np.repeat(np.arange(n) * NUM_RANKS, size)
        self.observation_layout = observation_layout(n, size, self.target)
        #: Each state's table of every seat's observation fields, where its parts start,
        #: and per observer the cells of its observation.
        self.table_layout = table_layout(n, size)
        self.cells = Cells.of(self.table_layout)
        self.gathers = [
            gather_index(self.observation_layout, self.table_layout, p) for p in self.all_seats
        ]

    def new_initial_state(self, rng: np.random.Generator) -> PickupState:
        return PickupState(self, rng)

    def observation(self, state: PickupState, player: int) -> np.ndarray:
        # One gather from the state's table (a new float32 array) instead of encoding into
        # views; ``observation.encode`` is the plain reference it is tested against.
        return state.table[self.gathers[player]]

    def action_name(self, action: int) -> str:
        return f"rank {action + 1}"
