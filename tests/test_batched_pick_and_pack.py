"""The batched Pick & Pack engine (envs/pick_and_pack/batched.py): what is its own beyond
what every engine does (``test_batched_every_game.py``: random play against the rules,
loaded positions, seeding, make_vec against the Gymnasium view).

Differential tests: from the same deals and the same actions, ``PickAndPackVector``
gives every seat the same observations, masks, choosers, scores, rewards (both modes)
and terminations as ``envs.core.table.Table`` over ``envs/pick_and_pack/rules.py``, in
every configuration of ``SPEC.configurations``, every sub-step of the game asked;
positions of every sub-step, made-up late positions and scores beyond int8 play on
alike; options outside the configurations are played too.

The engine's deals are checked in two ways: rows loaded from the reference tables
(``engine.load``), and the engine dealing itself with its one random method, ``_draw``,
replaced by the reference games' deals (the automatic reset included); its own deals
are valid positions, dealt apart.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from lockstep import new_table

from envs.core.batched import random_actions
from envs.core.table import Table
from envs.pick_and_pack import SPEC
from envs.pick_and_pack.batched import PickAndPackVector
from envs.pick_and_pack.layout import SOURCE
from envs.pick_and_pack.rules import (
    MAX_STACK,
    MOVING,
    NUM_ACTIONS,
    NUM_PHASES,
    NUM_SPACES,
    NUM_TYPES,
    PLACEMENTS,
    PLACING,
    PREMIUM_CLOSED,
    SIZE,
    PickAndPackGame,
    PickAndPackState,
)

CONFIGS = [dict(config) for config in SPEC.configurations]
CONFIG_IDS = ["-".join(str(v) for v in config.values()) for config in CONFIGS]
#: Options beyond the listed configurations, which the engine plays too.
OTHER_OPTIONS = [
    {"placement": "random", "chain_rush_orders": False, "targetless_actions": "unplayable"},
    {
        "placement": "alternate",
        "opponent_crates": "full",
        "targetless_actions": "unplayable",
        "tray_counts": (2, 2, 3, 3, 25, 1),
    },
]


def deal_of(state: PickAndPackState) -> tuple[np.ndarray, int, np.ndarray | None]:
    """A new reference game's deal, as ``PickAndPackVector._draw`` gives one: the grid's
    trays, the first player and, with random placement, the tiles."""
    tiles = state.tile_type.copy() if state.game.config.placement == "random" else None
    return state.apples.ravel().copy(), state.first_player, tiles


def stacked(deals: list[tuple[np.ndarray, int, np.ndarray | None]]):
    trays = np.stack([d[0] for d in deals])
    first = np.array([d[1] for d in deals], dtype=np.int64)
    tiles = None if deals[0][2] is None else np.stack([d[2] for d in deals])
    return trays, first, tiles


def expected_views(tables: list[Table]) -> tuple[np.ndarray, ...]:
    """The tables' observations, masks, choosers and scores, stacked as the engine's."""
    observations = np.stack([[t.observation(p) for p in (0, 1)] for t in tables])
    masks = np.stack([[t.legal_mask(p) for p in (0, 1)] for t in tables]).astype(bool)
    choosers = np.array([[p in t.choosers for p in (0, 1)] for t in tables])
    scores = np.stack([t.state.scores() for t in tables])
    return observations, masks, choosers, scores


def noisy_actions(engine: PickAndPackVector, rng: np.random.Generator) -> np.ndarray:
    """A random legal action for every chooser, any integer for the other seats (ignored)."""
    actions = random_actions(engine.masks(), rng)
    return np.where(engine.choosers(), actions, rng.integers(-9, 2 * NUM_ACTIONS, actions.shape))


class Lockstep:
    """``count`` reference tables and an engine of ``count`` games in the same positions:
    the engine deals every game itself, its ``_draw`` giving the deals of new reference
    tables, the automatic reset included. (Loaded rows: ``tests/lockstep.py``.)"""

    def __init__(self, config: dict, reward_mode: str, count: int, seed: int) -> None:
        self.game = PickAndPackGame.from_options(**config)
        self.reward_mode, self.seed, self.dealt = reward_mode, seed, 0
        self.engine = PickAndPackVector(count, reward_mode=reward_mode, seed=seed + 1, **config)
        self.upcoming: dict[int, Table] = {}  # row -> the table just dealt into it
        self.engine._draw = self.draw
        self.engine.redeal(np.arange(count))
        self.tables = [self.upcoming.pop(b) for b in range(count)]
        self.finished = 0
        self.phases: Counter[int] = Counter()

    def new_table(self) -> Table:
        self.dealt += 1
        return new_table(self.game, self.reward_mode, self.seed * 100_003 + self.dealt)

    def draw(self, games: np.ndarray):
        """``_draw`` replaced: new reference games, dealt into rows ``games``."""
        tables = [self.new_table() for _ in games]
        self.upcoming.update(zip(games.tolist(), tables, strict=True))
        return stacked([deal_of(t.state) for t in tables])

    def check_views(self, rng: np.random.Generator) -> None:
        engine = self.engine
        observations, masks, choosers, scores = expected_views(self.tables)
        got = engine.observations()
        assert got.dtype == np.float32 and got.shape == observations.shape
        np.testing.assert_array_equal(got, observations)
        np.testing.assert_array_equal(engine.masks(), masks)
        np.testing.assert_array_equal(engine.choosers(), choosers)
        np.testing.assert_array_equal(engine.scores(), scores)
        rows = rng.permutation(len(self.tables))  # observe: any rows, any seats, any order
        seats = rng.integers(2, size=len(rows))
        np.testing.assert_array_equal(engine.observe(rows, seats), observations[rows, seats])
        self.phases.update(t.state.phase for t in self.tables)

    def step(self, actions: np.ndarray) -> None:
        rewards, terminated, info = self.engine.step(actions)
        done = info["done"].tolist()
        assert done == np.flatnonzero(terminated).tolist()
        for b, table in enumerate(self.tables):
            for p in list(table.choosers):
                expected = table.commit(p, int(actions[b, p]))
            np.testing.assert_array_equal(rewards[b], expected)
            assert bool(terminated[b]) == table.terminal
            if table.terminal:
                i = done.index(b)
                final, _, _, final_scores = expected_views([table])
                np.testing.assert_array_equal(info["terminal_observations"][i], final[0])
                np.testing.assert_array_equal(info["terminal_scores"][i], final_scores[0])
                self.finished += 1
                self.tables[b] = self.upcoming.pop(b)
        assert not self.upcoming


def phases_of(config: dict) -> set[int]:
    """The sub-steps a game of ``config`` asks in (no placement when it is random)."""
    first = MOVING if config.get("placement") == "random" else PLACING
    return set(range(first, NUM_PHASES))


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_own_deals_are_the_rules_games(config: dict) -> None:
    """50 games per configuration dealt by the engine itself (its ``_draw`` given the
    reference games' deals), every seat's view compared at every step, every sub-step
    asked (loaded games in both reward modes: ``test_batched_every_game``)."""
    lockstep = Lockstep(config, "win", count=25, seed=CONFIGS.index(config))
    rng = np.random.default_rng(7)
    while lockstep.finished < 50:
        lockstep.check_views(rng)
        lockstep.step(noisy_actions(lockstep.engine, rng))
    lockstep.check_views(rng)
    assert set(lockstep.phases) == phases_of(config)  # every sub-step was asked


@pytest.mark.parametrize("options", OTHER_OPTIONS, ids=["one-rush-unplayable", "trays"])
def test_other_options_match_the_rules(options: dict) -> None:
    """Options outside ``SPEC.configurations`` (one Rush Order a turn, unplayable tiles,
    other trays), 20 games each."""
    lockstep = Lockstep(options, "score", count=10, seed=11)
    rng = np.random.default_rng(8)
    while lockstep.finished < 20:
        lockstep.check_views(rng)
        lockstep.step(noisy_actions(lockstep.engine, rng))


# --- load -------------------------------------------------------------------------------
def snapshots(game: PickAndPackGame, per_phase: int, rng: np.random.Generator) -> list[Table]:
    """Positions of random reference games, ``per_phase`` of each sub-step asked in them
    when they occur within 40 games: ``Table.determinise`` of a seat (a copy of the
    position, with the opponent's placement so far and the first player drawn again
    during a secret placement)."""
    taken: Counter[int] = Counter()
    positions = []
    for seed in range(40):
        table = new_table(game, "score", seed)
        while not table.terminal:
            phase = table.state.phase
            if taken[phase] < per_phase and rng.random() < 0.2:
                positions.append(table.determinise(int(rng.integers(2)), rng))
                taken[phase] += 1
            for p in list(table.choosers):
                table.commit(p, int(rng.choice(np.flatnonzero(table.legal_mask(p)))))
        if len(taken) == NUM_PHASES and min(taken.values()) >= per_phase:
            break
    return positions


def play_on(engine: PickAndPackVector, tables: list[Table], rng: np.random.Generator) -> None:
    """Load ``tables``' positions into rows of ``engine`` in any order and play them to the
    end in lockstep with the rules (the other rows play their own games)."""
    rows = rng.permutation(engine.num_envs)[: len(tables)]
    engine.load([t.state for t in tables], rows)
    while tables:
        observations, masks, choosers, scores = expected_views(tables)
        np.testing.assert_array_equal(engine.observations()[rows], observations)
        np.testing.assert_array_equal(engine.masks()[rows], masks)
        np.testing.assert_array_equal(engine.choosers()[rows], choosers)
        np.testing.assert_array_equal(engine.scores()[rows], scores)
        actions = noisy_actions(engine, rng)
        rewards, terminated, info = engine.step(actions)
        for table, row in zip(tables, rows, strict=True):
            for p in list(table.choosers):
                expected = table.commit(p, int(actions[row, p]))
            np.testing.assert_array_equal(rewards[row], expected)
            assert terminated[row] == table.terminal
            if table.terminal:
                i = info["done"].tolist().index(row)
                np.testing.assert_array_equal(
                    info["terminal_observations"][i], expected_views([table])[0][0]
                )
        keep = np.array([not t.terminal for t in tables], dtype=bool)
        tables = [t for t, k in zip(tables, keep, strict=True) if k]
        rows = rows[keep]


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_load_puts_any_position_into_a_row(config: dict) -> None:
    """Positions of every sub-step (and resampled secret placements), loaded into rows in
    any order, then played on in lockstep with the rules to the end."""
    game = PickAndPackGame.from_options(**config)
    rng = np.random.default_rng(CONFIGS.index(config))
    tables = snapshots(game, per_phase=3, rng=rng)
    assert {t.state.phase for t in tables} == phases_of(config)
    engine = PickAndPackVector(len(tables) + 3, reward_mode="score", seed=0, **config)
    play_on(engine, tables, rng)


def sparse_position(game: PickAndPackGame, rng: np.random.Generator) -> PickAndPackState:
    """A made-up position after placement, as late in a game: few trays left on the grid
    (some face down), tiles used or malfunctioned, crates part filled and closed, Rush
    Orders held; where tiles lose their targets and moves run out. ``game`` places its
    tiles at random."""
    while True:
        state = game.new_initial_state(rng)
        state.apples[:] = np.where(
            rng.random((SIZE, SIZE)) < 0.3, rng.integers(1, 7, (SIZE, SIZE)), 0
        )
        state.grabber = divmod(int(rng.integers(SIZE * SIZE)), SIZE)
        state.apples[state.grabber] = 0
        state.face_down[:] = (state.apples > 0) & (rng.random((SIZE, SIZE)) < 0.2)
        state.tile_status[:] = rng.choice(3, size=(2, NUM_SPACES), p=[0.5, 0.3, 0.2])
        for p in (0, 1):
            state.crates[p] = [rng.integers(1, 6, rng.integers(0, 3)).tolist() for _ in range(4)]
            state.crate_apples[p] = [sum(stack) for stack in state.crates[p]]
            state.closure[p] = rng.choice(3, size=4, p=[0.6, 0.2, 0.2]).tolist()
            state.closure[p][int(rng.integers(4))] = 0  # one crate open at least
            state.rush_ready[p], state.rush_new[p] = int(rng.integers(0, 2)), 0
        state.player, state.phase, state.rushes_this_turn = int(rng.integers(2)), MOVING, 0
        state.refresh()
        if len(state.legal_choices) > 1:  # a real choice, as the rules leave positions
            return state


@pytest.mark.parametrize(
    "options",
    [
        {"targetless_actions": "spent", "opponent_crates": "full"},
        {"targetless_actions": "unplayable", "chain_rush_orders": False},
    ],
    ids=["spent", "unplayable"],
)
def test_sparse_positions_match_the_rules(options: dict) -> None:
    """Made-up late positions, where the rare rules come up (a tile with no target spent
    or unplayable, the player to move stuck, Order Mix-up with nothing to swap), loaded
    and played to the end in lockstep with the rules."""
    game = PickAndPackGame.from_options(placement="random", **options)
    rng = np.random.default_rng(5)
    tables = []
    for _ in range(100):
        table = Table(game, "score")
        table.state = sparse_position(game, rng)
        table.tracker.reset(table.state.scores())
        table._state_changed()  # what Table.reset does after making its state
        tables.append(table)
    engine = PickAndPackVector(104, reward_mode="score", seed=0, placement="random", **options)
    play_on(engine, tables, rng)


def test_load_refuses_what_it_cannot_play() -> None:
    engine = PickAndPackVector(3, seed=0)
    state = new_table(engine.game, "win", 0).state
    with pytest.raises(ValueError, match="one state per distinct row"):
        engine.load([state], [0, 1])
    other = new_table(PickAndPackGame.from_options(placement="random"), "win", 0).state
    with pytest.raises(ValueError, match="configuration"):
        engine.load([other], [0])


# --- the engine's own deals ---------------------------------------------------------------
def check_positions(engine: PickAndPackVector) -> None:
    """Every row is a valid position: each tray in exactly one place (the grid, face up or
    down, a crate, or in hand), the crates' counts, tops and apples agree with their stacks,
    the scores with the crates, and each seat's tiles are two of each type."""
    b = engine.num_envs

    def field(name: str) -> np.ndarray:
        span = SOURCE.fields[name]
        return engine.view[:, span.start : span.stop].reshape(b, *span.shape)

    stacks = field("crate_stack").astype(np.int64)  # (B, 2, 4, 36)
    trays = np.zeros((b, 7), dtype=np.int64)
    np.add.at(trays, (np.arange(b)[:, None], engine.apples), 1)
    for apples in range(1, 7):
        trays[:, apples] += (stacks == apples).sum(axis=(1, 2, 3))
    np.add.at(trays, (np.arange(b), engine.holding), engine.holding > 0)
    assert (trays[:, 1:] == engine.game.tray_counts).all()
    counts = (stacks > 0).sum(axis=3)
    assert (counts == engine.count).all()
    assert (stacks.sum(axis=3) == engine.crate_apples).all()
    assert ((stacks > 0)[..., :-1] >= (stacks > 0)[..., 1:]).all()  # bottom first, no gaps
    tops = np.take_along_axis(stacks, np.maximum(counts - 1, 0)[..., None], axis=3)[..., 0]
    assert (field("crate_top") == np.where(counts, tops, 0)).all()
    assert (field("crate_count") == counts).all()
    assert (engine.face_down <= (engine.apples > 0)).all()
    placed = (engine.tile_type[..., None] == np.arange(NUM_TYPES)).sum(axis=2)
    assert (placed + engine.to_place == 2).all()
    assert ((engine.phase == PLACING) == (engine.tile_type < 0).any(axis=(1, 2))).all()
    assert (engine.count <= MAX_STACK).all()


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_own_deals_are_valid_and_distinct(placement: str) -> None:
    """Valid positions dealt apart, the grabber on the 6, both first players; the
    automatic reset's deals too (their seeding: ``test_batched_every_game``)."""
    engine = PickAndPackVector(300, placement=placement, seed=3)
    assert len({grid.tobytes() for grid in engine.apples}) == 300  # the games are dealt apart
    assert set(engine.first_player.tolist()) == {0, 1}
    assert (engine.apples[np.arange(300), engine.grabber] == 6).all()  # on the 6
    check_positions(engine)
    if placement == "random":
        assert (engine.phase == MOVING).all() and (engine.to_place == 0).all()
        assert len({tiles.tobytes() for tiles in engine.tile_type}) == 300
    else:
        assert (engine.phase == PLACING).all() and (engine.tile_type == -1).all()
    assert (engine.scores() == 0).all()
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 150:  # the automatic reset deals valid games too
        _, _, info = engine.step(noisy_actions(engine, rng))
        check_positions(engine)
        done = info["done"]
        finished += len(done)
        assert (engine.phase[done] == (MOVING if placement == "random" else PLACING)).all()
        assert (engine.count[done] == 0).all() and (engine.scores()[done] == 0).all()
        assert (engine.apples[done, engine.grabber[done]] == 6).all()
        assert engine.choosers().any(axis=1).all() and engine.masks().any(axis=2).any(axis=1).all()


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_observations_are_arrays_of_their_own(config: dict) -> None:
    """``observations`` returns a new array every call: an array the caller keeps (or a
    view of it) never changes, a caller writing into one changes nothing in the engine,
    and each is every seat's observation (as ``observe`` gathers it)."""
    engine = PickAndPackVector(6, seed=0, **config)
    rng = np.random.default_rng(0)
    kept = engine.observations()
    before = kept.copy()
    view = engine.observations()[:, 1]  # only a view of this one is kept
    view_before = view.copy()
    rows, seats = np.repeat(np.arange(6), 2), np.tile(np.arange(2), 6)
    for _ in range(40):
        engine.step(random_actions(engine.masks(), rng))
        engine.observations()[:] = -7.0  # written into by the caller, then let go
        again = engine.observations()
        np.testing.assert_array_equal(again, engine.observe(rows, seats).reshape(6, 2, -1))
        assert again is not kept and not np.shares_memory(again, view)
        del again
    np.testing.assert_array_equal(kept, before)
    np.testing.assert_array_equal(view, view_before)
    assert not np.array_equal(engine.observations(), before)  # (the games went on)


@pytest.mark.parametrize("crates", ["visible", "full"])
def test_scores_beyond_int8(crates: str) -> None:
    """The engine keeps the observations as small integers but the scores apart: a made-up
    position with scores past 127 (a Premium crate of 20 sixes, 30 fives) is observed and
    scored as the rules do, and plays on alike."""
    game = PickAndPackGame.from_options(placement="random", opponent_crates=crates)
    table = Table(game, "score")
    state = game.new_initial_state(np.random.default_rng(0))
    state.crates[0][0], state.crate_apples[0][0] = [6] * 20, 120
    state.closure[0][0] = PREMIUM_CLOSED
    state.crates[1][1], state.crate_apples[1][1] = [5] * 30, 150
    state.refresh()
    table.state = state
    table.tracker.reset(state.scores())
    table._state_changed()
    engine = PickAndPackVector(
        3, reward_mode="score", seed=0, placement="random", opponent_crates=crates
    )
    assert state.scores().tolist() == [240, 150]
    play_on(engine, [table], np.random.default_rng(1))


def test_every_option_is_played() -> None:
    for options in [*CONFIGS, *OTHER_OPTIONS]:
        engine = PickAndPackVector(2, seed=0, **options)
        assert engine.game.config == PickAndPackGame.from_options(**options).config
    with pytest.raises(ValueError, match="placement"):
        PickAndPackVector(2, placement="sequential")
