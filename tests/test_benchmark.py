"""The benchmark harness: a user's algorithm in a few lines, resumable runs, the report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from stopping import stopped_after_saves

import envs
from training import benchmark
from training.benchmark import algorithms, cli, harness, report
from training.cli import parse_mixture


@pytest.fixture
def cheap_panel(monkeypatch):
    import training.evaluation.panel as panel

    monkeypatch.setattr(
        panel, "SEARCH_BUDGETS", {"pimc": {"samples": 4}, "ismcts": {"iterations": 4}}
    )
    for module in (harness, cli):  # the score's default, and the command line's
        monkeypatch.setattr(module, "NASHCONV_DEALS", 1)


def untrained(env_id: str, options: dict, steps: int, seed: int, folder: Path) -> Path:
    """A user's algorithm: here, MaskablePPO that does not train at all."""
    import gymnasium
    from sb3_contrib import MaskablePPO

    from training.agents.policy import policy_metadata, save_policy

    spec = envs.get_spec(env_id)
    env = gymnasium.make(spec.gym_id, **options)
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu")
    return save_policy(
        model, folder / "model", policy_metadata(env_id, spec.make_game(**options), options)
    )


def test_a_registered_algorithm_runs_is_scored_and_resumes(tmp_path, cheap_panel):
    algorithms.register("untrained")(untrained)
    runs = harness.plan(["untrained"], ["pico-2p"], [0, 1], 10, tmp_path)
    evaluation = harness.Evaluation(games=4, search_games=2)
    results = [harness.execute(run, evaluation) for run in runs]
    assert [r["seed"] for r in results] == [0, 1]
    assert all(-1 <= r["panel_score"] <= 1 for r in results)
    assert set(results[0]["members"]) == {"random", "heuristic", "pimc", "ismcts", "ppo", "nash"}
    score = runs[0].folder / "score.json"
    before = score.stat().st_mtime_ns
    assert harness.execute(runs[0], evaluation) == results[0]  # finished: skipped
    assert score.stat().st_mtime_ns == before
    model = (runs[0].folder / "model.zip").stat().st_mtime_ns
    rescored = harness.execute(runs[0], harness.Evaluation(games=4, search_games=4))
    assert (rescored["eval_games"], rescored["search_games"]) == (4, 4)  # redone, not trained
    assert (runs[0].folder / "model.zip").stat().st_mtime_ns == model
    harness.execute(runs[0], evaluation)
    summary = report.report(tmp_path)
    entry = summary["algorithms"]["untrained"]
    assert entry["runs"] == 2 and entry["ci"][0] <= entry["iqm"] <= entry["ci"][1]
    assert entry["nash_conv"]["runs"] == 2 and 0 <= entry["nash_conv"]["mean"] <= 2
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["runs"]) == 2
    assert "| untrained |" in (tmp_path / "results.md").read_text()
    for picture in ("iqm.png", "profiles.png", "curves.png"):
        assert (tmp_path / picture).stat().st_size > 1000
    del algorithms.ALGORITHMS["untrained"]


@pytest.fixture
def tiny_learner(monkeypatch):
    """The learner algorithms at a test's size: a small network, few games, two cheap
    evaluations a run, two PSRO rounds with a few games per meta-game pair."""
    small = {"num_games": 8, "num_steps": 16, "hidden": "16", "eval_games": 2, "eval_deals": 0}
    monkeypatch.setattr(algorithms, "LEARNER", algorithms.LEARNER | small)
    monkeypatch.setattr(algorithms, "EVALUATIONS", 2)
    psro = algorithms.HYPERPARAMETERS["sp-psro"] | {"rounds": 2, "meta_games": 4}
    monkeypatch.setitem(algorithms.HYPERPARAMETERS, "sp-psro", psro)


LEARNER_ALGORITHMS = ["sp-ppo", "sp-mmd", "sp-qmmd", "sp-neurd", "sp-fsp", "sp-psro"]


