"""Training and evaluation tools: saved-model checks and a slow smoke test on every id."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import envs
from training import imitation
from training import train as training_train
from training.agents import features_class
from training.agents.policy import (
    BASELINES,
    PolicyAgent,
    actor_and_critic_parameters,
    load_policy,
    policy_metadata,
    save_policy,
    shipped_files,
)


def demonstrations(args, snapshot_dir):
    """The env factory ``training.train`` hands to imitation: the learner's seat against
    the run's opponent mix."""
    return training_train.make_env(args, rank=10_000, snapshot_dir=snapshot_dir)


@pytest.fixture(scope="module")
def tiny_pico_model(tmp_path_factory):
    import gymnasium
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("hiddenhand/Pico-v0")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu")
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    path = save_policy(
        model,
        tmp_path_factory.mktemp("model") / "pico",
        policy_metadata("hiddenhand/pico-v0", game, {}),
    )
    return path


def test_saved_policy_loads_for_its_env_and_plays(tiny_pico_model):
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agent = load_policy(tiny_pico_model, game, spec.aec_id)
    state = game.new_initial_state(__import__("numpy").random.default_rng(0))
    action = agent.act(game.observation(state, 0), state.legal_mask(0).astype("int8"), None)
    assert state.legal_mask(0)[action]


def test_policy_agent_chooses_as_sb3_predict_and_samples_from_its_rng(random_play, tiny_pico_model):
    import numpy as np

    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    greedy = load_policy(tiny_pico_model, game, spec.aec_id)
    sampler = PolicyAgent(greedy.model, deterministic=False)
    decisions = 0
    for state, p in random_play(game, games=10):
        observation, mask = game.observation(state, p), state.legal_mask(p).astype("int8")
        expected, _ = greedy.model.predict(
            observation, action_masks=mask.astype(bool), deterministic=True
        )
        assert greedy.act(observation, mask, None) == int(expected)
        draws = [sampler.act(observation, mask, np.random.default_rng(s)) for s in (1, 1)]
        assert draws[0] == draws[1] and mask[draws[0]]
        decisions += 1
    assert decisions > 50


def test_a_models_metadata_says_whether_it_plays_greedy_or_samples(tiny_pico_model, tmp_path):
    import shutil

    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    assert load_policy(tiny_pico_model, game, spec.aec_id).deterministic  # no play: greedy
    meta = json.loads(tiny_pico_model.with_suffix(".json").read_text())
    model = shutil.copy(tiny_pico_model, tmp_path / "model.zip")
    for play, deterministic in (("greedy", True), ("sample", False)):
        (tmp_path / "model.json").write_text(json.dumps(meta | {"play": play}))
        assert load_policy(model, game, spec.aec_id).deterministic is deterministic
    (tmp_path / "model.json").write_text(json.dumps(meta | {"play": "argmax"}))
    with pytest.raises(ValueError, match="play 'argmax'; allowed: greedy, sample"):
        load_policy(model, game, spec.aec_id)


def test_loading_a_model_into_another_env_says_what_differs(tiny_pico_model):
    spec = envs.get_spec("hiddenhand/pico-v0")
    with pytest.raises(ValueError, match="num_players: model 2, env 3"):
        load_policy(tiny_pico_model, spec.make_game(num_players=3), spec.aec_id)


