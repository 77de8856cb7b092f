"""The paths a new user takes first: each test reproduces a way they used to break."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_seed_test
from pettingzoo.utils.conversions import parallel_to_aec

import envs
from envs.core.aec import HiddenHandAEC, HiddenHandParallel
from envs.core.game import ActionTypeError, IllegalActionError
from training.evaluation.panel import panel_policy_path

NOT_INTEGERS = (1.0, np.float32(2.0), "1", None, [1], np.array([0, 1]), np.array(1.5), True)


def integer_forms(action: int) -> list:
    """What users pass for an action: SB3's predict gives a 0-d array, a vec env a (1,)."""
    return [action, np.int64(action), np.array(action), np.array([action], dtype=np.int32)]


# --- 1. numpy actions are the integers they hold; non-integers are errors, not moves ------
@pytest.mark.parametrize("form", range(4))
def test_every_interface_takes_numpy_actions_as_integers(form):
    aec = envs.pico.env()
    aec.reset(seed=0)
    legal = int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0])
    aec.step(integer_forms(legal)[form])
    assert aec.table.pending == {0: legal}  # committed, not penalised
    assert not any(aec.terminations.values())

    raw = envs.pico.raw_env()
    raw.reset(seed=0)
    raw.step(integer_forms(legal)[form])
    assert raw.table.pending == {0: legal}

    parallel = envs.pico.parallel_env()
    observations, _ = parallel.reset(seed=0)
    actions = {
        agent: integer_forms(int(np.flatnonzero(obs["action_mask"])[0]))[form]
        for agent, obs in observations.items()
    }
    _, rewards, terminations, _, _ = parallel.step(actions)
    assert not any(terminations.values()) and -1.0 not in rewards.values()

    view = gymnasium.make("hiddenhand/Pico-v0", opponent="random")
    _, info = view.reset(seed=0)
    chosen = int(np.flatnonzero(info["action_mask"])[0])
    _, _, terminated, _, info = view.step(integer_forms(chosen)[form])
    assert "illegal_action" not in info and not terminated


@pytest.mark.parametrize("bad", NOT_INTEGERS, ids=repr)
def test_a_non_integer_action_is_a_clear_error_everywhere(bad):
    for make in (envs.pico.env, envs.pico.raw_env):
        env = make()
        env.reset(seed=0)
        with pytest.raises(ActionTypeError, match="must be an integer"):
            env.step(bad)
        assert not any(env.terminations.values()) and env.table.pending == {}
    parallel = envs.pico.parallel_env()
    parallel.reset(seed=0)
    with pytest.raises(ActionTypeError, match="must be an integer"):
        parallel.step(dict.fromkeys(parallel.agents, bad))
    assert parallel.agents
    view = gymnasium.make("hiddenhand/Pico-v0")
    view.reset(seed=0)
    with pytest.raises(ActionTypeError, match="must be an integer"):
        view.step(bad)
    view.step(int(np.flatnonzero(view.unwrapped.action_masks())[0]))  # the episode goes on


def test_an_illegal_integer_still_ends_the_episode_as_documented():
    view = gymnasium.make("hiddenhand/Pico-v0")
    view.reset(seed=0)
    illegal = int(np.flatnonzero(~view.unwrapped.action_masks())[0])
    _, reward, terminated, _, info = view.step(np.array(illegal))
    assert terminated and reward == -1.0 and "illegal_action" in info


def test_the_readme_sb3_loop_with_predict_plays_legal_moves():
    """The README's SB3 snippet, then ``env.step(action)`` as users write it: with an SB3
    Pico agent (the panel's) no episode may end on an illegal move, and it wins most."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(
        panel_policy_path(envs.get_spec("hiddenhand/pico-v0").make_game()), device="cpu"
    )
    env = gymnasium.make("hiddenhand/Pico-v0", opponent="random")
    returns = []
    for episode in range(20):
        obs, info = env.reset(seed=episode)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks())
            assert isinstance(action, np.ndarray)
            obs, reward, terminated, truncated, info = env.step(action)
            assert "illegal_action" not in info
            total += reward
            done = terminated or truncated
        returns.append(total)
    assert np.mean(np.array(returns) > 0) > 0.5


# --- 2. render modes: rgb_array and render_fps; make_vec_env as with any env ------------
def test_rgb_array_draws_the_table(env_id, config):
    spec = envs.get_spec(env_id)
    view = gymnasium.make(spec.gym_id, render_mode="rgb_array", **config)
    view.reset(seed=1)
    image = view.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] > 20 and image.shape[1] > 100
    assert (image < 128).any() and (image > 128).any()  # some ink on paper
    aec = pettingzoo.make("aec", env_id, render_mode="rgb_array", **config)
    aec.reset(seed=1)
    assert aec.render().shape[2] == 3
    for env in (view.unwrapped, aec.unwrapped, envs.make_parallel(env_id, **config)):
        assert env.metadata["render_fps"] > 0
        assert "rgb_array" in env.metadata["render_modes"]


def test_make_vec_env_and_maskable_ppo_work_as_with_any_env():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    vec_env = make_vec_env("hiddenhand/Pickup-v0", n_envs=2, seed=0)
    assert vec_env.render_mode == "rgb_array"
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps >= 64
    assert vec_env.env_method("action_masks")[0].shape == (vec_env.action_space.n,)


SUBPROCESS_SCRIPT = """
import sys
import envs  # registers the ids; SubprocVecEnv's workers import this script first
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