@pytest.mark.parametrize("algorithm", LEARNER_ALGORITHMS)
def test_each_learner_algorithm_trains_a_tiny_budget_and_the_harness_scores_it(
    tmp_path, cheap_panel, tiny_learner, algorithm
):
    """A few thousand decisions on two-player Pico through the harness's own path: the
    run leaves a ``model.npz`` that the panel scores, with its NashConv and its times."""
    (run,) = harness.plan([algorithm], ["pico-2p"], [0], 2000, tmp_path)
    result = harness.execute(run, harness.Evaluation(games=4, search_games=1))
    model = Path(json.loads((run.folder / "trained.json").read_text())["model"])
    assert model == run.folder / "model.npz" and model.is_file()
    assert -1 <= result["panel_score"] <= 1 and 0 <= result["nash_conv"] <= 2
    assert result["nash_conv_ci"] is None  # one deal here: no interval
    assert result["train_cpu_seconds"] > 0 and result["score_cpu_seconds"] > 0
    if algorithm == "sp-psro":
        record = json.loads((run.folder / "psro.json").read_text())
        rounds = record["rounds"]
        assert rounds[0]["opponent"] == "random:1"
        mixture = parse_mixture(rounds[1]["opponent"], "--opponent")  # the meta-strategy
        assert set(mixture) <= {"random", str(run.folder / "round0" / "model.npz")}
        assert sum(mixture.values()) == pytest.approx(1, abs=1e-5)
        assert record["population"][1:] == [
            str(run.folder / f"round{k}" / "model.npz") for k in (0, 1)
        ]
        spent = sum(r["decisions"] for r in rounds)  # the budget, but for the last rollout
        assert 2000 <= spent < 2000 + 8 * 16
        assert report.learning_curve(run.folder)[0] == [rounds[0]["decisions"], spent]
        assert model.read_bytes() == (run.folder / "round1" / "model.npz").read_bytes()
    else:
        config = json.loads((run.folder / "config.json").read_text())
        expected = algorithms.LEARNER | algorithms.HYPERPARAMETERS[algorithm]
        assert {key: config[key] for key in expected} == expected
    steps, rates = report.learning_curve(run.folder)  # PSRO's: one point a round
    assert steps[-1] >= 2000 and len(steps) == len(rates) == 2


@pytest.mark.parametrize("algorithm", ["sp-qmmd", "sp-psro"])
def test_a_run_gets_a_panel_score_curve_from_the_models_it_kept(
    tmp_path, cheap_panel, tiny_learner, algorithm
):
    """``--curve-games``: every model a learner run kept (an evaluation's checkpoint, or a
    PSRO round's best response) is scored against the panel at the decisions it was kept,
    its last the final model's; the report draws the curve and keeps it in its curves CSV."""
    (run,) = harness.plan([algorithm], ["pico-2p"], [0], 2000, tmp_path)
    result = harness.execute(run, harness.Evaluation(games=4, search_games=1, curve_games=2))
    assert result["curve_games"] == 2
    kept = harness.curve_models(run.folder)
    steps, values = report.learning_curve(run.folder, "panel_score")
    assert steps == report.learning_curve(run.folder)[0] == [d for d, _ in kept]
    assert len(values) == 2 and all(-1 <= v <= 1 for v in values)
    assert kept[-1][1].read_bytes() == (run.folder / "model.npz").read_bytes()
    report.report(tmp_path)
    assert (tmp_path / "panel_curves.png").stat().st_size > 1000
    curves = (tmp_path / "results-curves.csv").read_text()
    assert f"{algorithm},pico-2p,0,2000,panel_score,{steps[-1]}," in curves


def test_a_run_gets_a_learned_bound_and_the_report_shows_it(
    tmp_path, cheap_panel, tiny_learner, monkeypatch
):
    """``--bound-decisions``: each run's score holds the win rate of a best response
    trained against it by the learner (in the run's folder), the report a column of
    them; a score made without one is redone, the model kept."""
    monkeypatch.setattr(harness, "BOUND_GAMES", 20)
    (run,) = harness.plan(["sp-ppo"], ["pico-2p"], [0], 2000, tmp_path)
    plain = harness.execute(run, harness.Evaluation(games=4, search_games=1))
    assert "bound_win_rate" not in plain and plain["bound_decisions"] == 0
    model = (run.folder / "model.npz").read_bytes()
    evaluation = harness.Evaluation(games=4, search_games=1, bound_decisions=3000)
    result = harness.execute(run, evaluation)
    assert result["bound_decisions"] == 3000 and 0 <= result["bound_win_rate"] <= 1
    assert result["bound_win_ci"] > 0 and result["chance"] == 0.5
    assert (run.folder / "best_response" / "model.npz").is_file()
    assert (run.folder / "model.npz").read_bytes() == model  # scored again, not retrained
    again = harness.execute(run, evaluation)  # finished: kept (a tiny panel's interval is NaN)
    assert json.dumps(again, sort_keys=True) == json.dumps(result, sort_keys=True)
    summary = report.report(tmp_path)
    bound = summary["algorithms"]["sp-ppo"]["bound"]["pico-2p"]  # per configuration
    assert bound["runs"] == 1 and bound["mean"] == bound["max"] == result["bound_win_rate"]
    text = (tmp_path / "results.md").read_text()
    assert "learned best response's win rate" in text and "pico-2p (chance 0.50)" in text


