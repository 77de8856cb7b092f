"""The batched Förslag engine (envs/forslag/batched.py) against the rules, and make_vec.

Differential tests: from the same positions and the same actions, ``ForslagVector`` gives
the same observations, masks, choosers, rewards (both modes), terminations and scores as
``envs.core.table.Table`` over ``envs/forslag/rules.py``, in every configuration of
``SPEC.configurations``; its own deals are the rules' deals of the same deck and start
player; ``make_vec`` shows the learner what the Gymnasium view shows it, including what
the opponents do before the learner's first choice.
"""

from __future__ import annotations

import functools

import gymnasium
import numpy as np
import pytest
from lockstep import Dealer, Lockstep, new_table

import envs
from envs.core.batched import random_actions
from envs.core.game import IllegalActionError
from envs.forslag import SPEC
from envs.forslag.batched import NO_CARD, ONE_CARD, ForslagVector
from envs.forslag.rules import COPIES, FULL_DECK, ForslagGame

FORSLAG = "hiddenhand/Forslag-v0"
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


def random_choices(masks: np.ndarray, choosers: np.ndarray, rng) -> np.ndarray:
    """Uniform legal actions for the choosers, and anything (here: junk) for the others,
    which the engine must ignore."""
    actions = random_actions(masks, rng)
    return np.where(choosers, actions, rng.integers(-5, 100, size=actions.shape))


@pytest.mark.parametrize("reward_mode", ["win", "score"])
@pytest.mark.parametrize(("num_players", "board_play"), CONFIGS, ids=CONFIG_IDS)
def test_games_match_the_rules(num_players: int, board_play: str, reward_mode: str) -> None:
    """Sixty games per configuration and reward mode (120 per configuration), with some
    steps on a subset of the rows (``tests/lockstep.py``)."""
    game = make_game(num_players, board_play)
    dealer = Dealer(game, reward_mode, seed=num_players)
    engine = ForslagVector(
        30,
        reward_mode=reward_mode,
        seed=num_players,
        num_players=num_players,
        board_play=board_play,
    )
    lockstep = Lockstep(engine, {b: dealer() for b in range(30)}, refill=dealer)
    rng = np.random.default_rng(7)
    lockstep.play(rng, games=60)
    lockstep.check_views(rng)


@pytest.mark.parametrize(("num_players", "board_play"), CONFIGS, ids=CONFIG_IDS)
def test_load_puts_any_position_into_a_row(num_players: int, board_play: str) -> None:
    """Reference games played part way and positions resampled for a seat
    (``Table.determinise``: the deck and the others' dealt cards drawn again), loaded into
    rows in any order, then played on in lockstep to the end."""
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
    while tables:
        observations, masks, choosers = engine.observations(), engine.masks(), engine.choosers()
        actions = random_choices(masks, choosers, rng)  # rows 0 and 1 play their own games
        for table, row in zip(tables, rows, strict=True):
            assert np.flatnonzero(choosers[row]).tolist() == list(table.state.to_act())
            for p in range(num_players):
                np.testing.assert_array_equal(observations[row, p], table.observation(p))
                np.testing.assert_array_equal(masks[row, p], table.legal_mask(p).astype(bool))
            np.testing.assert_array_equal(engine.scores()[row], table.state.scores())
        rewards, terminated, _ = engine.step(actions)
        keep = []
        for table, row in zip(tables, rows, strict=True):
            for p in table.state.to_act():
                expected = table.commit(p, int(actions[row, p]))
            np.testing.assert_array_equal(rewards[row], expected)
            assert terminated[row] == table.terminal
            keep.append(not table.terminal)
        tables = [t for t, k in zip(tables, keep, strict=True) if k]
        rows = rows[np.array(keep, dtype=bool)]
    with pytest.raises(ValueError, match="one state per distinct row"):
        engine.load([new_table(game, "win", 0).state], [0, 1])
    other = make_game(3 if num_players > 3 else 4, board_play)
    with pytest.raises(ValueError, match="not over"):
        engine.load([new_table(other, "win", 0).state], [0])


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
def test_own_deals_are_valid_seeded_and_distinct(num_players: int, board_play: str) -> None:
    options = {"num_players": num_players, "board_play": board_play}
    engine = ForslagVector(300, seed=3, **options)
    again = ForslagVector(300, seed=3, **options)
    other = ForslagVector(300, seed=4, **options)
    np.testing.assert_array_equal(engine.observations(), again.observations())
    assert not np.array_equal(engine.observations(), other.observations())
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


# --- make_vec -------------------------------------------------------------------------
def observed_choice(observation: np.ndarray, mask: np.ndarray, rng) -> int:
    """A deterministic opponent that reads its observation (a different view would most
    likely choose differently)."""
    legal = np.flatnonzero(mask)
    weights = np.arange(1, len(observation) + 1) % 7
    return int(legal[int(observation @ weights) % len(legal)])


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test (its default, a thread per core, spins for tens
    of seconds on the small networks here when the cores are busy); restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@functools.cache
def untrained_policy(num_players: int):
    from sb3_contrib import MaskablePPO

    from training.agents.policy import PolicyAgent

    vec_env = envs.make_vec(FORSLAG, num_envs=2, num_players=num_players, seed=0)
    return PolicyAgent(MaskablePPO("MlpPolicy", vec_env, seed=3, device="cpu"))


