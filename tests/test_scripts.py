"""The command-line scripts (``scripts/README.md``: tools, the scripts behind the docs'
tables, one-off measurements) run end to end at small sizes; the longer runs are slow
tests (``-m slow``), the refusals of bad arguments are not. Every script path the docs
and the code name exists, and ``scripts/README.md`` lists every script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import envs

ROOT = Path(__file__).resolve().parent.parent


def run_script(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_every_script_named_exists_and_is_listed():
    """A ``scripts/....py`` path in the README, the docs, the Makefile or the code is a
    script, and ``scripts/README.md`` names every script in its folder's section."""
    texts = [ROOT / "README.md", ROOT / "Makefile", *(ROOT / "docs").rglob("*.md")]
    for folder in ("envs", "training", "scripts", "tests"):
        texts += (ROOT / folder).rglob("*.py")
    named = {
        (path.relative_to(ROOT), name)
        for path in texts
        for name in re.findall(r"\bscripts/[\w/]+\.py\b", path.read_text())
    }
    assert len(named) > 20
    missing = sorted(f"{path}: {name}" for path, name in named if not (ROOT / name).is_file())
    assert not missing, missing
    listing = (ROOT / "scripts" / "README.md").read_text()
    sections = dict(re.findall(r"^## (\w+)/.*?\n(.*?)(?=^## |\Z)", listing, re.M | re.S))
    assert set(sections) == {"tools", "tables", "measure"}
    for script in (ROOT / "scripts").rglob("*.py"):
        folder = script.parent.name
        if folder == "scripts":
            assert f"`{script.name}`" in listing.split("\n## ")[0], script.name
        else:
            assert f"| `{script.name}` |" in sections[folder], f"{folder}/{script.name}"


def test_soak_plays_every_id_without_errors():
    out = run_script("scripts/tools/soak.py", "--games", "40")
    rows = [line for line in out.splitlines() if line.startswith("| hiddenhand/")]
    assert len(rows) == len(envs.ids())
    for row in rows:
        assert row.split("|")[3].strip() == "0", row  # the errors column


def test_heuristic_vs_random_script_reports_every_configuration():
    out = run_script(
        "scripts/tables/heuristic_vs_random.py", "--env", "hiddenhand/pico-v0", "--games", "20"
    )
    rows = [line for line in out.splitlines() if line.startswith("| hiddenhand/pico-v0")]
    assert len(rows) == 2 * len(envs.get_spec("hiddenhand/pico-v0").configurations)


@pytest.mark.slow  # a one-off measurement script
def test_policy_benchmark_times_every_baseline_and_finds_the_same_choices():
    from training.agents.policy import BASELINES

    out = run_script("scripts/measure/bench_policy.py", "--decisions", "40", "--repeats", "1")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "µs" not in line]
    assert sorted(row.split("|")[1].strip() for row in rows) == sorted(
        p.stem for p in BASELINES.glob("*.zip")
    )
    assert all(row.split("|")[5].strip() == "True" for row in rows)


@pytest.mark.slow  # a one-off measurement script
def test_decision_losses_are_zero_for_the_teacher_itself_and_not_for_random():
    def rows(agent: str) -> dict[str, list[str]]:
        out = run_script(
            "scripts/tools/decision_losses.py",
            *("--env", "hiddenhand/pick_and_pack-v0", "--teacher", "tactician"),
            *("--agent", agent, "--games", "4"),
        )
        table = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
        return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in table[1:]}

    itself = rows("tactician")
    assert "move the grabber" in itself and "use a Rush Order?" in itself
    assert all(r[1] == "1.000" and r[2] == "0" and r[3] == "0.00" for r in itself.values())
    random = rows("random")
    assert float(random["move the grabber"][3]) > 0.5
    assert int(random["place tiles"][2]) > 0  # placements off the teacher's plan


@pytest.mark.slow  # a one-off measurement script
def test_decision_losses_judges_with_a_search_teacher_and_a_search_agent():
    """``pimc_heuristic`` values from the position that ``decide`` hands the watched seat,
    and a search agent is still handed its own."""
    out = run_script(
        "scripts/tools/decision_losses.py",
        *("--env", "hiddenhand/easter_collection-v0", "--teacher", "pimc_heuristic"),
        *("--agent", "pimc", "--games", "2"),
    )
    table = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    decisions = [int(cells[1]) for cells in table[1:]]
    assert decisions and sum(decisions) > 0, out