def test_a_learner_run_cut_short_goes_on_from_its_last_evaluation(
    tmp_path, cheap_panel, tiny_learner, monkeypatch
):
    """The benchmark run again after a learner run was stopped one rollout past its first
    evaluation: it goes on from there (``resume.pt``) to the model of the run left alone,
    and its training time counts what the first part had cost."""
    import torch

    from training.selfplay import RESUME_FILE, SelfPlay

    evaluation = harness.Evaluation(games=4, search_games=1)
    whole, stopped = (
        harness.plan(["sp-qmmd"], ["pico-2p"], [0], 2000, tmp_path / name)[0]
        for name in ("whole", "stopped")
    )
    collect = SelfPlay.collect
    rollouts: list[str] = []

    def counting(self, progress=0.0):
        rollouts.append(self.args.out)
        return collect(self, progress)

    monkeypatch.setattr(SelfPlay, "collect", counting)
    harness.execute(whole, evaluation)
    with stopped_after_saves(1):
        harness.execute(stopped, evaluation)
    spent = torch.load(stopped.folder / RESUME_FILE, weights_only=True)["cpu_seconds"]
    before = len(rollouts)
    result = harness.execute(stopped, evaluation)
    whole_rollouts = rollouts.count(str(whole.folder))
    assert 0 < len(rollouts) - before < whole_rollouts - 1  # not trained again from the start
    assert (stopped.folder / "model.npz").read_bytes() == (whole.folder / "model.npz").read_bytes()
    assert result["train_cpu_seconds"] > spent > 0
    assert not (stopped.folder / RESUME_FILE).exists()


def test_one_set_of_hyperparameters_runs_on_every_configuration(tmp_path):
    """Each learner algorithm's one dict is valid for every configuration of the protocol
    (the learner's own checks; PSRO's rounds with a mixture of opponents)."""
    from training import selfplay

    for algorithm in LEARNER_ALGORITHMS:
        settings = dict(algorithms.HYPERPARAMETERS[algorithm])
        if algorithm == "sp-psro":
            settings = {k: v for k, v in settings.items() if k not in ("rounds", "meta_games")}
            settings["opponent"] = "random:0.5,heuristic:0.5"
        for config, (env_id, options) in benchmark.CONFIGURATIONS.items():
            args = algorithms.learner_args(
                env_id, options, 2_000_000, 0, tmp_path / algorithm / config, settings
            )
            selfplay.check(args)


def test_psros_meta_game_prefers_what_wins_with_two_players_and_with_four():
    """The meta-strategy over (random, heuristic): all on the heuristic, which beats random
    in two-player Pico head to head and in four-player Pickup as one seat against a table
    of random players; the payoffs are kept for the next round, antisymmetric with two
    players."""
    for env_id, options in (
        ("hiddenhand/pico-v0", {}),
        ("hiddenhand/pickup-v0", {"num_players": 4}),
    ):
        spec = envs.get_spec(env_id)
        game = spec.make_game(**options)
        agents = [spec.make_agent(name, game) for name in ("random", "heuristic")]
        payoffs: dict = {}
        weights = algorithms.meta_strategy(game, agents, payoffs, 40, seed=3)
        assert np.allclose(weights, [0, 1], atol=1e-6)
        assert set(payoffs) == {(0, 1), (1, 0)} and payoffs[1, 0] > 0 > payoffs[0, 1]
        if game.num_players == 2:
            assert payoffs[0, 1] == -payoffs[1, 0]


def finished(out: Path, algorithm: str, config: str, seed: int, score: float, **extra) -> None:
    """A finished run's folder, as the harness leaves it."""
    folder = out / "runs" / algorithm / config / f"seed{seed}"
    folder.mkdir(parents=True)
    run = {"algorithm": algorithm, "config": config, "seed": seed, "steps": 10}
    run |= {"panel_score": score, "panel_score_ci": 0.05, "folder": str(folder)} | extra
    (folder / "score.json").write_text(json.dumps(run))


