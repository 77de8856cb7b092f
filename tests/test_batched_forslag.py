"""The batched Förslag engine (envs/forslag/batched.py): what is its own beyond what
every engine does (``test_batched_every_game.py``: random play against the rules, loaded
positions, seeding, make_vec against the Gymnasium view).

Its own deals are the rules' deals of the same deck and start player (its one random
draw, ``_shuffle``, replaced), and valid games; loaded positions hold every card once; a
draft refuses an illegal action; every configuration has its observation size, and bad
options are refused.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from lockstep import new_table

from envs.core.batched import random_actions
from envs.core.game import IllegalActionError
from envs.forslag import SPEC
from envs.forslag.batched import NO_CARD, ONE_CARD, ForslagVector
from envs.forslag.rules import COPIES, FULL_DECK, ForslagGame

CONFIGS = [(c["num_players"], c["board_play"]) for c in SPEC.configurations]
CONFIG_IDS = [f"{n}p-{mode}" for n, mode in CONFIGS]


@functools.cache
def make_game(num_players: int, board_play: str) -> ForslagGame:
    return ForslagGame.from_options(num_players=num_players, board_play=board_play)


def reference_deal(num_players: int, seed: int) -> tuple[np.ndarray, int]:
    """The deck order and first start player ``ForslagState`` draws from ``seed``."""
    rng = np.random.default_rng(seed)
    deck = FULL_DECK.copy()
    rng.shuffle(deck)
    return deck, int(rng.integers(num_players))


def deal_from_seeds(engine: ForslagVector, seeds) -> None:
    """Replace the engine's one random draw (``_shuffle``): row ``b``'s next game is the
    rules' deal of ``next(seeds[b])``."""

    def shuffle(games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        deals = [reference_deal(engine.num_players, next(seeds[b])) for b in games.tolist()]
        return np.stack([d for d, _ in deals]), np.array([s for _, s in deals])

    engine._shuffle = shuffle


def card_places(engine: ForslagVector) -> np.ndarray:
    """Copies of each card type over the undealt deck, hands, pool, boards, later Round
    Cards and the Game Card, per game: ``(B, 25)`` (2 everywhere in a valid game)."""
    undealt = engine._pool_low[engine.round]
    deck = np.where(np.arange(len(FULL_DECK)) < undealt[:, None], engine.deck, NO_CARD)
    places = ONE_CARD[deck].sum(axis=1, dtype=np.int64)
    places += engine.hands.sum(axis=1) + engine.pool
    places += ONE_CARD[engine.boards].sum(axis=(1, 2), dtype=np.int64)
    places += ONE_CARD[engine.round_cards[:, 1:]].sum(axis=1, dtype=np.int64)
    return places + ONE_CARD[engine.game_card]


@pytest.mark.parametrize(("num_players", "board_play"), CONFIGS, ids=CONFIG_IDS)
def test_loaded_positions_hold_every_card_once(num_players: int, board_play: str) -> None:
    """Reference games played part way and positions resampled for a seat
    (``Table.determinise``: the deck and the others' dealt cards drawn again), loaded into
    rows in any order: two copies of every card type over the undealt deck, the hands,
    the pool, the boards and the Round and Game Cards (their play in lockstep:
    ``test_batched_every_game``)."""
    game = make_game(num_players, board_play)
    rng = np.random.default_rng(num_players)
    tables = []
    for seed in range(16):
        table = new_table(game, "score", seed)
        for _ in range(int(rng.integers(0, game.max_decisions))):
            for p in table.waiting_for():
                if not table.terminal:
                    table.commit(p, int(rng.choice(np.flatnonzero(table.legal_mask(p)))))
        if not table.terminal:
            tables.append(table)
            if seed % 2:
                tables.append(table.determinise(int(rng.integers(num_players)), rng))
    engine = ForslagVector(
        len(tables) + 2,
        reward_mode="score",
        seed=0,
        num_players=num_players,
        board_play=board_play,
    )
    rows = np.arange(len(tables))[::-1] + 2  # any rows, in any order
    engine.load([t.state for t in tables], rows)
    np.testing.assert_array_equal(card_places(engine), COPIES)


@pytest.mark.parametrize(("num_players", "board_play"), CONFIGS, ids=CONFIG_IDS)
def test_own_deals_are_the_rules_deals(num_players: int, board_play: str) -> None:
    """With its one random draw (``_shuffle``) given the rules' deck and start player, the
    engine deals the rules' game, and automatic resets deal them too."""
    game = make_game(num_players, board_play)
    engine = ForslagVector(24, num_players=num_players, board_play=board_play, seed=0)
    seeds = [iter(range(1000 * b, 1000 * (b + 1))) for b in range(24)]
    deal_from_seeds(engine, seeds)
    engine.reset(0)
    current = [1000 * b for b in range(24)]
    fresh = list(range(24))
    rng = np.random.default_rng(1)
    while min(current[b] - 1000 * b for b in range(24)) < 2:
        observations, masks, choosers = engine.observations(), engine.masks(), engine.choosers()
        for b in fresh:
            table = new_table(game, "win", current[b])
            assert np.flatnonzero(choosers[b]).tolist() == list(table.state.to_act())
            for p in range(num_players):
                np.testing.assert_array_equal(observations[b, p], table.observation(p))
                np.testing.assert_array_equal(masks[b, p], table.legal_mask(p).astype(bool))
        _, _, info = engine.step(random_actions(masks, rng))
        fresh = info["done"].tolist()
        for b in fresh:
            current[b] += 1


@pytest.mark.parametrize(("num_players", "board_play"), CONFIGS, ids=CONFIG_IDS)
def test_own_deals_are_valid_and_distinct(num_players: int, board_play: str) -> None:
    """Fresh games of two cards a hand, the Game Card the first Round Card, the start
    player drafting first, dealt apart; the automatic reset's deals too, every card in
    one place throughout (their seeding: ``test_batched_every_game``)."""
    options = {"num_players": num_players, "board_play": board_play}
    engine = ForslagVector(300, seed=3, **options)
    assert len({d.tobytes() for d in engine.deck}) == 300  # the games are dealt apart
    assert set(engine.start_player.tolist()) == set(range(num_players))

    def check_fresh(games: np.ndarray) -> None:
        assert (engine.hands[games].sum(axis=2) == 2).all()
        assert (engine.known[games] == 0).all() and (engine.boards[games] == NO_CARD).all()
        assert (engine.pool[games].sum(axis=1) == num_players + 1).all()
        assert (engine.round[games] == 0).all() and (engine.scores()[games] == 0).all()
        assert (engine.round_cards[games, 0] == engine.game_card[games]).all()
        # the first drafter chooses (a pool of players + 1 cards holds two types at least)
        first = engine.choosers()[games]
        assert (first.sum(axis=1) == 1).all()
        assert (first.argmax(axis=1) == engine.start_player[games]).all()

    check_fresh(np.arange(300))
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 300:  # auto-reset deals too
        _, _, info = engine.step(random_actions(engine.masks(), rng))
        np.testing.assert_array_equal(card_places(engine), COPIES)
        assert engine.choosers().any(axis=1).all()
        assert (engine.masks().any(axis=2) == engine.choosers()).all()
        if len(info["done"]):
            check_fresh(info["done"])
            finished += len(info["done"])
    engine.redeal([5, 7])
    check_fresh(np.array([5, 7]))


def test_an_illegal_draft_raises_and_changes_nothing() -> None:
    """A draft (one seat choosing) refuses a play's action as a play refuses any illegal
    one (``test_batched_every_game``), and changes nothing."""
    engine = ForslagVector(16, seed=0, num_players=4, board_play="simultaneous")
    rng = np.random.default_rng(0)
    while not (engine.choosers().sum(axis=1) == 1).any():
        engine.step(random_actions(engine.masks(), rng))  # until some draft
    before = (engine.observations(), engine.masks(), engine.choosers(), engine.scores())
    drafting = int(np.flatnonzero(engine.choosers().sum(axis=1) == 1)[0])
    seat = int(np.flatnonzero(engine.choosers()[drafting])[0])
    actions = random_actions(engine.masks(), rng)
    actions[drafting, seat] = 50
    with pytest.raises(IllegalActionError, match=f"game {drafting}: action 50 is illegal"):
        engine.step(actions)
    after = (engine.observations(), engine.masks(), engine.choosers(), engine.scores())
    for old, new in zip(before, after, strict=True):
        np.testing.assert_array_equal(old, new)


def test_every_configuration_and_bad_options() -> None:
    for num_players, board_play in CONFIGS:
        engine = ForslagVector(2, num_players=num_players, board_play=board_play, seed=0)
        assert engine.observations().shape == (
            2,
            num_players,
            10 * num_players**2 + 39 * num_players + 62,
        )
    with pytest.raises(ValueError, match="num_players"):
        ForslagVector(2, num_players=7)
    with pytest.raises(ValueError, match="board_play"):
        ForslagVector(2, board_play="together")