if __name__ == "__main__":
    vec_env = make_vec_env(sys.argv[1], n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    vec_env.close()
    print("timesteps", model.num_timesteps)
"""


@pytest.mark.slow
@pytest.mark.parametrize("gym_id", [*envs.gym_ids(), "envs:hiddenhand/Pico-v0"])
def test_make_vec_env_in_subprocesses_trains_every_id(gym_id, tmp_path):
    """As a user runs it: a script that imports ``envs`` (SubprocVecEnv's workers import
    the main script; the ``envs:`` prefix imports the package in any process)."""
    script = tmp_path / "train.py"
    source = SUBPROCESS_SCRIPT
    if gym_id.startswith("envs:"):
        source = source.replace("import envs  #", "#")
    script.write_text(source)
    done = subprocess.run(
        [sys.executable, str(script), gym_id], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) >= 256


# --- 3. no play past the end, no silent AttributeError before reset ---------------------
def test_the_gymnasium_view_refuses_to_step_a_finished_episode():
    view = envs.core.single_agent.SingleAgentEnv("hiddenhand/pico-v0")
    with pytest.raises(RuntimeError, match="reset"):
        view.step(0)
    view.reset(seed=0)
    illegal = int(np.flatnonzero(~view.action_masks())[0])
    assert view.step(illegal)[2]  # terminated, on the illegal move
    with pytest.raises(RuntimeError, match="illegal action.*reset"):
        view.step(int(np.flatnonzero(view.action_masks())[0]))
    view.reset(seed=0)
    done, rng = False, np.random.default_rng(0)
    while not done:
        done = view.step(int(rng.choice(np.flatnonzero(view.action_masks()))))[2]
    with pytest.raises(RuntimeError, match="game is over.*reset"):
        view.step(0)
    view.reset(seed=1)  # and reset brings it back
    assert view.action_masks().any()


def test_last_and_render_before_reset_are_clear_errors():
    for make in (envs.pico.env, envs.pico.raw_env):
        env = make(render_mode="ansi")
        with pytest.raises(RuntimeError, match="reset"):
            env.last()
        with pytest.raises(RuntimeError, match="reset"):
            env.render()
        with pytest.raises(RuntimeError, match="reset"):
            env.render_for("player_0")


# --- 4. the parallel env: truthful metadata, PettingZoo's tests, the illegal-move rule ---
def test_parallel_seed_test_and_round_trips(env_id, config):
    """PettingZoo's parallel seed test samples unmasked actions: an illegal one ends the
    game (as env() does) instead of raising. The AEC env asks only the players choosing
    now, so it says it cannot be wrapped by aec_to_parallel; parallel_env() is built in,
    and its AEC round trip passes the API test."""
    parallel_seed_test(lambda: pettingzoo.make("parallel", env_id, **config), num_cycles=100)
    assert pettingzoo.make("aec", env_id, **config).metadata["is_parallelizable"] is False
    api_test(parallel_to_aec(pettingzoo.make("parallel", env_id, **config)), num_cycles=30)


def test_parallel_env_penalises_an_illegal_move_and_raw_parallel_raises():
    parallel = envs.pico.parallel_env()
    observations, _ = parallel.reset(seed=0)
    illegal = {
        agent: int(np.flatnonzero(obs["action_mask"] == 0)[0])
        for agent, obs in observations.items()
    }
    with pytest.warns(UserWarning, match="player_0 made an illegal move"):
        observations, rewards, terminations, _, _ = parallel.step(illegal)
    assert rewards == {"player_0": -1.0, "player_1": 0.0}  # the first offender in seat order
    assert all(terminations.values()) and parallel.agents == []
    assert all(obs["action_mask"][1:].sum() == 0 for obs in observations.values())
    strict = HiddenHandParallel(envs.get_spec("hiddenhand/pico-v0"), illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal actions"):
        strict.step(illegal)
    assert strict.agents and strict.table.pending == {}


def test_raw_env_keeps_raising_on_an_illegal_integer():
    raw = HiddenHandAEC(envs.get_spec("hiddenhand/pico-v0"), illegal_action="raise")
    raw.reset(seed=0)
    illegal = int(np.flatnonzero(raw.observe("player_0")["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal actions"):
        raw.step(np.array([illegal]))
    assert not any(raw.terminations.values())


# --- 6. game options from the command line ------------------------------------------------
def test_options_are_typed_by_the_game_config():
    parse = envs.get_spec("hiddenhand/pick_and_pack-v0").game_class.config_class.parse_options
    assert parse(["placement=alternate", "chain_rush_orders=false", "tray_counts=(1, 2)"]) == {
        "placement": "alternate",
        "chain_rush_orders": False,
        "tray_counts": (1, 2),
    }
    parse = envs.get_spec("hiddenhand/pickup-v0").game_class.config_class.parse_options
    assert parse(["num_players=3", "target_score=none"]) == {"num_players": 3, "target_score": None}
    assert parse(["target_score=100"]) == {"target_score": 100}
    for bad, message in (
        ("placement", "key=value"),
        ("colour=red", "unknown option 'colour'; allowed options: num_players, target_score"),
        ("num_players=three", "num_players='three': expected a value of type int"),
    ):
        with pytest.raises(ValueError, match=message):
            parse([bad])


# --- 5-8. training runs: no silent overwrite, options, model paths, curves --------------
def tiny_run(tmp_path, *extra: str, env: str = "hiddenhand/pico-v0") -> list[str]:
    return [
        "--env", env, "--total-timesteps", "256", "--n-envs", "1", "--n-steps", "128",
        "--batch-size", "64", "--n-epochs", "1", "--eval-every", "128", "--eval-games", "4",
        "--final-eval-games", "4", "--snapshot-every", "128", "--run-dir", str(tmp_path),
        "--no-progress-bar", *extra,
    ]  # fmt: skip


def folder_bytes(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_run_folder_is_never_overwritten_silently(tmp_path, capsys):
    from training import train

    run = train.train(train.parse_args(tiny_run(tmp_path, "--run-name", "a")))
    kept = folder_bytes(run)
    assert "snapshots/step_000000128.zip" in kept
    for again in (
        ["--run-name", "a"],  # the same command again
        ["--run-name", "a", "--opponents", "heuristc:1"],  # a typo: refused before anything
        ["--run-name", "a", "--option", "no_such=1"],
    ):
        with pytest.raises(ValueError, match="already holds a run|unknown agent|unknown option"):
            train.train(train.parse_args(tiny_run(tmp_path, *again)))
        assert folder_bytes(run) == kept
    with pytest.raises(SystemExit, match="heuristc"):  # the CLI: a message, no folder made
        train.main(tiny_run(tmp_path, "--run-name", "b", "--opponents", "heuristc:1"))
    assert not (tmp_path / "b").exists()
    train.train(
        train.parse_args(tiny_run(tmp_path, "--run-name", "a", "--overwrite", "--seed", "1"))
    )
    replaced = folder_bytes(run)
    assert replaced["config.json"] != kept["config.json"]
    assert '"seed": 1' in replaced["config.json"].decode()


def test_game_options_reach_training_and_saved_models_refuse_other_options(tmp_path, capsys):
    from training import evaluate, train

    run = train.train(
        train.parse_args(
            tiny_run(tmp_path, "--option", "board_play=simultaneous", env="hiddenhand/forslag-v0")
        )
    )
    saved = json.loads((run / "model.json").read_text())
    assert saved["options"] == {"board_play": "simultaneous"}
    assert "--option board_play=simultaneous" in saved["command"]
    spec = envs.get_spec("hiddenhand/forslag-v0")
    with pytest.raises(ValueError, match="board_play: model 'simultaneous', env 'in_turn'"):
        spec.make_agent(str(run / "model.zip"), spec.make_game())
    evaluate.main(
        ["--env", "hiddenhand/forslag-v0", "--option", "board_play=simultaneous", "--agents"]
        + [str(run / "model.zip"), "random", "--games", "4"]
    )
    assert "| random |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        evaluate.main(["--env", "hiddenhand/forslag-v0", "--option", "board_play=x", "--agents"])


def test_saved_models_are_opponents_wherever_agent_names_are(tmp_path, capsys):
    from sb3_contrib import MaskablePPO

    from training import train

    first = train.train(train.parse_args(tiny_run(tmp_path, "--run-name", "first")))
    model_path = str(first / "model.zip")
    output = capsys.readouterr().out
    assert "[128 steps] vs heuristic: win rate" in output  # periodic evaluations, as they come
    second = train.train(
        train.parse_args(
            tiny_run(tmp_path, "--run-name", "second", "--opponents", f"{model_path}:1")
        )
    )
    assert (second / "model.zip").is_file()
    view = gymnasium.make("hiddenhand/Pico-v0", opponent=model_path)
    view.reset(seed=0)
    assert type(view.unwrapped.opponents[0]).__name__ == "PolicyAgent"
    # TensorBoard has the episode curves (VecMonitor).
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(next((first / "tensorboard").iterdir())))
    events.Reload()
    assert {"rollout/ep_rew_mean", "rollout/ep_len_mean"} <= set(events.Tags()["scalars"])
    # A plain SB3 model.save() file (no metadata) loads with a warning where its spaces fit.
    plain = tmp_path / "plain"
    MaskablePPO.load(model_path).save(plain)
    with pytest.warns(UserWarning, match="no metadata"):
        agent = envs.get_spec("hiddenhand/pico-v0").make_agent(
            str(plain) + ".zip", view.unwrapped.game
        )
    assert agent.act(
        view.unwrapped.table.observation(0), view.unwrapped.action_masks(), None
    ) in range(11)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="the env needs"):
        spec = envs.get_spec("hiddenhand/pickup-v0")
        spec.make_agent(str(plain) + ".zip", spec.make_game())


# --- 10. no PyTorch warning on every decision ----------------------------------------------
def test_a_policy_agent_warns_nothing_on_read_only_observations():
    import warnings

    agent = envs.get_spec("hiddenhand/pico-v0").make_agent("ppo", envs.pico.raw_env().game)
    table_view = gymnasium.make("hiddenhand/Pico-v0").unwrapped
    table_view.reset(seed=0)
    observation = table_view.table.observation(table_view.learner)
    assert not observation.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.act(observation, table_view.action_masks().astype(np.int8), np.random.default_rng(0))


# --- 9. every tool's usage names the command that runs it ---------------------------------
@pytest.mark.parametrize(
    "module", ["train", "evaluate", "exploitability", "benchmark", "solve", "play"]
)
def test_every_tool_help_names_its_python_m_command(module, capsys):
    """``--help`` reads ``usage: python -m training.X``, not the file's name (``train.py``),
    which cannot be run as such. training.rllib's is checked in tests/test_rllib.py."""
    import importlib

    # a package's command line is its ``cli`` module (``python -m`` runs its __main__)
    cli = {"benchmark": "training.benchmark.cli"}
    tool = importlib.import_module(cli.get(module, f"training.{module}"))
    entry = getattr(tool, {"train": "parse_args", "play": "setup"}.get(module, "main"))
    with pytest.raises(SystemExit):
        entry(["--help"])
    assert capsys.readouterr().out.startswith(f"usage: python -m training.{module} ")


def test_every_refused_option_names_what_is_allowed():
    """One check (``require_choice``) for every choice: a number matches only its kind."""
    from envs.core.game import require_choice

    require_choice("num_players", np.int64(3), (2, 3))
    require_choice("flag", True, (True, False))
    require_choice("seat", None, (None, 0, 1))
    for name, value, allowed in [
        ("num_players", 3.0, (2, 3)),
        ("num_players", True, (1, 2)),
        ("flag", 1, (True, False)),
        ("seat", True, (None, 0, 1)),
        ("mode", "x", ("a", "b")),
    ]:
        listed = ", ".join(map(repr, allowed))
        with pytest.raises(ValueError, match=f"is not allowed; allowed values: {listed}"):
            require_choice(name, value, allowed)


def test_evaluating_a_torch_agent_uses_one_thread_unless_told_otherwise():
    """``training.evaluate`` (as ``exploitability`` and ``play``) loads an SB3 agent with
    one torch thread, not one per core, unless ``OMP_NUM_THREADS`` says otherwise."""
    code = (
        "from training.evaluate import main; "
        "main(['--env', 'hiddenhand/pico-v0', '--agents', 'ppo', 'random', '--games', '2']); "
        "import torch; print('threads', torch.get_num_threads())"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    for preset, expected in ((None, 1), ("2", 2)):
        if preset:
            env["OMP_NUM_THREADS"] = preset
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert result.stdout.split()[-2:] == ["threads", str(expected)], result.stdout