def test_the_report_waits_for_a_configuration_until_every_algorithm_has_its_runs(tmp_path):
    """A table in progress: a configuration enters the aggregate only when every algorithm
    has as many runs there as anywhere; until then it is listed, its runs kept. One run's
    NashConv has no interval (null, not NaN)."""
    for seed in (0, 1):
        finished(tmp_path, "a", "pico-2p", seed, 0.1 * seed, **({"nash_conv": 1.5} if seed else {}))
        finished(tmp_path, "b", "pico-2p", seed, -0.1 * seed)
        finished(tmp_path, "a", "pickup-4p", seed, 0.3)
    finished(tmp_path, "b", "pickup-4p", 0, 0.2)
    summary = report.report(tmp_path)
    assert summary["configs"] == ["pico-2p"]
    assert summary["algorithms"]["a"]["nash_conv"] == {"mean": 1.5, "ci": None, "runs": 1}
    assert "| a | 1.500 (one run) | 1 |" in (tmp_path / "results.md").read_text()
    assert (
        "NashConv scale: 0 is an equilibrium, 2 the most exploitable"
        in (tmp_path / "results.md").read_text()
    )
    assert summary["incomplete"] == {"pickup-4p": {"a": 2, "b": 1}}
    assert summary["algorithms"]["a"]["runs"] == 2
    assert len(json.loads((tmp_path / "results.json").read_text())["runs"]) == 7
    assert "pickup-4p (a 2, b 1)" in (tmp_path / "results.md").read_text()
    finished(tmp_path, "b", "pickup-4p", 1, 0.2)
    summary = report.report(tmp_path)
    assert summary["configs"] == ["pico-2p", "pickup-4p"] and not summary["incomplete"]
    assert summary["algorithms"]["b"]["runs"] == 4


def test_a_table_in_progress_is_kept_before_any_configuration_is_complete(tmp_path):
    """No configuration has every algorithm's runs: the report writes the runs (to merge
    later), the exact figure beside the bound and the learning curves, and says why it
    aggregates nothing; merged with the rest, the configuration is aggregated."""
    first, second = tmp_path / "first", tmp_path / "second"
    bound = {"nash_conv": 1.2, "nash_conv_ci": 0.02, "bound_win_rate": 0.6, "chance": 0.5}
    finished(first, "a", "pico-2p", 0, 0.1, **bound)
    finished(first, "b", "pico-2p", 0, -0.1, **bound)
    finished(first, "b", "pico-2p", 1, 0.2, **bound)  # b: two there, a: two in pickup-4p
    finished(first, "a", "pickup-4p", 0, 0.1)
    finished(first, "a", "pickup-4p", 1, 0.1)
    summary = report.report(first)
    assert summary["configs"] == []
    assert summary["incomplete"] == {"pico-2p": {"a": 1, "b": 2}, "pickup-4p": {"a": 2, "b": 0}}
    assert len(summary["exact_beside_bound"]) == 3
    text = (first / "results.md").read_text()
    assert text.startswith("No configuration is aggregated yet.")
    assert "pico-2p (a 1, b 2)" in text and "| b | pico-2p | 1 | 1.200 ± 0.020 |" in text
    assert len(report.read_results_csv(first / "results.csv")) == 5
    assert (first / "curves.png").is_file()
    finished(second, "a", "pico-2p", 1, 0.0)
    merged = report.report(second, [first / "results.csv"])
    assert merged["configs"] == ["pico-2p"] and merged["incomplete"] == {
        "pickup-4p": {"a": 2, "b": 0}
    }


def test_the_report_draws_the_nash_conv_curves_where_the_runs_have_them(tmp_path):
    """Self-play runs in two-player Pico record the NashConv at each evaluation: the report
    draws it against decisions beside the win rate; an SB3 run's CSV has no such curve."""
    for seed in (0, 1):
        for algorithm in ("a", "b"):
            finished(tmp_path, algorithm, "pico-2p", seed, 0.0)
            folder = tmp_path / "runs" / algorithm / "pico-2p" / f"seed{seed}"
            (folder / "evaluations.csv").write_text(
                "decisions,seconds,nash_conv,nash_conv_ci,win_heuristic\n"
                f"1000,1.0,1.{seed}5,0.1,0.4\n2000,2.0,1.{seed}2,0.1,0.5\n"
            )
    assert report.learning_curve(folder, "nash_conv") == ([1000, 2000], [1.15, 1.12])
    assert report.learning_curve(folder) == ([1000, 2000], [0.4, 0.5])
    sb3 = tmp_path / "sb3"
    sb3.mkdir()
    (sb3 / "evaluations.csv").write_text("timesteps,opponent,win_rate\n500,heuristic,0.3\n")
    assert report.learning_curve(sb3) == ([500], [0.3])
    assert report.learning_curve(sb3, "nash_conv") is None
    report.report(tmp_path)
    for picture in ("curves.png", "nash_conv_curves.png"):
        assert (tmp_path / picture).stat().st_size > 1000