@pytest.mark.parametrize(
    ("num_players", "board_play", "reward_mode", "opponent"),
    [
        (4, "in_turn", "score", "function"),
        (3, "in_turn", "win", "function"),
        (6, "in_turn", "score", "function"),
        (5, "simultaneous", "score", "function"),
        (4, "simultaneous", "win", "policy"),
    ],
)
def test_make_vec_matches_the_gymnasium_view(
    num_players: int, board_play: str, reward_mode: str, opponent: str, one_torch_thread
) -> None:
    """The same deals, seats and deterministic opponents: game by game, the learner sees
    and earns in the VecEnv what it sees and earns in the Gymnasium view.

    The deals are aligned through the engine's one random draw (``_shuffle`` gives row
    ``b`` the rules' deal of the seed its view's game is reset with), not by loading the
    view's position, so that make_vec itself plays the opponents' drafts and board cards
    before the learner's first choice (in turn, the learner is often not the start
    player) and carries their rewards to its first step, as the Gymnasium view does. The
    learner's seat is drawn by make_vec for every game; the view is made with it."""
    config = {"num_players": num_players, "board_play": board_play}
    chooser = observed_choice if opponent == "function" else untrained_policy(num_players)
    count = 6
    vec_env = envs.make_vec(
        FORSLAG, num_envs=count, opponent=chooser, reward_mode=reward_mode, seed=0, **config
    )
    seeds = [iter(range(10_000 * (b + 1), 10_000 * (b + 2))) for b in range(count)]
    deal_from_seeds(vec_env.engine, seeds)
    views: list = [None] * count

    def start_view(b: int) -> np.ndarray:
        """View ``b``'s next game: the seed row ``b`` was just dealt, make_vec's seat."""
        seat = int(vec_env.seats[b])
        views[b] = gymnasium.make(
            FORSLAG, opponent=chooser, seat=seat, reward_mode=reward_mode, **config
        )
        seed = 10_000 * (b + 1) + started[b]
        started[b] += 1
        observation, info = views[b].reset(seed=seed)
        assert info["seat"] == seat
        return observation

    started = [0] * count
    observations = vec_env.reset()
    for b in range(count):
        np.testing.assert_array_equal(observations[b], start_view(b))
    rng = np.random.default_rng(0)
    games = carried = 0
    while games < (24 if opponent == "function" else 8):  # a policy decides slowly alone
        masks = vec_env.action_masks()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        observations, rewards, dones, infos = vec_env.step(actions)
        for b in range(count):
            view = views[b].unwrapped
            np.testing.assert_array_equal(masks[b], view.action_masks())
            carried += view._carried_reward != 0.0
            observation, reward, terminated, _, _ = views[b].step(int(actions[b]))
            # make_vec sums in float32 the rewards of the opponents' turns: the last bit
            # may differ from the view's float64 sum
            assert rewards[b] == pytest.approx(reward, rel=1e-6, abs=1e-6)
            assert dones[b] == terminated
            if terminated:
                np.testing.assert_array_equal(infos[b]["terminal_observation"], observation)
                np.testing.assert_array_equal(infos[b]["scores"], view.table.state.scores())
                assert infos[b]["seat"] == view.learner
                observation = start_view(b)  # make_vec has dealt the next game already
                games += 1
            np.testing.assert_array_equal(observations[b], observation)
    if reward_mode == "score" and board_play == "in_turn":
        assert carried > 0  # rewards arrived before a learner's first choice


@pytest.mark.parametrize(("num_players", "board_play"), [(4, "in_turn"), (6, "simultaneous")])
def test_make_vec_matches_the_gymnasium_view_from_loaded_positions(
    num_players: int, board_play: str
) -> None:
    """The other way of aligning the games: each view's position at the learner's first
    choice loaded into the VecEnv's row, with the view's seat (drawn by the view). In
    ``"win"`` mode nothing is carried from before that choice."""
    config = {"num_players": num_players, "board_play": board_play}
    count = 4
    views = [gymnasium.make(FORSLAG, opponent=observed_choice, **config) for _ in range(count)]
    vec_env = envs.make_vec(FORSLAG, num_envs=count, opponent=observed_choice, **config)
    started = [view.reset(seed=20 + i)[0] for i, view in enumerate(views)]
    vec_env.reset()

    def align(b: int) -> None:
        vec_env.engine.load([views[b].unwrapped.table.state], [b])
        vec_env.seats[b] = views[b].unwrapped.learner

    for b in range(count):
        align(b)
    np.testing.assert_array_equal(vec_env.engine.observations_of(vec_env.seats), started)
    rng = np.random.default_rng(1)
    games = 0
    while games < 12:
        masks = vec_env.action_masks()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        _, rewards, dones, infos = vec_env.step(actions)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(masks[b], view.unwrapped.action_masks())
            observation, reward, terminated, _, _ = view.step(int(actions[b]))
            assert rewards[b] == np.float32(reward) and dones[b] == terminated
            if terminated:
                np.testing.assert_array_equal(infos[b]["terminal_observation"], observation)
                view.reset(seed=1000 + games)
                align(b)
                games += 1
        observations = vec_env.engine.observations_of(vec_env.seats)
        for b, view in enumerate(views):
            np.testing.assert_array_equal(observations[b], view.unwrapped._observe())
