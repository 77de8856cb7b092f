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
tests (``tests/test_batched_every_game.py``,
``tests/test_batched_easter_collection.py``): from the same positions and the
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
for many games as block copies (``copy_plan``): for most seats of many games, every
seat's views of a span of games into a small buffer, then the rows asked.
Beside it, arrays with a game axis hold the rules' Python fields: the deck in dealing
order (``deck``, ``deck_len``, ``next_card``), the table (and ``layout``, a code of its
suits that indexes precomputed tables of matching positions and legal chips), hand
size, start player, round, bid, phase, last round, and the bid in progress
(``chosen``, ``target``, ``num_placed``, ``placing``). The flow that asks nobody
(forced placings and discards, a single card played without asking, the reveal, the
end of a round, the next deal, the end) runs in ``_flow``, each step once for all the
rows that reach it, with loops over seats only. The cost of a step is numpy's per-call
overhead: what each kind of move writes into a source row is tabulated once by an
integer key (such as seat, target, card; ``_tabulate``), and the moves of all the rows
are one lookup and one fancy assignment (``_write``).
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
#: A card's suit + 1 (its part of a layout code); index -1 gives 0.
SUIT_CODE = SUIT_OR_EMPTY + 1
#: A card's score points (a score pile's points are its cards').
PILE_POINTS = np.array(POINTS, dtype=np.float32)
#: Where a bid can go: a table position or DISCARD (also the secret positions' chips).
NUM_TARGETS = NUM_POSITIONS + 1
assert DISCARD == BLANK == NUM_POSITIONS
#: Below this many games, ``observations`` is one gather rather than block copies.
SMALL_BATCH = 16
#: The size of the buffer of every seat's views (``_take_views``).
VIEWS_BYTES = 1 << 20
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