def test_the_report_gives_what_the_runs_cost(tmp_path):
    """Per configuration the mean CPU seconds of one run's training and scoring, and the
    CPU hours of every aggregated run; a run that recorded none counts for nothing."""
    for seed, (train, score) in enumerate([(100.0, 50.0), (300.0, 70.0)]):
        for algorithm in ("a", "b"):
            finished(
                tmp_path,
                algorithm,
                "pico-2p",
                seed,
                0.0,
                train_cpu_seconds=train,
                score_cpu_seconds=score,
            )
    finished(tmp_path, "a", "pickup-4p", 0, 0.0, score_cpu_seconds=36.0)
    finished(tmp_path, "b", "pickup-4p", 0, 0.0)
    finished(tmp_path, "a", "pickup-4p", 1, 0.0)
    finished(tmp_path, "b", "pickup-4p", 1, 0.0)
    summary = report.report(tmp_path)
    cost = summary["cost"]
    assert cost["per_config"]["pico-2p"] == {
        "runs": 4,
        "train_cpu_seconds": 200.0,
        "score_cpu_seconds": 60.0,
    }
    assert cost["per_config"]["pickup-4p"] == {
        "runs": 4,
        "train_cpu_seconds": None,
        "score_cpu_seconds": 36.0,
    }
    assert cost["train_cpu_hours"] == 800 / 3600
    assert cost["score_cpu_hours"] == (240 + 36) / 3600
    table = (tmp_path / "results.md").read_text()
    assert "| pico-2p | 4 | 200 | 60 |" in table
    assert "| pickup-4p | 4 | not recorded | 36 |" in table
    assert "All these runs: 0.30 CPU hours, 0.22 training and 0.08 scoring" in table


def test_a_one_seed_report_says_it_has_no_interval(tmp_path):
    """The bootstrap resamples seeds: from one seed its "interval" is the point twice, so the
    report gives none (JSON null) and says why, rather than [+0.017, +0.017]."""
    finished(tmp_path, "a", "pico-2p", 0, 0.017)
    finished(tmp_path, "b", "pico-2p", 0, -0.1)
    summary = report.report(tmp_path)
    assert summary["algorithms"]["a"]["seeds"] == 1
    assert summary["algorithms"]["a"]["ci"] is None
    assert summary["algorithms"]["a"]["per_config"]["pico-2p"]["ci"] is None
    assert summary["improvement"]["a > b"] == {"p": 1.0, "ci": None}
    table = (tmp_path / "results.md").read_text()
    assert "| a | +0.017 (one seed: no interval) | +0.017 (one seed: no interval) |" in table
    assert "| a > b | 1.00 (one seed: no interval) |" in table
    assert "One seed per configuration for a, b: no interval." in table
    assert "[+0.017, +0.017]" not in table and "[1.00, 1.00]" not in table
    assert (
        json.loads((tmp_path / "results.json").read_text())["summary"]["algorithms"]["a"]["ci"]
        is None
    )
    finished(tmp_path, "a", "pico-2p", 1, 0.2)
    finished(tmp_path, "b", "pico-2p", 1, 0.1)
    summary = report.report(tmp_path)  # two seeds: intervals again, and no such line
    assert summary["algorithms"]["a"]["ci"] is not None
    assert "no interval" not in (tmp_path / "results.md").read_text()


def test_a_report_merges_another_reports_csv(tmp_path):
    """A benchmark split across machines: one report's results.csv joins another's run
    folders; a run with a folder here wins over its CSV row; the aggregate is the one the
    runs make together, and the runs must share one protocol."""
    first, second = tmp_path / "first", tmp_path / "second"
    for seed in (0, 1):
        finished(first, "a", "pico-2p", seed, 0.1 * seed, nash_conv=1.5, panel="panel-v2")
        finished(first, "b", "pico-2p", seed, -0.2, panel="panel-v2")
        finished(second, "a", "pickup-4p", seed, 0.3, panel="panel-v2")
        finished(second, "b", "pickup-4p", seed, 0.2 + 0.1 * seed, panel="panel-v2")
    finished(second, "a", "pico-2p", 0, 0.9, panel="panel-v2")  # the same run, redone here
    report.report(first)
    rows = report.read_results_csv(first / "results.csv")
    assert rows[0] == {
        "algorithm": "a", "config": "pico-2p", "seed": 0, "steps": 10, "panel_score": 0.0,
        "panel_score_ci": 0.05, "nash_conv": 1.5, "panel": "panel-v2",
    }  # fmt: skip
    summary = report.report(second, [first / "results.csv"])
    assert summary["configs"] == ["pico-2p", "pickup-4p"] and not summary["incomplete"]
    saved = json.loads((second / "results.json").read_text())["runs"]
    assert len(saved) == 8
    assert [
        r["panel_score"] for r in saved if r["config"] == "pico-2p" and r["algorithm"] == "a"
    ] == [0.9, 0.1]
    assert summary["algorithms"]["b"]["per_config"]["pico-2p"]["iqm"] == pytest.approx(-0.2)
    assert summary["algorithms"]["a"]["runs"] == 4
    assert (second / "curves.png").stat().st_size > 1000  # drawn for the folders here alone
    finished(second, "a", "pickup-4p", 2, 0.3, panel="panel-v1")
    finished(second, "b", "pickup-4p", 2, 0.3, panel="panel-v2")
    finished(second, "a", "pico-2p", 2, 0.3, panel="panel-v2")
    finished(second, "b", "pico-2p", 2, 0.3, panel="panel-v2")
    with pytest.raises(ValueError, match="differ in panel"):
        report.report(second, [first / "results.csv"])


