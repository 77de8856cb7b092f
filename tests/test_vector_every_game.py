"""Every configuration of every game has a batched engine, and it plays the rules' game:
a short generic lockstep (the per-game files ``test_vector_<game>.py`` go deeper). Where
the rules draw chance during a step (a new hand's shuffle), the engine draws its own, so
that row is loaded again from the reference."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.batched import random_actions
from envs.core.table import Table
from envs.core.vector import engine_class


def test_the_engine_plays_the_rules_game(env_id, config):
    spec = envs.get_spec(env_id)
    engine = engine_class(spec)(4, seed=0, **config)
    game = engine.game
    tables = []
    for seed in range(4):
        table = Table(game, "score")
        table.reset(np.random.default_rng(seed))
        tables.append(table)
    engine.load([t.state for t in tables])
    rng = np.random.default_rng(1)
    for _ in range(40):
        observations, masks, choosers = engine.observations(), engine.masks(), engine.choosers()
        for b, table in enumerate(tables):
            assert choosers[b].tolist() == [p in table.choosers for p in range(game.num_players)]
            for p in range(game.num_players):
                np.testing.assert_array_equal(observations[b, p], table.observation(p))
                np.testing.assert_array_equal(masks[b, p], table.legal_mask(p).astype(bool))
        actions = random_actions(masks, rng)
        _, terminated, _ = engine.step(actions)
        for b, table in enumerate(tables):
            before = table.state.rng.bit_generator.state
            for p in table.waiting_for():
                table.commit(p, int(actions[b, p]))
            assert terminated[b] == table.terminal
            if table.terminal:
                table.reset(np.random.default_rng(100 + b))
                engine.load([table.state], [b])
            elif table.state.rng.bit_generator.state != before:  # chance: the rules' draw
                engine.load([table.state], [b])


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
