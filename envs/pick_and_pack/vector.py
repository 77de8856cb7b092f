"""Pick & Pack, batched: thousands of games in lockstep as numpy arrays.

``PickAndPackVector`` plays ``B`` games of Pick & Pack at once, on
``envs.core.batched.BatchedEngine`` (which documents the interface), with every option
of the rules (``placement``, ``opponent_crates``, ``tray_counts``,
``chain_rush_orders``, ``targetless_actions``). Both seats choose while placing tiles
in secret (``placement="simultaneous"``); every other choice has one chooser.

State: per game the grid (``apples``, ``face_down``, ``grabber``), the tiles
(``tile_type``, ``tile_status``, ``to_place``), the crates (``count``,
``crate_apples``, ``closure``; the trays themselves only in ``view``), the Rush Orders,
the player, the phase, the tray in hand and the Order Mix-up crate, each an array with
a game axis. As in ``PickAndPackState``, the engine keeps ``view`` (``(B, 654)``
float32, laid out as ``layout.SOURCE``) written in place at every change;
a seat's observation is the game's own ``gather_index`` applied to it (``observations``
does it as a few block copies, blue's grid transposed, a few hundred games at a time),
then the phase, seat to act, tray in hand and Order Mix-up written in.

Playing: ``_apply`` plays the choosers' decisions and then, as the rules' ``_advance``,
every decision with a single legal choice (spending targetless actions, ending games
where the player to move is stuck) until each row reaches a real choice or the end. It
goes in passes over the phases in the order a turn visits them, the rows of one phase
at once, so that most rows go from their move to the end of its action in one pass;
the actions done are finished together, and the turns that go on (a Rush Order) or
pass make the next pass. The legal choices of the player to act are kept per row and
the masks (``(B, 2, 138)``) rebuilt for the rows that moved.

Chance: the rules draw only at the deal (the grid's trays, the first player and, with
``placement="random"``, each seat's tiles); nothing is random later. A deal of ``k``
games is one call to ``_draw(games)``: ``rng.random((k, 36))``, whose ``argsort`` orders
each game's trays, ``rng.integers(2, size=k)`` the first players and, with random
placement, ``rng.random((k, 2, 12))`` the tiles' order. Each is uniform as the rules'
shuffles are, but not the same numbers as ``new_initial_state`` from the same seed;
the differential tests replace ``_draw`` by the reference games' deals, and
``load(states)`` starts rows from any position (the first player included, still
unannounced during a secret placement).

Checked against the rules (``tests/test_vector_pick_and_pack.py``): every
configuration of ``SPEC.configurations``, both seats' observations, masks, choosers,
scores, rewards (both modes) and terminations step by step, loaded mid-game positions
and determinisations, and ``make_vec`` against the Gymnasium view.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envs.core.batched import BatchedEngine
from envs.pick_and_pack.layout import (
    CRATE_CLOSURE,
    CRATE_COUNT,
    CRATE_STACK,
    CRATE_TOP,
    FACE_DOWN,
    GRABBER_CELL,
    HOLDING,
    MAX_STACK,
    MIXUP_CRATE,
    NUM_CELLS,
    NUM_CRATES,
    NUM_SPACES,
    NUM_STATUSES,
    NUM_TYPES,
    ONE,
    PHASE,
    POINTS,
    RUSH_ORDERS,
    SIZE,
    SOURCE,
    TILE_STATE,
    TILE_TYPE,
    TILES_PLACED,
    TO_ACT,
    TRAYS,
    ZERO,
)
from envs.pick_and_pack.rules import (
    CHOOSE_END,
    END,
    FLIPPED,
    MALFUNCTION,
    MALFUNCTION_TARGET,
    MIXUP,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MOVE,
    MOVING,
    NUM_ACTIONS,
    OPP_CRATE,
    OVER,
    OWN_CRATE,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM_CLOSED,
    PREMIUM_TARGET,
    QUALITY,
    QUALITY_SOURCE,
    RUSH,
    RUSH_CHOICE,
    RUSH_USE,
    TARGET_PHASE,
    TILE,
    TRAY,
    UNPLAYED,
    USED,
    WHOLESALE_CLOSED,
    WHOLESALE_TARGET,
    PickAndPackGame,
    PickAndPackState,
)

_CELLS = np.arange(NUM_CELLS)
_ROW, _COL = np.divmod(_CELLS, SIZE)
_LINES = np.arange(SIZE)
#: The cell each seat reaches moving the grabber from a cell to a line: ``(2, 36, 6)``.
LINE_CELL = np.stack(
    [_ROW[:, None] * SIZE + _LINES[None, :], _LINES[None, :] * SIZE + _COL[:, None]]
)
#: The line of the grabber's cell for each seat (red: its column, blue: its row).
GRABBER_LINE = np.stack([_COL, _ROW])
#: A cell in each seat's frame (red as is, blue transposed); its own inverse.
FRAME = np.stack([_CELLS, _COL * SIZE + _ROW])
#: The phase that asks for the target of each tile type (-1: none, Rush Order).
TARGET_OF = np.array([TARGET_PHASE.get(kind, -1) for kind in range(NUM_TYPES)])


#: The grid fields (trays, face down, grabber) lead both ``SOURCE`` and the observation.
_GRID = 3 * NUM_CELLS
#: Games per block of ``observations`` (its copies stay in cache).
_CHUNK = 256


def copy_plan(index: np.ndarray) -> tuple[bool, list[tuple[int, int, int]]]:
    """The gather ``index`` (an observer's ``gather_index``) as block copies: whether the
    grid fields are transposed (blue's frame), and the runs ``(start, source, length)``
    copying ``view[source : source + length]`` to ``start`` after them (what is left
    points at ``SOURCE``'s zero)."""
    grid = np.arange(_GRID).reshape(3, SIZE, SIZE)
    transposed = not np.array_equal(index[:_GRID], grid.reshape(-1))
    if transposed:
        assert np.array_equal(index[:_GRID], grid.transpose(0, 2, 1).reshape(-1))
    runs: list[tuple[int, int, int]] = []
    for start in range(_GRID, len(index)):
        source = int(index[start])
        if source == ZERO:
            continue
        if runs and runs[-1][0] + runs[-1][2] == start and runs[-1][1] + runs[-1][2] == source:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((start, source, 1))
    return transposed, runs


#: The phases in the order a turn goes through them (``_advance``'s passes).
_ORDER = (
    RUSH_CHOICE,
    MOVING,
    CHOOSE_END,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    PREMIUM_TARGET,
    WHOLESALE_TARGET,
    MALFUNCTION_TARGET,
    QUALITY_SOURCE,
    PLACE_TRAY,
)
#: The phases that may follow each one within a pass of ``_advance``.
_NEXT = {
    RUSH_CHOICE: (MOVING,),
    MOVING: (CHOOSE_END, PLACE_TRAY),
    CHOOSE_END: tuple(TARGET_PHASE.values()),
    MIXUP_OPPONENT: (MIXUP_OWN,),
    QUALITY_SOURCE: (PLACE_TRAY,),
}
_NEXT.update({kind: () for kind in _ORDER if kind not in _NEXT})
#: The first action of each phase's choices (``_choices``).
_OFFSET = {
    MOVING: MOVE,
    PLACE_TRAY: OWN_CRATE,
    CHOOSE_END: END,
    PREMIUM_TARGET: OWN_CRATE,
    WHOLESALE_TARGET: OPP_CRATE,
    QUALITY_SOURCE: OPP_CRATE,
    MIXUP_OPPONENT: OPP_CRATE,
    MIXUP_OWN: OWN_CRATE,
    MALFUNCTION_TARGET: TRAY,
    RUSH_CHOICE: RUSH_USE,
}


class PickAndPackVector(BatchedEngine):
    """``num_envs`` games of Pick & Pack in lockstep (see the module docstring and
    ``envs.core.batched``).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is also called here).
        **options: the game's options (``placement``, ``opponent_crates``, ...), all
            supported.
    """

    game_class = PickAndPackGame

    def _allocate(self) -> None:
        game, b = self.game, self.num_envs
        config = game.config
        self.simultaneous = game.simultaneous
        self.random_placement = config.placement == "random"
        self.spent = game.targetless_spent
        self.chain = config.chain_rush_orders
        self._trays = np.repeat(np.arange(1, 7, dtype=np.int8), game.tray_counts)
        self._types = np.repeat(np.arange(NUM_TYPES, dtype=np.int8), 2)
        self.apples = np.zeros((b, NUM_CELLS), dtype=np.int8)
        self.face_down = np.zeros((b, NUM_CELLS), dtype=bool)
        self.grabber = np.zeros(b, dtype=np.int64)  # cell row * 6 + col
        self.tile_type = np.zeros((b, 2, NUM_SPACES), dtype=np.int8)
        self.tile_status = np.zeros((b, 2, NUM_SPACES), dtype=np.int8)
        self.to_place = np.zeros((b, 2, NUM_TYPES), dtype=np.int8)
        self.count = np.zeros((b, 2, NUM_CRATES), dtype=np.int64)
        self.crate_apples = np.zeros((b, 2, NUM_CRATES), dtype=np.int64)
        self.closure = np.zeros((b, 2, NUM_CRATES), dtype=np.int8)
        self.rush_ready = np.zeros((b, 2), dtype=np.int64)
        self.rush_new = np.zeros((b, 2), dtype=np.int64)
        self.rushes = np.zeros(b, dtype=np.int64)
        self.first_player = np.zeros(b, dtype=np.int64)
        self.player = np.zeros(b, dtype=np.int64)
        self.holding = np.zeros(b, dtype=np.int64)
        self.mixup = np.full(b, -1, dtype=np.int64)
        self.phase = np.zeros(b, dtype=np.int64)
        self.view = np.zeros((b, SOURCE.size), dtype=np.float32)
        #: The legal choices of the player to act outside placement (``legal_choices``).
        self._legal = np.zeros((b, NUM_ACTIONS), dtype=bool)
        self._mask = np.zeros((b, 2, NUM_ACTIONS), dtype=bool)
        self._choosers = np.zeros((b, 2), dtype=bool)
        #: The decision chosen in each game for ``_advance`` to play (-1: none).
        self._chosen = np.full(b, -1, dtype=np.int64)
        # Observations: the game's gather per (secret placement, observer), the ranges a
        # secret placement hides (the opponent's tiles, the same for both observers), and
        # each observer's gather as block copies.
        self._gather = np.array(game.gather_index)  # (2, 2, obs_size)
        hidden = np.flatnonzero(self._gather[1, 0] != self._gather[0, 0])
        assert np.array_equal(hidden, np.flatnonzero(self._gather[1, 1] != self._gather[0, 1]))
        breaks = np.flatnonzero(np.diff(hidden) != 1) + 1
        self._hidden_ranges = [(int(run[0]), int(run[-1]) + 1) for run in np.split(hidden, breaks)]
        self._plans = [copy_plan(self._gather[0, seat]) for seat in range(2)]
        self._rows2 = np.repeat(self._all, 2)
        self._seats2 = np.tile(np.arange(2), b)

    # --- chance ------------------------------------------------------------------------
    def _draw(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every random draw of the engine: the deals of new games in rows ``games``
        (``k`` of them): the grid's trays (``(k, 36)``, cell ``row * 6 + col``), the first
        players (``(k,)``) and, with random placement, each seat's tile on each space
        (``(k, 2, 12)``; else None)."""
        rng, count = self.rng, len(games)
        trays = self._trays[np.argsort(rng.random((count, NUM_CELLS)), axis=1)]
        first = rng.integers(2, size=count)
        tiles = None
        if self.random_placement:
            tiles = self._types[np.argsort(rng.random((count, 2, NUM_SPACES)), axis=2)]
        return trays, first, tiles

    # --- dealing -----------------------------------------------------------------------
    def _deal(self, games: np.ndarray) -> None:
        self._start(games, *self._draw(games))

    def _start(
        self, games: np.ndarray, trays: np.ndarray, first: np.ndarray, tiles: np.ndarray | None
    ) -> None:
        """New games in rows ``games`` from their deal (see ``_draw``), as
        ``PickAndPackState.__init__``."""
        k = len(games)
        self.apples[games] = trays
        self.face_down[games] = False
        self.grabber[games] = np.argmax(trays == 6, axis=1)
        self.tile_status[games] = UNPLAYED
        self.count[games] = 0
        self.crate_apples[games] = 0
        self.closure[games] = 0
        self.rush_ready[games] = 0
        self.rush_new[games] = 0
        self.rushes[games] = 0
        self.first_player[games] = first
        self.player[games] = first
        self.holding[games] = 0
        self.mixup[games] = -1
        self.phase[games] = PLACING
        view = np.zeros((k, SOURCE.size), dtype=np.float32)
        view[:, TRAYS : TRAYS + NUM_CELLS] = trays
        view[np.arange(k), GRABBER_CELL + self.grabber[games]] = 1.0
        view[:, ONE] = 1.0
        if tiles is None:
            self.tile_type[games] = -1
            self.to_place[games] = 2
        else:
            self.tile_type[games] = tiles
            self.to_place[games] = 0
            spaces = np.arange(2 * NUM_SPACES)
            view[np.arange(k)[:, None], TILE_TYPE + spaces * NUM_TYPES + tiles.reshape(k, -1)] = 1
            view[:, TILE_STATE + spaces * NUM_STATUSES + UNPLAYED] = 1.0
            view[:, TILES_PLACED : TILES_PLACED + 2] = NUM_SPACES
        self.view[games] = view
        if tiles is not None:
            self._start_turn(games, first)
            self._advance(games)
            self._rescore(games)
        self._refresh(games)

    def _load(self, games: np.ndarray, states: Sequence[PickAndPackState]) -> None:
        # One game at a time: loading is rare (search, tests).
        for row, state in zip(games.tolist(), states, strict=True):
            self.apples[row] = state.apples.ravel()
            self.face_down[row] = state.face_down.ravel()
            self.grabber[row] = state.grabber[0] * SIZE + state.grabber[1]
            self.tile_type[row] = state.tile_type
            self.tile_status[row] = state.tile_status
            self.to_place[row] = state.to_place
            self.count[row] = [[len(stack) for stack in seat] for seat in state.crates]
            self.crate_apples[row] = state.crate_apples
            self.closure[row] = state.closure
            self.rush_ready[row] = state.rush_ready
            self.rush_new[row] = state.rush_new
            self.rushes[row] = state.rushes_this_turn
            self.first_player[row] = state.first_player
            self.player[row] = state.player
            self.holding[row] = state.holding
            self.mixup[row] = state.mixup_crate
            self.phase[row] = state.phase
            self.view[row] = state.view
        playing = games[(self.phase[games] != PLACING) & (self.phase[games] != OVER)]
        self._legal[playing] = self._legal_choices(playing)
        self._refresh(games)

    # --- what the seats read -----------------------------------------------------------
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        if not len(games):  # (``step`` asks for the final views of no game at most steps)
            return np.zeros((0, self.observation_size), dtype=np.float32)
        hidden = (self.phase[games] == PLACING) & self.simultaneous
        observations = self.view[games[:, None], self._gather[hidden.astype(np.int64), seats]]
        self._write_live(observations, games, seats)
        return observations

    def observations(self) -> np.ndarray:
        b, size = self.num_envs, self.observation_size
        observations = np.zeros((b, 2, size), dtype=np.float32)
        for first in range(0, b, _CHUNK):  # a few hundred games at a time, in cache
            view = self.view[first : first + _CHUNK]
            chunk = observations[first : first + _CHUNK]
            rows = len(view)
            for seat, (transposed, runs) in enumerate(self._plans):
                out = chunk[:, seat]
                if transposed:
                    out[:, :_GRID].reshape(rows, 3, SIZE, SIZE)[:] = (
                        view[:, :_GRID].reshape(rows, 3, SIZE, SIZE).transpose(0, 1, 3, 2)
                    )
                else:
                    out[:, :_GRID] = view[:, :_GRID]
                for start, source, length in runs:
                    out[:, start : start + length] = view[:, source : source + length]
        if self.simultaneous:
            hidden = np.flatnonzero(self.phase == PLACING)
            if len(hidden):
                for start, stop in self._hidden_ranges:
                    observations[hidden, :, start:stop] = 0.0
        observations = observations.reshape(b * 2, size)
        self._write_live(observations, self._rows2, self._seats2)
        return observations.reshape(b, 2, size)

    def _write_live(self, observations: np.ndarray, games: np.ndarray, seats: np.ndarray) -> None:
        """Write the fields that change on most steps (as ``PickAndPackGame.observation``)."""
        phase = self.phase[games]
        live = np.flatnonzero(phase < OVER)
        observations[live, PHASE + phase[live]] = 1.0
        if self.simultaneous:
            live = live[phase[live] != PLACING]
        observations[live, TO_ACT + (self.player[games[live]] != seats[live])] = 1.0
        observations[:, HOLDING] = self.holding[games]
        mixup = self.mixup[games]
        chosen = np.flatnonzero(mixup >= 0)
        observations[chosen, MIXUP_CRATE + mixup[chosen]] = 1.0

    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, 2, 138)`` bool (a copy), all False off turn."""
        return self._mask.copy()

    def choosers(self) -> np.ndarray:
        """Both seats while placing in secret, else the player to act (none at the end)."""
        return self._choosers.copy()

    def scores(self) -> np.ndarray:
        """Every seat's points (``PickAndPackState.scores``): ``(B, 2)`` float64."""
        return self.view[:, POINTS : POINTS + 2].astype(np.float64)

    def _refresh(self, games: np.ndarray) -> None:
        """Rebuild the masks and choosers of ``games`` from their phase."""
        phase, player = self.phase[games], self.player[games]
        self._mask[games] = False
        self._choosers[games] = False
        playing = (phase != PLACING) & (phase != OVER)
        rows, seats = games[playing], player[playing]
        self._mask[rows, seats] = self._legal[rows]
        self._choosers[rows, seats] = True
        placing = np.flatnonzero(phase == PLACING)
        if len(placing):
            rows = games[placing]
            free = self.tile_type[rows] < 0  # (k, 2, 12)
            hand = self.to_place[rows] > 0  # (k, 2, 6)
            placeable = (free[:, :, :, None] & hand[:, :, None, :]).reshape(len(rows), 2, -1)
            if self.simultaneous:
                self._mask[rows, :, PLACE:MOVE] = placeable
                self._choosers[rows] = True
            else:
                seats = player[placing]
                self._mask[rows, seats, PLACE:MOVE] = placeable[np.arange(len(rows)), seats]
                self._choosers[rows, seats] = True

    # --- playing -----------------------------------------------------------------------
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        placing = self.phase[games] == PLACING
        moving = games
        if placing.any():
            moving = self._place_step(games[placing], actions[placing])
        if not placing.all():
            rows = games[~placing]
            self._chosen[rows] = actions[~placing][np.arange(len(rows)), self.player[rows]]
            moving = np.concatenate([rows, moving]) if placing.any() else rows
        if len(moving):
            self._advance(moving)
        self._rescore(games)
        self._refresh(games)
        return self.phase[games] == OVER

    def _place_step(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """One placement step in ``games`` (``PickAndPackState._apply`` while placing);
        return the games whose placement ended (their first turn begins)."""
        if self.simultaneous:
            rows = np.repeat(games, 2)
            seats = np.tile(np.arange(2), len(games))
            chosen = actions.reshape(-1)
        else:
            rows, seats = games, self.player[games]
            chosen = actions[np.arange(len(games)), seats]
        space, kind = np.divmod(chosen - PLACE, NUM_TYPES)
        self._put_tile(rows, seats, space, kind)
        last = self.to_place[rows, seats].sum(axis=1) == 1  # the last tile places itself
        if last.any():
            rows, seats = rows[last], seats[last]
            space = np.argmax(self.tile_type[rows, seats] < 0, axis=1)
            kind = np.argmax(self.to_place[rows, seats] > 0, axis=1)
            self._put_tile(rows, seats, space, kind)
        done = ~self.to_place[games].reshape(len(games), -1).any(axis=1)
        if not self.simultaneous:
            self.player[games[~done]] ^= 1
        ended = games[done]
        self._start_turn(ended, self.first_player[ended])
        return ended

    def _put_tile(self, rows: np.ndarray, seats: np.ndarray, space: np.ndarray, kind) -> None:
        self.tile_type[rows, seats, space] = kind
        self.to_place[rows, seats, kind] -= 1
        tile = seats * NUM_SPACES + space
        view = self.view
        view[rows, TILE_TYPE + tile * NUM_TYPES + kind] = 1.0
        view[rows, TILE_STATE + tile * NUM_STATUSES + UNPLAYED] = 1.0
        view[rows, TILES_PLACED + seats] += 1.0

    def _advance(self, games: np.ndarray) -> None:
        """Play the chosen decisions (``_chosen``, -1 where none) in ``games``, then every
        decision with a single legal choice until a real choice or the end
        (``PickAndPackState._advance``), keeping the legal choices (``_legal``).

        In passes: each visits the phases in the order a turn goes through them
        (``_ORDER``), so that a row goes from its move to the end of its action in one
        pass; the actions done are finished together at the end of the pass, and the
        rows whose turn goes on (a Rush Order) or passes make the next pass."""
        chosen, phases = self._chosen, self.phase
        while len(games):
            finish: list[np.ndarray] = []
            end: list[np.ndarray] = []
            present = set(np.flatnonzero(np.bincount(phases[games])).tolist())
            for kind in _ORDER:
                if kind not in present:
                    continue
                rows = games[phases[games] == kind]
                if not len(rows):
                    continue
                actions = chosen[rows]
                ask = np.flatnonzero(actions < 0)
                if len(ask) < len(rows):
                    chosen[rows] = -1
                if len(ask):
                    asked = rows[ask]
                    legal = self._choices(kind, asked, self.player[asked])
                    offset = _OFFSET[kind]
                    count = legal.sum(axis=1)
                    many = count > 1
                    if many.any():
                        kept = asked[many]
                        self._legal[kept] = False
                        self._legal[kept, offset : offset + legal.shape[1]] = legal[many]
                    actions[ask] = np.where(count == 1, offset + np.argmax(legal, axis=1), -1)
                    none = rows[ask[count == 0]]
                    if len(none):
                        if kind == MOVING:
                            phases[none] = OVER  # the player to move has no legal move
                        else:
                            finish.append(none)  # an action with no valid target is spent
                    play = actions >= 0
                    rows, actions = rows[play], actions[play]
                if len(rows):
                    self._resolve(kind, rows, actions, finish, end)
                    present.update(_NEXT[kind])
            games = self._finish(
                np.concatenate(finish) if finish else games[:0],
                np.concatenate(end) if end else games[:0],
            )

    # --- what the rules ask ------------------------------------------------------------
    def _open_with_trays(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        return (self.closure[games, seats] == 0) & (self.count[games, seats] > 0)

    def _playable(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Which of ``seats``' tile spaces hold an unplayed tile that may be activated now
        (``playable_ends`` over every space): ``(k, 12)``."""
        unplayed = self.tile_status[games, seats] == UNPLAYED
        if self.spent:
            return unplayed
        theirs = self._open_with_trays(games, 1 - seats).any(axis=1)
        mine = self._open_with_trays(games, seats).any(axis=1)
        up = ((self.apples[games] > 0) & ~self.face_down[games]).any(axis=1)
        tiles = (self.tile_status[games, 1 - seats] == UNPLAYED).any(axis=1)
        effect = np.ones((len(games), NUM_TYPES), dtype=bool)
        effect[:, QUALITY] = theirs
        effect[:, MIXUP] = theirs & mine
        effect[:, MALFUNCTION] = up | tiles
        kinds = self.tile_type[games, seats].astype(np.int64)
        return unplayed & np.take_along_axis(effect, kinds, axis=1)

    def _move_targets(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The lines ``seats`` may move the grabber to: ``(k, 6)`` bool."""
        grabber = self.grabber[games]
        cells = LINE_CELL[seats, grabber]  # (k, 6)
        rows = games[:, None]
        playable = self._playable(games, seats)
        targets = (self.apples[rows, cells] > 0) | playable[:, :SIZE] | playable[:, SIZE:]
        targets &= ~self.face_down[rows, cells]
        targets[np.arange(len(games)), GRABBER_LINE[seats, grabber]] = False
        return targets

    def _choices(self, kind: int, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The legal actions of ``seats`` (to act) in ``games``, all in phase ``kind``
        (``PickAndPackState.choices``): ``(k, width)`` bool, action ``_OFFSET[kind]`` on."""
        if kind == MOVING:
            return self._move_targets(games, seats)
        if kind == PLACE_TRAY:
            open_ = self.closure[games, seats] == 0
            sizes = np.where(open_, self.count[games, seats], MAX_STACK + 1)
            return open_ & (sizes == sizes.min(axis=1, keepdims=True))
        if kind == CHOOSE_END:
            line = GRABBER_LINE[seats, self.grabber[games]]
            playable = self._playable(games, seats)
            index = np.arange(len(games))
            first, second = playable[index, line], playable[index, SIZE + line]
            types = self.tile_type[games, seats]
            same = types[index, line] == types[index, SIZE + line]
            return np.stack([first, second & ~(first & same)], axis=1)
        if kind == PREMIUM_TARGET:
            return self.closure[games, seats] == 0
        if kind == WHOLESALE_TARGET:
            return self.closure[games, 1 - seats] == 0
        if kind in (QUALITY_SOURCE, MIXUP_OPPONENT):
            return self._open_with_trays(games, 1 - seats)
        if kind == MIXUP_OWN:
            return self._open_with_trays(games, seats)
        if kind == MALFUNCTION_TARGET:
            up = (self.apples[games] > 0) & ~self.face_down[games]
            trays = up[np.arange(len(games))[:, None], FRAME[seats]]
            return np.concatenate([trays, self.tile_status[games, 1 - seats] == UNPLAYED], axis=1)
        assert kind == RUSH_CHOICE
        return np.ones((len(games), 2), dtype=bool)

    def _legal_choices(self, games: np.ndarray) -> np.ndarray:
        """``_choices`` of any ``games`` (not placing, not over) as ``(k, 138)`` bool."""
        out = np.zeros((len(games), NUM_ACTIONS), dtype=bool)
        phase = self.phase[games]
        for kind in np.unique(phase).tolist():
            at = np.flatnonzero(phase == kind)
            legal = self._choices(kind, games[at], self.player[games[at]])
            out[at, _OFFSET[kind] : _OFFSET[kind] + legal.shape[1]] = legal
        return out

    # --- how the rules change the state -------------------------------------------------
    def _resolve(
        self,
        kind: int,
        games: np.ndarray,
        actions: np.ndarray,
        finish: list[np.ndarray],
        end: list[np.ndarray],
    ) -> None:
        """One decision of the player to act in each of ``games``, all in phase ``kind``
        (``PickAndPackState._resolve``); the games whose action is done go to ``finish``,
        those whose turn ends to ``end``."""
        rows, chosen = games, actions
        seats = self.player[rows]
        if kind == MOVING:
            self._move(rows, seats, chosen - MOVE)
        elif kind == PLACE_TRAY:
            self._add_tray(rows, seats, chosen - OWN_CRATE, self.holding[rows])
            self.holding[rows] = 0
            finish.append(rows)
        elif kind == CHOOSE_END:
            line = GRABBER_LINE[seats, self.grabber[rows]]
            finish.append(self._activate(rows, seats, (chosen - END) * SIZE + line))
        elif kind == PREMIUM_TARGET:
            self._close(rows, seats, chosen - OWN_CRATE, PREMIUM_CLOSED)
            finish.append(rows)
        elif kind == WHOLESALE_TARGET:
            self._close(rows, 1 - seats, chosen - OPP_CRATE, WHOLESALE_CLOSED)
            finish.append(rows)
        elif kind == QUALITY_SOURCE:
            self.holding[rows] = self._take_top(rows, 1 - seats, chosen - OPP_CRATE)
            self.phase[rows] = PLACE_TRAY
        elif kind == MIXUP_OPPONENT:
            self.mixup[rows] = chosen - OPP_CRATE
            self.phase[rows] = MIXUP_OWN
        elif kind == MIXUP_OWN:
            theirs, mine = self.mixup[rows], chosen - OWN_CRATE
            their_top = self._take_top(rows, 1 - seats, theirs)
            self._add_tray(rows, 1 - seats, theirs, self._take_top(rows, seats, mine))
            self._add_tray(rows, seats, mine, their_top)
            self.mixup[rows] = -1
            finish.append(rows)
        elif kind == MALFUNCTION_TARGET:
            tray = chosen < TILE
            cells = FRAME[seats[tray], chosen[tray] - TRAY]
            self.face_down[rows[tray], cells] = True
            self.view[rows[tray], TRAYS + cells] = 0.0
            self.view[rows[tray], FACE_DOWN + cells] = 1.0
            self._play_tile(rows[~tray], 1 - seats[~tray], chosen[~tray] - TILE, FLIPPED)
            finish.append(rows)
        else:
            assert kind == RUSH_CHOICE
            use = chosen == RUSH_USE
            used, who = rows[use], seats[use]
            self.rush_ready[used, who] -= 1
            self.view[used, RUSH_ORDERS + 2 * who] = self.rush_ready[used, who]
            self.rushes[used] += 1
            self.phase[used] = MOVING
            end.append(rows[~use])

    def _move(self, games: np.ndarray, seats: np.ndarray, lines: np.ndarray) -> None:
        view = self.view
        view[games, GRABBER_CELL + self.grabber[games]] = 0.0
        cells = LINE_CELL[seats, self.grabber[games], lines]
        self.grabber[games] = cells
        view[games, GRABBER_CELL + cells] = 1.0
        apples = self.apples[games, cells]
        tray = apples > 0
        rows, cells = games[tray], cells[tray]
        self.holding[rows] = apples[tray]
        self.apples[rows, cells] = 0
        view[rows, TRAYS + cells] = 0.0
        self.phase[rows] = PLACE_TRAY
        self.phase[games[~tray]] = CHOOSE_END

    def _activate(self, games: np.ndarray, seats: np.ndarray, spaces: np.ndarray) -> np.ndarray:
        """Activate the tiles; return the rows whose action is done (to ``_finish``)."""
        kinds = self.tile_type[games, seats, spaces]
        self._play_tile(games, seats, spaces, USED)
        rush = kinds == RUSH
        rows, who = games[rush], seats[rush]
        self.rush_new[rows, who] += 1
        self.view[rows, RUSH_ORDERS + 2 * who + 1] = self.rush_new[rows, who]
        spent = rush.copy()
        mixup = np.flatnonzero(kinds == MIXUP)
        if len(mixup):  # no pair of top trays to swap: spent
            rows, who = games[mixup], seats[mixup]
            swappable = self._open_with_trays(rows, 1 - who).any(axis=1) & self._open_with_trays(
                rows, who
            ).any(axis=1)
            spent[mixup[~swappable]] = True
        targeted = ~spent
        self.phase[games[targeted]] = TARGET_OF[kinds[targeted]]
        return games[spent]

    def _play_tile(
        self, games: np.ndarray, seats: np.ndarray, spaces: np.ndarray, status: int
    ) -> None:
        self.tile_status[games, seats, spaces] = status
        at = TILE_STATE + (seats * NUM_SPACES + spaces) * NUM_STATUSES
        self.view[games, at + UNPLAYED] = 0.0
        self.view[games, at + status] = 1.0

    def _close(self, games: np.ndarray, seats: np.ndarray, crates: np.ndarray, closure: int):
        self.closure[games, seats, crates] = closure
        at = CRATE_CLOSURE + (seats * NUM_CRATES + crates) * 2 + closure - 1
        self.view[games, at] = 1.0

    def _rescore(self, games: np.ndarray) -> None:
        """Write both seats' points of ``games`` into ``view`` (``points``)."""
        apples, closure = self.crate_apples[games], self.closure[games]
        value = np.where(
            closure == PREMIUM_CLOSED,
            2 * apples,
            np.where(closure == WHOLESALE_CLOSED, apples // 2, apples),
        )
        self.view[games, POINTS : POINTS + 2] = value.sum(axis=2)

    def _add_tray(
        self, games: np.ndarray, seats: np.ndarray, crates: np.ndarray, apples: np.ndarray
    ) -> None:
        at = seats * NUM_CRATES + crates
        size = self.count[games, seats, crates]
        view = self.view
        view[games, CRATE_STACK + at * MAX_STACK + size] = apples
        self.count[games, seats, crates] = size + 1
        view[games, CRATE_COUNT + at] = size + 1
        view[games, CRATE_TOP + at] = apples
        self.crate_apples[games, seats, crates] += apples

    def _take_top(self, games: np.ndarray, seats: np.ndarray, crates: np.ndarray) -> np.ndarray:
        at = seats * NUM_CRATES + crates
        size = self.count[games, seats, crates] - 1
        view = self.view
        top = CRATE_STACK + at * MAX_STACK + size
        apples = view[games, top].astype(np.int64)
        view[games, top] = 0.0
        self.count[games, seats, crates] = size
        view[games, CRATE_COUNT + at] = size
        view[games, CRATE_TOP + at] = np.where(size > 0, view[games, top - 1], 0.0)
        self.crate_apples[games, seats, crates] -= apples
        return apples

    def _finish(self, games: np.ndarray, ending: np.ndarray) -> np.ndarray:
        """A move and its action are done in ``games``: the game may end, else an extra
        move may follow (``_finish_action``); the turn ends in ``ending`` too. Return the
        games that go on (sorted): a Rush Order offered, or the next player to move."""
        if not len(games) and not len(ending):
            return games
        closed = (self.closure[games] != 0).all(axis=2).any(axis=1)
        self.phase[games[closed]] = OVER  # a player has all four crates closed
        games = games[~closed]
        seats = self.player[games]
        may_rush = self.rush_ready[games, seats] > 0
        if not self.chain:
            may_rush &= self.rushes[games] == 0
        at = np.flatnonzero(may_rush)
        if len(at):
            may_rush[at] = self._move_targets(games[at], seats[at]).any(axis=1)
        self.phase[games[may_rush]] = RUSH_CHOICE
        self._end_turn(np.concatenate([games[~may_rush], ending]))
        return np.sort(np.concatenate([games, ending]))

    def _end_turn(self, games: np.ndarray) -> None:
        seats = self.player[games]
        self.rush_ready[games, seats] += self.rush_new[games, seats]
        self.rush_new[games, seats] = 0
        at = RUSH_ORDERS + 2 * seats
        self.view[games, at] = self.rush_ready[games, seats]
        self.view[games, at + 1] = 0.0
        self._start_turn(games, 1 - seats)

    def _start_turn(self, games: np.ndarray, players: np.ndarray) -> None:
        self.player[games] = players
        self.rushes[games] = 0
        self.phase[games] = MOVING