def test_learning_curves_outlive_the_run_folders(tmp_path):
    """A report keeps its runs' curves beside its results.csv; a report merging that CSV
    draws them when the folders are gone, and a run redone here brings its own curve."""
    first, second = tmp_path / "first", tmp_path / "second"
    for seed in (0, 1):
        for algorithm in ("a", "b"):
            finished(first, algorithm, "pico-2p", seed, 0.0)
            (first / "runs" / algorithm / "pico-2p" / f"seed{seed}" / "evaluations.csv").write_text(
                f"decisions,nash_conv,win_heuristic\n1000,1.{seed}5,0.4\n2000,1.{seed}2,0.5\n"
            )
    report.report(first)
    kept = report.curves_csv(first / "results.csv")
    assert kept.name == "results-curves.csv"
    assert len(kept.read_text().splitlines()) == 1 + 4 * 2 * 2  # 4 runs, 2 curves, 2 points
    shutil.rmtree(first / "runs")
    finished(second, "a", "pico-2p", 0, 0.5)  # redone here, with a curve of its own
    (second / "runs" / "a" / "pico-2p" / "seed0" / "evaluations.csv").write_text(
        "decisions,nash_conv,win_heuristic\n3000,0.9,0.7\n"
    )
    report.report(second, [first / "results.csv"])
    curves = report.run_curves(
        report.finished_runs(second, [first / "results.csv"]), [first / "results.csv"]
    )
    assert curves["a", "pico-2p", 0, 10] == {
        "nash_conv": ([3000], [0.9]),
        "win_heuristic": ([3000], [0.7]),
    }
    assert curves["b", "pico-2p", 1, 10]["nash_conv"] == ([1000, 2000], [1.15, 1.12])
    assert (second / "nash_conv_curves.png").stat().st_size > 1000
    again = report.run_curves(
        report.read_results_csv(second / "results.csv"), [second / "results.csv"]
    )
    assert again == curves  # the CSV round trip loses nothing


def test_a_report_of_merged_runs_alone_makes_its_folder(tmp_path):
    """``--report NEW --merge CSV``, as benchmark.md has a user regenerate a kept table:
    the report's folder is made, and the merged runs are reported there."""
    first = tmp_path / "first"
    for seed in (0, 1):
        for algorithm in ("a", "b"):
            finished(first, algorithm, "pico-2p", seed, 0.1 * seed)
    report.report(first)
    new = tmp_path / "new" / "report"
    cli.main(["--report", str(new), "--merge", str(first / "results.csv")])
    assert (new / "results.md").read_text() == (first / "results.md").read_text()
    assert len(report.read_results_csv(new / "results.csv")) == 4


def test_merged_bounds_keep_their_chance(tmp_path):
    """The bound table's header gives each configuration's chance: from the runs' scores,
    which a report's CSV carries on, or for runs recorded without it (an older CSV) from
    the configuration's number of players."""
    first, second = tmp_path / "first", tmp_path / "second"
    for algorithm in ("a", "b"):
        bound = {"bound_win_rate": 0.5, "bound_decisions": 100}
        finished(first, algorithm, "pickup-4p", 0, 0.1, **bound, chance=0.25)
        finished(second, algorithm, "pico-2p", 0, 0.1, **bound)  # recorded without one
    report.report(first)
    assert report.read_results_csv(first / "results.csv")[0]["chance"] == 0.25
    summary = report.report(second, [first / "results.csv"])
    assert summary["algorithms"]["a"]["bound"]["pico-2p"]["chance"] == 0.5
    text = (second / "results.md").read_text()
    assert "pico-2p (chance 0.50)" in text and "pickup-4p (chance 0.25)" in text


