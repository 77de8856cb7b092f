"""What every batched engine does alike, tested once over every configuration of every
game (``env_id, config``: see ``tests/conftest.py``) or once per game: it plays the
rules' game (random and hypothesis-drawn play, any position loaded into any row), deals
its own games from its seed alone, refuses bad input without changing anything, and
serves ``make_vec`` (the learner sees and earns what the Gymnasium view shows it,
seeding, the heuristic opponent, MaskablePPO). The per-game files
``test_batched_<game>.py`` go deeper: the engine's own deals are valid games (and, where
its one random draw is replaced by the rules', the rules' games), each game's phases
and options, its batched heuristic. Where the rules draw chance during a step (a new
hand's shuffle), the engine draws its own, so that row is loaded again from the
reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lockstep import (
    Dealer,
    Lockstep,
    by_observation,
    compare_with_the_gymnasium_view,
    new_table,
    play_part_way,
    untrained_policy,
)

import envs
from envs.core.batched import engine_class, random_actions
from envs.core.game import IllegalActionError
from envs.core.table import Table

#: Every configuration of every game, for hypothesis to draw from.
CASES = [
    (env_id, config) for env_id in envs.ids() for config in envs.get_spec(env_id).configurations
]


def new_engine(env_id: str, config: dict, num_envs: int, reward_mode: str = "score", seed: int = 0):
    engine_type = engine_class(envs.get_spec(env_id))
    return engine_type(num_envs, reward_mode=reward_mode, seed=seed, **config)


@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_the_engine_plays_the_rules_game(env_id, config, reward_mode):
    """80 games per configuration and reward mode, 30 at a time, some steps on a subset
    of the rows (``tests/lockstep.py``)."""
    engine = new_engine(env_id, config, 30, reward_mode)
    dealer = Dealer(engine.game, reward_mode, seed=0)
    lockstep = Lockstep(engine, {b: dealer() for b in range(30)}, refill=dealer)
    lockstep.play(np.random.default_rng(1), games=80)
    lockstep.check_views(np.random.default_rng(2))


@settings(max_examples=40, deadline=None)
@given(
    case=st.sampled_from(CASES),
    reward_mode=st.sampled_from(["win", "score"]),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_hypothesis_games_match_the_rules(case, reward_mode, seed, data) -> None:
    """Two games of any configuration, every chooser's action drawn by hypothesis."""
    env_id, config = case
    engine = new_engine(env_id, config, 2, reward_mode)
    dealer = Dealer(engine.game, reward_mode, seed)
    lockstep = Lockstep(engine, {0: dealer(), 1: dealer()}, refill=dealer)
    rng = np.random.default_rng(seed)
    while lockstep.finished < 2:
        lockstep.check_views(rng)
        masks, choosers = engine.masks(), engine.choosers()
        actions = np.zeros(choosers.shape, dtype=np.int64)
        for b, p in np.argwhere(choosers).tolist():
            actions[b, p] = data.draw(st.sampled_from(np.flatnonzero(masks[b, p]).tolist()))
        lockstep.step(rng, actions)


