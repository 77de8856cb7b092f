"""The command-line scripts run end to end (at small sizes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import envs

ROOT = Path(__file__).resolve().parent.parent


def run_script(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_soak_plays_every_id_without_errors():
    out = run_script("scripts/soak.py", "--games", "40")
    rows = [line for line in out.splitlines() if line.startswith("| hiddenhand/")]
    assert len(rows) == len(envs.ids())
    for row in rows:
        assert row.split("|")[3].strip() == "0", row  # the errors column


def test_heuristic_vs_random_script_reports_every_configuration():
    out = run_script(
        "scripts/heuristic_vs_random.py", "--env", "hiddenhand/pico-v0", "--games", "20"
    )
    rows = [line for line in out.splitlines() if line.startswith("| hiddenhand/pico-v0")]
    assert len(rows) == 2 * len(envs.get_spec("hiddenhand/pico-v0").configurations)


def test_policy_benchmark_times_every_baseline_and_finds_the_same_choices():
    from training.agents.policy import BASELINES

    out = run_script("scripts/bench_policy.py", "--decisions", "40", "--repeats", "1")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "µs" not in line]
    assert sorted(row.split("|")[1].strip() for row in rows) == sorted(
        p.stem for p in BASELINES.glob("*.zip")
    )
    assert all(row.split("|")[5].strip() == "True" for row in rows)


def test_decision_losses_are_zero_for_the_teacher_itself_and_not_for_random():
    def rows(agent: str) -> dict[str, list[str]]:
        out = run_script(
            "scripts/decision_losses.py",
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


def test_decision_losses_needs_a_teacher_with_action_values():
    result = subprocess.run(
        [sys.executable, "scripts/decision_losses.py", "--env", "hiddenhand/pick_and_pack-v0"]
        + ["--agent", "random", "--teacher", "heuristic"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 2
    assert "'heuristic' has no action_values" in result.stderr
    assert "agents with them: expert, tactician" in result.stderr