def test_the_bound_table_gives_the_best_runs_bound(tmp_path):
    """Per algorithm and configuration: the bound's mean over runs, the most exploited
    run's, and the best run's (the highest panel score: the run a user would pick)."""
    for seed, (score, rate) in enumerate([(0.1, 0.6), (0.3, 0.55), (0.2, 0.7)]):
        for algorithm in ("a", "b"):
            finished(tmp_path, algorithm, "pico-2p", seed, score, bound_win_rate=rate)
    bound = report.report(tmp_path)["algorithms"]["a"]["bound"]["pico-2p"]
    assert bound["best_run"] == {"seed": 1, "win_rate": 0.55}
    assert bound["max"] == 0.7 and bound["mean"] == pytest.approx(0.6166667)
    assert (
        "| a | 0.617 (0.700; best run, seed 1: 0.550), 3 runs |"
        in (tmp_path / "results.md").read_text()
    )


def test_the_report_puts_the_exact_nash_conv_beside_the_learned_bound(tmp_path):
    """Per two-player run with both: the exact figure, the bound as NashConv (4 × win rate
    − 2) and the share found; a bound above the exact figure beyond both intervals is named
    (a lower bound never should be); a run with more players has no such bound."""
    for algorithm, rate in (("a", 0.7), ("b", 0.95)):
        exact = {"nash_conv": 1.0, "nash_conv_ci": 0.05}
        bound = {"bound_win_rate": rate, "bound_win_ci": 0.02, "chance": 0.5}
        finished(tmp_path, algorithm, "pico-2p", 0, 0.1, **exact, **bound)
        finished(tmp_path, algorithm, "pickup-4p", 0, 0.1, bound_win_rate=0.3, chance=0.25)
    pairs = report.report(tmp_path)["exact_beside_bound"]
    assert [(v["algorithm"], v["config"]) for v in pairs] == [("a", "pico-2p"), ("b", "pico-2p")]
    assert pairs[0]["bound"] == pytest.approx(0.8) and pairs[0]["bound_ci"] == pytest.approx(0.08)
    assert [v["exceeds"] for v in pairs] == [False, True]  # 1.8 ± 0.08 over 1.0 ± 0.05
    text = (tmp_path / "results.md").read_text()
    assert "| a | pico-2p | 0 | 1.000 ± 0.050 | 0.800 ± 0.080 | 0.80 |" in text
    assert "in 1 of 2 runs (b seed 0): a lower bound never should" in text


def test_seeds_and_bad_arguments(capsys, tmp_path):
    assert cli.parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert cli.parse_seeds("0,2,7") == [0, 2, 7]
    assert benchmark.BUDGETS["medium"] == 2_000_000 and benchmark.BUDGETS["large-v2"] == 20_000_000
    assert (benchmark.BUDGETS["small"], benchmark.BUDGETS["large"]) == (50_000, 1_000_000)  # v1
    for argv, message in (
        (["--algorithms", "ppo-nothing"], "registered: ppo-random"),
        (["--algorithms", "ppo-random", "--configs", "chess"], "the protocol's: pico-2p"),
        (["--algorithms", "ppo-random", "--steps", "many"], "--steps"),
        (["--algorithms", "ppo-random", "--bound-decisions", "-1"], "--bound-decisions must"),
        (["--algorithms", "ppo-random", "--curve-games", "-1"], "--curve-games must be at least"),
        (["--report", "/nonexistent"], "no finished runs"),
        (["--report", str(tmp_path), "--merge", "/nonexistent.csv"], "No such file"),
        (["--report", str(tmp_path), "--merge", __file__], "not a benchmark's results.csv"),
    ):
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert message in capsys.readouterr().err


def test_the_meta_solver_finds_a_zero_sum_equilibrium():
    from training.solvers.zero_sum import zero_sum_lp  # PSRO's meta-solver

    rock_paper_scissors = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    assert np.allclose(zero_sum_lp(rock_paper_scissors)[1], 1 / 3, atol=1e-6)
    dominated = np.array([[0, 0.4], [-0.4, 0]])  # the first strategy beats the second
    assert np.allclose(zero_sum_lp(dominated)[1], [1, 0], atol=1e-6)


