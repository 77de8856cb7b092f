"""Pickup, batched: thousands of games in lockstep as numpy arrays.

``PickupVector`` plays ``B`` games of Pickup (2-6 players, one hand or the longer game
to ``target_score``) at once, on ``envs.core.batched.BatchedEngine`` (which documents
the interface). Two kinds of choice alternate: the play phase, where every seat plays
a hand card face down, and pickup choices, where one seat (the chooser) picks which
eligible pool rank its card takes. A game row is in one or the other; ``step``
advances each row by its own kind of choice and resolves its played cards (lowest
first, ties going left from the last actor) as far as the next choice.

State: as in ``PickupState``, every game keeps the *table* of every seat's
observation fields in absolute seat order (``layout.table_layout``), one
float32 row per game (``table``, ``(B, table size)``). The hands, pool, unseen
counts, piles, reveal, order, last actor, dealer, chooser, scores and round are views
of it (``hands``: ``(B, N, 10)`` and the like), and the play writes their cells in
place (through the flat table: ``game * width + cell``); a seat's observation is one
``take`` of its cells, listed by the game's own ``gathers`` (``layout.gather_index``).
Beside it, integer arrays keep what the rules read as seats and ranks: each seat's
played rank, the chooser, the last actor, the dealer, the round, the banked points of
earlier hands and each game's shuffled deck (``deck``, ``(B, 55)``, rank indices). ``step`` advances
a row by one choice and resolves its cards in passes over the rows still resolving,
one card per row and pass (at most N + 1 passes). ``masks()`` and ``choosers()`` are
computed once per change and handed out read-only.

Dealing and chance: a hand deals like the rules' ``_start_hand``: seat ``p`` gets
``deck[p*H:(p+1)*H]``, the rest is the stock, and round ``r``'s pool is
``deck[55-5(r+1):55-5r]`` (the rules pop it from the end of the stock). Every
random draw of the engine is in ``_shuffle``: one call ``rng.random((k, 56))``, the
``argsort`` of the first 55 numbers orders each deck and the last one picks the
dealer of a new game; it deals new games and the reshuffle between hands of the
longer game. The rules draw the same things (``rng.integers(N)`` for the dealer,
``rng.shuffle`` of the deck for every hand) from the state's own generator: the
distributions are the same, the streams are not (a test replaces ``_shuffle`` by the
reference's outcome to play the longer game in lockstep). ``load(states)`` carries
the undealt stock in its order, so a loaded position deals the same later pools as
the reference; only the next hand's reshuffle is drawn anew.

Checked against the rules (``envs/pickup/rules.py``) by differential tests
(``tests/test_batched_every_game.py``, ``tests/test_batched_pickup.py``), for every configuration in ``SPEC`` (and other
targets): from the same positions and actions (random and hypothesis-drawn, from new
deals, mid-game positions and ``resample``d ones) it gives the same observations,
masks, choosers, rewards (both modes), terminations and scores, and ``make_vec`` on it
gives the learner what the Gymnasium view gives, opponents' pickup choices included.

Speed (random play, every seat's observation each step, 4 players): about 1M agent
steps/s at B = 1,024-8,192, 11-13x the Gymnasium view (CPU time, a shared machine).

``heuristic_actions`` plays ``envs.pickup.heuristic.PickupHeuristic`` in many rows at
once (its ``heuristic_actions``), drawing the imagined deals with ``draw_picks`` (N - 1
numbers per imagined round where the agent draws one per unseen card and argsorts them:
the same law, tested).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.pickup.heuristic import draw_picks, heuristic_actions
from envs.pickup.layout import NUM_RANKS, POOL_SIZE
from envs.pickup.rules import (
    DECK,
    DECK_COUNTS,
    DECK_SIZE,
    NO_SEAT,
    RANK_INDEX,
    PickupGame,
    PickupState,
    build_table,
)


def counts_of_rows(cards: np.ndarray) -> np.ndarray:
    """Cards of each rank in every row of ``cards`` (``(k, m)`` rank indices): ``(k, 10)``."""
    k = len(cards)
    cells = (np.arange(k)[:, None] * NUM_RANKS + cards).ravel()
    return np.bincount(cells, minlength=k * NUM_RANKS).reshape(k, NUM_RANKS)


class PickupVector(BatchedEngine):
    """``num_envs`` games of Pickup in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``num_players``, ``target_score``); all are played.
    """

    game_class = PickupGame
    game: PickupGame
    #: The table (its views with it) and the integer arrays beside it; the cached masks
    #: and choosers are dropped by ``_restored``.
    state_arrays = (
        "table",
        "played",
        "chooser",
        "last_actor",
        "dealer",
        "round",
        "acted",
        "finished",
        "banked",
        "deck",
    )

    def _allocate(self) -> None:
        game, b, n = self.game, self.num_envs, self.num_players
        self.hand_size = size = game.hand_size
        self.target = game.target
        self._seats = np.arange(n)
        #: Per last actor, each seat's place going left from it (itself last): tie order.
        self._tie = (self._seats - self._seats[:, None] - 1) % n
        self._gathers = np.stack(game.gathers)  # (N, obs_size): each observer's cells
        self.table = table = np.zeros((b, game.table_layout.size), dtype=np.float32)
        fields = game.table_layout.fields

        def view(name: str) -> np.ndarray:
            field = fields[name]
            return table[:, field.start : field.stop].reshape((b, *field.shape))

        self.hands, self.unseen, self.unshown = view("hands"), view("unseen"), view("unshown")
        self.pool, self.piles, self.revealed = view("pool"), view("piles"), view("revealed")
        self.order, self.last_onehot = view("order"), view("last_actor")
        self.dealer_onehot, self.chooser_onehot = view("dealer"), view("chooser")
        self.totals, self.round_onehot = view("scores"), view("round")
        # The play writes single cells of the flat table: ``games * width + start + ...``
        # (one-axis indexing, several times faster than three-axis indexing of the views).
        self._flat, self._width, self._at = table.reshape(-1), table.shape[1], game.cells
        self._seat_rows = self._seats * NUM_RANKS
        #: Each seat's card in the latest reveal (rank index, NO_SEAT before the first).
        self.played = np.full((b, n), NO_SEAT, dtype=np.int64)
        self.chooser = np.full(b, NO_SEAT, dtype=np.int64)
        self.last_actor = np.zeros(b, dtype=np.int64)
        self.dealer = np.zeros(b, dtype=np.int64)
        self.round = np.zeros(b, dtype=np.int64)
        self.acted = np.zeros(b, dtype=np.int64)  # seats that acted since the reveal
        self.finished = np.zeros(b, dtype=bool)
        self.banked = np.zeros((b, n), dtype=np.float32)
        self.deck = np.zeros((b, DECK_SIZE), dtype=np.int64)
        self._dealt = n * size
        # Round r's pool: deck columns 55 - 5(r+1) to 55 - 5r.
        self._pool_columns = DECK_SIZE - POOL_SIZE * (np.arange(size + 1)[:, None] + 1)
        self._pool_columns = self._pool_columns + np.arange(POOL_SIZE)
        self._masks: np.ndarray | None = None
        self._choosers: np.ndarray | None = None

    # --- chance ----------------------------------------------------------------------
    def _shuffle(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every random draw of the engine: a shuffled deck (``(k, 55)`` rank indices) and
        a dealer (``(k,)``; used for new games only) for each of ``games``."""
        keys = self.rng.random((len(games), DECK_SIZE + 1))
        decks = DECK[np.argsort(keys[:, :DECK_SIZE], axis=1)]
        dealers = (keys[:, DECK_SIZE] * self.num_players).astype(np.int64)
        return decks, dealers

    # --- dealing ---------------------------------------------------------------------
    def _changed(self) -> None:
        self._masks = self._choosers = None

    def _restored(self, games: np.ndarray) -> None:
        """Drop the cached masks and choosers (the views share the copied table)."""
        self._changed()

    def _deal(self, games: np.ndarray) -> None:
        self._changed()
        decks, dealers = self._shuffle(games)
        self.dealer[games] = dealers
        self.banked[games] = 0.0
        self.finished[games] = False
        self._start_hand(games, decks)
        self._refresh_unseen(games)

    def _start_hand(self, games: np.ndarray, decks: np.ndarray) -> None:
        """Deal a hand from ``decks`` in ``games`` (as ``PickupState._start_hand``)."""
        k, n, size = len(games), self.num_players, self.hand_size
        self.deck[games] = decks
        seat_cards = decks[:, : self._dealt].reshape(k * n, size)
        hands = counts_of_rows(seat_cards).reshape(k, n, NUM_RANKS)
        dealer = self.dealer[games]
        self.table[games] = 0.0
        self.hands[games] = hands
        self.unshown[games] = DECK_COUNTS
        self.totals[games] = self.banked[games]
        self.last_onehot[games, dealer] = 1.0
        self.dealer_onehot[games, dealer] = 1.0
        self.round_onehot[games, 0] = 1.0
        self.played[games] = NO_SEAT
        self.chooser[games] = NO_SEAT
        self.last_actor[games] = dealer
        self.round[games] = 0
        self.acted[games] = 0
        self._deal_pool(games)

    def _deal_pool(self, games: np.ndarray) -> None:
        """Deal the pool of the current round of ``games`` from its deck."""
        cards = self.deck[games[:, None], self._pool_columns[self.round[games]]]
        pool = counts_of_rows(cards)
        self.pool[games] = pool
        self.unshown[games] -= pool

    def _refresh_unseen(self, games: np.ndarray) -> None:
        if len(games) == self.num_envs:  # every game (distinct rows): in place
            np.subtract(self.unshown[:, None, :], self.hands, out=self.unseen)
        else:
            self.unseen[games] = self.unshown[games][:, None, :] - self.hands[games]

    def _load(self, games: np.ndarray, states: Sequence[PickupState]) -> None:
        # A loop over the states: loading is not in the hot path.
        self._changed()
        self.table[games] = np.stack([build_table(s) for s in states])
        for row, state in zip(games.tolist(), states, strict=True):
            self.played[row] = state.played
            self.chooser[row] = state.chooser
            self.last_actor[row] = state.last_actor
            self.dealer[row] = state.dealer
            self.round[row] = state.round
            self.acted[row] = len(state.acted)
            self.finished[row] = state.finished
            self.banked[row] = state.banked
            # The stock keeps its order where the rules keep it: deck[N*H : N*H + len].
            deck = self.deck[row]
            deck[:] = DECK
            deck[self._dealt : self._dealt + len(state.stock)] = state.stock

    # --- what the seats read ---------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        # One take from the flat table (faster than a two-axis fancy index).
        cells = games[:, None] * self.table.shape[1] + self._gathers[seats]
        return np.take(self.table.reshape(-1), cells)

    def observations(self) -> np.ndarray:
        views = np.take(self.table, self._gathers.reshape(-1), axis=1)
        return views.reshape(self.num_envs, self.num_players, self.observation_size)

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, N, 10)`` bool (read-only): the ranks in hand
        while playing, the chooser's eligible pool ranks in a pickup choice."""
        if self._masks is None:
            playing = (self.chooser == NO_SEAT) & ~self.finished
            masks = (self.hands > 0) & playing[:, None, None]
            rows = np.flatnonzero(~playing & ~self.finished)
            if len(rows):
                seats = self.chooser[rows]
                card = self.played[rows, seats]
                masks[rows, seats] = (self.pool[rows] > 0) & (card[:, None] >= RANK_INDEX)
            masks.flags.writeable = False
            self._masks = masks
        return self._masks

    def choosers(self) -> np.ndarray:
        """Every seat while playing, the chooser in a pickup choice: ``(B, N)`` bool
        (read-only)."""
        if self._choosers is None:
            playing = (self.chooser == NO_SEAT) & ~self.finished
            choosers = playing[:, None] | (self._seats == self.chooser[:, None])
            choosers.flags.writeable = False
            self._choosers = choosers
        return self._choosers

    def scores(self) -> np.ndarray:
        """Game points of every seat (banked plus the score pile): ``(B, N)`` float64."""
        return self.totals.astype(np.float64)

    # --- playing ---------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        self._changed()
        revealing = self.chooser[games] == NO_SEAT
        if revealing.all():
            self._reveal(games, actions)
        else:
            if revealing.any():
                self._reveal(games[revealing], actions[revealing])
            choosing = np.flatnonzero(~revealing)
            rows = games[choosing]
            seats = self.chooser[rows]
            self.chooser[rows] = NO_SEAT
            self._flat[rows * self._width + self._at.chooser + seats] = 0.0
            self._act(rows, seats, actions[choosing, seats], np.ones(len(rows), dtype=bool))
        self._resolve(games)
        self._refresh_unseen(games)
        return self.finished[games]

    def _reveal(self, games: np.ndarray, cards: np.ndarray) -> None:
        """Every seat's card face up: out of the hand, shown, and this round's reveal."""
        at, flat = self._at, self._flat
        cells = (games * self._width)[:, None] + self._seat_rows + cards  # (k, N)
        flat[cells + at.hands] -= 1.0
        self.unshown[games] -= counts_of_rows(cards)
        self.revealed[games] = 0.0
        flat[cells + at.revealed] = 1.0
        self.played[games] = cards
        self.order[games] = 0.0
        self.acted[games] = 0

    def _resolve(self, games: np.ndarray) -> None:
        """Let the played cards act in order until a pickup choice is needed or the round
        ends (as ``PickupState._resolve``): one card per game and pass, at most N + 1."""
        n = self.num_players
        active, ended = games, []
        while len(active):
            played = self.played[active]
            # The lowest card; ties go to the seat reached first going left of the last actor.
            keys = played * n + self._tie[self.last_actor[active]]
            keys = np.where(self.order[active] > 0, NUM_RANKS * n, keys)
            seats = np.argmin(keys, axis=1)
            waiting = keys[np.arange(len(active)), seats] < NUM_RANKS * n
            if not waiting.all():
                ended.append(active[~waiting])
                active, seats, played = active[waiting], seats[waiting], played[waiting]
                if not len(active):
                    break
            cards = played[np.arange(len(active)), seats]
            eligible = (self.pool[active] > 0) & (cards[:, None] >= RANK_INDEX)
            options = eligible.sum(axis=1)
            choose = options >= 2
            if choose.any():
                rows, choosers = active[choose], seats[choose]
                self.chooser[rows] = choosers
                self._flat[rows * self._width + self._at.chooser + choosers] = 1.0
            acting = ~choose
            if not acting.all():
                active, seats, cards = active[acting], seats[acting], cards[acting]
                eligible, options = eligible[acting], options[acting]
            takes = options == 1  # else nothing is eligible: the card is stacked
            self._act(active, seats, np.where(takes, np.argmax(eligible, axis=1), cards), takes)
        if ended:
            self._end_round(np.concatenate(ended))

    def _act(
        self, games: np.ndarray, seats: np.ndarray, ranks: np.ndarray, takes: np.ndarray
    ) -> None:
        """Seat ``seats[i]`` adds a card of ``ranks[i]`` to its pile: where ``takes``, a
        pickup from the pool (the rest of that rank in the pool and in the other seats'
        piles is knocked out, the played card discarded); elsewhere its played card,
        stacked (nothing was eligible)."""
        at, flat = self._at, self._flat
        base = games * self._width
        piles = (base + at.piles + ranks)[:, None] + self._seat_rows  # (k, N): each pile
        counts = np.take(flat, piles)
        own = self._seats == seats[:, None]
        knocked = ~own & takes[:, None]
        flat[piles] = np.where(knocked, 0.0, counts + own)
        values = (ranks + 1).astype(np.float32)[:, None]
        flat[(base + at.scores)[:, None] + self._seats] += (own - knocked * counts) * values
        flat[(base + at.pool + ranks)[takes]] = 0.0
        self._acted(games, seats)

    def _acted(self, games: np.ndarray, seats: np.ndarray) -> None:
        at, flat = self._at, self._flat
        base = games * self._width
        acted = self.acted[games] + 1
        self.acted[games] = acted
        flat[base + at.order + seats] = acted
        flat[base + at.last_actor + self.last_actor[games]] = 0.0
        flat[base + at.last_actor + seats] = 1.0
        self.last_actor[games] = seats

    def _end_round(self, games: np.ndarray) -> None:
        """The leftover pool is discarded; the next round's pool, the next hand (reshuffled,
        the dealer passing left) or the end of the game."""
        self.pool[games] = 0.0
        rounds = self.round[games]
        self.round_onehot[games, rounds] = 0.0
        rounds += 1
        self.round[games] = rounds
        going_on = rounds < self.hand_size
        if going_on.any():
            rows = games[going_on]
            self.round_onehot[rows, rounds[going_on]] = 1.0
            self._deal_pool(rows)
        over = games[~going_on]
        if not len(over):
            return
        if self.target is None:
            self.finished[over] = True
            return
        totals = self.totals[over]
        ends = totals.max(axis=1) >= self.target
        self.finished[over[ends]] = True
        rows = over[~ends]
        if len(rows):  # a rare event: a new hand of the longer game
            self.banked[rows] = totals[~ends]
            self.dealer[rows] = (self.dealer[rows] + 1) % self.num_players
            decks, _ = self._shuffle(rows)
            self._start_hand(rows, decks)

    # --- opponents -------------------------------------------------------------------
    def heuristic_actions(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """``heuristic_actions`` for rows of observations and masks of this game (any
        seats), drawing from ``rng`` the imagined deals (``draw_picks``) and the
        tie-break noise (``rng.random((k, 10))``)."""
        observations = np.asarray(observations)
        field = self.game.observation_layout.fields["unseen"]
        unseen = observations[:, field.start : field.stop].sum(axis=1).astype(np.int64)
        picks = draw_picks(unseen, self.num_players - 1, rng)
        noise = rng.random((len(observations), NUM_RANKS))
        return heuristic_actions(observations, masks, self.game, picks, noise)
