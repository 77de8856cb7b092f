"""The batched Easter collection engine (envs/easter_collection/batched.py) against the
rules, and make_vec.

Differential tests: from the same positions (reference states loaded into the engine's
rows, or the engine dealing with the rules' own draws) and the same actions,
``EasterCollectionVector`` gives the same observations, masks, choosers, rewards (both
modes), terminations, scores and terminal views as ``envs.core.table.Table`` over
``envs/easter_collection/rules.py``, in every configuration of ``SPEC.configurations``;
``make_vec`` shows the learner what the Gymnasium view shows it, including the placing
turns that leave the learner out (played by the opponents inside ``step``).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from lockstep import Dealer, Lockstep, new_table, play_part_way

import envs
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

EASTER = "hiddenhand/EasterCollection-v0"
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
@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_many_games_match_the_rules(options: dict, reward_mode: str) -> None:
    """80 games per configuration and reward mode (160 per configuration), 20 at a time."""
    dealer = Dealer(
        EasterCollectionGame.from_options(**options), reward_mode, seed=options["num_players"]
    )
    engine = EasterCollectionVector(20, reward_mode=reward_mode, seed=1, **options)
    lockstep = Lockstep(engine, {b: dealer() for b in range(20)}, refill=dealer)
    rng = np.random.default_rng(7)
    while lockstep.finished < 80:
        lockstep.check_views(rng)
        lockstep.step(rng)
    lockstep.check_views(rng)


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
def test_load_puts_any_position_into_a_row(options: dict) -> None:
    """Reference games played part way, their determinisations (``resample``) and short
    scripted decks, loaded into any rows, then played on in lockstep."""
    game = EasterCollectionGame.from_options(**options)
    n = game.num_players
    mode = ("score", "win")[n % 2]
    rng = np.random.default_rng(n)
    tables: list[Table] = []
    seed = 0
    while len(tables) < 24:  # 12 positions and one determinisation of each
        seed += 1
        table = new_table(game, mode, seed)
        play_part_way(table, rng, int(rng.integers(0, 16)))
        if not table.terminal:
            tables.append(table)
            tables.append(table.determinise(int(rng.integers(n)), rng))
    for size in [5, 6, 7, 9, 12, 4 + 4 * n + 1, 4 + 4 * n + 4 + n - 1, 22, 30, 41]:
        deck = rng.permutation(NUM_CARDS)[:size].tolist()
        state = EasterCollectionState(
            game, np.random.default_rng(size), deck=deck, start_player=int(rng.integers(n))
        )
        if not state.is_terminal():
            table = table_from(state, mode)
            play_part_way(table, rng, int(rng.integers(0, 6)))
            if not table.terminal:
                tables.append(table)
    assert len(tables) >= 28
    engine = EasterCollectionVector(len(tables) + 3, reward_mode=mode, seed=0, **options)
    rows = rng.permutation(len(tables)) + 3  # any rows, in any order
    Lockstep(engine, dict(zip(rows.tolist(), tables, strict=True))).play_to_the_end(rng)
    with pytest.raises(ValueError, match="one state per distinct row"):
        engine.load([new_table(game, "win", 0).state], [0, 1])
    finished = new_table(game, "win", 0)
    play_part_way(finished, rng, 10_000)
    with pytest.raises(ValueError, match="not over"):
        engine.load([finished.state], [0])


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
def test_own_deals_are_seeded_whole_and_distinct(options: dict) -> None:
    engine = EasterCollectionVector(300, seed=3, **options)
    again = EasterCollectionVector(300, seed=3, **options)
    other = EasterCollectionVector(300, seed=4, **options)
    np.testing.assert_array_equal(engine.observations(), again.observations())
    assert not np.array_equal(engine.observations(), other.observations())
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
    engine.reset(3)
    np.testing.assert_array_equal(engine.observations(), again.observations())


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


# --- make_vec -----------------------------------------------------------------------------
class PickByObservation:
    """A deterministic opponent that reads its observation; counts its placing decisions
    (a turn of one seat, leaving the learner out)."""

    def __init__(self) -> None:
        self.placings = 0

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray, rng) -> int:
        legal = np.flatnonzero(action_mask)
        self.placings += int(legal[0] >= NUM_CARDS and len(action_mask) == NUM_CARDS + 4)
        return int(legal[int(observation.sum() * 7 + observation[:52].argmax()) % len(legal)])


def untrained_policy(options: dict):
    from sb3_contrib import MaskablePPO

    from training.agents.policy import PolicyAgent

    vec_env = envs.make_vec(EASTER, num_envs=2, seed=0, **options)
    return PolicyAgent(MaskablePPO("MlpPolicy", vec_env, seed=3, device="cpu"))


def compare_with_the_gymnasium_view(
    options: dict, reward_mode: str, opponent, count: int, games: int
) -> None:
    """The same deals, seats and (deterministic) opponent: the learner sees and earns the
    same in the VecEnv as in the Gymnasium view, game by game."""
    views = [
        gymnasium.make(EASTER, opponent=opponent, reward_mode=reward_mode, **options)
        for _ in range(count)
    ]
    vec_env = envs.make_vec(
        EASTER, num_envs=count, opponent=opponent, reward_mode=reward_mode, seed=0, **options
    )
    rng = np.random.default_rng(0)
    started = [view.reset(seed=10 + i) for i, view in enumerate(views)]
    vec_env.reset()

    def align(b: int) -> None:  # the VecEnv's game b dealt as view b's, same seat
        vec_env.engine.load([views[b].unwrapped.table.state], [b])
        vec_env.seats[b] = views[b].unwrapped.learner

    for b in range(count):
        align(b)
    observations = vec_env.engine.observations_of(vec_env.seats)
    for b in range(count):
        # Every game starts with everyone choosing: nothing is revealed before the
        # learner's first choice, and its first observation is the deal.
        np.testing.assert_array_equal(observations[b], started[b][0])
        np.testing.assert_array_equal(vec_env.action_masks()[b], started[b][1]["action_mask"])
    ended = 0
    while ended < games:
        masks = vec_env.action_masks()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        observations, rewards, dones, infos = vec_env.step(actions)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(masks[b], view.unwrapped.action_masks())
            table = view.unwrapped.table
            observation, reward, terminated, _, _ = view.step(int(actions[b]))
            assert rewards[b] == np.float32(reward) and dones[b] == terminated
            if terminated:
                assert infos[b]["seat"] == view.unwrapped.learner
                np.testing.assert_array_equal(infos[b]["terminal_observation"], observation)
                np.testing.assert_array_equal(infos[b]["scores"], table.state.scores())
                view.reset(seed=1000 + ended)
                align(b)
                ended += 1
            else:
                np.testing.assert_array_equal(observations[b], observation)
        observations = vec_env.engine.observations_of(vec_env.seats)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(observations[b], view.unwrapped._observe())
            np.testing.assert_array_equal(vec_env.action_masks()[b], view.unwrapped.action_masks())


@pytest.mark.parametrize("options", CONFIGS, ids=IDS)
def test_make_vec_matches_the_gymnasium_view(options: dict) -> None:
    reward_mode = ("win", "score")[options["num_players"] % 2]
    opponent = PickByObservation()
    compare_with_the_gymnasium_view(options, reward_mode, opponent, 4, 12)
    if options["variant"] == "standard":  # opponents placed alone, inside the steps
        assert opponent.placings > 20


@pytest.mark.parametrize(
    "options, reward_mode",
    [
        ({"num_players": 2, "variant": "standard"}, "score"),
        ({"num_players": 4, "variant": "secret_positions"}, "win"),
    ],
)
def test_make_vec_matches_the_gymnasium_view_with_a_policy(options, reward_mode) -> None:
    compare_with_the_gymnasium_view(options, reward_mode, untrained_policy(options), 3, 6)