@pytest.mark.slow
def test_the_harness_end_to_end(tmp_path, cheap_panel):
    """One configuration, two algorithms, two seeds, a few hundred steps, from the CLI."""
    cli.main(
        ["--algorithms", "ppo-random,ppo-selfplay", "--configs", "pico-2p", "--seeds", "0-1",
         "--steps", "300", "--eval-games", "4", "--out", str(tmp_path)]
    )  # fmt: skip
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    for algorithm in ("ppo-random", "ppo-selfplay"):
        entry = summary["algorithms"][algorithm]
        assert entry["runs"] == 2
        assert entry["ci"][0] <= entry["iqm"] <= entry["ci"][1]
    assert set(summary["improvement"]) == {"ppo-random > ppo-selfplay", "ppo-selfplay > ppo-random"}
    cli.main(["--report", str(tmp_path)])  # the report alone, from the finished runs


ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "benchmark.md").read_text()
#: The worked example of docs/benchmark.md, "Adding your algorithm": the module and the command.
MY_METHOD = re.findall(r"```python\n# my_method.py\n(.*?)```", DOCS, flags=re.DOTALL)[0]
MY_COMMAND = (
    re.findall(
        r"```sh\n\.venv/bin/python (-m training\.benchmark --import my_method .*?)```",
        DOCS,
        flags=re.DOTALL,
    )[0]
    .replace("\\\n", " ")
    .split()
)


def run_as_a_user(folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """``python -m training.benchmark ...`` in a folder holding ``my_method.py``, as a user
    runs it (the folder on the path because it is the working directory)."""
    (folder / "my_method.py").write_text(MY_METHOD)
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *argv],
        cwd=folder,
        env=os.environ | {"PYTHONPATH": path, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_python_m_reads_the_algorithms_that_import_registers(tmp_path):
    """Under ``python -m`` ``--import my_method`` registers into
    ``training.benchmark.algorithms``: the command must read that registry (on an unknown
    configuration it gets past the algorithms and stops there)."""
    argv = MY_COMMAND[: MY_COMMAND.index("--configs")] + ["--configs", "nowhere"]
    result = run_as_a_user(tmp_path, argv)
    assert result.returncode == 2
    assert "--configs: unknown ['nowhere']" in result.stderr, result.stderr
    assert "--algorithms: unknown" not in result.stderr


@pytest.mark.slow
def test_the_docs_worked_example_runs_as_written(tmp_path):
    """docs/benchmark.md's command, run the way a user runs it, with a tiny budget."""
    argv = MY_COMMAND[: MY_COMMAND.index("--seeds")] + [
        *("--seeds", "0-0", "--steps", "64", "--eval-games", "2", "--eval-search-games", "1"),
        *("--out", "runs/mine"),
    ]
    result = run_as_a_user(tmp_path, argv)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((tmp_path / "runs/mine/results.json").read_text())["summary"]
    assert set(summary["algorithms"]) == {"my-ppo", "ppo-random"}


def test_the_docs_worked_example_registers_and_runs(tmp_path, cheap_panel, monkeypatch):
    (tmp_path / "my_method.py").write_text(MY_METHOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "bench"
    cli.main(
        ["--import", "my_method", "--algorithms", "my-ppo", "--configs", "pico-2p",
         "--seeds", "0", "--steps", "64", "--eval-games", "2", "--out", str(out)]
    )  # fmt: skip
    assert "my-ppo" in json.loads((out / "results.json").read_text())["summary"]["algorithms"]
    del algorithms.ALGORITHMS["my-ppo"]


def test_protocol_v2s_commands_and_algorithms_are_the_harness_own():
    """docs/benchmark.md's protocol v2: every algorithm its table names is registered with
    one dict of hyperparameters, and its commands name registered algorithms, the
    protocol's configurations and known budgets."""
    v2 = DOCS.split("\n## Protocol v2\n")[1].split("\n## ")[0]
    named = set(re.findall(r"^\| `(sp-[a-z]+)` \|", v2, flags=re.MULTILINE))
    assert named == {name for name in algorithms.ALGORITHMS if name.startswith("sp-")}
    assert named == set(algorithms.HYPERPARAMETERS)
    commands = re.findall(
        r"training\.benchmark (--algorithms .*?--out \S+)", v2.replace("\\\n", " ")
    )
    chosen = [set(c.split("--algorithms ")[1].split()[0].split(",")) for c in commands]
    # the table (medium, large-v2) and its first seed, each for every algorithm; the rest
    # finish a row in progress, for some of them
    assert chosen.count(named) == 3 and all(a <= named for a in chosen)
    for command in commands:
        argv = command.split()
        assert argv[argv.index("--steps") + 1] in ("medium", "large-v2")
    loop = re.findall(r"for config in (.*?); do", v2.replace("\\\n", " "), flags=re.DOTALL)[0]
    assert loop.split() == list(benchmark.CONFIGURATIONS)