def test_corrupt_or_missing_model_is_a_clear_error(tiny_pico_model, tmp_path):
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip file")
    broken.with_suffix(".json").write_text(tiny_pico_model.with_suffix(".json").read_text())
    with pytest.raises(ValueError, match="not a readable SB3 model"):
        load_policy(broken, game, spec.aec_id)
    with pytest.raises(ValueError, match="no saved model"):
        load_policy(tmp_path / "absent.zip", game, spec.aec_id)
    broken.with_suffix(".json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_policy(broken, game, spec.aec_id)


def test_train_arguments_are_documented():
    import dataclasses

    for f in dataclasses.fields(training_train.Args):
        assert f.metadata.get("help"), f"--{f.name} has no help text"
    args = training_train.parse_args(["--env", "hiddenhand/pico-v0", "--num-players", "3"])
    assert args.num_players == 3 and args.env == "hiddenhand/pico-v0"


def test_the_arguments_are_checked_once(monkeypatch, tmp_path):
    """``main`` checks, then trains; ``train`` called from Python checks too: once each."""
    calls = []
    monkeypatch.setattr(training_train, "check", lambda args: calls.append("check"))
    monkeypatch.setattr(
        training_train, "run_training", lambda args: calls.append("run") or tmp_path
    )
    training_train.main(["--final-eval-games", "0"])
    assert calls == ["check", "run"]
    calls.clear()
    training_train.train(training_train.Args())
    assert calls == ["check", "run"]


def test_one_command_line_helper_reads_and_writes_every_flag():
    """``training.cli``: bools as --x/--no-x, repeatable and many-valued lists; the
    command it writes parses back to the same arguments."""
    import dataclasses
    import shlex

    from training import cli

    @dataclasses.dataclass
    class Args:
        name: str = cli.arg("x", "a name")
        count: int | None = cli.arg(None, "a count")
        fast: bool = cli.arg(True, "a flag")
        option: list[str] = cli.list_arg([], "repeatable")
        pool: list[str] = cli.list_arg(["self"], "several values", nargs="+")
        span: str = cli.arg("0,1", "a value that may start with '-'")
        shift: float = cli.arg(0.0, "a number that may be negative")

    parser = cli.dataclass_parser("training.x", "A tool.", Args)
    assert Args(**vars(parser.parse_args([]))) == Args()
    argv = ["--no-fast", "--option", "a=1", "--option", "b=2", "--pool", "self", "random"]
    args = Args(**vars(parser.parse_args([*argv, "--count", "3", "--span=-25,25"])))
    assert args == Args(
        count=3, fast=False, option=["a=1", "b=2"], pool=["self", "random"], span="-25,25"
    )
    command = cli.command_line("training.x", args)
    assert command.startswith("python -m training.x --name x --count 3 --no-fast")
    assert Args(**vars(parser.parse_args(shlex.split(command)[3:]))) == args
    negative = dataclasses.replace(args, option=["-a=1"], shift=-0.5)
    command = cli.command_line("training.x", negative)
    assert "--span=-25,25" in command and "--option=-a=1" in command
    assert Args(**vars(parser.parse_args(shlex.split(command)[3:]))) == negative


@pytest.mark.slow
@pytest.mark.parametrize("env_id", envs.ids())
def test_training_smoke_on_every_id(env_id, tmp_path):
    run = training_train.train(
        training_train.parse_args(
            [
                "--env",
                env_id,
                "--total-timesteps",
                "256",
                "--n-envs",
                "2",
                "--n-steps",
                "128",
                "--batch-size",
                "64",
                "--eval-every",
                "0",
                "--snapshot-every",
                "128",
                "--opponents",
                "random:1,heuristic:1,self:1",
                "--final-eval-games",
                "10",
                "--imitate-steps",
                "100",
                "--imitate-epochs",
                "1",
                "--run-dir",
                str(tmp_path),
                "--no-progress-bar",
            ]
        )
    )
    for name in ("model.zip", "model.json", "config.json", "evaluations.csv", "learning_curve.png"):
        assert (run / name).is_file()
    assert json.loads((run / "model.json").read_text())["env_id"] == env_id


def test_the_demos_run_is_the_same_when_run_again(tmp_path):
    """``make demo``'s arguments at a tiny budget, twice: the same weights and the same
    evaluation figures (seeded, one torch thread), as docs/results.md says."""
    import torch

    from training.demo import DEMO_ARGS

    game = envs.get_spec("hiddenhand/pico-v0").make_game()

    def run(name: str) -> tuple[dict, list[str]]:
        argv = list(DEMO_ARGS)
        for flag, value in (
            ("--total-timesteps", "1024"), ("--eval-every", "0"),
            ("--final-eval-games", "20"), ("--run-name", name),
        ):  # fmt: skip
            argv[argv.index(flag) + 1] = value
        args = training_train.parse_args([*argv, "--run-dir", str(tmp_path), "--no-progress-bar"])
        folder = training_train.train(args)
        weights = load_policy(folder / "model.zip", game, "hiddenhand/pico-v0").model.policy
        rows = (folder / "evaluations.csv").read_text().splitlines()
        return weights.state_dict(), [row.rsplit(",", 1)[0] for row in rows]  # less the wall time

    (first, first_rows), (second, second_rows) = run("a"), run("b")
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert first_rows == second_rows and len(first_rows) == 3  # header, random, heuristic


@pytest.mark.parametrize(
    "env_id, config",
    [
        ("hiddenhand/forslag-v0", {"num_players": 3}),
        ("hiddenhand/pick_and_pack-v0", {}),
        ("hiddenhand/pickup-v0", {"num_players": 2}),
    ],
)
def test_learner_receives_its_loss_when_an_opponent_move_ends_the_game(env_id, config):
    """A scripted opponent (always its last legal action) makes the move that ends the
    game; the learner's last reward is its loss, counted in the step it took before."""
    import gymnasium
    import numpy as np

    from envs.core.rewards import win_rewards

    def scripted(observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[-1])

    env = gymnasium.make(envs.get_spec(env_id).gym_id, opponent=scripted, seat=0, **config)
    table = env.unwrapped.table
    commit, enders = table.commit, []

    def recording_commit(player, action):
        revealed = commit(player, action)
        if revealed is not None and table.terminal:
            enders.append(player)
        return revealed

    table.commit = recording_commit
    for seed in range(1000):  # such games are rare in some games (2 in 300 in Pickup)
        enders.clear()
        env.reset(seed=seed)
        done, reward = False, 0.0
        while not done:
            _, reward, done, _, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        outcome = win_rewards(table.state.scores())[0]
        if enders and enders[0] != 0 and outcome < 0:
            assert reward == pytest.approx(outcome)
            return
    raise AssertionError("no game in 1000 ended on a winning opponent move")


SHIPPED = shipped_files()


def test_baselines_are_shipped_for_every_game():
    shipped_games = {json.loads(p.with_suffix(".json").read_text())["env_id"] for p in SHIPPED}
    assert shipped_games == {spec.aec_id for spec in envs.GAMES}
    stems = [p.stem for p in SHIPPED]
    assert len(stems) == len(set(stems))  # one shipped file, of one kind, per configuration
    assert (BASELINES / "forslag_4p.zip").is_file()  # the default player count


def test_ppo_resolves_in_every_configuration(env_id, config):
    """Every configuration each game declares has a shipped trained agent, of one of the
    two kinds: an SB3 model or a self-play network (alone or an average)."""
    from training.agents.network import AveragedNetworkAgent, NetworkAgent
    from training.agents.policy import PolicyAgent

    spec = envs.get_spec(env_id)
    agent = spec.make_agent("ppo", spec.make_game(**config))
    assert isinstance(agent, PolicyAgent | NetworkAgent | AveragedNetworkAgent)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_baseline_loads_by_name_and_plays(path):
    import numpy as np

    from envs.core.agents import RandomAgent
    from training.agents.policy import baseline_name
    from training.evaluation.tournament import play_game

    meta = json.loads(path.with_suffix(".json").read_text())
    spec = envs.get_spec(meta["env_id"])
    game = spec.make_game(**meta["options"])
    assert path.stem == baseline_name(game)  # named by its configuration, found by it
    agent = spec.agent_factory("ppo")(game)
    scores = play_game(
        game, [agent] + [RandomAgent(game)] * (game.num_players - 1), np.random.default_rng(0)
    )
    assert len(scores) == game.num_players
    # SB3's float16 zips: the widest observations (983) near 1.1 MB; the self-play agent's
    # .npz: twelve (256, 256, 256, 256) networks stored as float16, 5.36 MB
    assert path.stat().st_size < (5_600_000 if path.suffix == ".npz" else 1_200_000)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_shipped_agents_command_starts_from_files_that_still_hold_what_it_used(path):
    """A command that starts from a repo file (``--init-model``) names one that exists, and
    never the shipped file it produced: a replaced agent is cited by its kept copy."""
    command = json.loads(path.with_suffix(".json").read_text())["command"]
    repo = BASELINES.parent.parent
    for cited in re.findall(r"--init-model (training/\S+)", command):
        assert (repo / cited).is_file(), f"{path.stem} starts from missing {cited}"
        assert cited != f"training/baselines/{path.name}", f"{path.stem} cites itself"


def test_a_missing_baseline_is_a_clear_error(monkeypatch, tmp_path):
    import training.agents.policy as policy

    monkeypatch.setattr(policy, "BASELINES", tmp_path)  # nothing shipped here
    spec = envs.get_spec("hiddenhand/pico-v0")
    with pytest.raises(
        ValueError, match=r"no shipped baseline for hiddenhand/pico-v0 .*\(pico_3p\)"
    ):
        spec.agent_factory("ppo")(spec.make_game(num_players=3))


def test_imitation_warm_start_follows_the_heuristic(tmp_path):
    import gymnasium
    import numpy as np
    from sb3_contrib import MaskablePPO

    args = training_train.Args(
        env="hiddenhand/pico-v0",
        opponents="heuristic:1",
        reward_mode="win",
        gamma=1.0,
        imitate_steps=3000,
        imitate_epochs=5,
        batch_size=64,
    )
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    size = len(data["actions"])
    assert size >= 3000 and all(len(column) == size for column in data.values())
    assert data["masks"][np.arange(size), data["actions"]].all()  # legal, demonstrated choices
    # Undiscounted win rewards: every decision's return is its game's result, +1, -1 or 0.
    assert set(np.unique(data["returns"])) <= {-1.0, 0.0, 1.0}
    assert len(np.unique(data["returns"])) > 1

    env = gymnasium.make("hiddenhand/Pico-v0")
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    fit = imitation.imitate(model, data, args)
    assert fit["agreement"] > fit["agreement_before"] + 0.2


def test_dagger_rounds_label_the_students_states_with_the_teachers_choices(tmp_path):
    """With a student given, the student plays and the teacher only labels."""
    import numpy as np

    class FirstLegal:
        seen: list = []

        def act(self, observation, action_mask, rng):
            self.seen.append(observation.copy())
            return int(np.flatnonzero(action_mask)[0])

    args = training_train.Args(
        env="hiddenhand/pico-v0",
        opponents="heuristic:1",
        reward_mode="win",
        imitate_steps=500,
        gamma=1.0,
    )
    data = imitation.collect_demonstrations(
        args, demonstrations(args, tmp_path), student=FirstLegal()
    )
    size = len(data["actions"])
    assert data["masks"][np.arange(size), data["actions"]].all()
    first_legal = data["masks"].argmax(axis=1)
    assert (data["actions"] != first_legal).mean() > 0.3  # the labels are the heuristic's
    assert np.array_equal(np.array(FirstLegal.seen), data["observations"])  # asked every time


def test_a_search_teacher_labels_from_the_learners_position(tmp_path, monkeypatch):
    """A teacher that searches (``uses_position``) gets the learner's position: a world
    drawn from it shows the learner exactly its observation."""
    import numpy as np

    from envs.core.spec import GameSpec

    seen: list[bool] = []

    class Probe:
        uses_position = True

        def __init__(self, game) -> None:
            self.game = game

        def act(self, observation, action_mask, rng, position=None):
            world = position.resample(rng)
            seen.append(np.array_equal(self.game.observation(world, position.player), observation))
            return int(np.flatnonzero(action_mask)[-1])

    factory = GameSpec.agent_factory
    monkeypatch.setattr(
        GameSpec,
        "agent_factory",
        lambda spec, name: Probe if name == "probe" else factory(spec, name),
    )
    args = training_train.Args(
        env="hiddenhand/pico-v0", opponents="random:1", imitate_steps=60, teacher="probe"
    )
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    assert len(seen) == len(data["actions"]) >= 60 and all(seen)
    last_legal = data["masks"].shape[1] - 1 - data["masks"][:, ::-1].argmax(axis=1)
    assert (data["actions"] == last_legal).all()
    args.teacher = "pimc"  # the real search, briefly
    args.imitate_steps = 12
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()


def test_a_pimc_teachers_budget_is_the_one_asked_for(tmp_path, monkeypatch):
    """``--teacher-samples`` reaches the PIMC teacher; other teachers and negative budgets
    are refused before any run folder is made."""
    from training.agents import search

    budgets: list[int] = []
    real = search.PIMC.__init__

    def recording(self, game, samples=search.DEFAULT_SAMPLES, *rest, **options):
        budgets.append(samples)
        real(self, game, samples, *rest, **options)

    monkeypatch.setattr(search.PIMC, "__init__", recording)
    args = training_train.Args(
        env="hiddenhand/pico-v0", opponents="random:1", imitate_steps=4, teacher="pimc"
    )
    for asked, used in ((0, search.DEFAULT_SAMPLES), (37, 37)):
        args.teacher_samples = asked
        imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
        assert budgets[-1] == used
    for teacher, samples, message in (
        ("heuristic", 10, "'heuristic' has none.*teachers with one: pimc, pimc_heuristic"),
        ("pimc", -1, "must be ≥ 0"),
    ):
        run_dir = tmp_path / "runs"
        bad = training_train.Args(
            env="hiddenhand/pico-v0",
            imitate_steps=4,
            teacher=teacher,
            teacher_samples=samples,
            run_dir=str(run_dir),
        )
        with pytest.raises(ValueError, match=message):
            training_train.train(bad)
        assert not run_dir.exists()


def test_rounds_after_the_first_and_a_started_model_play_the_policy(
    tiny_pico_model, tmp_path, monkeypatch
):
    """DAgger: the first round follows the teacher's play, each later one the policy's;
    a policy started from a saved model plays from the first round on."""
    players: list = []
    collect = imitation.collect_demonstrations

    def recording(args, new_env, student=None):
        players.append(student)
        return collect(args, new_env, student=student)

    monkeypatch.setattr(imitation, "collect_demonstrations", recording)
    common = ["--env", "hiddenhand/pico-v0", "--imitate-steps", "50", "--imitate-rounds", "2"]
    common += ["--total-timesteps", "0", "--eval-games", "2", "--final-eval-games", "2"]
    common += ["--net-arch", "64,64", "--run-dir", str(tmp_path), "--no-progress-bar"]
    run = training_train.train(training_train.parse_args(common))
    assert players[0] is None and isinstance(players[1], PolicyAgent)
    # The best model records the run's command, so a run started from it chains it.
    best = json.loads((run / "best_model.json").read_text())
    assert best["command"] == json.loads((run / "config.json").read_text())["command"]
    players.clear()
    started = [*common, "--init-model", str(tiny_pico_model), "--run-name", "started"]
    training_train.train(training_train.parse_args(started))
    assert len(players) == 2 and all(isinstance(p, PolicyAgent) for p in players)


@pytest.mark.parametrize("anneal", [False, True])
def test_imitation_learning_rate_is_constant_or_annealed_to_zero(anneal, tmp_path, monkeypatch):
    import gymnasium
    import torch
    from sb3_contrib import MaskablePPO

    rates: list[float] = []

    class RecordingAdam(torch.optim.Adam):
        def step(self, closure=None):
            rates.append(self.param_groups[0]["lr"])
            return super().step(closure)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    args = training_train.Args(
        env="hiddenhand/pico-v0",
        opponents="heuristic:1",
        imitate_steps=300,
        imitate_epochs=3,
        imitate_learning_rate=0.01,
        imitate_anneal=anneal,
        batch_size=64,
    )
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    model = MaskablePPO("MlpPolicy", gymnasium.make("hiddenhand/Pico-v0"), seed=0)
    imitation.imitate(model, data, args)
    steps = 3 * (len(data["actions"]) // 64)
    assert len(rates) == steps and rates[0] == 0.01
    if anneal:
        assert all(b < a for a, b in zip(rates[:-1], rates[1:], strict=True))
        assert rates[-1] == pytest.approx(0.01 / steps)
    else:
        assert set(rates) == {0.01}


def test_an_unknown_teacher_is_a_clear_error(tmp_path):
    args = training_train.Args(env="hiddenhand/pico-v0", imitate_steps=10, teacher="oracle")
    with pytest.raises(ValueError, match="unknown agent 'oracle'.*allowed agents"):
        imitation.collect_demonstrations(args, demonstrations(args, tmp_path))


@pytest.fixture
def ship_baseline():
    """``scripts/tools/ship_baseline.py`` as a module."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "tools" / "ship_baseline.py"
    module_spec = importlib.util.spec_from_file_location("ship_baseline", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def test_shipping_keeps_the_policys_choices_and_shrinks_the_file(
    ship_baseline, random_play, tiny_pico_model, tmp_path
):
    import numpy as np

    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(tiny_pico_model.read_bytes())
    (run / "model.json").write_text(tiny_pico_model.with_suffix(".json").read_text())
    shipped = ship_baseline.ship(run, to=tmp_path / "shipped.zip")
    assert shipped.stat().st_size < (run / "model.zip").stat().st_size / 2

    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    original = load_policy(run / "model.zip", game, spec.aec_id)
    copy = load_policy(shipped, game, spec.aec_id)
    values = actor_and_critic_parameters(copy.model.policy)[1]
    assert values and all(not p.any() for p in values)
    rng = np.random.default_rng(0)
    for state, p in random_play(game, games=5):
        observation, mask = game.observation(state, p), state.legal_mask(p).astype("int8")
        assert copy.act(observation, mask, rng) == original.act(observation, mask, rng)
    assert copy.deterministic
    sampler = ship_baseline.ship(run, to=tmp_path / "sampler.zip", play="sample")
    assert json.loads(sampler.with_suffix(".json").read_text())["play"] == "sample"
    assert not load_policy(sampler, game, spec.aec_id).deterministic
    with pytest.raises(ValueError, match="play 'best' is not allowed; allowed: greedy, sample"):
        ship_baseline.ship(run, to=tmp_path / "other.zip", play="best")
    assert not (tmp_path / "other.zip").exists()
    replacing = "train --init-model training/baselines/pico_2p.zip"
    assert ship_baseline.cite_the_kept_agent(replacing, "pico_2p") == (
        "train --init-model training/evaluation/panel_v2/pico_2p.zip"
    )
    with pytest.raises(FileNotFoundError, match="keep that agent for the panel first: git mv"):
        ship_baseline.cite_the_kept_agent(replacing.replace("2p", "3p"), "pico_3p")


def test_replacing_a_shipped_agent_rewrites_the_commands_that_started_from_it(
    ship_baseline, tiny_pico_model, tmp_path, monkeypatch
):
    """Shipping over an agent (kept for the panel) makes every command that started from it,
    the new agent's and the other shipped agents', cite the kept copy."""
    baselines = tmp_path / "training" / "baselines"
    kept = tmp_path / "training" / "evaluation" / "panel_v2"
    baselines.mkdir(parents=True)
    kept.mkdir(parents=True)
    monkeypatch.setattr(ship_baseline, "ROOT", tmp_path)
    monkeypatch.setattr(ship_baseline, "BASELINES", baselines)
    monkeypatch.setattr(ship_baseline, "KEPT_POLICIES", kept)
    monkeypatch.setattr(ship_baseline, "baseline_path", lambda game: baselines / "pico_2p.zip")
    from_old = "train --init-model training/baselines/pico_2p.zip"
    (baselines / "pico_2p_aside-face_down.json").write_text(json.dumps({"command": from_old}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(tiny_pico_model.read_bytes())
    metadata = json.loads(tiny_pico_model.with_suffix(".json").read_text())
    (run / "model.json").write_text(json.dumps(metadata | {"command": from_old}))
    with pytest.raises(FileNotFoundError, match="keep that agent for the panel first"):
        ship_baseline.ship(run)
    assert not (baselines / "pico_2p.zip").exists()
    (kept / "pico_2p.zip").write_bytes(tiny_pico_model.read_bytes())  # the old agent, kept
    shipped = ship_baseline.ship(run)
    cites_the_copy = "train --init-model training/evaluation/panel_v2/pico_2p.zip"
    assert json.loads(shipped.with_suffix(".json").read_text())["command"] == cites_the_copy
    other = json.loads((baselines / "pico_2p_aside-face_down.json").read_text())
    assert other["command"] == cites_the_copy


def test_init_model_starts_from_the_saved_weights_and_must_fit_the_env(tiny_pico_model, tmp_path):
    import torch

    common = ["--total-timesteps", "0", "--eval-every", "0", "--final-eval-games", "4"]
    common += [
        "--seed",
        "5",
        "--net-arch",
        "64,64",
        "--run-dir",
        str(tmp_path),
        "--no-progress-bar",
    ]
    with pytest.raises(ValueError, match="num_players: model 2, env 3"):
        training_train.train(
            training_train.parse_args(
                ["--env", "hiddenhand/pico-v0", "--num-players", "3", "--init-model"]
                + [str(tiny_pico_model), *common]
            )
        )
    narrower = [*common, "--net-arch", "32,32"]  # the last value of a flag counts
    with pytest.raises(ValueError, match="has hidden layers .*not --net-arch 32,32"):
        training_train.train(
            training_train.parse_args(
                ["--env", "hiddenhand/pico-v0", "--init-model", str(tiny_pico_model), *narrower]
            )
        )
    run = training_train.train(
        training_train.parse_args(
            ["--env", "hiddenhand/pico-v0", "--init-model", str(tiny_pico_model), *common]
        )
    )
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    start = load_policy(tiny_pico_model, game, spec.aec_id).model.policy.state_dict()
    after = load_policy(run / "model.zip", game, spec.aec_id).model.policy.state_dict()
    assert all(torch.equal(start[key], after[key]) for key in start)


@pytest.mark.parametrize("crates", ["visible", "full"])
def test_pick_and_pack_features_read_the_board_as_the_heuristic_does(random_play, crates):
    """The extractor's lookups equal the heuristic's own reading of the same positions."""
    import gymnasium
    import numpy as np
    import torch

    from envs.pick_and_pack.heuristic import Board, crate_sums
    from training.agents.features import PickAndPackFeatures

    game = envs.get_spec("hiddenhand/pick_and_pack-v0").make_game(opponent_crates=crates)
    layout = game.observation_layout
    extractor = PickAndPackFeatures(gymnasium.spaces.Box(0, 1000, (layout.size,)))
    checked = 0
    for state, p in random_play(game, games=6):
        observation = game.observation(state, p)
        v = layout.views(observation)
        features = extractor(torch.as_tensor(observation)[None])[0].numpy()
        assert np.array_equal(features[: layout.size], observation)
        extra = features[layout.size :]
        if not v["grabber"].any():
            continue
        board = Board(v)
        assert extra[:6].tolist() == board.trays[board.row]
        assert extra[48:54].tolist() == board.threat
        move, tile_values = extra[60:66], extra[66:72]
        assert np.allclose(tile_values, [board.tile_value(k) for k in range(6)])
        assert np.allclose(extra[72:], np.concatenate(crate_sums(v)))
        for line in board.lines_open():
            assert move[line] == pytest.approx(board.move_value(line))
        tiles = extra[12:48].reshape(6, 6)
        for line in range(6):
            empty = not board.trays[board.row][line] and not v["face_down"][board.row][line]
            kinds = {board.tile(0, line), board.tile(1, line)} - {-1} if empty else set()
            assert set(np.flatnonzero(tiles[line])) == kinds
        checked += 1
    assert checked > 300


@pytest.fixture
def extension_features(random_play):
    def extension_features(parent: type, child: type, games: int, **options):
        """Random-play positions of Pick & Pack with the grabber on the board: the state, the
        seat, its observation's views and the features ``child`` appends to ``parent``'s
        (checking that it keeps ``parent``'s unchanged)."""
        import gymnasium
        import numpy as np
        import torch

        game = envs.get_spec("hiddenhand/pick_and_pack-v0").make_game(**options)
        layout = game.observation_layout
        space = gymnasium.spaces.Box(0, 1000, (layout.size,))
        base, extractor = parent(space), child(space)
        for state, p in random_play(game, games=games):
            observation = torch.as_tensor(game.observation(state, p))[None]
            v = layout.views(observation[0].numpy())
            if not v["grabber"].any():
                continue
            features = extractor(observation)[0].numpy()
            assert np.array_equal(features[: base.features_dim], base(observation)[0].numpy())
            yield state, p, v, features[base.features_dim :]

    return extension_features


def test_pick_and_pack_reach_features_read_the_grabbers_cell(extension_features):
    """The trays of the grabber's column, and the tile at each end of its line with the
    heuristic's value of it, after the base features unchanged."""
    import numpy as np

    from envs.pick_and_pack.heuristic import Board
    from training.agents.features import PickAndPackFeatures, PickAndPackReachFeatures

    activations = 0
    for _, _, v, added in extension_features(PickAndPackFeatures, PickAndPackReachFeatures, 3):
        reach, ends = added[:36], added[36:]
        board = Board(v)
        expected = np.zeros((6, 6))
        expected[:, board.col] = np.array(board.trays)[:, board.col]
        assert np.array_equal(reach.reshape(6, 6), expected)
        for end in (0, 1):
            kind = board.tile(end, board.col)
            assert np.array_equal(np.flatnonzero(ends[end * 6 : end * 6 + 6]), [kind] * (kind >= 0))
            value = board.tile_value(kind) if kind >= 0 else 0.0
            assert ends[12 + end] == pytest.approx(value)
            activations += kind >= 0
    assert activations > 20


def test_pick_and_pack_decision_features_gather_what_rush_and_mix_up_turn_on(extension_features):
    """The opponent's best tray if the turn ends now, the heuristic's best move, and for
    the own side of an Order Mix-up each crate's gain and apples after the swap (zeros
    elsewhere), after the reach features unchanged."""
    import numpy as np

    from envs.pick_and_pack.heuristic import Board, phase_of
    from envs.pick_and_pack.rules import MIXUP_OWN, OWN_CRATE
    from training.agents.features import (
        NO_VALUE,
        PickAndPackDecisionFeatures,
        PickAndPackReachFeatures,
    )

    swaps = 0
    for state, p, v, added in extension_features(
        PickAndPackReachFeatures, PickAndPackDecisionFeatures, 12, opponent_crates="full"
    ):
        threat_here, best_move, *crates = added
        gain, after = np.array(crates[:4]), np.array(crates[4:])
        board = Board(v)
        assert threat_here == board.threat[board.col]
        lines = board.lines_open()
        best = max(board.move_value(line) for line in lines) if lines else -NO_VALUE
        assert best_move == pytest.approx(best)
        if phase_of(v) != MIXUP_OWN:
            assert not gain.any() and not after.any()
            continue
        mask = state.legal_mask(p)
        chosen = v["crate_top"][1][np.argmax(v["mixup_crate"])]
        for k in range(4):
            if mask[OWN_CRATE + k]:
                top = v["crate_top"][0][k]
                assert gain[k] == chosen - top
                assert after[k] == v["crate_stack"][0][k].sum() - top + chosen > 0
            else:
                assert gain[k] == after[k] == 0
        swaps += 1
    assert swaps >= 10


def test_game_features_train_save_and_load(tmp_path):
    common = ["--total-timesteps", "64", "--n-steps", "32", "--batch-size", "32", "--n-envs", "2"]
    common += ["--eval-every", "0", "--final-eval-games", "2", "--run-dir", str(tmp_path)]
    common += ["--no-progress-bar"]
    with pytest.raises(
        ValueError,
        match="has no game features; games with them: easter_collection, forslag, pick_and_pack",
    ):
        training_train.train(training_train.parse_args(["--features", "game", *common]))
    with pytest.raises(
        ValueError, match="--features='deep' is not allowed; allowed values: 'raw', 'game'"
    ):
        training_train.train(training_train.parse_args(["--features", "deep", *common]))
    run = training_train.train(
        training_train.parse_args(
            ["--env", "hiddenhand/pick_and_pack-v0", "--features", "game", *common]
        )
    )
    spec = envs.get_spec("hiddenhand/pick_and_pack-v0")
    agent = load_policy(run / "model.zip", spec.make_game(), spec.aec_id)
    features = features_class(spec.name)
    assert type(agent.model.policy.features_extractor) is features
    with pytest.raises(ValueError, match=f"reads {features.__name__}, not --features raw"):
        training_train.train(
            training_train.parse_args(
                ["--env", "hiddenhand/pick_and_pack-v0", "--init-model", str(run / "model.zip")]
                + common
            )
        )
    # A warm start on another configuration whose spaces agree: saved for its own options.
    alternate = training_train.train(
        training_train.parse_args(
            ["--env", "hiddenhand/pick_and_pack-v0", "--option", "placement=alternate"]
            + ["--features", "game", "--init-model", str(run / "model.zip"), *common]
            + ["--run-name", "alternate"]
        )
    )
    game = spec.make_game(placement="alternate")
    assert load_policy(alternate / "model.zip", game, spec.aec_id).model.policy is not None
    with pytest.raises(ValueError, match="placement: model 'alternate', env 'simultaneous'"):
        load_policy(alternate / "model.zip", spec.make_game(), spec.aec_id)


@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_forslag_features_are_what_each_play_scores(random_play, num_players):
    """Playing a card changes the player's score as it stands by exactly its feature."""
    import gymnasium
    import numpy as np
    import torch

    from training.agents.features import ForslagFeatures

    game = envs.get_spec("hiddenhand/forslag-v0").make_game(num_players=num_players)
    size = game.observation_layout.size
    extractor = ForslagFeatures(gymnasium.spaces.Box(0, 100, (size,)), {"num_players": num_players})
    checked = 0
    for state, p in random_play(game, games=4):
        observation = torch.as_tensor(game.observation(state, p))[None]
        total = extractor(observation)[0, -25:].numpy()
        for action in np.flatnonzero(state.legal_mask(p)[25:]):
            after = state.clone()
            after.apply({p: int(action) + 25})
            assert after.scores()[p] - state.scores()[p] == total[action]
            checked += 1
    assert checked > 25 * num_players
    with pytest.raises(
        ValueError, match="for {'num_players': 3} reads 269 values, the space has 378"
    ):
        ForslagFeatures(gymnasium.spaces.Box(0, 100, (378,)), {"num_players": 3})


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_easter_collection_features_are_the_heuristics_bid_values(random_play, num_players):
    import gymnasium
    import numpy as np
    import torch

    from envs.easter_collection.heuristic import EasterCollectionHeuristic, decode_table
    from envs.easter_collection.rules import POINTS, SUIT_OF
    from training.agents.features import EasterCollectionFeatures

    game = envs.get_spec("hiddenhand/easter_collection-v0").make_game(num_players=num_players)
    size = game.observation_layout.size
    space = gymnasium.spaces.Box(0, 100, (size,))
    extractor = EasterCollectionFeatures(space, {"num_players": num_players})
    heuristic = EasterCollectionHeuristic(game)
    checked = 0
    for state, p in random_play(game, games=2):
        observation = game.observation(state, p)
        extra = extractor(torch.as_tensor(observation)[None])[0, size:].numpy()
        threats, values = extra[:208].reshape(4, 52), extra[208:416].reshape(4, 52)
        table = decode_table(observation[heuristic.table])
        unseen = np.flatnonzero(observation[heuristic.unseen]).tolist()
        by_suit = [[c for c in unseen if SUIT_OF[c] == s] for s in range(4)]
        context = (table, by_suit, max(len(unseen), 1))
        for card in range(52):
            targets = [k for k, t in enumerate(table) if t >= 0 and SUIT_OF[t] == SUIT_OF[card]]
            expected = [heuristic._bid_value(card, k, context, None, None) for k in targets]
            assert values[[k for k in range(4) if k not in targets], card].max() == 0
            assert np.allclose(values[targets, card], expected, atol=1e-4)
            for k in targets:
                strength = game.bid_strength[table[k]]
                beaten_by = [c for c in by_suit[SUIT_OF[card]] if strength[c] > strength[card]]
                assert threats[k, card] == len(beaten_by)
            best = max(expected) if targets else -0.2 * POINTS[card]
            assert extra[416 + card] == pytest.approx(best, abs=1e-4)
            checked += 1
    assert checked > 2000


def test_teacher_targets_are_a_softmax_of_the_values_over_the_legal_actions():
    import numpy as np

    values = np.array([-np.inf, 1.0, 0.0, -np.inf, 1.0])
    sharp, soft = (imitation.teacher_targets(values, t) for t in (0.1, 10.0))
    for targets in (sharp, soft):
        assert targets.sum() == pytest.approx(1.0)
        assert (targets[[0, 3]] == 0).all() and targets[1] == targets[4] > targets[2]
    assert sharp[2] < 1e-4 < soft[2]
    assert targets[1] / targets[2] == pytest.approx(np.exp(1 / 10.0))


def test_distillation_fits_the_teachers_value_softmax(tmp_path):
    """With --imitate-temperature the data carries the expert's target distributions and
    the fit moves the policy towards them (the divergence from the targets falls)."""
    import gymnasium
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    args = training_train.Args(
        env="hiddenhand/easter_collection-v0",
        teacher="expert",
        opponents="heuristic:1",
        imitate_steps=600,
        imitate_epochs=20,
        imitate_temperature=0.5,
        batch_size=64,
    )
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    targets, masks = data["targets"], data["masks"]
    assert targets.shape == masks.shape and np.allclose(targets.sum(axis=1), 1)
    assert (targets[~masks] == 0).all()
    best = targets[np.arange(len(targets)), data["actions"]]
    assert np.array_equal(best, targets.max(axis=1))  # the label is a best action

    model = MaskablePPO("MlpPolicy", gymnasium.make("hiddenhand/EasterCollection-v0"), seed=0)

    def divergence() -> float:  # KL(targets || policy)
        with torch.no_grad():
            _, log_probs = imitation.masked_log_probs(
                model.policy, torch.as_tensor(data["observations"]), torch.as_tensor(masks)
            )
        log_targets = np.log(np.where(targets > 0, targets, 1))
        return float((targets * (log_targets - log_probs.numpy())).sum(axis=1).mean())

    before = divergence()
    fit = imitation.imitate(model, data, args)
    assert divergence() < 0.5 * before
    assert fit["agreement"] > fit["agreement_before"] + 0.1


def test_a_search_teacher_is_distilled_from_its_leads(tmp_path):
    """``pimc_heuristic`` values the legal actions of the learner's position by their mean
    score lead: the targets are the softmax of those values, the label is a best one."""
    import numpy as np

    args = training_train.Args(
        env="hiddenhand/easter_collection-v0",
        num_players=3,
        teacher="pimc_heuristic",
        opponents="heuristic:1",
        imitate_steps=12,
        imitate_temperature=0.5,
    )
    assert "pimc_heuristic" in training_train.valued_agents(envs.get_spec(args.env))
    data = imitation.collect_demonstrations(args, demonstrations(args, tmp_path))
    targets, masks = data["targets"], data["masks"]
    assert np.allclose(targets.sum(axis=1), 1) and (targets[~masks] == 0).all()
    best = targets[np.arange(len(targets)), data["actions"]]
    assert np.array_equal(best, targets.max(axis=1))
    choices = masks.sum(axis=1) > 1
    assert choices.any() and (targets[choices].max(axis=1) < 1).any()  # leads differ a little


def test_distillation_needs_a_teacher_with_action_values(tmp_path):
    for temperature, message in (
        (0.5, "'heuristic' has none.*agents with them: pimc_heuristic, expert"),
        (-1.0, "must be ≥ 0"),
    ):
        args = training_train.Args(
            env="hiddenhand/easter_collection-v0",
            imitate_steps=10,
            imitate_temperature=temperature,
            run_dir=str(tmp_path),
        )
        with pytest.raises(ValueError, match=message):
            training_train.train(args)


def test_a_run_stopped_before_its_end_ships_its_best_model(
    ship_baseline, tiny_pico_model, tmp_path
):
    """``scripts/tools/ship_baseline.py --model best_model`` ships a run that has no final model
    (stopped early): the command comes from the run's config and the copy says it stopped;
    asking for the final model of such a run is a clear error."""
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(tiny_pico_model, run / "best_model.zip")
    meta = json.loads(tiny_pico_model.with_suffix(".json").read_text()) | {"timesteps": 64}
    (run / "best_model.json").write_text(json.dumps(meta))
    (run / "config.json").write_text(json.dumps({"command": "python -m training.train x"}))
    with pytest.raises(FileNotFoundError, match="has not ended.*best_model"):
        ship_baseline.ship(run, "model", to=tmp_path / "final")
    path = ship_baseline.ship(run, "best_model", half=True, to=tmp_path / "shipped")
    shipped = json.loads(path.with_suffix(".json").read_text())
    assert shipped["command"] == "python -m training.train x" and shipped["timesteps"] == 64
    assert "best periodic evaluation" in shipped["stopped"]
    (run / "snapshots").mkdir()
    shutil.copy(tiny_pico_model, run / "snapshots" / "step_000000032.zip")
    (run / "snapshots" / "step_000000032.json").write_text(json.dumps(meta))
    path = ship_baseline.ship(run, "snapshots/step_000000032", to=tmp_path / "snapshot")
    shipped = json.loads(path.with_suffix(".json").read_text())
    assert shipped["command"] == "python -m training.train x" and shipped["timesteps"] == 32
    assert shipped["stopped"].endswith("its snapshot at 32 steps")
    with pytest.raises(ValueError, match="no snapshots/step_1.zip; allowed: .*step_000000032"):
        ship_baseline.ship(run, "snapshots/step_1", to=tmp_path / "none")
    assert not (tmp_path / "none.zip").exists()


def test_evaluations_play_the_opponents_asked_for_and_refuse_unknown_ones(tmp_path):
    import csv

    common = ["--env", "hiddenhand/pico-v0", "--total-timesteps", "0", "--eval-every", "0"]
    common += ["--final-eval-games", "2", "--net-arch", "16", "--run-dir", str(tmp_path)]
    with pytest.raises(ValueError, match="'nobody'.*heuristic"):
        training_train.train(training_train.parse_args([*common, "--eval-opponents", "nobody"]))
    assert not any(tmp_path.iterdir())  # refused before any run folder is made
    run = training_train.train(
        training_train.parse_args([*common, "--eval-opponents", "heuristic,pimc"])
    )
    with open(run / "evaluations.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["opponent"] for row in rows] == ["heuristic", "pimc"]
    assert all(row["games"] == "2" for row in rows)