def write_table(
    shape: tuple[int, ...], width: int, *writes: tuple[np.ndarray, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Single-entry writes into a source row, tabulated: each write is ``(cells, value)``,
    its cells broadcasting to ``shape`` plus a last axis of one or more cells. Returns the
    cells and the values, ``shape + (width,)``, padded by repeating the first write (the
    same entry written twice), so that many rows of the table are one fancy assignment."""
    cells = [np.broadcast_to(c, (*shape, np.shape(c)[-1])) for c, _ in writes]
    values = [
        np.full(c.shape, v, dtype=np.float32) for c, (_, v) in zip(cells, writes, strict=True)
    ]
    pad = width - sum(c.shape[-1] for c in cells)
    cells.append(np.repeat(cells[0][..., :1], pad, axis=-1))
    values.append(np.repeat(values[0][..., :1], pad, axis=-1))
    return np.concatenate(cells, axis=-1), np.concatenate(values, axis=-1)


def row_items(array: np.ndarray) -> np.ndarray:
    """A 2-D int64 array as a 1-D array of its rows (opaque items; a view of a contiguous
    int64 array): numpy writes whole rows at fancy indices of it as single copies, several
    times faster than into the 2-D array when the rows are a few numbers long."""
    array = np.ascontiguousarray(array, dtype=np.int64)
    return array.view(np.dtype((np.void, array.shape[1] * array.itemsize)))[:, 0]


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
    #: The generator draws only at the deal (see the module docstring).
    draws_after_deal = False
    #: The games' state (``copy_games``, ``state_dict``): the source rows and the rules'
    #: fields; the ``_..._flat`` and ``_..._rows`` arrays are views of them, and
    #: ``table`` of ``_table_targets`` (whose fifth column is always -1).
    state_arrays = (
        "source",
        "deck",
        "deck_len",
        "next_card",
        "table",
        "layout",
        "hand_size",
        "start_player",
        "round",
        "bid",
        "phase",
        "last_round",
        "chosen",
        "target",
        "num_placed",
        "placing",
    )
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
        #: Every seat's observations of up to this many games at a time (``_take_views``).
        self._views: np.ndarray | None = None
        self._views_games = max(SMALL_BATCH, min(b, VIEWS_BYTES // (4 * self._gathers.size)))
        self._seats = np.arange(n)
        self._positions = np.arange(NUM_POSITIONS)
        self._deal_slots = np.arange(HAND_SIZE * n)
        self._hands = slice(at.hand[0], at.hand[0] + n * HAND_ROW)
        self._piles = slice(at.pile[0], at.pile[0] + n * NUM_CARDS)
        self._points = at.points_span
        self._tabulate()
        # The state, with a game axis.
        self.source = np.zeros((b, size), dtype=np.float32)
        self._flat = self.source.reshape(-1)  # a view: flat indices row * size + column
        self._row_base = np.arange(b, dtype=np.int64) * size
        self.deck = np.zeros((b, NUM_CARDS), dtype=np.int64)
        self._deck_flat = self.deck.reshape(-1)
        self.deck_len = np.zeros(b, dtype=np.int64)
        self.next_card = np.zeros(b, dtype=np.int64)
        #: The table, with a fifth column always -1 (the "card" beside a discarded bid);
        #: ``table`` is a view of its first four, ``_table_rows`` of its rows (``row_items``).
        self._table_targets = np.full((b, NUM_TARGETS), -1, dtype=np.int64)
        self._table_flat = self._table_targets.reshape(-1)
        self.table = self._table_targets[:, :NUM_POSITIONS]
        self._table_rows = row_items(self._table_targets)
        self._no_table = row_items(np.full((1, NUM_TARGETS), -1, dtype=np.int64))[0]
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
        self._chosen_flat, self._target_flat = self.chosen.reshape(-1), self.target.reshape(-1)
        #: ``chosen`` and ``target`` row by row (``row_items``), and a row of -1 (none).
        self._chosen_rows, self._target_rows = row_items(self.chosen), row_items(self.target)
        self._no_bids = row_items(np.full((1, n), -1, dtype=np.int64))[0]
        self.num_placed = np.zeros(b, dtype=np.int64)
        self.placing = np.full(b, -1, dtype=np.int64)
        #: ``masks`` and ``choosers`` of the current state (cleared at every change).
        self._cache: dict[str, np.ndarray] = {}

    def _tabulate(self) -> None:
        """The moves' lookup tables, made once: what each move writes into a source row
        (the cells and values of ``write_table``, written by ``_write``) and the rules'
        choices, by integer keys."""
        n, at, game = self.num_players, self._at, self.game
        cards, targets, positions = NUM_CARDS, NUM_TARGETS, NUM_POSITIONS
        # Axes (seat, target or position, card, cells).
        seat = np.arange(n)[:, None, None, None]
        target = np.arange(targets)[None, :, None, None]
        card = np.arange(cards)[None, None, :, None]
        unseen = at.unseen + card * n + np.arange(n)  # a card's unseen entries, every seat's
        hand, own_bid = np.array(at.hand)[seat], np.array(at.own_bid)[seat]
        played, pile = np.array(at.played)[seat], np.array(at.pile)[seat]
        table_at = np.array(at.table)[target[:, :positions]]
        bids_at = np.array(at.bids)[target[:, :positions]] + seat
        placed, discards = at.placed + seat, at.discards + card
        phase = np.array([at.phase + PHASE_CHOOSE, at.phase + PHASE_PLACE])
        #: A cell always 0 (a hand row's padding): writing 0 there changes nothing.
        nothing = (np.array([at.hand[0] + cards]), 0.0)

        def by_bid(shape: tuple, width: int, beside: tuple, discarded: tuple) -> tuple:
            """The writes of a bid beside a table card or discarded, by key (..., seat,
            target, card): ``shape`` with a target axis of one."""
            halves = zip(
                write_table((*shape[:-2], positions, cards), width, *beside),
                write_table(shape, width, *discarded),
                strict=True,
            )
            return tuple(np.concatenate(half, axis=-3) for half in halves)

        def no_card(table: tuple) -> tuple:
            """``table`` by key (..., card + 1): no card (-1) first, writing nothing."""
            return tuple(
                np.concatenate([np.broadcast_to(fill, (*t.shape[:-2], 1, t.shape[-1])), t], -2)
                for t, fill in zip(table, nothing, strict=True)
            )

        def keyed(table: tuple) -> tuple[np.ndarray, np.ndarray]:
            """Rows of cells and values by flat key (C order of the key's axes)."""
            return tuple(np.ascontiguousarray(t.reshape(-1, t.shape[-1])) for t in table)

        # Bids by key (seat, target, card): ``seat * 260 + target * 52 + card``; in secret
        # positions ``seat * 260 + action``, the chip the target (BLANK is DISCARD).
        self._seat_keys = self._seats * targets * cards
        discard = ((placed, 1.0), (discards, 1.0), (played + card, 1.0), (unseen, 0.0))
        #: A bid placed beside a table card (standard) or discarded face up: the rules'
        #: ``_place`` and ``_discard_bid``.
        beside = ((placed, 1.0), (bids_at, 1.0))
        self._place_writes = keyed(by_bid((n, 1, cards), 3 + n, beside, discard))
        #: Secret positions: a card out of hand with its chip (discarded with the blank).
        out_of_hand = (hand + card, 0.0)
        self._chip_writes = keyed(
            by_bid((n, 1, cards), 4 + n, (out_of_hand,), (out_of_hand, *discard))
        )
        #: A bid turned up, by key (winner beside its table card, seat, target, card): its
        #: face-down entries cleared, the card shown and in the winner's pile.
        winner = np.arange(n)[:, None, None, None, None]
        face_down = ((own_bid[None] + card, 0.0), (placed[None], 0.0))
        shown = ((bids_at[None], 0.0), (played[None] + card, 1.0), (unseen, 0.0))
        to_pile = (np.array(at.pile)[winner] + card, 1.0)
        self._reveal_writes = keyed(
            by_bid((n, n, 1, cards), 5 + n, (*face_down, *shown, to_pile), face_down)
        )
        self._winner_keys = n * targets * cards
        #: The winner takes the table card, by key (winner, target, table card + 1): every
        #: bid beside it writes the same; nothing beside a discarded bid.
        takes = ((pile + card, 1.0), (table_at + card, 0.0))
        self._take_writes = keyed(no_card(by_bid((n, 1, cards), 2, takes, (nothing,))))
        #: Standard: a card chosen, by key (seat, card): out of hand, face down, placing.
        choose = (out_of_hand, (own_bid + card, 1.0), (phase[:1], 0.0), (phase[1:], 1.0))
        self._choose_writes = keyed(write_table((n, 1, cards), 4, *choose))
        #: By key (position, card + 1): a table card shown, a leftover table card discarded;
        #: by key (seat, card + 1): a card dealt.
        show = ((table_at + card, 1.0), (unseen, 0.0))
        self._show_writes = keyed(no_card(write_table((1, positions, cards), 1 + n, *show)))
        clear = ((discards, 1.0), (table_at + card, 0.0))
        self._clear_writes = keyed(no_card(write_table((1, positions, cards), 2, *clear)))
        deal = ((hand + card, 1.0), (at.unseen + card * n + seat, 0.0))
        self._deal_writes = keyed(no_card(write_table((n, 1, cards), 2, *deal)))
        self._position_keys = self._positions * (cards + 1) + 1
        #: deal_keys[start, j]: the key (seat, card + 1) of the j-th card dealt, less its
        #: card: it goes to the (j % N)-th seat going left from the start player.
        self._deal_keys = (self._seats[:, None] + self._deal_slots) % n * (cards + 1) + 1
        #: A bid starts, by key (bid 0 or 1): the bid's one-hot, everyone choosing.
        bid = np.arange(2)[:, None]
        starts = ((at.bid + bid, 1.0), (at.bid + 1 - bid, 0.0), (phase[:1], 1.0), (phase[1:], 0.0))
        self._bid_writes = keyed(write_table((2,), 4, *starts))
        #: A new round, by key (start player, round shown): the start passes on, the round.
        start, shown_round = np.arange(n)[:, None, None], np.arange(MAX_ROUNDS)[None, :, None]
        next_round = (
            (at.start + start, 0.0),
            (at.start + (start + 1) % n, 1.0),
            (at.round + shown_round, 0.0),
            (at.round + np.minimum(shown_round + 1, MAX_ROUNDS - 1), 1.0),
        )
        self._next_round_writes = keyed(write_table((n, MAX_ROUNDS), 4, *next_round))
        # The rules' choices.
        holds, count, first, self._chip_masks = layout_tables()
        suit = SUIT_OR_EMPTY[:cards]
        #: By key (layout, card): the table cards of the card's suit, where a bid with one
        #: or none goes (its position, or DISCARD), the positions it may go beside.
        self._suit_count = count[:, suit].reshape(-1)
        self._forced_target = np.where(count > 0, first, DISCARD)[:, suit].reshape(-1)
        self._holds = holds[:, suit].reshape(-1, positions)
        #: rank[start, seat]: the seat's turn to place from the start player; seat_at by key
        #: (start, turn): the seat of that turn (-1 after the last).
        self._rank = (self._seats[None, :] - self._seats[:, None]) % n
        seat_at = (self._seats[:, None] + np.arange(n + 1)) % n
        seat_at[:, n] = -1
        self._seat_at = seat_at.reshape(-1)
        #: By key (seat, table card + 1, bid card): strength * 8 + seat (0 beside no card).
        strength = np.zeros((n, cards + 1, cards), dtype=np.int64)
        strength[:, 1:] = np.array(game.bid_strength) * 8 + self._seats[:, None, None]
        self._bid_keys = strength.reshape(-1)
        self._key_seats = (self._seats * (cards + 1) + 1) * cards

    def _write(
        self, base: np.ndarray, writes: tuple[np.ndarray, np.ndarray], keys: np.ndarray
    ) -> None:
        """The ``writes`` (a table of ``_tabulate``) of ``keys`` into the source rows at flat
        offsets ``base`` (broadcast against ``keys``)."""
        cells, values = writes
        self._flat[cells.take(keys, axis=0) + base[..., None]] = values.take(keys, axis=0)

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
        n = self.num_players
        self._cache.clear()
        self.source[games] = self._dealt
        self.deck[games] = decks
        self.deck_len[games] = NUM_CARDS
        self.next_card[games] = NUM_POSITIONS + HAND_SIZE * n
        table = decks[:, :NUM_POSITIONS]
        self.table[games] = table
        self.layout[games] = SUIT_CODE.take(table) @ LAYOUT_WEIGHTS
        self.hand_size[games] = HAND_SIZE
        self.start_player[games] = starts
        self.round[games] = 0
        self.bid[games] = 0
        self.phase[games] = PHASE_CHOOSE
        self.last_round[games] = False
        self._chosen_rows[games] = self._target_rows[games] = self._no_bids
        self.num_placed[games] = 0
        self.placing[games] = -1
        base = self._row_base[games][:, None]
        self._flat[base[:, 0] + self._at.start + starts] = 1.0
        self._write(base, self._show_writes, self._position_keys + table)
        dealt = decks[:, NUM_POSITIONS : NUM_POSITIONS + HAND_SIZE * n]
        self._write(base, self._deal_writes, self._deal_keys.take(starts, axis=0) + dealt)

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
            self.layout[row] = SUIT_CODE.take(state.table) @ LAYOUT_WEIGHTS
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

    def _restored(self, games: np.ndarray) -> None:
        """The cached ``masks`` and ``choosers`` are stale."""
        self._cache.clear()

    # --- what the seats read ---------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The rules' gathers (``observation_gather``). For many games as block copies
        (``copy_plan``): one seat's straight from the source rows; several seats' of most
        of a span of games, every seat's views of the span, then the rows asked."""
        games, seats = np.asarray(games, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        k, n = len(games), self.num_players
        if k < SMALL_BATCH:
            return self._flat.take(self._row_base[games][:, None] + self._gathers[seats])
        out = np.empty((k, self.observation_size), dtype=np.float32)
        if (seats == seats[0]).all():
            plan = self._seat_plans[seats[0]]
            if games is self._all:
                self._copy_views(self.source, plan, out)
            else:
                self._copy_rows(out, slice(None), games, plan)
        elif (games[1:] >= games[:-1]).all() and 2 * k >= n * (games[-1] - games[0] + 1):
            self._take_views(out, games, seats)
        else:
            for seat in range(n):
                rows = np.flatnonzero(seats == seat)
                if len(rows):
                    self._copy_rows(out, rows, games[rows], self._seat_plans[seat])
        return out

    def _copy_rows(
        self, out: np.ndarray, at: np.ndarray | slice, games: np.ndarray, plan: tuple
    ) -> None:
        """``out[at]``: the gathers of a ``copy_plan`` from the source rows ``games``, run
        by run."""
        runs, extra_gather, extra_copies, _ = plan
        source = self.source
        for start, stop, first, last, step in runs:
            out[at, start:stop] = source[games, first:last:step]
        if len(extra_gather):
            extra = self._flat.take(self._row_base[games][:, None] + extra_gather)
            for start, stop, first in extra_copies:
                out[at, start:stop] = extra[:, first : first + stop - start]

    def _take_views(self, out: np.ndarray, games: np.ndarray, seats: np.ndarray) -> None:
        """``out[i]``: seat ``seats[i]``'s view of game ``games[i]`` (games in order): every
        seat's views of a span of games at a time into a buffer, then the rows asked."""
        n, size = self.num_players, self.observation_size
        if self._views is None:
            self._views = np.empty((self._views_games, n * size), dtype=np.float32)
        span = self._views_games
        first, end = int(games[0]), int(games[-1]) + 1
        picks = games * n + seats  # rows of every seat's views of the games
        for lo in range(first, end, span):
            hi = min(lo + span, end)
            a, b = np.searchsorted(games, (lo, hi)).tolist()
            if a < b:
                views = self._copy_views(self.source[lo:hi], self._plan, self._views[: hi - lo])
                # (In range: "clip" writes straight into out, "raise" through a buffer.)
                views.reshape(-1, size).take(picks[a:b] - lo * n, axis=0, out=out[a:b], mode="clip")

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
    def _copy_views(source: np.ndarray, plan: tuple, out: np.ndarray | None = None) -> np.ndarray:
        """The gathers of a ``copy_plan`` from the rows ``source``, as block copies (into
        ``out`` if given)."""
        runs, extra_gather, extra_copies, width = plan
        if out is None:
            out = np.empty((len(source), width), dtype=np.float32)
        for start, stop, first, last, step in runs:
            out[:, start:stop] = source[:, first:last:step]
        if len(extra_gather):
            extra = source.take(extra_gather, axis=1)
            for start, stop, first in extra_copies:
                out[:, start:stop] = extra[:, first : first + stop - start]
        return out

    def choosers(self) -> np.ndarray:
        """Everyone while choosing cards; the placing seat alone while placing (``placing``
        is -1 in every other phase). Read-only, computed once per state of the batch."""
        choosers = self._cache.get("choosers")
        if choosers is None:
            choosing = (self.phase == PHASE_CHOOSE)[:, None]
            choosers = (self.placing[:, None] == self._seats) | choosing
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
        hands = self.source[:, self._hands].reshape(b, n, HAND_ROW)
        # Choosing: the cards in hand (a finished game's hands are empty).
        if self.secret:  # each hand card with the chips its suit allows (always choosing)
            held = hands[:, :, :NUM_CARDS] > 0
            chips = self._chip_masks.take(self.layout, axis=0)  # (B, 5, 52)
            masks = np.empty((b, n, NUM_CHIPS, NUM_CARDS), dtype=bool)
            for chip in range(NUM_CHIPS):  # (faster than one broadcast over chips)
                np.logical_and(held, chips[:, None, chip], out=masks[:, :, chip])
            return masks.reshape(b, n, NUM_CHIPS * NUM_CARDS)
        # Standard: the hand rows (their padding columns, the placing actions, are zero);
        # placing, the positions the placing seat may choose.
        masks = hands > 0
        rows = np.flatnonzero(self.phase == PHASE_PLACE)
        if len(rows):
            masks[rows] = False
            bids = rows * n + self.placing[rows]
            keys = self.layout[rows] * NUM_CARDS + self._chosen_flat[bids]
            cells = (bids * HAND_ROW + PLACE)[:, None] + self._positions
            masks.reshape(-1)[cells] = self._holds.take(keys, axis=0)
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
            n = self.num_players
            phase = self.phase if games is self._all else self.phase[games]
            asked = np.flatnonzero(phase == PHASE_PLACE)
            if len(asked):  # the asked seats' positions (placed by _advance_placing)
                rows = games[asked]
                seats = self.placing[rows]
                positions = actions.reshape(-1).take(asked * n + seats) - PLACE
                self._target_flat[rows * n + seats] = positions
                choosing = np.flatnonzero(phase != PHASE_PLACE)
                if len(choosing):
                    self._choose(games[choosing], actions[choosing])
            else:
                self._choose(games, actions)
            self._flow(advance=games)
        return (self.phase if games is self._all else self.phase[games]) == PHASE_DONE

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
        # Keys (seat, target, card), the chip the target (BLANK is DISCARD).
        self._write(self._row_base[rows][:, None], self._chip_writes, self._seat_keys + actions)
        chips, cards = np.divmod(actions, NUM_CARDS)
        self._target_rows[rows], self._chosen_rows[rows] = row_items(chips), row_items(cards)
        self.hand_size[rows] -= 1

    def _choose(self, rows: np.ndarray, cards: np.ndarray) -> None:
        """Standard: every seat's card (``(k, N)``) goes face down; the placing follows."""
        keys = self._seats * NUM_CARDS + cards
        self._write(self._row_base[rows][:, None], self._choose_writes, keys)
        if rows is self._all:
            self.chosen[...] = cards
            rows = slice(None)
        else:
            self._chosen_rows[rows] = row_items(cards)
        self.hand_size[rows] -= 1
        self.phase[rows] = PHASE_PLACE

    def _settle(self, rows: np.ndarray, seats: np.ndarray, targets: np.ndarray) -> None:
        """Each seat's bid goes beside a table position or, as target DISCARD, face up to the
        discards (the rules' ``_place`` and ``_discard_bid``)."""
        bids = rows * self.num_players + seats
        self._target_flat[bids] = targets
        keys = (seats * NUM_TARGETS + targets) * NUM_CARDS + self._chosen_flat[bids]
        self._write(self._row_base[rows], self._place_writes, keys)

    def _advance_placing(self, rows: np.ndarray) -> np.ndarray:
        """Place from the start player going left, the seat that has just chosen where
        (its ``target`` set, not yet placed) as the others; stop at a seat with a real
        choice to make (its card matches several table cards). Returns the rows where
        everyone has placed."""
        n = self.num_players
        every = rows is self._all
        at = slice(None) if every else rows
        start = self.start_player[at]
        chosen = self.chosen if every else self.chosen.take(rows, axis=0)
        target = self.target if every else self.target.take(rows, axis=0)  # -1: none yet
        keys = (self.layout[at] * NUM_CARDS)[:, None] + chosen  # (layout, card)
        count = self._suit_count.take(keys)  # (k, N): table cards of each bid's suit
        rank = self._rank.take(start, axis=0)  # (k, N): each seat's turn to place
        waiting = rank >= self.num_placed[at][:, None]
        asked = np.where(waiting & (count > 1) & (target < 0), rank, n)
        stop = asked[:, 0]  # the first seat asked (a loop: numpy reduces short rows slowly)
        for seat in range(1, n):
            stop = np.minimum(stop, asked[:, seat])
        placed = np.flatnonzero(waiting & (rank < stop[:, None]))  # the seats before it
        if len(placed):
            r, seats = np.divmod(placed, n)
            chosen_target = target.reshape(-1)[placed]
            forced = self._forced_target.take(keys.reshape(-1)[placed])
            self._settle(rows[r], seats, np.where(chosen_target < 0, forced, chosen_target))
        self.num_placed[at] = stop
        self.placing[at] = self._seat_at.take(start * (n + 1) + stop)
        return rows[stop == n]

    def _reveal(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turn the bids up: each table card with bids goes, with them, to the highest.
        Returns the rows that bid again and the rows whose round ends."""
        k, n = len(rows), self.num_players
        base = self._row_base[rows][:, None]
        cards, target = self.chosen.take(rows, axis=0), self.target.take(rows, axis=0)  # (k, N)
        beside = (rows * NUM_TARGETS)[:, None] + target  # in _table_flat (-1 for a discard)
        table_cards = self._table_flat.take(beside)
        # The highest bid beside each table card, by slot row * 5 + target: keys strength
        # * 8 + seat (every bid's strength is at least 1, two bids beside one table card
        # never tie, a discarded bid's key is 0).
        keys = self._bid_keys.take(self._key_seats + table_cards * NUM_CARDS + cards)
        slots = np.arange(0, k * NUM_TARGETS, NUM_TARGETS)[:, None] + target
        best = np.zeros(k * NUM_TARGETS, dtype=np.int64)
        for seat in range(n):  # (a seat's slots are distinct)
            column = slots[:, seat]
            best[column] = np.maximum(best.take(column), keys[:, seat])
        winners = best.take(slots) & 7  # (k, N): the winner beside each bid's table card
        # Every bid turned up, and to the winner's pile with the table card beside it.
        bids = self._seat_keys + target * NUM_CARDS + cards
        self._write(base, self._reveal_writes, winners * self._winner_keys + bids)
        takes = (winners * NUM_TARGETS + target) * (NUM_CARDS + 1) + table_cards + 1
        self._write(base, self._take_writes, takes)
        self._table_flat[beside] = -1  # (the column beside the discards stays -1)
        # The points of each score pile's cards.
        piles = self.source[rows, self._piles].reshape(k * n, NUM_CARDS)
        self.source[rows, self._points] = (piles @ PILE_POINTS).reshape(k, n)
        table = self._table_targets.take(rows, axis=0)[:, :NUM_POSITIONS]
        layout = self.layout[rows] = SUIT_CODE.take(table) @ LAYOUT_WEIGHTS
        bid = self.bid[rows] + 1
        self.bid[rows] = bid
        again = (bid < 2) & (layout > 0)
        ended = rows[~again]
        if len(ended):
            self._chosen_rows[ended] = self._target_rows[ended] = self._no_bids
        return rows[again], ended

    def _end_round(self, rows: np.ndarray) -> np.ndarray:
        """Discard the leftover table cards face up; end the game after the last round,
        else pass the start on. Returns the rows that deal a new round."""
        at = self._at
        base = self._row_base[rows]
        table = self._table_targets.take(rows, axis=0)[:, :NUM_POSITIONS]
        self._write(base[:, None], self._clear_writes, self._position_keys + table)
        self._table_rows[rows] = self._no_table
        self.layout[rows] = 0
        last = self.last_round[rows]
        if last.any():
            over = rows[last]
            self.phase[over] = PHASE_DONE
            self.source[over, at.bid : at.bid + 2] = 0.0
            self.source[over, at.phase : at.phase + 2] = 0.0
            # The hands are discarded face down (their owners have seen them).
            self.source[over, self._hands] = 0.0
            self.hand_size[over] = 0
            rows, base = rows[~last], base[~last]
        if len(rows):
            start, round_ = self.start_player[rows], self.round[rows]
            keys = start * MAX_ROUNDS + np.minimum(round_, MAX_ROUNDS - 1)
            self._write(base, self._next_round_writes, keys)
            self.start_player[rows] = (start + 1) % self.num_players
            self.round[rows] = round_ + 1
        return rows

    def _start_round(self, rows: np.ndarray) -> np.ndarray:
        """Four table cards (fewer when the deck runs out), then the hands dealt up to 4
        cards one at a time from the start player (see the rules' ``_start_round``).
        Returns ``rows`` (a bid starts)."""
        at, flat, n = self._at, self._flat, self.num_players
        base = self._row_base[rows]
        deck = self._deck_flat
        next_card, deck_len = self.next_card[rows], self.deck_len[rows]
        first = next_card + rows * NUM_CARDS  # flat index of the next card
        remaining = deck_len - next_card
        on_table = np.minimum(NUM_POSITIONS, remaining)
        table = deck.take(first[:, None] + self._positions, mode="clip")
        full = on_table == NUM_POSITIONS
        if not full.all():
            table = np.where(self._positions < on_table[:, None], table, -1)
        self._write(base[:, None], self._show_writes, self._position_keys + table)
        self.table[rows] = table
        self.layout[rows] = SUIT_CODE.take(table) @ LAYOUT_WEIGHTS
        first = first + on_table
        remaining = remaining - on_table
        hand_size = self.hand_size[rows]
        need = n * (HAND_SIZE - hand_size)
        enough = remaining >= need
        per_player = np.where(enough, HAND_SIZE - hand_size, remaining >= n) * full
        last = ~(full & enough) | (remaining == need)
        # One card at a time from the start player (``_deal_keys``), up to ``dealt``.
        dealt = per_player * n
        cards = deck.take(first[:, None] + self._deal_slots, mode="clip")
        cards = np.where(self._deal_slots < dealt[:, None], cards, -1)
        keys = self._deal_keys.take(self.start_player[rows], axis=0) + cards
        self._write(base[:, None], self._deal_writes, keys)
        first = first - rows * NUM_CARDS + dealt
        self.hand_size[rows] = hand_size + per_player
        self.last_round[rows] = last
        if last.any():  # the rest of the deck is discarded unseen
            first = np.where(last, deck_len, first)
            flat[base[last] + at.last_round] = 1.0
        self.next_card[rows] = first
        flat[base + at.deck] = deck_len - first
        self.bid[rows] = 0
        return rows

    def _start_bid(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A bid: everyone chooses a card, unless nothing is left to bid with or for (the
        round ends) or, in the standard game, every hand holds one card (played without
        asking). Returns the rows whose round ends and those whose placing goes on."""
        self._chosen_rows[rows] = self._target_rows[rows] = self._no_bids
        self.num_placed[rows] = 0
        self.placing[rows] = -1
        hand_size = self.hand_size[rows]
        stop = (hand_size == 0) | (self.layout[rows] == 0)
        ended = _NONE
        if stop.any():  # only a short scripted deck gets there
            ended, rows, hand_size = rows[stop], rows[~stop], hand_size[~stop]
        self.phase[rows] = PHASE_CHOOSE
        self._write(self._row_base[rows], self._bid_writes, self.bid[rows])
        single = _NONE
        if not self.secret:
            single = rows[hand_size == 1]
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
