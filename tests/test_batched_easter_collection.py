"""The batched Easter collection engine (envs/easter_collection/batched.py): what is its
own beyond what every engine does (``test_batched_every_game.py``: random play, loaded
positions, seeding, make_vec against the Gymnasium view).

Differential tests: dealing with the rules' own draws (its one random method,
``_draw_deals``, replaced), the engine plays the rules' games; short scripted decks
loaded into rows play on as the rules do; an option outside ``SPEC.configurations``
plays too. Its own deals hold every card once, and its block copies are the gather.
"""

from __future__ import annotations

import numpy as np
import pytest
from lockstep import Dealer, Lockstep, play_part_way

from envs.core.batched import random_actions
from envs.core.game import IllegalActionError
from envs.core.table import Table
from envs.easter_collection import SPEC
from envs.easter_collection.batched import HAND_ROW, EasterCollectionVector, copy_plan
from envs.easter_collection.rules import (
    NUM_CARDS,
    PHASE_CHOOSE,
    PHASE_PLACE,
    EasterCollectionGame,
    EasterCollectionState,
)

CONFIGS = list(SPEC.configurations)
IDS = [f"{c['num_players']}p-{c['variant']}" for c in CONFIGS]


def table_from(state: EasterCollectionState, reward_mode: str) -> Table:
    """A table holding ``state`` (a scripted deal), as ``Table.reset`` would start it."""
    table = Table(state.game, reward_mode)
    table.reset(np.random.default_rng(0))
    table.state = state
    table.tracker.reset(state.scores())
    table._state_changed()
    return table


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_engine_deals_with_the_rules_draws_are_the_rules_games(options: dict) -> None:
    """``_draw_deals`` is the engine's only chance: replaced by the start players and
    decks of ``new_initial_state`` (reset, and the automatic reset of finished games),
    the engine plays the rules' games without any load."""
    dealer = Dealer(EasterCollectionGame.from_options(**options), "score", seed=11)
    queue: list[Table] = []

    def draws(count: int) -> tuple[np.ndarray, np.ndarray]:
        fresh = [dealer() for _ in range(count)]
        queue.extend(fresh)
        return (
            np.array([t.state.start_player for t in fresh]),
            np.array([t.state.deck for t in fresh]),
        )

    class Replayed(EasterCollectionVector):
        def _draw_deals(self, count: int) -> tuple[np.ndarray, np.ndarray]:
            return draws(count)

    engine = Replayed(8, reward_mode="score", seed=0, **options)
    tables = dict(enumerate(queue))
    queue.clear()

    def refill() -> Table:  # the table drawn by the automatic reset of that row (in order)
        return queue.pop(0)

    lockstep = Lockstep(engine, tables, refill=refill, load=False)
    rng = np.random.default_rng(3)
    while lockstep.finished < 16:
        lockstep.check_views(rng)
        lockstep.step(rng)
    assert not queue


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_short_scripted_decks_play_on_as_the_rules(options: dict) -> None:
    """Short scripted decks (the game ends when the deck runs out), played part way and
    loaded into any rows, then played on in lockstep (positions of full games and their
    determinisations: ``test_batched_every_game``)."""
    game = EasterCollectionGame.from_options(**options)
    n = game.num_players
    mode = ("score", "win")[n % 2]
    rng = np.random.default_rng(n)
    tables: list[Table] = []
    for size in [5, 6, 7, 9, 12, 4 + 4 * n + 1, 4 + 4 * n + 4 + n - 1, 22, 30, 41] * 2:
        deck = rng.permutation(NUM_CARDS)[:size].tolist()
        state = EasterCollectionState(
            game, np.random.default_rng(size), deck=deck, start_player=int(rng.integers(n))
        )
        if not state.is_terminal():
            table = table_from(state, mode)
            play_part_way(table, rng, int(rng.integers(0, 6)))
            if not table.terminal:
                tables.append(table)
    assert len(tables) >= 4
    engine = EasterCollectionVector(len(tables) + 3, reward_mode=mode, seed=0, **options)
    rows = rng.permutation(len(tables)) + 3  # any rows, in any order
    Lockstep(engine, dict(zip(rows.tolist(), tables, strict=True))).play_to_the_end(rng)


# --- the engine's own deals ---------------------------------------------------------------
def card_places(engine: EasterCollectionVector, b: int) -> np.ndarray:
    """How many of the places the engine keeps hold each card (the cards discarded unseen
    are in none)."""
    n, at = engine.num_players, engine._at
    count = np.zeros(NUM_CARDS, dtype=np.int64)
    np.add.at(count, engine.deck[b, engine.next_card[b] : engine.deck_len[b]], 1)
    source = engine.source[b]
    hands = source[engine._hands].reshape(n, HAND_ROW)[:, :NUM_CARDS]
    count += hands.sum(axis=0).astype(np.int64)
    table = engine.table[b][engine.table[b] >= 0]
    np.add.at(count, table, 1)
    piles = source[at.pile[0] : at.pile[0] + n * NUM_CARDS].reshape(n, NUM_CARDS)
    count += piles.sum(axis=0).astype(np.int64)
    count += source[at.discards : at.discards + NUM_CARDS].astype(np.int64)
    if engine.phase[b] == PHASE_PLACE:
        face_down = engine.chosen[b][engine.target[b] != 4]
        np.add.at(count, face_down, 1)
    return count


