"""Förslag, batched: thousands of games in lockstep as numpy arrays.

``ForslagVector`` plays ``B`` games of Förslag (every configuration: 3-6 players,
``board_play`` ``"in_turn"`` or ``"simultaneous"``) at once, on
``envs.core.batched.BatchedEngine`` (which documents the interface). Who chooses
changes with the phase: one seat drafts at a time, then (in turn) that seat plays a
board card, or (simultaneous) every seat plays one face down once all have drafted.
``choosers()`` says who; ``step`` reads only their actions. There is no batched
heuristic: ``make_vec(opponent="heuristic")`` plays ``ForslagHeuristic`` game by game.

State. Every seat's observation of every game is kept, written in place as the game
goes (``obs``, ``(B, N, obs_size)`` float32): a draft adds the card to the drafter's
row of every seat's view and takes it from every pool, a play takes it from the
player's hand (and from the others' unseen counts when it was a dealt card) and sets
its one-hots on every view's board, and the status one-hots (round, start player, to
act, phase) are one lookup per game in a table made from the rules' own ``positions``.
So ``observe`` is a copy of rows and ``observations()`` one copy of ``obs``. Beside it
are the rules fields with a game axis (hands, drafted cards, pool, boards and Round
Cards with ``NO_CARD`` = 25 for none, round, start player, turn, phase, the undealt
deck) and the running score parts of ``ForslagState`` (match points, colour and shape
counts, largest set). Masks and choosers are kept too, refreshed in the rows a step
moves. The hot path indexes flat views of these arrays with offsets from tables made
once per configuration.

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
(``tests/test_vector_forslag.py``): every configuration, both reward modes, random and
hypothesis-drawn play, loaded and resampled positions, the engine's own deals; the
same observations, masks, choosers, rewards, terminations and scores at every step;
``make_vec`` against the Gymnasium view game by game.

Per-game loops: only in ``_load``. The forced drafts (``_settle``) take at most ``N``
passes, each over the rows still forced; simultaneous board cards are applied seat by
seat (``N`` passes), as the rules apply a joint action.
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
#: ``MATCH`` flat: ``MATCH_FLAT[a * 26 + b]`` for card types or ``NO_CARD``.
MATCH_FLAT = MATCH.reshape(-1)
MATCH_WIDTH = MATCH.shape[1]
#: Row ``t`` counts one card of type ``t``; row ``NO_CARD`` is zeros.
ONE_CARD = np.zeros((NUM_TYPES + 1, NUM_TYPES), dtype=np.int8)
ONE_CARD[np.arange(NUM_TYPES), np.arange(NUM_TYPES)] = 1
#: The two attribute indices (colour, 5 + shape) of each card type, as an array.
ATTRIBUTE_PAIRS = np.array(ATTRIBUTES_OF, dtype=np.int64)
COLOUR, SHAPE_ATTRIBUTE = ATTRIBUTE_PAIRS.T


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
    game: ForslagGame

    def _allocate(self) -> None:
        game, b, n = self.game, self.num_envs, self.num_players
        self.simultaneous = game.simultaneous
        size = self.observation_size
        fields = self.observation_layout.fields
        self._pool_col = fields["pool"].start
        self._unseen_col = fields["unseen"].start
        self._status = status_span(self.observation_layout)
        seats = np.arange(n)
        self._right, self._left = (seats - 1) % n, (seats + 1) % n

        # Offsets in one game's block of ``obs`` (observer q's view starts at q * size):
        # ``[s, q]`` is where seat s's row is in observer q's view (row (s - q) % N).
        relative = (seats[:, None] - seats[None, :]) % n
        views = seats * size
        self._stride = n * size
        #: Seat s's hand row in every view (+ card): the whole hand in its own view, the
        #: cards it drafted and holds in the others'.
        hand_at = views + fields["hands"].start + relative * NUM_TYPES
        pool_at = views + fields["pool"].start
        cards = np.arange(NUM_TYPES)
        #: What a draft changes, row ``25 * s + card``: seat s's row in every view (+1),
        #: every pool (-1).
        draft_at = np.concatenate([hand_at, np.broadcast_to(pool_at, (n, n))], axis=1)
        self._draft_at = (draft_at[:, None, :] + cards[:, None]).reshape(n * NUM_TYPES, 2 * n)
        self._draft_signs = np.repeat(np.float32([1.0, -1.0]), n)
        #: What a play takes off, row ``25 * (2 * s + drafted) + card``: the player's own
        #: hand; in the others' views its drafted row for a drafted card, else their unseen
        #: count (a dealt card is now public).
        play_at = np.empty((n, 2, n), dtype=np.int64)
        play_at[:, 1] = hand_at
        play_at[:, 0] = views + fields["unseen"].start
        play_at[seats, 0, seats] = hand_at[seats, seats]
        play_at = play_at.reshape(2 * n, 1, n) + cards[:, None]
        self._play_at = play_at.reshape(2 * n * NUM_TYPES, n)
        #: The one-hots of a board card, row ``25 * s + card``: seat s's board row in every
        #: view, colour and shape (+ position * 10).
        board_at = views + fields["boards"].start + relative * n * NUM_ATTRIBUTES
        board_at = board_at[:, None, :, None] + ATTRIBUTE_PAIRS[None, :, None, :]
        self._board_at = board_at.reshape(n * NUM_TYPES, 2 * n)
        #: Seat s's score, then its left-hand neighbour's, in every view.
        score_at = views + fields["scores"].start + relative
        self._score_at = np.concatenate([score_at, score_at[self._left]], axis=1)
        #: Every view's Round Card row 0 (+ round * 10 + attribute).
        self._round_card_at = views + fields["round_cards"].start

        # The status one-hots (every view) and choosers of every (phase, round, start
        # player, turn), from the rules' own table; round N is the end (all zeros).
        self._status_keys = (2, n + 1, n, n + 1)
        width = self._status.stop - self._status.start
        status = np.zeros((*self._status_keys, n, width), dtype=np.float32)
        choosers = np.zeros((*self._status_keys, n), dtype=bool)
        buffer = game.state_layout.zeros()
        for phase in (DRAFTING, PLAYING):
            for r in range(n):
                for start in range(n):
                    for turn in range(n + 1):
                        seated, buffer[game.status_span] = game.positions[phase][r][start][turn]
                        choosers[phase, r, start, turn, list(seated)] = True
                        for q in range(n):
                            view = buffer.take(game.gather[q])
                            status[phase, r, start, turn, q] = view[self._status]
        self._status_table = status.reshape(-1, n, width)
        self._chooser_table = choosers.reshape(-1, n)

        # Round r's pool is deck cards [low, low + size): the end of what is left.
        left = DECK_SIZE - HAND_SIZE * n - 1
        high = np.maximum(0, left - (n + 1) * seats)
        self._pool_low = np.maximum(0, high - (n + 1))
        self._pool_size = high - self._pool_low
        self._pool_offsets = np.arange(n + 1)

        #: Every seat's observation of every game, kept up to date.
        self.obs = np.zeros((b, n, size), dtype=np.float32)
        #: The shuffled deck; ``0:pool_low[round]`` are the undealt cards (the end first).
        self.deck = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self.hands = np.zeros((b, n, NUM_TYPES), dtype=np.int8)
        self.known = np.zeros((b, n, NUM_TYPES), dtype=np.int8)  # drafted and still held
        self.pool = np.zeros((b, NUM_TYPES), dtype=np.int8)
        self.pool_kinds = np.zeros(b, dtype=np.int64)  # card types in the pool
        self.boards = np.full((b, n, n), NO_CARD, dtype=np.int64)  # [game, seat, position]
        self.round_cards = np.full((b, n), NO_CARD, dtype=np.int64)
        self.game_card = np.zeros(b, dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)  # N: the game is over
        self.start_player = np.zeros(b, dtype=np.int64)
        self.turn = np.zeros(b, dtype=np.int64)
        self.phase = np.zeros(b, dtype=np.int64)
        #: Running score parts (``ForslagState``): match points, each board's colour and
        #: shape counts, its largest set; the score is match points + 3 per set card.
        self.match_points = np.zeros((b, n), dtype=np.int64)
        self.attributes = np.zeros((b, n, NUM_ATTRIBUTES), dtype=np.int64)
        self.largest = np.zeros((b, n), dtype=np.int64)
        self._to_act = np.zeros((b, n), dtype=bool)
        self._masks = np.zeros((b, n, NUM_ACTIONS), dtype=bool)
        # Flat views (writes go through).
        self._flat = self.obs.reshape(-1)
        self._obs_rows = self.obs.reshape(b * n, size)
        self._deck_flat = self.deck.reshape(-1)
        self._hands_flat = self.hands.reshape(-1)
        self._hand_rows = self.hands.reshape(b * n, NUM_TYPES)
        self._known_flat = self.known.reshape(-1)
        self._pool_flat = self.pool.reshape(-1)
        self._boards_flat = self.boards.reshape(-1)
        self._round_cards_flat = self.round_cards.reshape(-1)
        self._points_flat = self.match_points.reshape(-1)
        self._attributes_flat = self.attributes.reshape(-1)
        self._largest_flat = self.largest.reshape(-1)
        self._mask_rows = self._masks.reshape(b * n, NUM_ACTIONS)

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

    def _start(self, games: np.ndarray, decks: np.ndarray, start_players: np.ndarray) -> None:
        """Deal as ``ForslagState.__init__``: from the end of each deck, one card to every
        seat twice, then the Game Card, then round 1's pool."""
        n, k = self.num_players, len(games)
        self.deck[games] = decks
        dealt = decks[:, DECK_SIZE - 1 - np.arange(HAND_SIZE * n)].reshape(k, HAND_SIZE, n)
        hands = ONE_CARD[dealt].sum(axis=1, dtype=np.int8)  # (k, N, 25)
        game_card = decks[:, DECK_SIZE - 1 - HAND_SIZE * n]
        self.hands[games] = hands
        self.known[games] = 0
        self.boards[games] = NO_CARD
        self.round_cards[games] = NO_CARD
        self.round_cards[games, 0] = game_card
        self.game_card[games] = game_card
        self.round[games] = 0
        self.start_player[games] = start_players
        self.turn[games] = 0
        self.phase[games] = DRAFTING
        self.match_points[games] = 0
        self.attributes[games] = 0
        self.largest[games] = 0
        fields = self.observation_layout.fields
        views = np.zeros((k, n, self.observation_size), dtype=np.float32)
        start = fields["hands"].start
        views[:, :, start : start + NUM_TYPES] = hands  # each seat's own hand: its row 0
        start = fields["unseen"].start
        views[:, :, start : start + NUM_TYPES] = COPIES - ONE_CARD[game_card][:, None] - hands
        one_hot = ATTRIBUTE_ROWS[game_card][:, None]
        for name in ("game_card", "round_cards"):  # the Game Card is round 1's Round Card
            start = fields[name].start
            views[:, :, start : start + NUM_ATTRIBUTES] = one_hot
        self.obs[games] = views
        self._refill(games)
        self._settle(games)
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
            self.known[row] = state.known
            self.pool[row] = state.pool
            self.pool_kinds[row] = state.pool_kinds
            self.boards[row] = np.where(state.boards < 0, NO_CARD, state.boards)
            self.round_cards[row] = np.where(state.round_cards < 0, NO_CARD, state.round_cards)
            self.game_card[row] = state.game_card
            self.round[row] = state.round
            self.start_player[row] = state.start_player
            self.turn[row] = state.turn
            self.phase[row] = state.phase
            self.match_points[row] = state.match_points
            self.attributes[row] = state.attribute_counts
            self.largest[row] = state.largest
            for q in range(n):
                self.obs[row, q] = self.game.observation(state, q)
        self._refresh(games)

    # --- what the seats read ---------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        return self._obs_rows.take(games * self.num_players + seats, axis=0)

    def observations(self) -> np.ndarray:
        return self.obs.copy()

    def _every_seat(self, games: np.ndarray) -> np.ndarray:
        return self.obs.take(games, axis=0)

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
        scores = self.match_points + LARGEST_SET_POINTS * self.largest
        return scores.astype(np.float64)

    # --- playing ---------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        n = self.num_players
        drafting = self.phase[games] == DRAFTING
        seat = (self.start_player[games] + self.turn[games]) % n
        chosen = actions[np.arange(len(games)), seat]  # the one chooser's, where one chooses
        if drafting.any():
            rows = games[drafting]
            self._draft(rows, seat[drafting], chosen[drafting] - DRAFT)
            self._after_draft(rows)
        if not drafting.all():
            playing = ~drafting
            rows = games[playing]
            if self.simultaneous:  # in seat order, as the rules apply a joint action
                for p in range(n):
                    self._play(rows, np.full(len(rows), p), actions[playing, p] - PLAY)
                self._end_round(rows)
            else:
                self._play(rows, seat[playing], chosen[playing] - PLAY)
                self.turn[rows] += 1
                self.phase[rows] = DRAFTING
                self._end_round(rows[self.turn[rows] == n])
        self._settle(games)
        self._refresh(games)
        return self.round[games] >= n

    def _draft(self, rows: np.ndarray, seats: np.ndarray, cards: np.ndarray) -> None:
        """Seat ``seats[i]`` takes a pool card of type ``cards[i]`` in game ``rows[i]``:
        everyone sees it go from the pool to that seat's hand (no unseen count changes)."""
        at = rows * NUM_TYPES + cards
        left = self._pool_flat[at] - 1
        self._pool_flat[at] = left
        self.pool_kinds[rows] -= left == 0
        seat_card = seats * NUM_TYPES + cards
        at = rows * (self.num_players * NUM_TYPES) + seat_card
        self._hands_flat[at] += 1
        self._known_flat[at] += 1
        at = (rows * self._stride)[:, None] + self._draft_at.take(seat_card, axis=0)
        self._flat[at] += self._draft_signs

    def _play(self, rows: np.ndarray, seats: np.ndarray, cards: np.ndarray) -> None:
        """Seat ``seats[i]`` plays a hand card of type ``cards[i]`` to its board in game
        ``rows[i]`` (distinct rows), then the running scores (``ForslagState._play``)."""
        n = self.num_players
        seat_rows = rows * n  # + seat: a (game, seat) cell of the (B, N) arrays
        own = seat_rows + seats
        seat_card = seats * NUM_TYPES + cards
        at = rows * (n * NUM_TYPES) + seat_card
        known = self._known_flat[at]
        drafted = known > 0  # a drafted copy is played first
        self._known_flat[at] = known - drafted
        self._hands_flat[at] -= 1
        block = rows * self._stride
        taken = self._play_at.take(seat_card + (seats + drafted) * NUM_TYPES, axis=0)
        self._flat[block[:, None] + taken] -= 1.0
        r = self.round[rows]
        self._boards_flat[own * n + r] = cards
        one_hots = self._board_at.take(seat_card, axis=0)
        self._flat[(block + r * NUM_ATTRIBUTES)[:, None] + one_hots] = 1.0
        # Match lines against the Game Card, the Round Card and the right-hand neighbour;
        # the left-hand neighbour's line against this card too, if it has played here.
        left = seat_rows + self._left[seats]
        match = cards * MATCH_WIDTH
        boards, points = self._boards_flat, self._points_flat
        own_points = points[own] + (
            GAME_CARD_POINTS * MATCH_FLAT[match + self.game_card[rows]]
            + ROUND_CARD_POINTS * MATCH_FLAT[match + self._round_cards_flat[seat_rows + r]]
            + NEIGHBOUR_POINTS
            * MATCH_FLAT[match + boards[(seat_rows + self._right[seats]) * n + r]]
        )
        points[own] = own_points
        left_points = points[left] + NEIGHBOUR_POINTS * MATCH_FLAT[match + boards[left * n + r]]
        points[left] = left_points
        # Attribute counts only grow, so the largest set is a running maximum.
        at = own * NUM_ATTRIBUTES
        colour, shape = at + COLOUR[cards], at + SHAPE_ATTRIBUTE[cards]
        attributes = self._attributes_flat
        colours = attributes[colour] + 1
        attributes[colour] = colours
        shapes = attributes[shape] + 1
        attributes[shape] = shapes
        largest = np.maximum(self._largest_flat[own], colours)
        np.maximum(largest, shapes, out=largest)
        self._largest_flat[own] = largest
        # The two scores that may change, in every view.
        scores = np.empty((len(rows), 2), dtype=np.float32)
        scores[:, 0] = own_points + LARGEST_SET_POINTS * largest
        scores[:, 1] = left_points + LARGEST_SET_POINTS * self._largest_flat[left]
        at = block[:, None] + self._score_at.take(seats, axis=0)
        self._flat[at] = np.repeat(scores, n, axis=1)

    def _after_draft(self, rows: np.ndarray) -> None:
        if self.simultaneous:  # every seat drafts in turn, then all play
            self.turn[rows] += 1
            self.phase[rows[self.turn[rows] == self.num_players]] = PLAYING
        else:
            self.phase[rows] = PLAYING

    def _end_round(self, rows: np.ndarray) -> None:
        """The round is over in ``rows``: the leftover pool card becomes the next Round
        Card (none if the pool ran dry), the pool is refilled, the start player passes
        left; after the last round the game is over (``round == N``)."""
        n = self.num_players
        if not len(rows):
            return
        self.round[rows] += 1
        rows = rows[self.round[rows] < n]
        if not len(rows):
            return
        pool = self.pool.take(rows, axis=0)
        one = pool.sum(axis=1) == 1
        if one.any():
            rows_one, leftover = rows[one], pool[one].argmax(axis=1)
            r = self.round[rows_one]
            self._round_cards_flat[rows_one * n + r] = leftover
            at = (rows_one * self._stride + r * NUM_ATTRIBUTES)[:, None] + self._round_card_at
            self._flat[at[:, :, None] + ATTRIBUTE_PAIRS[leftover][:, None, :]] = 1.0
        self._refill(rows)
        self.start_player[rows] = (self.start_player[rows] + 1) % n
        self.turn[rows] = 0
        self.phase[rows] = DRAFTING

    def _refill(self, rows: np.ndarray) -> None:
        """Round ``round[rows]``'s pool: the next cards from the end of the deck, face up
        (every seat sees them: off every unseen count)."""
        r = self.round[rows]
        offsets = self._pool_offsets
        positions = (rows * DECK_SIZE + self._pool_low[r])[:, None] + offsets
        cards = self._deck_flat[positions]
        cards[offsets >= self._pool_size[r][:, None]] = NO_CARD
        pool = ONE_CARD[cards].sum(axis=1, dtype=np.int8)
        self.pool[rows] = pool
        self.pool_kinds[rows] = np.count_nonzero(pool, axis=1)
        self.obs[rows, :, self._pool_col : self._pool_col + NUM_TYPES] = pool[:, None, :]
        self.obs[rows, :, self._unseen_col : self._unseen_col + NUM_TYPES] -= pool[:, None, :]

    def _settle(self, rows: np.ndarray) -> None:
        """Make the drafts that are no choice (``ForslagState._settle``): a pool of one card
        type is drafted for the seat, an empty one skipped. At most ``N`` passes, each on
        the rows still forced."""
        n = self.num_players
        while True:
            kinds = self.pool_kinds[rows]
            forced = (kinds <= 1) & (self.phase[rows] == DRAFTING) & (self.round[rows] < n)
            if not forced.any():
                return
            rows, single = rows[forced], kinds[forced] == 1
            if single.any():
                drafters = rows[single]
                seats = (self.start_player[drafters] + self.turn[drafters]) % n
                self._draft(drafters, seats, self.pool.take(drafters, axis=0).argmax(axis=1))
            self._after_draft(rows)

    def _refresh(self, rows: np.ndarray) -> None:
        """The status one-hots of every view, the choosers and the masks of ``rows``."""
        n = self.num_players
        at = slice(None) if len(rows) == self.num_envs else rows  # all rows: no gathers
        phase, rounds = self.phase[at], self.round[at]
        start, turn = self.start_player[at], self.turn[at]
        key = np.ravel_multi_index((phase, rounds, start, turn), self._status_keys)
        self.obs[at, :, self._status] = self._status_table.take(key, axis=0)
        self._to_act[at] = self._chooser_table.take(key, axis=0)
        # The masks: the pool's types for the drafter, the hand's for the seats playing.
        self._masks[at] = False
        going = rounds < n
        cells = rows * n + (start + turn) % n  # the drafter's (or in-turn player's) cell
        drafting = going & (phase == DRAFTING)
        self._mask_rows[cells[drafting], :PLAY] = self.pool.take(rows[drafting], axis=0) > 0
        playing = going & (phase == PLAYING)
        if self.simultaneous:
            chosen = rows[playing]
            self._masks[chosen, :, PLAY:] = self.hands.take(chosen, axis=0) > 0
        else:
            cells = cells[playing]
            self._mask_rows[cells, PLAY:] = self._hand_rows.take(cells, axis=0) > 0
