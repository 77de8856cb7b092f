"""Förslag, batched: thousands of games in lockstep as numpy arrays.

``ForslagVector`` plays ``B`` games of Förslag (every configuration: 3-6 players,
``board_play`` ``"in_turn"`` or ``"simultaneous"``) at once, on
``envs.core.batched.BatchedEngine`` (which documents the interface). Who chooses
changes with the phase: one seat drafts at a time, then (in turn) that seat plays a
board card, or (simultaneous) every seat plays one face down once all have drafted.
``choosers()`` says who; ``step`` reads only their actions. There is no batched
heuristic: ``make_vec(opponent="heuristic")`` plays ``ForslagHeuristic`` game by game.

State. Every seat's observation of every game is kept, written in place as the game
goes (``obs``, ``(B, N, obs_size)``), so ``observe`` is a copy of rows and
``observations()`` one copy of ``obs``, as float32. ``obs`` itself is int8: every entry
is a count, a one-hot or a score (at most ``max_score``, 66). Beside it, with a game
axis:

- the position, one integer per game (``_key``: phase, round, start player, turn);
  everything that follows from it (the status one-hots of every view, the choosers,
  the seat to move, the next position after a move, ...) is a table over positions
  made once from the rules' own ``positions``. ``round``, ``start_player``, ``turn``
  and ``phase`` are read from it.
- the card counts (``_counts``, int8, ``(B, N + 2, 50)`` over the actions): row ``s``
  holds seat s's hand in its play half (``hands``), row ``N`` the pool in its draft
  half (``pool``), row ``N + 1`` nothing, so that any seat's legal actions are one row
  (``> 0``). What each seat drafted and still holds (``known``) is read from ``obs``.
- what a board card's score reads and changes (``_scoring``): the boards and Round
  Cards (``NO_CARD`` = 25 for none) and the running score parts of ``ForslagState``
  (each board's colour and shape counts, its largest set, the score); the Game Card,
  the undealt deck and each round's pool (``_refills``, counted at the deal).

A move (a draft or a board card: ``(round * N + seat) * 50 + action``) is a column of
tables made once per configuration: the offsets of every entry of ``obs`` it changes
(every view's copy of the hand, pool, unseen count and board one-hots) with the change,
the counts it changes, for a board card the cards and score parts it reads and the
scores it writes. So a step is a few gathers and scatters over every game that moves,
whatever it does.

Speed. At ``B`` = 1,024 a step costs memory traffic and numpy's per-call overhead, not
arithmetic: hence ``obs`` in int8 (a quarter of the bytes: a step's scattered writes
mostly hit the cache), ``np.add.at`` on flat indices for the changes (its indexed loop
takes about 60% of the time of ``a[at] += b``), tables gathered as ``(entries, games)`` so
that every call after a gather runs one loop over the games (a reduction over a short
axis costs a loop per game), and the status one-hots of a view written as one record.

Dealing and chance: all of Förslag's chance is in the deal (the deck's order and the
first start player; every pool is then the next cards from the end of the deck). The
engine's only random draws are in ``_shuffle(games)``: for each game a uniformly
shuffled 50-card deck and a uniform start player from ``self.rng``, what
``ForslagState.__init__`` draws (``rng.shuffle``, ``rng.integers(N)``), not by the same
calls: a seed does not give the rules' deal of that seed. ``_start`` deals from them
as the rules do (two hand cards each, the Game Card, the pools, from the end of the
deck), so given the deck and start player a reference state drew, the engine deals
that state's game (the tests replace ``_shuffle`` to check it). ``load(states)``
copies any position, the undealt deck's order (the later pools) included, so a loaded
game plays on exactly as the reference.

Checked against the rules (``envs/forslag/rules.py``) by differential tests
(``tests/test_batched_every_game.py``, ``tests/test_batched_forslag.py``): every configuration, both reward modes, random and
hypothesis-drawn play, loaded and resampled positions, the engine's own deals; the
same observations, masks, choosers, rewards, terminations and scores at every step;
``make_vec`` against the Gymnasium view game by game.

Per-game loops: only in ``_load``. The forced drafts (``_settle``) take at most ``N``
passes, each over the rows that may still be forced; simultaneous board cards are
applied seat by seat (``N`` passes), as the rules apply a joint action.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.forslag.layout import (
    ATTRIBUTE_ROWS,
    ATTRIBUTES_OF,
    COPIES,
    NUM_ATTRIBUTES,
    NUM_TYPES,
    status_span,
)
from envs.forslag.rules import (
    DRAFT,
    FULL_DECK,
    GAME_CARD_POINTS,
    HAND_SIZE,
    LARGEST_SET_POINTS,
    MATCH,
    NEIGHBOUR_POINTS,
    NUM_ACTIONS,
    PLAY,
    ROUND_CARD_POINTS,
    ForslagGame,
    ForslagState,
)

DRAFTING = ForslagState.DRAFTING
PLAYING = ForslagState.PLAYING
DECK_SIZE = len(FULL_DECK)
#: "No card" in the engine's boards and Round Cards (the rules use -1): the extra last
#: row of ``MATCH`` (matches nothing), ``ATTRIBUTE_ROWS`` (zeros) and ``ONE_CARD``.
NO_CARD = NUM_TYPES
MATCH_WIDTH = MATCH.shape[1]
#: Row ``t`` counts one card of type ``t``; row ``NO_CARD`` is zeros.
ONE_CARD = np.zeros((NUM_TYPES + 1, NUM_TYPES), dtype=np.int8)
ONE_CARD[np.arange(NUM_TYPES), np.arange(NUM_TYPES)] = 1
#: The two attribute indices (colour, 5 + shape) of each card type, as an array.
ATTRIBUTE_PAIRS = np.array(ATTRIBUTES_OF, dtype=np.int64)
COLOUR, SHAPE_ATTRIBUTE = ATTRIBUTE_PAIRS.T
#: The match lines of a board card, in the order ``_score`` reads them: its right-hand
#: neighbour's card, the Round Card, the Game Card (its own points), then its left-hand
#: neighbour's card (that seat's points). ``LINE_POINTS[line * 26 * 26 + card * 26 +
#: other]``: the points of ``card`` on ``line`` against ``other`` (a card or NO_CARD).
LINE_WEIGHTS = np.array([NEIGHBOUR_POINTS, ROUND_CARD_POINTS, GAME_CARD_POINTS, NEIGHBOUR_POINTS])
LINE_POINTS = (LINE_WEIGHTS[:, None, None] * MATCH).reshape(-1)
#: ``[line, card]``: where ``card``'s row of ``line`` starts in ``LINE_POINTS``.
LINE_OF_CARD = (
    np.arange(len(LINE_WEIGHTS))[:, None] * MATCH.size + np.arange(NUM_TYPES) * MATCH_WIDTH
)
#: The score parts of a seat (in ``_scoring``): attribute counts, largest set, score.
LARGEST = NUM_ATTRIBUTES
TOTAL = NUM_ATTRIBUTES + 1
#: ``obs``: every entry is a small count, a one-hot or a score (at most 66).
OBS_DTYPE = np.int8
#: A position component: one game's (int) or many games' (array).
Index = int | np.ndarray


class ForslagVector(BatchedEngine):
    """``num_envs`` games of Förslag in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``num_players``, ``board_play``); all are played.
    """

    game_class = ForslagGame
    #: The generator draws only at the deal (see the module docstring).
    draws_after_deal = False
    #: The games' state (``_allocate``); the choosers and masks follow (``_restored``).
    state_arrays = ("obs", "deck", "_key", "_counts", "_refills", "_scoring", "game_card")
    game: ForslagGame

    def _allocate(self) -> None:
        b, n = self.num_envs, self.num_players
        self.simultaneous = self.game.simultaneous
        size = self.observation_size
        fields = self.observation_layout.fields.values()
        self._columns = {f.name: f.start for f in fields}
        assert self._columns["unseen"] == self._columns["pool"] + NUM_TYPES  # one span
        assert all(f.high <= np.iinfo(OBS_DTYPE).max for f in fields), "obs is int8"
        seats = np.arange(n)
        self._left = (seats + 1) % n
        self._stride = n * size  # one game's block of ``obs``

        # Round r's pool is deck cards [low, low + size): the end of what is left.
        left = DECK_SIZE - HAND_SIZE * n - 1
        high = np.maximum(0, left - (n + 1) * seats)
        self._pool_low = np.maximum(0, high - (n + 1))
        self._pool_size = high - self._pool_low
        #: Where each deck position is dealt (``_tally``): seat s's hand (s), round r's
        #: pool (N + r) or neither (2N: the Game Card, the cards left at the end).
        slot = np.full(DECK_SIZE, 2 * n)
        slot[DECK_SIZE - 1 - np.arange(HAND_SIZE * n)] = np.tile(seats, HAND_SIZE)
        for r in range(n):
            slot[self._pool_low[r] : self._pool_low[r] + self._pool_size[r]] = n + r
        self._deal_bins = slot * NUM_TYPES
        self._tally_width = (2 * n + 1) * NUM_TYPES

        self._scoring_width = (n + 1) * n + (TOTAL + 1) * n
        self._make_position_tables()
        self._make_move_tables()

        #: Every seat's observation of every game, kept up to date.
        self.obs = np.zeros((b, n, size), dtype=OBS_DTYPE)
        #: The shuffled deck; ``0:pool_low[round]`` are the undealt cards (the end first).
        self.deck = np.zeros((b, DECK_SIZE), dtype=np.int64)
        #: The position of every game (``_key_of``).
        self._key = np.zeros(b, dtype=np.int64)
        #: Card counts over the actions: hands (rows 0..N-1, play half), pool (row N, draft
        #: half), zeros elsewhere (row N + 1 is all zeros).
        self._counts = np.zeros((b, n + 2, NUM_ACTIONS), dtype=np.int8)
        self.hands = self._counts[:, :n, PLAY:]
        self.pool = self._counts[:, n, :PLAY]
        #: Each round's pool as it is dealt, and minus it (what the pool and unseen counts
        #: of every view gain): ``[game, round]``, counted from the deck at the deal.
        self._refills = np.zeros((b, n, NUM_ACTIONS), dtype=np.int8)
        #: What a board card's score reads and changes, one block per game: the boards
        #: (``[seat, position]``), the Round Cards, then the running score parts of
        #: ``ForslagState`` (``[part, seat]``: each board's colour and shape counts, its
        #: largest set and its score, match points + 3 per set card).
        self._scoring = np.zeros((b, self._scoring_width), dtype=np.int64)
        self.boards = self._scoring[:, : n * n].reshape(b, n, n)
        self.round_cards = self._scoring[:, n * n : (n + 1) * n]
        parts = self._scoring[:, (n + 1) * n :].reshape(b, TOTAL + 1, n)
        self.attributes = parts[:, :NUM_ATTRIBUTES].transpose(0, 2, 1)
        self.largest = parts[:, LARGEST]
        self._totals = parts[:, TOTAL]
        self.game_card = np.zeros(b, dtype=np.int64)
        self._to_act = np.zeros((b, n), dtype=bool)
        self._masks = np.zeros((b, n, NUM_ACTIONS), dtype=bool)
        # Flat views (writes go through).
        self._flat = self.obs.reshape(-1)
        self._obs_rows = self.obs.reshape(b * n, size)
        self._counts_flat = self._counts.reshape(-1)
        self._count_rows = self._counts.reshape(b * (n + 2), NUM_ACTIONS)
        self._counts_width = (n + 2) * NUM_ACTIONS
        self._refill_rows = self._refills.reshape(b * n, NUM_ACTIONS)
        self._scoring_flat = self._scoring.reshape(-1)
        self._mask_rows = self._masks.reshape(b * n, NUM_ACTIONS)
        self._first_cells = np.arange(0, b * n, n)  # each game's first (game, seat) cell
        #: The status one-hots of every view, each as one record (one copy per view).
        status = status_span(self.observation_layout)
        record = np.dtype((np.void, (status.stop - status.start) * self.obs.itemsize))
        itemsize = self.obs.itemsize
        raw = self.obs.view(np.uint8)[..., status.start * itemsize : status.stop * itemsize]
        self._status_records = raw.view(record)[..., 0]
        self._status_table = self._status_table.view(record)[..., 0]

    # --- tables, made once per configuration ----------------------------------------
    def _key_of(self, phase: Index, r: Index, start: Index, turn: Index) -> Index:
        """The position key of (phase, round, start player, turn): ints or arrays."""
        n = self.num_players
        return ((phase * (n + 1) + r) * n + start) * (n + 1) + turn

    def _next_position(self, phase: int, r: int, start: int, turn: int) -> tuple[int, ...]:
        """The position after the move of ``(phase, r, start, turn)`` (``_after_draft``,
        ``_after_play`` and ``_end_round`` of the rules); the end stays the end."""
        n = self.num_players
        if r >= n:
            return phase, r, start, turn
        if phase == DRAFTING:
            if not self.simultaneous:
                return PLAYING, r, start, turn
            turn = min(turn + 1, n)
            return (PLAYING if turn == n else DRAFTING), r, start, turn
        if not self.simultaneous:
            phase, turn = DRAFTING, min(turn + 1, n)
            if turn < n:
                return phase, r, start, turn
        if r + 1 >= n:  # the game is over
            return phase, r + 1, start, turn
        return DRAFTING, r + 1, (start + 1) % n, 0

    def _make_position_tables(self) -> None:
        """Everything read from a position: its status one-hots (every view) and choosers,
        from the rules' own table (round N is the end: all zeros), the seat to move, the
        next position, ..."""
        game, n = self.game, self.num_players
        shape = (2, n + 1, n, n + 1)  # phase, round (N: the end), start player, turn
        positions = np.arange(int(np.prod(shape)))
        phase, r, start, turn = np.unravel_index(positions, shape)
        phase, r, start, turn = (np.ascontiguousarray(x) for x in (phase, r, start, turn))
        self._round_of, self._start_of, self._turn_of, self._phase_of = r, start, turn, phase
        status = status_span(self.observation_layout)
        table = np.zeros((len(positions), n, status.stop - status.start), dtype=OBS_DTYPE)
        choosers = np.zeros((len(positions), n), dtype=bool)
        buffer = game.state_layout.zeros()
        for key in positions[r < n].tolist():
            seated, buffer[game.status_span] = game.positions[phase[key]][r[key]][start[key]][
                turn[key]
            ]
            choosers[key, list(seated)] = True
            for q in range(n):
                table[key, q] = buffer.take(game.gather[q])[status]
        self._status_table, self._chooser_table = table, choosers
        live = r < n
        first = np.minimum(r, n - 1)  # the end reads round N - 1's tables (never used)
        seat = (start + turn) % n
        drafting = live & (phase == DRAFTING)
        all_play = live & (phase == PLAYING) & self.simultaneous
        self._seat_of = seat  # the drafter or the seat playing in turn
        self._drafting_of = drafting
        #: Every seat plays a board card (simultaneous).
        self._all_play_of = all_play
        #: ``(round * N + seat) * 50``: the move of the seat to move is this + the action.
        self._move_base = (first * n + seat) * NUM_ACTIONS
        self._round_base = first * n * NUM_ACTIONS
        #: Which row of ``_counts`` holds the mask of the seat to move: the pool, its
        #: hand, or none (the end; every seat playing is masked row by row).
        self._mask_row_of = np.where(drafting, n, np.where(live & ~all_play, seat, n + 1))
        #: A draft may be forced (one card type left) only with COPIES cards or fewer.
        self._may_force = drafting & (self._pool_size[first] - turn <= COPIES)
        every = zip(phase.tolist(), r.tolist(), start.tolist(), turn.tolist(), strict=True)
        after = [self._key_of(*self._next_position(*position)) for position in every]
        self._after_move = np.array(after, dtype=np.int64)
        next_round = r[self._after_move]
        #: The move ends the round and the next one is played: a Round Card and a pool.
        self._opens_round = live & (next_round > r) & (next_round < n)
        self._over_of = ~live

    def _make_move_tables(self) -> None:
        """Every move, ``(round * N + seat) * 50 + action``: the entries of ``obs`` it
        changes (``_move_at``: 3 groups of one entry per view, changed by ``_move_deltas``),
        the counts (``_count_at``); for a board card, the cards and score parts it reads
        and the scores it writes in every view. Tables are ``(entries, moves)``, so that a
        batch's gather is ``(entries, games)``; but ``_move_at`` and ``_move_deltas`` are
        ``(moves, entries)``: ``np.add.at`` then changes one game's views at a time, while
        they are in the cache (a few percent faster)."""
        n, size, col = self.num_players, self.observation_size, self._columns
        seats = np.arange(n)
        views = seats * size
        relative = (seats[:, None] - seats[None, :]) % n  # [s, q]: s's row in q's view
        r, s, action = np.unravel_index(np.arange(n * n * NUM_ACTIONS), (n, n, NUM_ACTIONS))
        moves = np.arange(len(s))
        card = action % NUM_TYPES
        plays = action >= PLAY
        self._plays = plays
        self._card_of = card
        right, left = (s - 1) % n, self._left[s]
        # Seat s's hand row in every view (+ card): the whole hand in its own view, what it
        # drafted and holds in the others'; there, in its left-hand neighbour's view.
        hand_at = views + col["hands"] + relative * NUM_TYPES + card[:, None, None]
        own = hand_at[moves, s]  # (moves, N): every view's row of the mover
        self._known_at = own[moves, left]
        # [drafted, group, view, move]. A board card: off the hand in the mover's view and,
        # in the others', off its drafted row (a drafted copy is played first) or off
        # their unseen count (a dealt card is now public); its colour and shape one-hots
        # on every view's board.
        at = np.empty((2, 3, n, len(s)), dtype=np.int64)
        at[0, 0] = np.where(seats == s[:, None], own, views + col["unseen"] + card[:, None]).T
        at[1, 0] = own.T
        board = views + col["boards"] + (relative[s] * n + r[:, None]) * NUM_ATTRIBUTES
        at[:, 1] = (board + COLOUR[card][:, None]).T
        at[:, 2] = (board + SHAPE_ATTRIBUTE[card][:, None]).T
        # A draft: onto the drafter's row in every view, off every pool; group 2 repeats
        # group 0 with a change of 0 (``np.add.at`` adds repeats up).
        drafts = ~plays
        at[:, 0, :, drafts] = own[drafts][:, None]
        at[:, 1, :, drafts] = (views + col["pool"] + card[:, None])[drafts][:, None]
        at[:, 2, :, drafts] = own[drafts][:, None]
        #: ``[move + drafted * moves]`` (``drafted``: the card played was drafted).
        self._move_at = at.transpose(0, 3, 1, 2).reshape(2 * len(s), 3 * n)
        deltas = np.zeros((3, n, len(s)), dtype=OBS_DTYPE)
        deltas[0, :, drafts], deltas[1, :, drafts] = 1, -1
        deltas[0, :, plays], deltas[1:, :, plays] = -1, 1
        self._move_deltas = np.ascontiguousarray(deltas.reshape(3 * n, len(s)).T)
        #: A board card's two scores in every view: the mover's, its left-hand neighbour's.
        scores = np.tile(views + col["scores"], 2)[:, None]
        self._score_at = np.ascontiguousarray(
            scores + np.concatenate([relative[s], relative[left]], axis=1).T
        )
        # Counts (a game's block of ``_counts``): a draft takes a pool card to the hand; a
        # board card leaves the hand (the other entry: the zero row, unchanged).
        hand = s * NUM_ACTIONS + PLAY + card
        pool = n * NUM_ACTIONS + card
        self._count_at = np.stack(
            [np.where(plays, hand, pool), np.where(plays, (n + 1) * NUM_ACTIONS, hand)]
        )
        self._count_deltas = np.stack([np.full(len(s), -1), np.where(plays, 0, 1)]).astype(np.int8)
        # What a board card reads in a game's block of ``_scoring``: the cards of its match
        # lines (``LINE_WEIGHTS``' order: the neighbours' and the Round Card at position r,
        # the Game Card, Round Card 0), then what it writes: its board slot, the mover's
        # colour and shape counts, largest set and score, its left-hand neighbour's score.
        parts = (n + 1) * n + np.stack(
            [COLOUR[card] * n + s, SHAPE_ATTRIBUTE[card] * n + s, LARGEST * n + s]
            + [TOTAL * n + s, TOTAL * n + left]
        )
        lines = [right * n + r, n * n + r, np.full_like(r, n * n), left * n + r]
        self._scoring_at = np.concatenate([np.stack([*lines, s * n + r]), parts])
        #: A Round Card's one-hots in every view (``[:, card]``, + round * 10), +1 each;
        #: NO_CARD (none): entries 0 and 1, a change of 0.
        pairs = np.concatenate([ATTRIBUTE_PAIRS, [[0, 1]]])
        at = (views + col["round_cards"] + pairs[:, :, None]).reshape(-1, 2 * n)
        self._leftover_at = np.ascontiguousarray(at.T)
        ones = np.array([[1] * NUM_TYPES + [0]], dtype=OBS_DTYPE)
        self._leftover_ones = np.repeat(ones, 2 * n, axis=0)

    # --- dealing ---------------------------------------------------------------------
    def _shuffle(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The engine's only random draws: a shuffled deck (``(k, 50)`` card types, dealt
        from the end) and a first start player (``(k,)``) for each game in ``games``
        (the tests replace this method to deal the rules' games)."""
        decks = self.rng.permuted(np.tile(FULL_DECK, (len(games), 1)), axis=1)
        return decks, self.rng.integers(self.num_players, size=len(games))

    def _deal(self, games: np.ndarray) -> None:
        decks, start_players = self._shuffle(games)
        self._start(games, np.asarray(decks, dtype=np.int64), np.asarray(start_players))

    def _tally(self, decks: np.ndarray) -> np.ndarray:
        """``(k, 2N, 25)`` int8 counts of the decks' deals: each seat's two hand cards (rows
        0..N-1) and each round's pool (rows N..2N-1); one ``bincount``."""
        k, n = len(decks), self.num_players
        bins = (np.arange(k) * self._tally_width)[:, None] + self._deal_bins + decks
        counts = np.bincount(bins.ravel(), minlength=k * self._tally_width)
        return counts.reshape(k, 2 * n + 1, NUM_TYPES)[:, : 2 * n].astype(np.int8)

    def _start(self, games: np.ndarray, decks: np.ndarray, start_players: np.ndarray) -> None:
        """Deal as ``ForslagState.__init__``: from the end of each deck, one card to every
        seat twice, then the Game Card, then round 1's pool."""
        n, k = self.num_players, len(games)
        self.deck[games] = decks
        tally = self._tally(decks)
        hands, pools = tally[:, :n], tally[:, n:]
        pool = pools[:, 0]
        self._refills[games] = np.concatenate([pools, -pools], axis=2)
        counts = np.zeros((k, n + 2, NUM_ACTIONS), dtype=np.int8)
        counts[:, :n, PLAY:] = hands
        counts[:, n, :PLAY] = pool
        self._counts[games] = counts
        game_card = decks[:, DECK_SIZE - 1 - HAND_SIZE * n]
        scoring = np.zeros((k, self._scoring_width), dtype=np.int64)
        scoring[:, : (n + 1) * n] = NO_CARD
        scoring[:, n * n] = game_card  # the Game Card is round 1's Round Card
        self._scoring[games] = scoring
        self.game_card[games] = game_card
        keys = self._key_of(DRAFTING, 0, start_players, 0)
        self._key[games] = keys
        col = self._columns
        views = np.zeros((k, n, self.observation_size), dtype=OBS_DTYPE)
        views[:, :, col["hands"] : col["hands"] + NUM_TYPES] = hands  # own hand: row 0
        views[:, :, col["pool"] : col["pool"] + NUM_TYPES] = pool[:, None]
        unseen = COPIES - ONE_CARD[game_card][:, None] - hands - pool[:, None]
        views[:, :, col["unseen"] : col["unseen"] + NUM_TYPES] = unseen
        one_hot = ATTRIBUTE_ROWS[game_card][:, None]
        for name in ("game_card", "round_cards"):
            views[:, :, col[name] : col[name] + NUM_ATTRIBUTES] = one_hot
        self.obs[games] = views
        self._settle(games, keys)
        self._refresh(games)

    def _load(self, games: np.ndarray, states: Sequence[ForslagState]) -> None:
        n = self.num_players
        for row, state in zip(games.tolist(), states, strict=True):
            expected = int(self._pool_low[state.round])
            if len(state.deck) != expected:
                raise ValueError(
                    f"a state in round {state.round + 1} has {len(state.deck)} cards in its "
                    f"deck, not {expected}"
                )
            self.deck[row, : len(state.deck)] = state.deck
            self.hands[row] = state.hands
            self.pool[row] = state.pool
            self.boards[row] = np.where(state.boards < 0, NO_CARD, state.boards)
            self.round_cards[row] = np.where(state.round_cards < 0, NO_CARD, state.round_cards)
            self.game_card[row] = state.game_card
            self._key[row] = self._key_of(state.phase, state.round, state.start_player, state.turn)
            self.attributes[row] = state.attribute_counts
            self.largest[row] = state.largest
            self._totals[row] = state.match_points
            self._totals[row] += LARGEST_SET_POINTS * self.largest[row]
            for q in range(n):
                self.obs[row, q] = self.game.observation(state, q)
        # The later rounds' pools (from the undealt deck; the others are not read).
        pools = self._tally(self.deck[games])[:, n:]
        self._refills[games] = np.concatenate([pools, -pools], axis=2)
        self._refresh(games)

    def _restored(self, games: np.ndarray) -> None:
        """The choosers and masks of ``games`` (and the status one-hots), from their state."""
        self._refresh(np.unique(games))  # distinct and ascending: all rows are the slice

    # --- what the seats read ---------------------------------------------------------
    @property
    def round(self) -> np.ndarray:
        """Every game's round, ``(B,)`` (N: the game is over)."""
        return self._round_of.take(self._key)

    @property
    def start_player(self) -> np.ndarray:
        return self._start_of.take(self._key)

    @property
    def turn(self) -> np.ndarray:
        return self._turn_of.take(self._key)

    @property
    def phase(self) -> np.ndarray:
        return self._phase_of.take(self._key)

    @property
    def known(self) -> np.ndarray:
        """The cards each seat drafted and still holds, ``(B, N, 25)`` int8: its row (the
        last) in its left-hand neighbour's view."""
        start = self._columns["hands"] + (self.num_players - 1) * NUM_TYPES
        return self.obs[:, self._left, start : start + NUM_TYPES].astype(np.int8, copy=False)

    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        rows = self._obs_rows.take(games * self.num_players + seats, axis=0)
        return rows.astype(np.float32)

    def observations(self) -> np.ndarray:
        return self.obs.astype(np.float32)

    def _every_seat(self, games: np.ndarray) -> np.ndarray:
        return self.obs.take(games, axis=0).astype(np.float32)

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, N, 50)`` bool (a copy): the pool's card types
        for the drafter, the hand's for the seats playing a board card."""
        return self._masks.copy()

    def choosers(self) -> np.ndarray:
        """The drafter, the seat playing a board card, or every seat (simultaneous play);
        ``(B, N)`` bool (a copy), none at the end."""
        return self._to_act.copy()

    def scores(self) -> np.ndarray:
        """Every seat's score as it stands: ``(B, N)`` float64 (a new array): match points
        plus 3 per card of the largest set."""
        return self._totals.astype(np.float64)

    # --- playing ---------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        n = self.num_players
        keys = self._key.take(games)
        if not self.simultaneous:  # one chooser per game
            cells = self._first_cells[: len(games)] + self._seat_of.take(keys)
            self._move(games, self._move_base.take(keys) + actions.reshape(-1).take(cells))
        else:
            drafting = self._drafting_of.take(keys)
            rows = np.flatnonzero(drafting)
            if len(rows):
                seats = self._seat_of.take(keys.take(rows))
                chosen = actions.reshape(-1).take(rows * n + seats)
                self._move(games.take(rows), self._move_base.take(keys.take(rows)) + chosen)
            rows = np.flatnonzero(~drafting)
            if len(rows):  # in seat order, as the rules apply a joint action
                playing, bases = games.take(rows), self._round_base.take(keys.take(rows))
                for p in range(n):
                    self._move(playing, bases + p * NUM_ACTIONS + actions[rows, p])
        after = self._after_move.take(keys)
        self._key[games] = after
        opens = self._opens_round.take(keys)
        if opens.any():
            self._open_round(games[opens], after[opens])
        self._settle(games, after)
        self._refresh(games)
        return self._over_of.take(self._key.take(games))

    def _move(self, rows: np.ndarray, moves: np.ndarray) -> None:
        """One move in each of ``rows`` (distinct): ``moves`` are ``(round * N + seat) * 50
        + action`` (``_make_move_tables``). The position is not changed here."""
        block = rows * self._stride
        drafted = self._flat.take(block + self._known_at.take(moves)) > 0
        at = self._move_at.take(moves + drafted * len(self._plays), axis=0)
        at += block[:, None]
        # ``np.add.at`` on flat indices and values of obs's dtype: its indexed loop takes
        # about 60% of the time of ``a[at] += b`` (and repeats add up).
        np.add.at(self._flat, at.ravel(), self._move_deltas.take(moves, axis=0).ravel())
        counts = self._count_at.take(moves, axis=1)
        counts += rows * self._counts_width
        np.add.at(self._counts_flat, counts.ravel(), self._count_deltas.take(moves, axis=1).ravel())
        plays = np.flatnonzero(self._plays.take(moves))
        if len(plays):
            self._score(rows.take(plays), moves.take(plays))

    def _score(self, rows: np.ndarray, moves: np.ndarray) -> None:
        """Board cards (``ForslagState._play``): on the boards, then the running score parts
        and the two scores that change (the player's, and its left-hand neighbour's: its
        line against this card) in every view."""
        n = self.num_players
        cards = self._card_of.take(moves)
        at = self._scoring_at.take(moves, axis=1)
        at += rows * self._scoring_width
        values = self._scoring_flat.take(at)
        lines = LINE_POINTS.take(values[:4] + LINE_OF_CARD.take(cards, axis=1))
        values[4] = cards
        parts = values[5:]
        # Attribute counts only grow, by one: the largest set grows by one or not at all.
        parts[:2] += 1
        grew = np.maximum(parts[0], parts[1]) > parts[2]
        parts[2] += grew
        parts[3] += lines[0] + lines[1] + lines[2] + LARGEST_SET_POINTS * grew
        parts[4] += lines[3]
        self._scoring_flat[at[4:]] = values[4:]
        at = self._score_at.take(moves, axis=1)
        at += rows * self._stride
        self._flat[at] = parts[3:].repeat(n, axis=0)

    def _open_round(self, rows: np.ndarray, keys: np.ndarray) -> None:
        """Round ``round_of[keys]`` starts in ``rows``: the leftover pool card becomes its
        Round Card (none if the pool ran dry), and its pool is dealt face up (every seat
        sees it: off every unseen count)."""
        n = self.num_players
        r = self._round_of.take(keys)
        pool_rows = rows * (n + 2) + n
        old = self._count_rows.take(pool_rows, axis=0)  # the pool row: the draft half
        leftover = np.where(old.any(axis=1), old.argmax(axis=1), NO_CARD)
        self._scoring_flat[rows * self._scoring_width + n * n + r] = leftover
        at = self._leftover_at.take(leftover, axis=1)
        at += rows * self._stride + r * NUM_ATTRIBUTES
        np.add.at(self._flat, at.ravel(), self._leftover_ones.take(leftover, axis=1).ravel())
        refill = self._refill_rows.take(rows * n + r, axis=0)
        self._count_rows[pool_rows, :PLAY] = refill[:, :PLAY]
        refill[:, :PLAY] -= old[:, :PLAY]  # the pool: the new cards in, the leftover out
        start = self._columns["pool"]
        self.obs[rows, :, start : start + 2 * NUM_TYPES] += refill[:, None]

    def _settle(self, rows: np.ndarray, keys: np.ndarray) -> None:
        """Make the drafts that are no choice (``ForslagState._settle``): a pool of one card
        type is drafted for the seat, an empty one skipped. At most ``N`` passes, each on
        the rows whose pool is small enough to be forced."""
        n = self.num_players
        while True:
            maybe = self._may_force.take(keys)
            if not maybe.any():
                return
            rows, keys = rows[maybe], keys[maybe]
            pools = self._count_rows.take(rows * (n + 2) + n, axis=0)  # the pool rows
            kinds = np.count_nonzero(pools, axis=1)
            forced = kinds <= 1
            if not forced.any():
                return
            rows, keys, kinds, pools = rows[forced], keys[forced], kinds[forced], pools[forced]
            single = kinds == 1
            if single.any():
                moves = self._move_base.take(keys[single]) + DRAFT + pools[single].argmax(axis=1)
                self._move(rows[single], moves)
            keys = self._after_move.take(keys)
            self._key[rows] = keys

    def _refresh(self, rows: np.ndarray) -> None:
        """The status one-hots of every view, the choosers and the masks of ``rows``."""
        n = self.num_players
        if len(rows) == self.num_envs:  # all rows: no gathers
            at, keys = slice(None), self._key
        else:
            at, keys = rows, self._key.take(rows)
        self._status_records[at] = self._status_table.take(keys, axis=0)
        self._to_act[at] = self._chooser_table.take(keys, axis=0)
        # The masks: the pool's types for the drafter, the hand's for the seats playing.
        self._masks[at] = False
        cells = rows * n + self._seat_of.take(keys)
        sources = rows * (n + 2) + self._mask_row_of.take(keys)
        self._mask_rows[cells] = self._count_rows.take(sources, axis=0) > 0
        if self.simultaneous:
            every = self._all_play_of.take(keys)
            if every.any():
                chosen = rows[every]
                self._masks[chosen] = self._counts[chosen, :n] > 0