def check_new_games(engine: EasterCollectionVector, rows: np.ndarray) -> None:
    n = engine.num_players
    for b in rows.tolist():
        assert (card_places(engine, b) == 1).all(), f"game {b}: not every card in one place"
        hands = engine.source[b, engine._hands].reshape(n, HAND_ROW)
        assert hands.sum(axis=1).tolist() == [4] * n and not hands[:, NUM_CARDS:].any()
        assert (engine.table[b] >= 0).all() and engine.hand_size[b] == 4
        assert engine.deck_len[b] - engine.next_card[b] == NUM_CARDS - 4 - 4 * n
        assert engine.round[b] == 0 and engine.bid[b] == 0 and engine.phase[b] == PHASE_CHOOSE
    assert (engine.scores()[rows] == 0).all() and engine.choosers()[rows].all()


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_own_deals_are_whole_and_distinct(options: dict) -> None:
    """Every card in one place, dealt apart, every seat a start player, the rules' game of
    its deck and start player; the automatic reset's deals too (their seeding:
    ``test_batched_every_game``)."""
    engine = EasterCollectionVector(300, seed=3, **options)
    check_new_games(engine, np.arange(300))
    assert len({d.tobytes() for d in engine.deck}) == 300  # the games are dealt apart
    assert set(engine.start_player.tolist()) == set(range(engine.num_players))
    # A dealt row is the rules' game of that deck and start player.
    game = engine.game
    for b in range(0, 300, 37):
        state = EasterCollectionState(
            game,
            np.random.default_rng(0),
            deck=engine.deck[b].tolist(),
            start_player=int(engine.start_player[b]),
        )
        for p in range(engine.num_players):
            np.testing.assert_array_equal(
                engine.observe(np.array([b]), np.array([p]))[0], game.observation(state, p)
            )
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):  # automatic reset deals too
        _, terminated, info = engine.step(random_actions(engine.masks(), rng))
        ended += len(info["done"])
        check_new_games(engine, info["done"])
        for b in range(0, 300, 29):
            assert card_places(engine, b).max() <= 1
        assert engine.masks().any(axis=2)[engine.choosers()].all()
        np.testing.assert_array_equal(engine.masks().any(axis=2), engine.choosers())
    assert ended >= 300


def test_options_and_their_checks() -> None:
    engine = EasterCollectionVector(2, num_players=4, variant="secret_positions", seed=0)
    assert engine.num_actions == 260 and engine.observation_size == 428 + 111 * 4
    rank = EasterCollectionVector(2, table_face_value="rank", seed=0)
    assert rank.game.config.table_face_value == "rank"
    with pytest.raises(ValueError, match="num_players"):
        EasterCollectionVector(2, num_players=6)
    with pytest.raises(ValueError, match="variant"):
        EasterCollectionVector(2, variant="speed")
    with pytest.raises(ValueError, match="num_envs"):
        EasterCollectionVector(0)


def test_table_face_value_rank_matches_the_rules() -> None:
    """Not in SPEC.configurations, played all the same."""
    options = {"num_players": 3, "variant": "standard", "table_face_value": "rank"}
    dealer = Dealer(EasterCollectionGame.from_options(**options), "score", seed=5)
    engine = EasterCollectionVector(10, reward_mode="score", seed=1, **options)
    lockstep = Lockstep(engine, {b: dealer() for b in range(10)}, refill=dealer)
    rng = np.random.default_rng(5)
    while lockstep.finished < 20:
        lockstep.check_views(rng)
        lockstep.step(rng)


def test_block_copies_are_the_gather() -> None:
    gathers = np.array([[5, 6, 7, 8, 9, 10, 11, 12, 3, 0, 2, 4, 6, 8, 10, 12, 14, 16, 1]])
    runs, extra, copies = copy_plan(gathers)
    out = np.full(gathers.shape[1], -1)
    source = np.arange(20) * 10
    for start, stop, first, last, step in runs:
        out[start:stop] = source[first:last:step]
    for start, stop, first in copies:
        out[start:stop] = source[extra][first : first + stop - start]
    np.testing.assert_array_equal(out, source[gathers[0]])
    assert len(runs) == 2
    engine = EasterCollectionVector(40, num_players=5, seed=0)  # block copies from 16 games
    for _ in range(5):
        np.testing.assert_array_equal(
            engine.observations(), engine.source.take(engine._gathers, axis=1)
        )
        engine.step(random_actions(engine.masks(), np.random.default_rng(0)))


def test_an_illegal_placing_raises_and_changes_nothing() -> None:
    """In the placing step (one seat placing its face-down bid) an illegal action is
    refused as an illegal bid is (``test_batched_every_game``), the phase kept."""
    engine = EasterCollectionVector(6, num_players=3, variant="standard", seed=0)
    rng = np.random.default_rng(1)
    while not (engine.phase == PHASE_PLACE).any():  # until some game asks one seat to place
        engine.step(random_actions(engine.masks(), rng))
    before = engine.observations(), engine.masks().copy(), engine.scores(), engine.phase.copy()
    row = int(np.flatnonzero(engine.phase == PHASE_PLACE)[0])
    seat = int(np.flatnonzero(engine.choosers()[row])[0])
    actions = random_actions(engine.masks(), rng)
    for bad in (int(np.flatnonzero(~engine.masks()[row, seat])[0]), -1, engine.num_actions):
        actions[row, seat] = bad
        with pytest.raises(
            IllegalActionError, match=f"game {row}: action {bad} is illegal for player {seat}"
        ):
            engine.step(actions)
    after = engine.observations(), engine.masks(), engine.scores(), engine.phase
    for old, new in zip(before, after, strict=True):
        np.testing.assert_array_equal(old, new)