def test_load_puts_any_position_into_a_row(env_id, config):
    """Reference games played part way (anywhere up to the game's longest) and positions
    resampled for a seat (``Table.determinise``), loaded into any rows in any order, then
    played on in lockstep to the end; a row is loaded once a call, and a game that is
    over or of another configuration is refused."""
    spec = envs.get_spec(env_id)
    game = spec.make_game(**config)
    rng = np.random.default_rng(game.num_players)
    tables: list[Table] = []
    seed = 0
    while len(tables) < 24:  # 12 positions and a determinisation of each
        seed += 1
        table = new_table(game, "score", seed)
        if seed % 2:  # early in the game, and anywhere
            play_part_way(table, rng, int(rng.integers(0, game.max_decisions // game.num_players)))
        else:
            play_part_way(table, rng, int(rng.integers(0, game.max_decisions)))
        if not table.terminal:
            tables += [table, table.determinise(int(rng.integers(game.num_players)), rng)]
    engine = new_engine(env_id, config, len(tables) + 2)
    rows = rng.permutation(len(tables)) + 2  # rows 0 and 1 play their own games
    Lockstep(engine, dict(zip(rows.tolist(), tables, strict=True))).play_to_the_end(rng)
    with pytest.raises(ValueError, match="one state per distinct row"):
        engine.load([new_table(game, "win", 0).state], [0, 1])
    finished = new_table(game, "win", 0)
    play_part_way(finished, rng, 10 * game.max_decisions)
    with pytest.raises(ValueError, match="not over"):
        engine.load([finished.state], [0])
    other = next(c for c in spec.configurations if spec.make_game(**c).config != game.config)
    with pytest.raises(ValueError, match="of this configuration"):
        engine.load([new_table(spec.make_game(**other), "win", 0).state], [0])


def test_own_deals_come_from_the_seed(env_id, config):
    """The engine's own deals (``reset``, the automatic reset) are its seed's: the same
    seed and the same actions give the same games, every view, reward and end equal,
    until the automatic reset has dealt 30 games; ``reset(seed)`` deals the first games
    again; another seed deals others. (Each game's file checks that the deals are valid
    and dealt apart.)"""
    engine, again, other = (new_engine(env_id, config, 300, seed=s) for s in (3, 3, 4))

    first = views(engine)
    for mine, theirs in zip(first, views(again), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert not np.array_equal(engine.observations(), other.observations())
    rng, same = np.random.default_rng(1), np.random.default_rng(1)
    ended = 0
    while ended < 30:
        rewards, terminated, info = engine.step(random_actions(engine.masks(), rng))
        expected = again.step(random_actions(again.masks(), same))
        np.testing.assert_array_equal(rewards, expected[0])
        np.testing.assert_array_equal(terminated, expected[1])
        for key in ("done", "terminal_observations", "terminal_scores"):
            np.testing.assert_array_equal(info[key], expected[2][key])
        for mine, theirs in zip(views(engine), views(again), strict=True):
            np.testing.assert_array_equal(mine, theirs)
        ended += len(info["done"])
    engine.reset(3)
    for mine, theirs in zip(views(engine), first, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_every_seat_chooses_exactly_where_the_game_says_so(env_id, config):
    """``Game.every_seat_chooses`` (the learner's joint critic relies on it) is true
    exactly where no seat ever waits: over 200 steps of 30 random games, some step has a
    seat waiting wherever it is false."""
    engine = new_engine(env_id, config, 30)
    rng = np.random.default_rng(1)
    every_step = True
    for _ in range(200):
        every_step &= bool(engine.choosers().all())
        engine.step(random_actions(engine.masks(), rng))
    assert every_step == engine.game.every_seat_chooses


def views(engine, rows=None) -> list[np.ndarray]:
    """What an engine shows of its games (of ``rows``: all by default)."""
    every = [engine.observations(), engine.masks(), engine.choosers(), engine.scores()]
    return every if rows is None else [view[rows] for view in every]


def test_a_saved_state_plays_on_as_the_engine_it_was_saved_from(env_id, config):
    """``state_dict`` / ``load_state_dict`` (``training.selfplay --resume``): an engine
    of another seed that loads a state shows and plays what the engine it came from does,
    step for step, until every game has ended and been dealt again from the restored
    generator; a state of another size or configuration is refused, changing nothing."""
    rng = np.random.default_rng(7)
    source = new_engine(env_id, config, 12, seed=1)
    for _ in range(int(rng.integers(3, 30))):  # the games at different stages
        source.step(random_actions(source.masks(), rng))
    state = source.state_dict()
    loaded = new_engine(env_id, config, 12, seed=2)
    loaded.load_state_dict(state)
    ended = np.zeros(12, dtype=bool)
    for _ in range(100 * source.game.max_decisions):
        for mine, theirs in zip(views(loaded), views(source), strict=True):
            np.testing.assert_array_equal(mine, theirs)
        if ended.all():
            break
        actions = random_actions(source.masks(), rng)
        expected = source.step(actions)
        rewards, terminated, info = loaded.step(actions)
        np.testing.assert_array_equal(rewards, expected[0])
        np.testing.assert_array_equal(terminated, expected[1])
        for key in ("done", "terminal_observations", "terminal_scores"):
            np.testing.assert_array_equal(info[key], expected[2][key])
        ended[info["done"]] = True
    assert ended.all()
    other = next(c for c in envs.get_spec(env_id).configurations if c != config)
    for refusing, message in [
        (new_engine(env_id, config, 5, seed=3), "num_envs"),
        (new_engine(env_id, other, 12, seed=3), "with options .*; this engine's are"),
    ]:
        before = views(refusing)
        with pytest.raises(ValueError, match=message):
            refusing.load_state_dict(state)
        for mine, theirs in zip(views(refusing), before, strict=True):
            np.testing.assert_array_equal(mine, theirs)


def test_copied_games_play_on_as_their_originals(env_id, config):
    """``copy_games`` (``training.selfplay --backup expanded`` tries every joint action on
    copies): copies of games at every stage, put into other rows of another engine, show
    and play what their originals do, given the same actions and chance, until they end."""
    rng = np.random.default_rng(5)
    source = new_engine(env_id, config, 20, seed=1)
    copies = new_engine(env_id, config, 30, seed=2)
    for _ in range(int(rng.integers(3, 30))):
        source.step(random_actions(source.masks(), rng))
    rows = np.sort(rng.permutation(20)[:12])  # ascending, as step takes rows
    into = np.sort(rng.permutation(30)[:12])
    assert (rows != into).any()
    copies.copy_games(source, rows, into)
    # the generator is not copied: given the same one, the chance during play (Pickup's
    # next hand) is the same too
    copies.rng.bit_generator.state = source.rng.bit_generator.state
    for _ in range(100 * source.game.max_decisions):
        for mine, theirs in zip(views(copies, into), views(source, rows), strict=True):
            np.testing.assert_array_equal(mine, theirs)
        if not len(rows):
            break
        actions = random_actions(source.masks()[rows], rng)
        expected, ended, _ = source.step(actions, rows)
        rewards, terminated, _ = copies.step(actions, into)
        np.testing.assert_array_equal(terminated, ended)
        np.testing.assert_array_equal(rewards, expected)
        rows, into = rows[~ended], into[~ended]  # the ended are dealt again, apart
    assert not len(rows)
    spec = envs.get_spec(env_id)
    other = next(c for c in spec.configurations if spec.make_game(**c).config != source.game.config)
    with pytest.raises(ValueError, match="same configuration"):
        new_engine(env_id, other, 5).copy_games(source, [0], [0])


@pytest.mark.parametrize("steps", [0, 9])
def test_an_illegal_action_raises_and_changes_nothing(env_id, config, steps):
    """An illegal choice (a legal-looking one, -1, one past the last action), a wrong
    shape or a dtype that is not integer raises ``IllegalActionError`` naming the game,
    the seat and the action, and changes nothing; a seat that does not choose may send
    anything."""
    engine = new_engine(env_id, config, 6)
    rng = np.random.default_rng(steps)
    for _ in range(steps):  # some way into the games
        engine.step(random_actions(engine.masks(), rng))
    views = (engine.observations, engine.masks, engine.choosers, engine.scores)
    before = [np.array(view()) for view in views]
    actions = random_actions(engine.masks(), rng)
    row = 4
    seat = int(np.flatnonzero(engine.choosers()[row])[0])
    masked_out = np.flatnonzero(~engine.masks()[row, seat])[:1].tolist()
    for bad in [*masked_out, -1, engine.num_actions]:
        wrong = actions.copy()
        wrong[row, seat] = bad
        with pytest.raises(
            IllegalActionError, match=f"game {row}: action {bad} is illegal for player {seat}"
        ):
            engine.step(wrong)
    with pytest.raises(IllegalActionError, match="shape"):
        engine.step(actions[:, :1])
    with pytest.raises(IllegalActionError, match="integer"):
        engine.step(actions.astype(np.float64))
    for old, view in zip(before, views, strict=True):
        np.testing.assert_array_equal(old, view())
    waiting = np.flatnonzero(~engine.choosers()[row])
    actions[row, waiting] = 10**6  # seats that do not choose now: ignored
    engine.step(actions)


# --- make_vec ---------------------------------------------------------------------------------
def case_id(env_id: str, config: dict) -> str:
    return "-".join([env_id.split("/")[1], *(f"{k}={v}" for k, v in config.items())])


#: make_vec against the Gymnasium view: every configuration of every game in both reward
#: modes against an opponent reading its observation (a function, played game by game),
#: and some against an untrained policy (``logits_batch``: one forward pass for all
#: games); the games compared. Pickup's longer game, whose engine draws its new hands,
#: is compared in tests/test_batched_pickup.py with the views' draws.
MAKE_VEC_CASES = [
    pytest.param(env_id, config, mode, "function", 24, id=f"{case_id(env_id, config)}-{mode}")
    for env_id, config in CASES
    if "target_score" not in config
    for mode in ("win", "score")
] + [
    pytest.param(
        f"hiddenhand/{name}-v0",
        *(config, mode, "policy", games),
        id=f"{case_id(f'hiddenhand/{name}-v0', config)}-{mode}-policy",
    )
    for name, config, mode, games in [
        ("pico", {"num_players": 2}, "win", 30),
        ("pico", {"num_players": 2}, "score", 30),
        ("pico", {"num_players": 3}, "win", 30),
        ("pico", {"num_players": 3}, "score", 30),
        ("easter_collection", {"num_players": 2, "variant": "standard"}, "score", 6),
        ("easter_collection", {"num_players": 4, "variant": "secret_positions"}, "win", 6),
        ("forslag", {"num_players": 4, "board_play": "simultaneous"}, "win", 8),
        ("pickup", {"num_players": 2}, "win", 20),
        ("pickup", {"num_players": 4}, "score", 20),
        ("pickup", {"num_players": 6}, "win", 20),
    ]
]


def required_paths(env_id: str, config: dict, reward_mode: str) -> dict[str, int]:
    """The least count of each of make_vec's paths (``lockstep.Paths``) that a game's
    comparison must take, where the game has it: the opponents' turns played alone inside
    ``step`` (Easter collection's placings, Pickup's pickup choices, some of those ending
    the game), rewards carried to the learner's first step (Förslag's drafts in turn), the
    opponent choosing before the learner's first choice (Pick & Pack's placements)."""
    name = envs.get_spec(env_id).name
    if name == "easter_collection" and config["variant"] == "standard":
        return {"alone": 20}
    if name == "pickup":
        return {"alone": 20, "ended_alone": 1}
    if name == "forslag" and config["board_play"] == "in_turn" and reward_mode == "score":
        return {"carried": 1}
    if name == "pick_and_pack" and config["placement"] != "simultaneous":
        return {"opponent_first": 1}
    return {}


@pytest.mark.parametrize(("env_id", "config", "reward_mode", "opponent", "games"), MAKE_VEC_CASES)
def test_make_vec_matches_the_gymnasium_view(env_id, config, reward_mode, opponent, games):
    """The same deals, seats and deterministic opponent: game by game, the learner sees
    and earns in the VecEnv what it sees and earns in the Gymnasium view, the opponents'
    turns before its first choice and between its choices included
    (``lockstep.compare_with_the_gymnasium_view``)."""
    gym_id = envs.get_spec(env_id).gym_id
    if opponent == "policy":
        opponent = untrained_policy(gym_id, tuple(sorted(config.items())))
    else:
        opponent = by_observation
    paths = compare_with_the_gymnasium_view(gym_id, config, reward_mode, opponent, games)
    assert paths.games >= games
    for path, least in required_paths(env_id, config, reward_mode).items():
        assert getattr(paths, path) >= least, (path, paths)


def test_make_vec_ends_a_game_on_an_illegal_action_like_the_gymnasium_view(env_id, config):
    """An illegal action loses that game alone (reward -1, done, the reason in its info,
    its last observation as the terminal one); the row plays on from a new deal."""
    vec_env = envs.make_vec(envs.get_spec(env_id).gym_id, num_envs=3, seed=1, **config)
    before = vec_env.reset()
    masks = vec_env.action_masks()
    actions = np.argmax(masks, axis=1)
    actions[1] = int(np.flatnonzero(~masks[1])[0])
    _, rewards, dones, infos = vec_env.step(actions)
    assert rewards[1] == -1.0 and dones.tolist() == [False, True, False]
    assert "illegal" in infos[1]["illegal_action"]
    np.testing.assert_array_equal(infos[1]["terminal_observation"], before[1])
    masks = vec_env.action_masks()
    assert masks.any(axis=1).all()  # every row, the new game's too, awaits a legal action
    vec_env.step(np.argmax(masks, axis=1))
    assert "illegal_action" not in infos[0] | infos[2]


def test_make_vec_is_seeded(env_id, config):
    """``seed(s)`` then ``reset()`` deals the same games to the same seats again."""
    vec_env = envs.make_vec(envs.get_spec(env_id).gym_id, 16, "heuristic", seed=4, **config)
    first = vec_env.reset()
    seats = vec_env.seats.copy()
    vec_env.step(np.argmax(vec_env.action_masks(), axis=1))
    vec_env.seed(4)
    np.testing.assert_array_equal(vec_env.reset(), first)
    np.testing.assert_array_equal(vec_env.seats, seats)
    assert len(set(seats.tolist())) > 1  # the learner's seat is drawn per game


#: A random learner against the heuristic in every other seat (make_vec plays the batched
#: heuristic where the engine has one, else the agent game by game): the game, its
#: options, games in lockstep, games to finish, and the learner's most wins or least losses.
AGAINST_THE_HEURISTIC = [
    ("pico", {}, 256, 1000, {"lost": 0.6}),
    ("pickup", {"num_players": 3}, 64, 200, {"lost": 0.6}),
    ("forslag", {"num_players": 3}, 64, 150, {"won": 0.2}),
    ("easter_collection", {"num_players": 3}, 16, 32, {"lost": 0.5}),
]


@pytest.mark.parametrize(
    ("name", "options", "num_envs", "games", "bound"),
    AGAINST_THE_HEURISTIC,
    ids=[case[0] for case in AGAINST_THE_HEURISTIC],
)
def test_the_heuristic_opponent_beats_a_random_learner(name, options, num_envs, games, bound):
    vec_env = envs.make_vec(
        envs.get_spec(f"hiddenhand/{name}-v0").gym_id, num_envs, "heuristic", seed=0, **options
    )
    vec_env.reset()
    rng = np.random.default_rng(0)
    results: list[float] = []
    while len(results) < games:
        masks = vec_env.action_masks()
        assert masks.any(axis=1).all()
        actions = np.argmax(np.where(masks, rng.random(masks.shape), -1), axis=1)
        _, rewards, dones, _ = vec_env.step(actions)
        results += rewards[dones].tolist()
    results = np.array(results)
    if "lost" in bound:
        assert np.mean(results < 0) > bound["lost"]
    else:
        assert np.mean(results > 0) < bound["won"]


#: MaskablePPO's first steps on make_vec: the game, its options and the opponent.
PPO_CASES = [
    ("pico", {}, "heuristic"),
    ("pickup", {}, "heuristic"),
    ("forslag", {"num_players": 3}, "random"),
    ("pick_and_pack", {}, "heuristic"),
    ("easter_collection", {"num_players": 3}, "random"),
]


@pytest.mark.parametrize(
    ("name", "options", "opponent"), PPO_CASES, ids=[case[0] for case in PPO_CASES]
)
def test_maskable_ppo_learns_on_make_vec(name, options, opponent):
    import torch
    from sb3_contrib import MaskablePPO

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny networks: more threads only wait for each other
    try:
        gym_id = envs.get_spec(f"hiddenhand/{name}-v0").gym_id
        vec_env = envs.make_vec(gym_id, num_envs=16, opponent=opponent, seed=0, **options)
        model = MaskablePPO(
            "MlpPolicy", vec_env, n_steps=32, batch_size=128, n_epochs=2, seed=0, device="cpu"
        )
        model.learn(512)
        assert model.num_timesteps >= 512
    finally:
        torch.set_num_threads(threads)


# --- the engines' shared parts ------------------------------------------------------------
@pytest.mark.parametrize("waiting", [0, 3], ids=["every-seat-chooses", "one-seat-of-four"])
@pytest.mark.parametrize("width", [5, 260])
def test_random_actions_are_legal_and_uniform(waiting, width):
    """Legal, uniform, 0 where a row has none; both ways of counting a row's legal actions
    (in bytes below 256 actions, else ``sum``), whether the seats that wait are few or many."""
    masks = np.zeros((30_000, 2 + waiting, width), dtype=bool)
    masks[:, 0, [1, 2, 4]] = True
    masks[:, 1, 3] = True
    actions = random_actions(masks, np.random.default_rng(0))
    assert (actions[:, 1] == 3).all() and (actions[:, 2:] == 0).all()
    shares = np.bincount(actions[:, 0], minlength=width) / len(actions)
    assert shares.sum() == shares[[1, 2, 4]].sum()
    np.testing.assert_allclose(shares[[1, 2, 4]], 1 / 3, atol=0.015)  # ~5 standard errors
    nothing = random_actions(
        np.zeros((4, 2 + waiting, width), dtype=bool), np.random.default_rng(0)
    )
    assert nothing.shape == (4, 2 + waiting) and not nothing.any()


def test_the_engine_docstrings_example_runs_as_written():
    """envs/core/batched.py's example imports what it uses and states the rewards' dtype."""
    import re

    import envs.core.batched as batched

    code = re.findall(r"```python\n(.*?)```", batched.__doc__, flags=re.DOTALL)[0]
    scope: dict = {}
    exec(compile(code, "envs/core/batched.py", "exec"), scope)
    rewards, terminated = scope["rewards"], scope["terminated"]
    assert rewards.shape == (1024, 2) and rewards.dtype == np.float64
    assert "rewards (B, N) float64" in code
    assert terminated.shape == (1024,) and terminated.dtype == bool
    for spec in envs.GAMES:  # every engine named, where it lives
        assert engine_class(spec).__name__ in batched.__doc__
