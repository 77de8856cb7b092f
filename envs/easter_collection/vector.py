"""Easter collection, batched: thousands of games in lockstep as numpy arrays.

``EasterCollectionVector`` plays ``B`` games of Easter collection (2-5 players, the
``"standard"`` and ``"secret_positions"`` variants, either ``table_face_value``: every
configuration of the rules) at once, on ``envs.core.batched.BatchedEngine`` (which
documents the interface). A bid asks every seat to choose a card (``choosers()`` all
True); in the standard game each seat whose card matches several table cards is then
asked alone, in turn from the start player, where to place it (``choosers()`` one
seat; the rows of a batch are in different phases, and ``step`` reads only the
choosers' actions).

It is checked against the rules (``envs/easter_collection/rules.py``) by differential
tests (``tests/test_vector_easter_collection.py``): from the same positions and the
same actions it gives the same observations, masks, choosers, rewards (both modes),
terminations, scores and terminal views, in every configuration of
``SPEC.configurations`` (and ``table_face_value="rank"``), from new deals, from
positions loaded mid-game, from ``state.resample`` and from short scripted decks;
``make_vec`` over it shows the learner what the Gymnasium view shows.

The state. As ``EasterCollectionState``, the engine keeps every seat's observation
fields of every game in one float32 buffer, ``source`` (``(B, source_size)``, laid
out as ``layout.source_layout``), written in place move by move at the entries the
rules write (``layout.SourceOffsets``, the game's ``at``); a seat's observation is the
game's gather (``observation_gather``, from ``layout.gather_indices``) from it, done
for many games as block copies (``copy_plan``).
Beside it, arrays with a game axis hold the rules' Python fields: the deck in dealing
order (``deck``, ``deck_len``, ``next_card``), the table (and ``layout``, a code of its
suits that indexes precomputed tables of matching positions and legal chips), hand
size, start player, round, bid, phase, last round, and the bid in progress
(``chosen``, ``target``, ``num_placed``, ``placing``). The flow that asks nobody
(forced placings and discards, a single card played without asking, the reveal, the
end of a round, the next deal, the end) runs in ``_flow``, each step once for all the
rows that reach it, with loops over seats, table positions and card slots only.
``masks()`` and ``choosers()`` are computed once per state of the batch (read-only).

Dealing and chance. The rules draw everything at the deal: the first start player
(``rng.integers(N)``) and the deck order (``rng.permutation(52)``); nothing random
happens after it. The engine's only draw is ``_draw_deals`` (one call for all the
games dealt: the start players, then a deck order per game from the ``argsort`` of
uniform keys, from the base's generator), so a game's deal is not the one the rules'
``new_initial_state`` draws from the same seed; ``start_games(games, starts, decks)``
deals given start players and decks exactly as the rules do (a test replaces
``_draw_deals`` by the rules' draws and plays the rules' games, automatic resets
included). ``load(states)`` takes any reference position, including a short scripted
deck and the order of its undealt cards, and the game plays on exactly as the
reference does.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.easter_collection.layout import HAND_ROW, MAX_ROUNDS, NUM_CARDS, NUM_POSITIONS
from envs.easter_collection.rules import (
    BLANK,
    DISCARD,
    HAND_SIZE,
    NUM_CHIPS,
    PHASE_CHOOSE,
    PHASE_DONE,
    PHASE_PLACE,
    PLACE,
    POINTS,
    SUIT_OF,
    EasterCollectionGame,
    EasterCollectionState,
)

#: A card's suit; index -1 (an empty position, no card) gives -1.
SUIT_OR_EMPTY = np.array((*SUIT_OF, -1), dtype=np.int64)
#: A card's score points; index -1 gives 0.
CARD_POINTS = np.array((*POINTS, 0), dtype=np.float32)
#: Below this many games, ``observations`` is one gather rather than block copies.
SMALL_BATCH = 16
#: No rows.
_NONE = np.zeros(0, dtype=np.int64)


#: A table's layout code: sum over positions p of (suit of its card + 1) * 5**p (0: empty).
LAYOUT_WEIGHTS = 5 ** np.arange(NUM_POSITIONS)
NUM_LAYOUTS = 5**NUM_POSITIONS


@functools.cache
def layout_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every table layout code: which positions hold each suit (``(625, 4 suits, 4)``
    bool), how many (``(625, 4)``), the first of them (``(625, 4)``, 0 if none), and the
    chips each card may go with in secret positions (``(625, 5, 52)`` bool: the positions
    holding its suit, or the blank chip when none does)."""
    suits = (np.arange(NUM_LAYOUTS)[:, None] // LAYOUT_WEIGHTS % 5) - 1  # (625, 4)
    holds = suits[:, None, :] == np.arange(4)[None, :, None]  # (625, suit, position)
    count = holds.sum(axis=2)
    first = np.argmax(holds, axis=2)
    by_card = holds[:, SUIT_OR_EMPTY[:NUM_CARDS], :].transpose(0, 2, 1)  # (625, 4, 52)
    chips = np.concatenate([by_card, ~by_card.any(axis=1, keepdims=True)], axis=1)
    return holds, count, first, chips


def copy_plan(gathers: np.ndarray, min_run: int = 8) -> tuple[list, np.ndarray, list]:
    """Every observer's gather (``(N, obs_size)`` source indices) as block copies, for
    the seats' observations side by side (``(N * obs_size,)``): the runs of at least
    ``min_run`` entries whose source indices go up by a constant step, as ``(start, stop,
    first, last, step)`` (``out[start:stop] = source[first:last:step]``); the entries left
    over, gathered first (``extra = source[gather]``), then copied in runs of adjacent
    entries, ``(start, stop, offset)`` (``out[start:stop] = extra[offset:offset + stop -
    start]``). Returns the runs, the gather and the copies of the extra entries."""
    size = gathers.shape[1]
    runs: list[tuple[int, int, int, int, int]] = []
    extra: list[tuple[int, int]] = []  # (destination, source) of the entries left over
    for seat, gather in enumerate(gathers.tolist()):
        i = 0
        while i < size:
            j = i + 1
            step = gather[j] - gather[i] if j < size else 0
            if step > 0:
                while j < size and gather[j] - gather[j - 1] == step:
                    j += 1
            if j - i >= min_run:
                runs.append((seat * size + i, seat * size + j, gather[i], gather[j - 1] + 1, step))
            else:
                extra += [(seat * size + k, gather[k]) for k in range(i, j)]
            i = j
    copies: list[tuple[int, int, int]] = []
    for offset, (destination, _) in enumerate(extra):
        if copies and copies[-1][1] == destination:
            start, _, first = copies[-1]
            copies[-1] = (start, destination + 1, first)
        else:
            copies.append((destination, destination + 1, offset))
    return runs, np.array([s for _, s in extra], dtype=np.intp), copies


class EasterCollectionVector(BatchedEngine):
    """``num_envs`` games of Easter collection in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``num_players``, ``variant``, ``table_face_value``);
            every configuration of the rules is played.
    """

    game_class = EasterCollectionGame
    game: EasterCollectionGame

    def _allocate(self) -> None:
        game, b, n = self.game, self.num_envs, self.num_players
        self.secret = game.secret
        at = game.at
        self._at = at
        self.source_size = size = game.source_layout.size
        #: A new game's source before its cards: nothing seen, round 1, first bid,
        #: everyone choosing, the deck less the first round's cards.
        self._dealt = np.array(game.initial_source)
        self._dealt[[at.bid, at.phase + PHASE_CHOOSE]] = 1.0
        self._dealt[at.deck] = NUM_CARDS - NUM_POSITIONS - HAND_SIZE * n
        #: The rules' observation gathers: (N, obs_size) source indices per observer.
        self._gathers = np.stack(game.observation_gather).astype(np.intp)
        #: Every seat's observations side by side, and each seat's, as block copies.
        self._plan = (*copy_plan(self._gathers), self._gathers.size)
        self._seat_plans = [(*copy_plan(g[None]), g.size) for g in self._gathers]
        #: seat_orders[s, k]: the k-th seat going left from s.
        self._orders = np.array(game.seat_orders, dtype=np.int64)
        self._seats = np.arange(n)
        self._positions = np.arange(NUM_POSITIONS)
        self._deal_slots = np.arange(HAND_SIZE * n)
        # Source offsets as arrays (add a card, a seat or a position).
        self._hand_at = np.array(at.hand, dtype=np.int64)
        self._own_bid_at = np.array(at.own_bid, dtype=np.int64)
        self._table_at = np.array(at.table, dtype=np.int64)
        self._bids_at = np.array(at.bids, dtype=np.int64)
        self._pile_at = np.array(at.pile, dtype=np.int64)
        self._played_at = np.array(at.played, dtype=np.int64)
        self._hands = slice(at.hand[0], at.hand[0] + n * HAND_ROW)
        self._points = at.points_span
        #: strength[table card, bid] (``game.bid_strength``); row -1 (no card) unused.
        strength = np.zeros((NUM_CARDS + 1, NUM_CARDS), dtype=np.int64)
        strength[:NUM_CARDS] = np.array(game.bid_strength)
        self._strength = strength
        self._holds, self._suit_count, self._first_of_suit, self._chip_masks = layout_tables()
        # The state, with a game axis.
        self.source = np.zeros((b, size), dtype=np.float32)
        self._flat = self.source.reshape(-1)  # a view: flat indices row * size + column
        self._row_base = np.arange(b, dtype=np.int64) * size
        self.deck = np.zeros((b, NUM_CARDS), dtype=np.int64)
        self._deck_flat = self.deck.reshape(-1)
        self.deck_len = np.zeros(b, dtype=np.int64)
        self.next_card = np.zeros(b, dtype=np.int64)
        self.table = np.full((b, NUM_POSITIONS), -1, dtype=np.int64)
        #: The table's layout code (``LAYOUT_WEIGHTS``), kept with ``table``.
        self.layout = np.zeros(b, dtype=np.int64)
        self.hand_size = np.zeros(b, dtype=np.int64)
        self.start_player = np.zeros(b, dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)
        self.bid = np.zeros(b, dtype=np.int64)
        self.phase = np.zeros(b, dtype=np.int64)
        self.last_round = np.zeros(b, dtype=bool)
        self.chosen = np.full((b, n), -1, dtype=np.int64)
        self.target = np.full((b, n), -1, dtype=np.int64)
        self.num_placed = np.zeros(b, dtype=np.int64)
        self.placing = np.full(b, -1, dtype=np.int64)
        #: ``masks`` and ``choosers`` of the current state (cleared at every change).
        self._cache: dict[str, np.ndarray] = {}

    # --- chance ----------------------------------------------------------------------
    def _draw_deals(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The engine's only random draw: ``count`` first start players ``(count,)`` and
        deck orders ``(count, 52)`` (cards in dealing order)."""
        starts = self.rng.integers(self.num_players, size=count)
        decks = np.argsort(self.rng.random((count, NUM_CARDS)), axis=1)
        return starts, decks

    # --- starting rows ---------------------------------------------------------------
    def _deal(self, games: np.ndarray) -> None:
        starts, decks = self._draw_deals(len(games))
        self.start_games(games, starts, decks)

    def start_games(self, games: np.ndarray, starts: np.ndarray, decks: np.ndarray) -> None:
        """New games in rows ``games`` from given start players ``(k,)`` and whole decks
        ``(k, 52)`` in dealing order, as ``EasterCollectionState(game, rng, deck=...,
        start_player=...)`` deals them. (A whole deck always gives a first round of four
        table cards and four cards a hand, everyone choosing: that round is written here in
        one go, as the rules' ``_start_round`` and ``_start_bid`` write it.)"""
        games = np.asarray(games, dtype=np.int64)
        starts = np.asarray(starts, dtype=np.int64)
        decks = np.asarray(decks, dtype=np.int64)
        if decks.shape != (len(games), NUM_CARDS) or starts.shape != games.shape:
            raise ValueError(
                f"start_games needs {len(games)} start players and decks of {NUM_CARDS} cards"
            )
        n, at, flat = self.num_players, self._at, self._flat
        self._cache.clear()
        self.source[games] = self._dealt
        self.deck[games] = decks
        self.deck_len[games] = NUM_CARDS
        self.next_card[games] = NUM_POSITIONS + HAND_SIZE * n
        table = decks[:, :NUM_POSITIONS]
        self.table[games] = table
        self.layout[games] = (SUIT_OR_EMPTY[table] + 1) @ LAYOUT_WEIGHTS
        self.hand_size[games] = HAND_SIZE
        self.start_player[games] = starts
        self.round[games] = 0
        self.bid[games] = 0
        self.phase[games] = PHASE_CHOOSE
        self.last_round[games] = False
        self.chosen[games] = -1
        self.target[games] = -1
        self.num_placed[games] = 0
        self.placing[games] = -1
        base = self._row_base[games][:, None]
        flat[base[:, 0] + at.start + starts] = 1.0
        flat[base + self._table_at + table] = 1.0
        flat[(base + at.unseen + table * n)[:, :, None] + self._seats] = 0.0
        # One card at a time from the start player: the j-th card dealt goes to the
        # (j % N)-th seat going left from the start player.
        dealt = decks[:, NUM_POSITIONS : NUM_POSITIONS + HAND_SIZE * n]
        seats = self._orders[starts][:, self._deal_slots % n]
        flat[base + self._hand_at[seats] + dealt] = 1.0
        flat[base + at.unseen + dealt * n + seats] = 0.0

    def _load(self, games: np.ndarray, states: Sequence[EasterCollectionState]) -> None:
        # One game at a time: loading is rare (a search's determinisations, tests).
        self._cache.clear()
        for row, state in zip(games.tolist(), states, strict=True):
            self.source[row] = state.source
            self.deck[row] = -1
            self.deck[row, : len(state.deck)] = state.deck
            self.deck_len[row] = len(state.deck)
            self.next_card[row] = state.next_card
            self.table[row] = state.table
            self.layout[row] = (SUIT_OR_EMPTY[state.table] + 1) @ LAYOUT_WEIGHTS
            self.hand_size[row] = state.hand_size
            self.start_player[row] = state.start_player
            self.round[row] = state.round
            self.bid[row] = state.bid
            self.phase[row] = state.phase
            self.last_round[row] = state.last_round
            self.chosen[row] = state.chosen
            self.target[row] = state.target
            self.num_placed[row] = state.num_placed
            self.placing[row] = state.placing

    # --- what the seats read ---------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The rules' gathers (``observation_gather``), seat by seat; as block copies
        (``copy_plan``) for many games."""
        games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        if len(games) < SMALL_BATCH:
            return self._flat.take(self._row_base[games][:, None] + self._gathers[seats])
        if (seats == seats[0]).all():
            return self._copy_views(self.source[games], self._seat_plans[seats[0]])
        out = np.empty((len(games), self.observation_size), dtype=np.float32)
        for seat in range(self.num_players):
            rows = np.flatnonzero(seats == seat)
            if len(rows):
                out[rows] = self._copy_views(self.source[games[rows]], self._seat_plans[seat])
        return out

    def observations(self) -> np.ndarray:
        return self._every_view(self.source)

    def _every_seat(self, games: np.ndarray) -> np.ndarray:
        # The base's helper (the terminal observations).
        return self._every_view(self.source[games])

    def _every_view(self, source: np.ndarray) -> np.ndarray:
        """Every seat's observation of the games whose source rows are ``source``: ``(k,
        N, obs_size)``."""
        k, n, size = len(source), self.num_players, self.observation_size
        if k < SMALL_BATCH:
            return source.take(self._gathers, axis=1)
        return self._copy_views(source, self._plan).reshape(k, n, size)

    @staticmethod
    def _copy_views(source: np.ndarray, plan: tuple) -> np.ndarray:
        """The gathers of a ``copy_plan`` from the rows ``source``, as block copies."""
        runs, extra_gather, extra_copies, width = plan
        out = np.empty((len(source), width), dtype=np.float32)
        for start, stop, first, last, step in runs:
            out[:, start:stop] = source[:, first:last:step]
        extra = source.take(extra_gather, axis=1)
        for start, stop, first in extra_copies:
            out[:, start:stop] = extra[:, first : first + stop - start]
        return out

    def choosers(self) -> np.ndarray:
        """Everyone while choosing cards; the placing seat alone while placing. Read-only,
        computed once per state of the batch."""
        choosers = self._cache.get("choosers")
        if choosers is None:
            phase = self.phase[:, None]
            choosers = (phase == PHASE_CHOOSE) | (
                (phase == PHASE_PLACE) & (self.placing[:, None] == self._seats)
            )
            choosers.flags.writeable = False
            self._cache["choosers"] = choosers
        return choosers

    def masks(self) -> np.ndarray:
        """Every seat's legal actions, ``(B, N, num_actions)`` bool (all False off turn).
        Read-only, computed once per state of the batch."""
        masks = self._cache.get("masks")
        if masks is None:
            masks = self._cache["masks"] = self._masks()
            masks.flags.writeable = False
        return masks

    def _masks(self) -> np.ndarray:
        n, b = self.num_players, self.num_envs
        choosing = (self.phase == PHASE_CHOOSE)[:, None, None]
        hands = self.source[:, self._hands].reshape(b, n, HAND_ROW)
        if self.secret:  # each hand card with the chips its suit allows
            held = (hands[:, :, :NUM_CARDS] > 0) & choosing
            chips = self._chip_masks[self.layout]  # (B, 5, 52)
            masks = np.empty((b, n, NUM_CHIPS, NUM_CARDS), dtype=bool)
            for chip in range(NUM_CHIPS):  # (faster than one broadcast over chips)
                np.logical_and(held, chips[:, None, chip], out=masks[:, :, chip])
            return masks.reshape(b, n, NUM_CHIPS * NUM_CARDS)
        masks = (hands > 0) & choosing  # the padding columns (placing) are zero
        rows = np.flatnonzero(self.phase == PHASE_PLACE)
        if len(rows):
            seats = self.placing[rows]
            suits = SUIT_OR_EMPTY[self.chosen[rows, seats]]
            masks[rows, seats, PLACE:] = self._holds[self.layout[rows], suits]
        return masks

    def scores(self) -> np.ndarray:
        """Points in every seat's score pile: ``(B, N)`` float64 (a copy)."""
        return self.source[:, self._points].astype(np.float64)

    # --- playing ---------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        self._cache.clear()
        if self.secret:
            self._bid_with_chips(games, actions)
            self._flow(reveal=games)
        else:
            placing = self.phase[games] == PHASE_PLACE
            rows = games[placing]
            if len(rows):
                seats = self.placing[rows]
                self._place(rows, seats, actions[placing, seats] - PLACE)
                self.num_placed[rows] += 1
            rows = games[~placing]
            if len(rows):
                self._choose(rows, actions[~placing])
            self._flow(advance=games)
        return self.phase[games] == PHASE_DONE

    def _flow(
        self,
        advance: np.ndarray = _NONE,
        reveal: np.ndarray = _NONE,
        start_round: np.ndarray = _NONE,
    ) -> None:
        """Carry rows through the steps that ask nobody (the rules' ``_advance_placing``,
        ``_reveal``, ``_end_round``, ``_start_round``, ``_start_bid``, which call one
        another), every step once for all the rows that reach it, until each row waits for
        a choice or its game is over."""
        start_bid = end_round = _NONE
        while len(advance) or len(reveal) or len(end_round) or len(start_round) or len(start_bid):
            if len(advance):
                reveal = _join(reveal, self._advance_placing(advance))
            if len(reveal):
                more, ended = self._reveal(reveal)
                start_bid, end_round = _join(start_bid, more), _join(end_round, ended)
            if len(end_round):
                start_round = _join(start_round, self._end_round(end_round))
            if len(start_round):
                start_bid = _join(start_bid, self._start_round(start_round))
            advance = reveal = end_round = start_round = _NONE
            if len(start_bid):
                end_round, advance = self._start_bid(start_bid)
                start_bid = _NONE

    def _bid_with_chips(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Secret positions: every seat's card and chip, turned up at once."""
        chips, cards = np.divmod(actions, NUM_CARDS)
        base = self._row_base[rows][:, None]
        self._flat[base + self._hand_at + cards] = 0.0
        self.chosen[rows] = cards
        blank = chips == BLANK
        self.target[rows] = np.where(blank, DISCARD, chips)
        if blank.any():
            r, s = np.nonzero(blank)
            self._discard_bid(rows[r], s, cards[r, s])
        self.hand_size[rows] -= 1

    def _choose(self, rows: np.ndarray, cards: np.ndarray) -> None:
        """Standard: every seat's card (``(k, N)``) goes face down; the placing follows."""
        at, flat = self._at, self._flat
        base = self._row_base[rows]
        flat[base[:, None] + self._hand_at + cards] = 0.0
        flat[base[:, None] + self._own_bid_at + cards] = 1.0
        self.chosen[rows] = cards
        self.hand_size[rows] -= 1
        self.phase[rows] = PHASE_PLACE
        flat[base + at.phase + PHASE_CHOOSE] = 0.0
        flat[base + at.phase + PHASE_PLACE] = 1.0

    def _advance_placing(self, rows: np.ndarray) -> np.ndarray:
        """Place from the start player going left; stop at a seat with a real choice (its
        card matches several table cards). Returns the rows where everyone has placed."""
        n = self.num_players
        order = self._orders[self.start_player[rows]]  # (k, N): the seats in placing order
        cards = self.chosen[rows[:, None], order]
        layout, suits = self.layout[rows][:, None], SUIT_OR_EMPTY[cards]
        count = self._suit_count[layout, suits]  # (k, N): table cards of each bid's suit
        waiting = self._seats >= self.num_placed[rows][:, None]
        asked = waiting & (count > 1)
        stop = np.where(asked.any(axis=1), np.argmax(asked, axis=1), n)
        forced = waiting & (self._seats < stop[:, None])
        r, j = np.nonzero(forced & (count == 1))
        if len(r):
            self._place(rows[r], order[r, j], self._first_of_suit[layout[r, 0], suits[r, j]])
        r, j = np.nonzero(forced & (count == 0))
        if len(r):
            self.target[rows[r], order[r, j]] = DISCARD
            self._discard_bid(rows[r], order[r, j], cards[r, j])
        self.num_placed[rows] = stop
        done = stop == n
        self.placing[rows] = np.where(done, -1, order[np.arange(len(rows)), stop % n])
        return rows[done]

    def _place(self, rows: np.ndarray, seats: np.ndarray, positions: np.ndarray) -> None:
        """Lay each seat's bid face down beside a table position (standard)."""
        self.target[rows, seats] = positions
        base = self._row_base[rows]
        self._flat[base + self._at.placed + seats] = 1.0
        self._flat[base + self._bids_at[positions] + seats] = 1.0

    def _discard_bid(self, rows: np.ndarray, seats: np.ndarray, cards: np.ndarray) -> None:
        """A bid without a table card of its suit, discarded face up (``target`` set by the
        caller)."""
        at, flat = self._at, self._flat
        base = self._row_base[rows]
        flat[base + at.discards + cards] = 1.0
        flat[base + self._played_at[seats] + cards] = 1.0
        flat[base + at.placed + seats] = 1.0
        flat[(base + at.unseen + cards * self.num_players)[:, None] + self._seats] = 0.0

    def _reveal(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turn the bids up: each table card with bids goes, with them, to the highest.
        Returns the rows that bid again and the rows whose round ends."""
        at, flat, n = self._at, self._flat, self.num_players
        base = self._row_base[rows]
        chosen, target, table = self.chosen[rows], self.target[rows], self.table[rows]
        flat[base[:, None] + self._own_bid_at + chosen] = 0.0
        flat[base[:, None] + at.placed + self._seats] = 0.0
        r, s = np.nonzero(target != DISCARD)
        if len(r):
            cards, positions = chosen[r, s], target[r, s]
            flat[base[r] + self._bids_at[positions] + s] = 0.0
            flat[base[r] + self._played_at[s] + cards] = 1.0
            flat[(base[r] + at.unseen + cards * n)[:, None] + self._seats] = 0.0
            # The highest bid beside each table card: (k, 4 positions, N seats) of keys
            # strength * 8 + seat (every bid's strength is at least 1, and two bids on
            # one table card never tie).
            key = np.zeros(chosen.shape, dtype=np.int64)
            key[r, s] = self._strength[table[r, positions], cards] * 8 + s
            beside = target[:, None, :] == self._positions[:, None]
            best = np.where(beside, key[:, None, :], 0).max(axis=2)  # (k, 4)
            winner = best % 8
            rp, pp = np.nonzero(best)
            won = table[rp, pp]
            flat[base[rp] + self._pile_at[winner[rp, pp]] + won] = 1.0
            flat[base[rp] + self._table_at[pp] + won] = 0.0
            self.table[rows[rp], pp] = -1
            winners = winner[r, positions]
            flat[base[r] + self._pile_at[winners] + cards] = 1.0
            # Points: each table card taken and each bid beside it, to the winner's pile.
            k = len(rows)
            gained = np.bincount(
                np.concatenate([rp * n + winner[rp, pp], r * n + winners]),
                weights=np.concatenate([CARD_POINTS[won], CARD_POINTS[cards]]),
                minlength=k * n,
            )
            self.source[rows, at.points : at.points + n] += gained.reshape(k, n)
            self.layout[rows] = (SUIT_OR_EMPTY[self.table[rows]] + 1) @ LAYOUT_WEIGHTS
        self.bid[rows] += 1
        again = (self.bid[rows] < 2) & (self.layout[rows] > 0)
        ended = rows[~again]
        if len(ended):
            self.chosen[ended] = -1
            self.target[ended] = -1
        return rows[again], ended

    def _end_round(self, rows: np.ndarray) -> np.ndarray:
        """Discard the leftover table cards face up; end the game after the last round,
        else pass the start on. Returns the rows that deal a new round."""
        at, flat = self._at, self._flat
        base = self._row_base[rows]
        r, p = np.nonzero(self.table[rows] >= 0)
        if len(r):
            cards = self.table[rows[r], p]
            flat[base[r] + at.discards + cards] = 1.0
            flat[base[r] + self._table_at[p] + cards] = 0.0
            self.table[rows] = -1
            self.layout[rows] = 0
        last = self.last_round[rows]
        over = rows[last]
        if len(over):
            self.phase[over] = PHASE_DONE
            self.source[over, at.bid : at.bid + 2] = 0.0
            self.source[over, at.phase : at.phase + 2] = 0.0
            # The hands are discarded face down (their owners have seen them).
            self.source[over, self._hands] = 0.0
            self.hand_size[over] = 0
            rows, base = rows[~last], base[~last]
        if len(rows):
            start = self.start_player[rows]
            flat[base + at.start + start] = 0.0
            start = self.start_player[rows] = (start + 1) % self.num_players
            flat[base + at.start + start] = 1.0
            round_ = self.round[rows]
            flat[base + at.round + np.minimum(round_, MAX_ROUNDS - 1)] = 0.0
            self.round[rows] = round_ = round_ + 1
            flat[base + at.round + np.minimum(round_, MAX_ROUNDS - 1)] = 1.0
        return rows

    def _start_round(self, rows: np.ndarray) -> np.ndarray:
        """Four table cards (fewer when the deck runs out), then the hands dealt up to 4
        cards one at a time from the start player (see the rules' ``_start_round``).
        Returns ``rows`` (a bid starts)."""
        at, flat, n = self._at, self._flat, self.num_players
        base = self._row_base[rows]
        deck = self._deck_flat
        first = self.next_card[rows] + rows * NUM_CARDS  # flat index of the next card
        remaining = self.deck_len[rows] - self.next_card[rows]
        on_table = np.minimum(NUM_POSITIONS, remaining)
        shown = self._positions < on_table[:, None]  # (k, 4)
        slots = np.minimum(first[:, None] + self._positions, deck.size - 1)
        table = np.where(shown, deck[slots], -1)
        self.table[rows] = table
        self.layout[rows] = (SUIT_OR_EMPTY[table] + 1) @ LAYOUT_WEIGHTS
        r, p = np.nonzero(shown)
        if len(r):
            cards = table[r, p]
            flat[base[r] + self._table_at[p] + cards] = 1.0
            flat[(base[r] + at.unseen + cards * n)[:, None] + self._seats] = 0.0
        first = first + on_table
        remaining = remaining - on_table
        hand_size = self.hand_size[rows]
        need = n * (HAND_SIZE - hand_size)
        full = on_table == NUM_POSITIONS
        enough = remaining >= need
        per_player = np.where(
            full, np.where(enough, HAND_SIZE - hand_size, (remaining >= n).astype(np.int64)), 0
        )
        last = ~full | ~enough | (remaining == need)
        # One card at a time from the start player: the j-th card dealt goes to the
        # (j % N)-th seat going left from the start player.
        dealt = per_player * n
        r, j = np.nonzero(self._deal_slots < dealt[:, None])
        if len(r):
            cards = deck[first[r] + j]
            seats = self._orders[self.start_player[rows[r]], j % n]
            flat[base[r] + self._hand_at[seats] + cards] = 1.0
            flat[base[r] + at.unseen + cards * n + seats] = 0.0
        first = first - rows * NUM_CARDS + dealt
        self.hand_size[rows] = hand_size + per_player
        self.last_round[rows] = last
        if last.any():  # the rest of the deck is discarded unseen
            first = np.where(last, self.deck_len[rows], first)
            flat[base[last] + at.last_round] = 1.0
        self.next_card[rows] = first
        flat[base + at.deck] = self.deck_len[rows] - first
        self.bid[rows] = 0
        return rows

    def _start_bid(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A bid: everyone chooses a card, unless nothing is left to bid with or for (the
        round ends) or, in the standard game, every hand holds one card (played without
        asking). Returns the rows whose round ends and those whose placing goes on."""
        at, flat = self._at, self._flat
        self.chosen[rows] = -1
        self.target[rows] = -1
        self.num_placed[rows] = 0
        self.placing[rows] = -1
        stop = (self.hand_size[rows] == 0) | (self.layout[rows] == 0)
        ended = rows[stop]  # only a short scripted deck gets there
        if len(ended):
            rows = rows[~stop]
        base = self._row_base[rows]
        bid = self.bid[rows]
        self.phase[rows] = PHASE_CHOOSE
        flat[base + at.bid + bid] = 1.0
        flat[base + at.bid + 1 - bid] = 0.0
        flat[base + at.phase + PHASE_CHOOSE] = 1.0
        flat[base + at.phase + PHASE_PLACE] = 0.0
        single = _NONE
        if not self.secret:
            single = rows[self.hand_size[rows] == 1]
            if len(single):
                n = self.num_players
                hands = self.source[single, self._hands].reshape(len(single), n, HAND_ROW)
                self._choose(single, np.argmax(hands[:, :, :NUM_CARDS], axis=2))
        return ended, single


def _join(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two sets of rows as one array (rows are never in both)."""
    if not len(a):
        return b
    if not len(b):
        return a
    return np.concatenate([a, b])