def test_decision_losses_needs_a_teacher_with_action_values():
    result = subprocess.run(
        [sys.executable, "scripts/tools/decision_losses.py", "--env", "hiddenhand/pick_and_pack-v0"]
        + ["--agent", "random", "--teacher", "heuristic"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 2
    assert "'heuristic' has no action_values" in result.stderr
    assert "agents with them: pimc_heuristic, expert, tactician" in result.stderr


@pytest.mark.slow  # a one-off measurement script
def test_speed_benchmark_counts_every_agents_decisions():
    """``scripts/tables/env_speed.py``'s cases for a game's default configuration: every
    interface and the batched rows, each counting every seat's decisions (in the
    Gymnasium view the opponent's too, so about twice the learner's in Pico)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "speed", ROOT / "scripts" / "tables" / "env_speed.py"
    )
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    measured = speed.cases(["hiddenhand/pico-v0"], default_only=True)
    interfaces = [interface for _, interface, _ in measured]
    assert interfaces[:4] == ["raw_env", "env()", "parallel_env", "gymnasium"]
    assert {"batched B=1,024", "make_vec B=1,024"} <= set(interfaces)
    assert len({name for name, _, _ in measured}) == 1  # the default configuration only
    runs = {interface: run for _, interface, run in measured}
    steps, games, elapsed = runs["gymnasium"](0.2)
    assert games > 0 and elapsed >= 0.2
    assert 18 < steps / games < 28  # both seats' decisions, about 23 a game (11.5 each)
    steps, games, _ = runs["batched B=64"](0.05)
    assert steps % (64 * 2) == 0 and steps > 0  # every Pico seat chooses at every step
    row = speed.summarise([(100, 4, 2.0), (300, 6, 2.0), (200, 5, 2.0)])
    assert row["steps_per_s"] == 100 and row["steps_min"] == 50 and row["games_per_s"] == 2.5


@pytest.mark.slow  # a one-off measurement script
def test_training_speed_compares_the_ways():
    out = run_script(
        *("scripts/tables/training_speed.py", "--ids", "hiddenhand/pico-v0", "--steps", "2048"),
        *("--games", "10", "--batch-sizes", "256,1024"),
    )
    rows = [line.split("|")[2:5] for line in out.splitlines() if line.startswith("| hiddenhand")]
    ways = [way.strip() for way, _, _ in rows]
    assert ways == [
        "gym, 4 envs, minibatch 256",
        "batched, 128 envs, minibatch 256",
        "batched, 128 envs, minibatch 1024",
    ]
    assert rows[0][2].strip() == "1.00×" and all(float(r[1].replace(",", "")) > 0 for r in rows)


def test_shipped_panel_scores_a_shipped_agent_as_the_benchmark_does():
    out = run_script(
        "scripts/tables/shipped_panel.py",
        "--only",
        "pico_2p",
        "--games",
        "2",
        "--search-games",
        "1",
    )
    assert "2 seat-rotated games per member, 1 per search member, seed 1000003" in out
    rows = [line for line in out.splitlines() if line.startswith("| pico_2p |")]
    assert len(rows) == 1 and "(1/2)" in rows[0], out
    scores = json.loads(out.splitlines()[-1])["pico_2p"]
    assert set(scores["members"]) == {"random", "heuristic", "pimc", "ismcts", "nash"}
    assert scores["members"]["pimc"]["games"] == 1 and scores["members"]["random"]["games"] == 2
    out = run_script(
        *("scripts/tables/shipped_panel.py", "--only", "pico_2p", "--members", "pimc"),
        *("--search-games", "3"),
    )
    assert "| configuration | score over pimc (95% CI) |" in out
    scores = json.loads(out.splitlines()[-1])["pico_2p"]
    assert set(scores["members"]) == {"pimc"} and scores["members"]["pimc"]["games"] == 3
    assert scores["panel_score"] == scores["members"]["pimc"]["above_chance"]


@pytest.mark.slow  # a one-off measurement script
def test_search_budget_plays_each_budget_against_the_panels_pimc():
    """A row per budget, each the series ``head_to_head`` plays with that search."""
    from training.agents.search import ISMCTS, PIMC
    from training.evaluation.tournament import head_to_head

    out = run_script(
        "scripts/measure/search_budget.py",
        *("--env", "hiddenhand/pico-v0", "--agent", "ismcts", "--budgets", "3", "9"),
        *("--games", "4", "--seed", "5"),
    )
    rows = [line.split("|")[1:3] for line in out.splitlines() if line.startswith("| ")]
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    for (budget, win), iterations in zip(rows[1:], (3, 9), strict=True):
        expected = head_to_head(game, ISMCTS(game, iterations=iterations), PIMC(game), 4, 5)
        assert int(budget) == iterations
        assert win.strip() == f"{expected['win_rate']:.3f} ± {expected['win_ci']:.3f}"


def test_benchmark_row_tables_a_reports_runs_and_averages_their_curves(tmp_path):
    """Two runs of one algorithm: each its row (the bound is 4 × win rate − 2), their cost
    summed, and each curve's mean over the runs at each evaluation; another configuration's
    runs are left out, and a configuration without runs is refused."""
    fields = "algorithm,config,seed,steps,panel_score,panel_score_ci,nash_conv,nash_conv_ci,"
    fields += "bound_win_rate,bound_win_ci,train_cpu_seconds,score_cpu_seconds"
    (tmp_path / "results.csv").write_text(
        f"{fields}\n"
        "sp-ppo,pico-2p,0,100,0.25,0.08,1.5,0.05,0.75,0.02,1800,900\n"
        "sp-ppo,pico-2p,1,100,-0.125,0.08,1.25,0.05,0.625,0.02,1800,900\n"
        "sp-ppo,pickup-4p,0,100,0.5,0.08,,,0.9,0.02,3600,3600\n"
    )
    (tmp_path / "results-curves.csv").write_text(
        "algorithm,config,seed,steps,curve,decisions,value\n"
        "sp-ppo,pico-2p,0,100,nash_conv,1000000,1.8\n"
        "sp-ppo,pico-2p,0,100,nash_conv,2000000,1.5\n"
        "sp-ppo,pico-2p,1,100,nash_conv,1000000,1.2\n"
        "sp-ppo,pico-2p,1,100,nash_conv,2000000,1.3\n"
        "sp-ppo,pickup-4p,0,100,win_heuristic,1000000,0.9\n"
    )
    out = run_script("scripts/tables/benchmark_row.py", str(tmp_path / "results.csv"))
    assert "| `sp-ppo` | 0 | +0.250 ± 0.080 | 1.500 ± 0.050 | 1.000 ± 0.080 | 1,800 | 900 |" in out
    assert "| `sp-ppo` | 1 | −0.125 ± 0.080 | 1.250 ± 0.050 | 0.500 ± 0.080 |" in out
    assert "2 runs: 1.50 CPU hours, 1.00 training and 0.50 scoring" in out
    assert "- sp-ppo: 1M 1.50 (2) 2M 1.40 (2)" in out
    assert "seed 0: lowest 1.50 at 2M, last 1.50" in out
    assert "seed 1: lowest 1.20 at 1M, last 1.30" in out
    assert "win_heuristic" not in out
    result = subprocess.run(
        [sys.executable, "scripts/tables/benchmark_row.py", str(tmp_path / "results.csv")]
        + ["--config", "forslag-4p"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "no runs of 'forslag-4p'" in result.stderr


def test_the_scripts_refuse_bad_arguments():
    for args, message in (
        (("scripts/tables/shipped_panel.py", "--only", "pico_9p"), "unknown pico_9p; known: "),
        (("scripts/tables/shipped_panel.py", "--games", "0"), "must be at least 1"),
        (("scripts/tables/shipped_panel.py", "--members", "random"), "--members must include pimc"),
        (("scripts/tables/shipped_panel.py", "--members", "ppo"), "invalid choice: 'ppo'"),
        (("scripts/measure/search_time.py", "--rollout", "greedy"), "invalid choice: 'greedy'"),
        (
            (
                "scripts/measure/search_budget.py",
                "--env",
                "hiddenhand/pico-v0",
                "--budgets",
                "5",
                "0",
            ),
            "must all be at least 1",
        ),
        (("scripts/measure/search_budget.py", "--agent", "mcts"), "invalid choice: 'mcts'"),
        (("scripts/tables/training_speed.py", "--batch-sizes", "300"), "must divide 1024"),
    ):
        result = subprocess.run(
            [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 2 and message in result.stderr, result.stderr


@pytest.mark.slow
def test_the_forslag_3p_simultaneous_row_is_what_its_seed_prints():
    """The results table's Förslag 3-player simultaneous row is quoted on a seed the table
    had not used (39; the table's seed 0 gave 0.363): each figure is what that seed prints."""
    out = run_script(
        "scripts/tables/baseline_table.py",
        *("--env", "hiddenhand/forslag-v0", "--num-players", "3"),
        *("--option", "board_play=simultaneous", "--agent", "ppo", "--games", "2000"),
        *("--seed", "39"),
    )
    printed = {  # opponent: (win rate, mean score)
        cells[1]: cells[2:4]
        for line in out.splitlines()
        if line.startswith("| hiddenhand/")
        for cells in [line.split(" | ")]
    }
    row = next(
        line.split(" | ")
        for line in (ROOT / "docs" / "results.md").read_text().splitlines()
        if line.startswith("| Förslag, 3 players, `board_play=simultaneous` |")
    )
    assert row[1] == f"{printed['heuristic'][0]} (1/3; seed 39)"
    assert row[2] == printed["heuristic"][1]
    assert row[3] == printed["random"][0]
