"""The benchmark's report: every finished run (and those of merged CSVs) aggregated into
``results.json``, ``results.csv``, ``results.md``, the learning curves and the plots."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.spec import get_spec
from training.benchmark import CONFIGURATIONS, PANEL_CURVE

#: What results.csv keeps of each run: enough to aggregate it again (``--merge``).
CSV_FIELDS = {
    "algorithm": str,
    "config": str,
    "seed": int,
    "steps": int,
    "panel_score": float,
    "panel_score_ci": float,
    "nash_conv": float,
    "nash_conv_ci": float,
    "nash_conv_deals": int,
    "bound_win_rate": float,
    "bound_win_ci": float,
    "bound_decisions": int,
    "chance": float,
    "train_seconds": float,
    "train_cpu_seconds": float,
    "score_cpu_seconds": float,
    "panel": str,
    "eval_games": int,
    "search_games": int,
    "curve_games": int,
}
#: What every aggregated run must share, where it records it: the budget and the scoring.
SAME_FOR_ALL = (
    "steps",
    "panel",
    "eval_games",
    "search_games",
    "nash_conv_deals",
    "bound_decisions",
)


def read_results_csv(path: Path) -> list[dict]:
    """The runs of an earlier report's ``results.csv``, typed as in their ``score.json``
    (an empty cell is left out)."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    missing = {"algorithm", "config", "seed", "steps", "panel_score"} - set(rows[0] if rows else {})
    if not rows or missing:
        raise ValueError(f"{path}: not a benchmark's results.csv (no runs, or no {missing})")
    try:
        return [
            {k: CSV_FIELDS[k](v) for k, v in row.items() if k in CSV_FIELDS and v != ""}
            for row in rows
        ]
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def chance_of(config: str) -> float:
    """A configuration's chance of winning, one over its players (for runs recorded
    before their score kept it)."""
    env_id, options = CONFIGURATIONS[config]
    return 1 / get_spec(env_id).make_game(**options).num_players


def run_key(run: dict) -> tuple:
    """What tells a report's runs apart: ``(algorithm, config, seed, steps)``."""
    return run["algorithm"], run["config"], run["seed"], run["steps"]


def finished_runs(out: Path, merge: Sequence[Path] = ()) -> list[dict]:
    """Every finished run under ``out``, and those of earlier reports' CSVs (``merge``) that
    have no folder here: a benchmark split across machines, or one whose folders are gone."""
    runs: dict[tuple, dict] = {}
    for path in merge:
        for run in read_results_csv(path):
            runs.setdefault(run_key(run), run)
    for path in out.glob("runs/*/*/seed*/score.json"):
        run = json.loads(path.read_text())
        runs[run_key(run)] = run
    return [runs[key] for key in sorted(runs)]


def curves_csv(results_csv: Path) -> Path:
    """Where a report keeps its runs' learning curves: beside its ``results.csv``, as
    ``results-curves.csv`` (and a merged CSV's curves are read from beside it the same
    way), so that the curves outlive the run folders, as the scores do."""
    return results_csv.with_name(f"{results_csv.stem}-curves.csv")


def run_curves(runs: Sequence[dict], merge: Sequence[Path] = ()) -> dict[tuple, dict]:
    """Each run's learning curves, ``{run_key: {column: (decisions, values)}}`` for the
    columns of ``CURVES``: from its folder where it has one here, else from the curves
    CSV beside the merged CSV it came from (the first that has it, as ``finished_runs``)."""
    merged: dict[tuple, dict] = {}
    for path in merge:
        source = curves_csv(path)
        if not source.is_file():
            continue
        found: dict[tuple, dict] = {}
        with open(source, newline="") as handle:
            for row in csv.DictReader(handle):
                key = run_key(row | {"seed": int(row["seed"]), "steps": int(row["steps"])})
                decisions, values = found.setdefault(key, {}).setdefault(row["curve"], ([], []))
                decisions.append(int(row["decisions"]))
                values.append(float(row["value"]))
        for key, curves in found.items():
            merged.setdefault(key, curves)
    curves_of: dict[tuple, dict] = {}
    for run in runs:
        if "folder" in run:
            curves = {c: learning_curve(Path(run["folder"]), c) for c, _, _ in CURVES}
            curves_of[run_key(run)] = {c: v for c, v in curves.items() if v is not None}
        else:
            curves_of[run_key(run)] = merged.get(run_key(run), {})
    return curves_of


def write_curves(path: Path, curves_of: dict[tuple, dict]) -> None:
    """``run_curves`` as a CSV, a row per point: ``algorithm, config, seed, steps, curve,
    decisions, value``."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["algorithm", "config", "seed", "steps", "curve", "decisions", "value"])
        for key, curves in curves_of.items():
            for column, (decisions, values) in curves.items():
                writer.writerows(
                    [*key, column, d, v] for d, v in zip(decisions, values, strict=True)
                )


def report(out: Path, merge: Sequence[Path] = ()) -> dict:
    """Aggregate every finished run under ``out`` (and the runs of the ``merge`` CSVs with
    no folder there) into results.json/.csv/.md and plots: the configurations where every
    algorithm has all its runs (``summary["incomplete"]`` lists the others; their runs are
    in results.json and .csv all the same, and their learning curves are drawn). Before
    any configuration is complete, only the runs, their curves and that list are written,
    so that a table in progress can be merged later."""
    from training.evaluation.aggregate import (
        iqm,
        mean_t_interval,
        probability_of_improvement,
        stratified_bootstrap_ci,
    )

    every_run = finished_runs(out, merge)
    if not every_run:
        raise ValueError(f"no finished runs under {out / 'runs'}")
    algorithms = sorted({r["algorithm"] for r in every_run})
    counts = Counter((r["algorithm"], r["config"]) for r in every_run)
    present = [c for c in CONFIGURATIONS if any(r["config"] == c for r in every_run)]
    # A configuration is aggregated once every algorithm has there as many runs as it has
    # anywhere (the bootstrap stratifies by configuration); the rest wait, listed.
    most = {a: max(counts[a, c] for c in present) for a in algorithms}
    configs = [c for c in present if all(counts[a, c] == most[a] for a in algorithms)]
    incomplete = {c: {a: counts[a, c] for a in algorithms} for c in present if c not in configs}
    rows = [r for r in every_run if r["config"] in configs]
    for key in SAME_FOR_ALL:
        values = Counter(str(r[key]) for r in rows or every_run if key in r)
        if len(values) > 1:
            raise ValueError(f"the runs differ in {key} ({dict(values)}): aggregate one protocol")
    summary: dict[str, Any] = {
        "configs": configs,
        "incomplete": incomplete,
        "algorithms": {},
        "improvement": {},
    }
    if not configs:  # nothing to aggregate yet: keep the runs and their curves to merge later
        summary["exact_beside_bound"] = exact_beside_bound(every_run)
        curves_of = write_results(out, summary, every_run, merge)
        plot_curves(out, every_run, algorithms, present, curves_of)
        return summary
    matrices = {a: score_matrix(rows, a, configs) for a in algorithms}
    for algorithm, matrix in matrices.items():
        point, low, high = stratified_bootstrap_ci(iqm, matrix)
        per_config = {
            c: stratified_bootstrap_ci(iqm, matrix[:, [k]]) for k, c in enumerate(configs)
        }
        seeds = matrix.shape[0]
        summary["algorithms"][algorithm] = {
            "runs": int(matrix.size),
            "seeds": seeds,
            "iqm": point,
            "ci": interval(low, high, seeds),
            "per_config": {
                c: {"iqm": v[0], "ci": interval(v[1], v[2], seeds)} for c, v in per_config.items()
            },
        }
    for algorithm in algorithms:
        exact = [r["nash_conv"] for r in rows if r["algorithm"] == algorithm and "nash_conv" in r]
        if exact:
            mean, ci = mean_t_interval(exact)
            summary["algorithms"].setdefault(algorithm, {})["nash_conv"] = {
                "mean": mean,
                "ci": ci,  # one run: no interval (JSON null)
                "runs": len(exact),
            }
        bounds = {}  # per configuration, the learned best response's win rate over runs
        for config in configs:
            scored = [
                r
                for r in rows
                if r["algorithm"] == algorithm and r["config"] == config and "bound_win_rate" in r
            ]
            rates = [r["bound_win_rate"] for r in scored]
            if rates:
                best = max(scored, key=lambda r: r["panel_score"])  # the run one would pick
                bounds[config] = {
                    "mean": float(np.mean(rates)),
                    "max": float(np.max(rates)),
                    "best_run": {"seed": best["seed"], "win_rate": best["bound_win_rate"]},
                    "chance": scored[0].get("chance") or chance_of(config),
                    "runs": len(rates),
                }
        if bounds:
            summary["algorithms"].setdefault(algorithm, {})["bound"] = bounds
    summary["exact_beside_bound"] = exact_beside_bound(rows)
    summary["cost"] = cost(rows, configs)
    for x in algorithms:
        for y in algorithms:
            if x != y:
                point, low, high = stratified_bootstrap_ci(
                    probability_of_improvement, matrices[x], matrices[y]
                )
                seeds = min(matrices[x].shape[0], matrices[y].shape[0])
                summary["improvement"][f"{x} > {y}"] = {
                    "p": point,
                    "ci": interval(low, high, seeds),
                }
    curves_of = write_results(out, summary, every_run, merge)
    plot(out, rows, summary, matrices, curves_of)
    return summary


def write_results(
    out: Path, summary: dict, every_run: list[dict], merge: Sequence[Path]
) -> dict[tuple, dict]:
    """results.json, .csv and .md, and the runs' curves beside the CSV; returns the
    curves. ``out`` is made where it is new: a report of merged CSVs alone."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"summary": summary, "runs": every_run}, indent=2))
    with open(out / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CSV_FIELDS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(every_run)
    curves_of = run_curves(every_run, merge)
    write_curves(curves_csv(out / "results.csv"), curves_of)
    (out / "results.md").write_text(markdown_table(summary))
    return curves_of


def exact_beside_bound(rows: list[dict]) -> list[dict]:
    """Each two-player run with both an exact NashConv and a learned bound: the two side by
    side, the bound as NashConv (4 × win rate − 2, its interval × 4), and whether the bound
    exceeds the exact figure beyond both intervals (a lower bound never should)."""
    from training.exploitability import nash_conv_bound

    pairs = []
    for r in sorted(rows, key=lambda r: (r["algorithm"], r["config"], r["seed"])):
        if "nash_conv" not in r or "bound_win_rate" not in r:
            continue
        if (r.get("chance") or chance_of(r["config"])) != 0.5:
            continue  # with more players the win rate bounds no NashConv
        bound, bound_ci = nash_conv_bound(r["bound_win_rate"], r.get("bound_win_ci") or 0.0)
        exact, exact_ci = r["nash_conv"], r.get("nash_conv_ci")  # one deal: no interval
        pairs.append(
            {
                "algorithm": r["algorithm"],
                "config": r["config"],
                "seed": r["seed"],
                "nash_conv": exact,
                "nash_conv_ci": exact_ci,
                "bound": bound,
                "bound_ci": bound_ci,
                "exceeds": bound - bound_ci > exact + (exact_ci or 0.0),
            }
        )
    return pairs


#: What a run's score records of its cost, in CPU seconds (``execute``).
COST_FIELDS = ("train_cpu_seconds", "score_cpu_seconds")


def cost(rows: list[dict], configs: list[str]) -> dict[str, Any]:
    """What the aggregated runs cost in CPU seconds: per configuration the mean training and
    scoring seconds of one run (over the runs that recorded them), and the CPU hours of
    them all."""
    per_config = {}
    for config in configs:
        runs = [r for r in rows if r["config"] == config]
        means = {}
        for key in COST_FIELDS:
            values = [r[key] for r in runs if r.get(key) is not None]
            means[key] = float(np.mean(values)) if values else None
        per_config[config] = {"runs": len(runs), **means}
    seconds = {key: sum(r.get(key) or 0.0 for r in rows) for key in COST_FIELDS}
    return {
        "per_config": per_config,
        "train_cpu_hours": seconds["train_cpu_seconds"] / 3600,
        "score_cpu_hours": seconds["score_cpu_seconds"] / 3600,
    }


def interval(low: float, high: float, seeds: int) -> list[float] | None:
    """A bootstrap interval, or None (JSON null) from one seed: the stratified bootstrap
    resamples the seeds of each configuration, so one seed gives no interval at all."""
    return [low, high] if seeds > 1 else None


def score_matrix(rows: list[dict], algorithm: str, configs: list[str]) -> np.ndarray:
    """Panel scores (seeds, configs) of one algorithm, over configurations where it has the
    same number of runs (``report`` aggregates only those)."""
    columns = [
        [
            r["panel_score"]
            for r in sorted(rows, key=lambda r: r["seed"])
            if r["algorithm"] == algorithm and r["config"] == c
        ]
        for c in configs
    ]
    return np.array(columns).T


NO_INTERVAL = "(one seed: no interval)"


def with_interval(value: float, ci: list[float] | None, digits: int = 3, sign: str = "+") -> str:
    """``value [low, high]``, or the value and that one seed gives no interval."""
    if ci is None:
        return f"{value:{sign}.{digits}f} {NO_INTERVAL}"
    return f"{value:{sign}.{digits}f} [{ci[0]:{sign}.{digits}f}, {ci[1]:{sign}.{digits}f}]"


def markdown_table(summary: dict) -> str:
    configs = summary["configs"]
    lines = (
        [
            "| algorithm | IQM panel score (95% CI) | " + " | ".join(configs) + " |",
            "|---|---|" + "---|" * len(configs),
        ]
        if configs
        else ["No configuration is aggregated yet."]
    )
    for name, s in summary["algorithms"].items():
        cells = [
            with_interval(s["per_config"][c]["iqm"], s["per_config"][c]["ci"]) for c in configs
        ]
        lines.append(f"| {name} | {with_interval(s['iqm'], s['ci'])} | " + " | ".join(cells) + " |")
    exact = {name: s["nash_conv"] for name, s in summary["algorithms"].items() if "nash_conv" in s}
    if exact:
        lines += [
            "",
            "| algorithm | pico-2p NashConv, mean over runs (95% t interval) | runs |",
            "|---|---|---|",
        ]
        for name, v in exact.items():
            spread = "(one run)" if v["ci"] is None else f"± {v['ci']:.3f}"
            lines.append(f"| {name} | {v['mean']:.3f} {spread} | {v['runs']} |")
        from training.exploitability import scale

        lines += ["", f"NashConv {scale()}."]
    bounds = {name: s["bound"] for name, s in summary["algorithms"].items() if "bound" in s}
    if bounds:
        bounded = [c for c in configs if any(c in v for v in bounds.values())]
        chances = {c: next(v[c]["chance"] for v in bounds.values() if c in v) for c in bounded}
        lines += [
            "",
            "| algorithm | " + " | ".join(f"{c} (chance {chances[c]:.2f})" for c in bounded) + " |",
            "|---|" + "---|" * len(bounded),
        ]
        for name, v in bounds.items():
            cells = [
                f"{v[c]['mean']:.3f} ({v[c]['max']:.3f}; best run, seed "
                f"{v[c]['best_run']['seed']}: {v[c]['best_run']['win_rate']:.3f}), "
                f"{v[c]['runs']} run{'s' if v[c]['runs'] != 1 else ''}"
                if c in v
                else ""
                for c in bounded
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "The learned best response's win rate against each run: the mean over runs (the "
            "most exploited run's; the best run's, the one with the highest panel score). A "
            "lower bound on how far each run can be exploited; with two players, NashConv ≥ "
            "4 × win rate − 2.",
        ]
    if pairs := summary.get("exact_beside_bound"):
        lines += [
            "",
            "| algorithm | configuration | seed | exact NashConv (95% CI) | learned bound "
            "(95% CI) | share of the exact found |",
            "|---|---|---|---|---|---|",
        ]
        for v in pairs:
            spread = v["nash_conv_ci"]
            exact = f"{v['nash_conv']:.3f} " + (
                "(one deal)" if spread is None else f"± {spread:.3f}"
            )
            bound = f"{v['bound']:.3f} ± {v['bound_ci']:.3f}" if v["bound"] > 0 else "none found"
            share = f"{max(v['bound'], 0) / v['nash_conv']:.2f}" if v["nash_conv"] > 0 else "-"
            lines.append(
                f"| {v['algorithm']} | {v['config']} | {v['seed']} | {exact} | {bound} | {share} |"
            )
        over = [f"{v['algorithm']} seed {v['seed']}" for v in pairs if v["exceeds"]]
        lines += [
            "",
            "The exact NashConv beside the learned bound (4 × the best response's win rate − "
            "2) for every run that has both. "
            + (
                f"The bound exceeds the exact figure beyond both intervals in {len(over)} of "
                f"{len(pairs)} runs ({', '.join(over)}): a lower bound never should."
                if over
                else f"In none of the {len(pairs)} runs does the bound exceed the exact "
                "figure beyond both intervals."
            ),
        ]
    if "cost" in summary:
        lines += [
            "",
            "| configuration | runs | training CPU s per run (mean) | scoring CPU s per run (mean) |",
            "|---|---|---|---|",
        ]
        for config, v in summary["cost"]["per_config"].items():
            cells = ["not recorded" if v[key] is None else f"{v[key]:,.0f}" for key in COST_FIELDS]
            lines.append(f"| {config} | {v['runs']} | {cells[0]} | {cells[1]} |")
        hours = summary["cost"]["train_cpu_hours"], summary["cost"]["score_cpu_hours"]
        lines += [
            "",
            f"All these runs: {sum(hours):.2f} CPU hours, {hours[0]:.2f} training and "
            f"{hours[1]:.2f} scoring (the runs that recorded them).",
        ]
    if summary["improvement"]:
        lines += ["", "| comparison | P(X > Y) (95% CI) |", "|---|---|"]
        for pair, v in summary["improvement"].items():
            lines.append(f"| {pair} | {with_interval(v['p'], v['ci'], 2, '')} |")
    single = [name for name, s in summary["algorithms"].items() if s.get("seeds") == 1]
    if single:
        lines += [
            "",
            f"One seed per configuration for {', '.join(single)}: no interval. The intervals "
            "come from resampling the seeds, so one seed gives none; run several (--seeds 0-4).",
        ]
    if summary.get("incomplete"):
        waiting = "; ".join(
            f"{c} ({', '.join(f'{a} {n}' for a, n in runs.items())})"
            for c, runs in summary["incomplete"].items()
        )
        lines += ["", f"Not aggregated until every algorithm has all its runs there: {waiting}."]
    return "\n".join(lines) + "\n"


def plot(
    out: Path, rows: list[dict], summary: dict, matrices: dict, curves_of: dict[tuple, dict]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.evaluation.aggregate import performance_profile

    algorithms = list(summary["algorithms"])
    configs = summary["configs"]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(configs) * len(algorithms) ** 0.5), 4))
    width = 0.8 / max(1, len(algorithms))
    for i, name in enumerate(algorithms):
        per = summary["algorithms"][name]["per_config"]
        centre = np.array([per[c]["iqm"] for c in configs])
        bounds = np.array([per[c]["ci"] or [per[c]["iqm"]] * 2 for c in configs])  # one seed: 0
        low, high = centre - bounds[:, 0], bounds[:, 1] - centre
        ax.bar(
            np.arange(len(configs)) + i * width,
            centre,
            width,
            yerr=[low, high],
            capsize=3,
            label=name,
        )
    ax.set_xticks(
        np.arange(len(configs)) + width * (len(algorithms) - 1) / 2,
        configs,
        rotation=20,
        ha="right",
    )
    ax.set(ylabel="IQM panel score (95% CI)", title="Panel score by configuration")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "iqm.png", dpi=100)
    plt.close(fig)

    thresholds = np.linspace(-1, 1, 81)
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in algorithms:
        ax.plot(thresholds, performance_profile(matrices[name], thresholds), label=name)
    ax.set(
        xlabel="panel score τ",
        ylabel="fraction of runs with score > τ",
        title="Performance profiles",
    )
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "profiles.png", dpi=100)
    plt.close(fig)

    plot_curves(out, rows, algorithms, configs, curves_of)


def plot_curves(
    out: Path, rows: list[dict], algorithms: list[str], configs: list[str], curves_of: dict
) -> None:
    """The learning curves of ``CURVES``: of the runs' folders here, or kept beside a
    merged CSV; one picture per curve, a panel per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    for column, name, label in CURVES:
        per_cell = {
            (algorithm, config): [
                curves[column]
                for r in rows
                if r["algorithm"] == algorithm and r["config"] == config
                if column in (curves := curves_of[run_key(r)])
            ]
            for algorithm in algorithms
            for config in configs
        }
        drawn = [c for c in configs if any(per_cell[a, c] for a in algorithms)]
        if drawn or column == CURVES[0][0]:  # the first is drawn even empty
            draw_curves(out / name, per_cell, drawn or configs, algorithms, label)


#: The learning curves a report draws: the column of the runs' ``evaluations.csv``, the
#: picture and its axis.
CURVES = (
    ("win_heuristic", "curves.png", "win rate vs heuristic"),
    ("nash_conv", "nash_conv_curves.png", "NashConv (the learner's deals)"),
    ("panel_score", "panel_curves.png", "panel score (--curve-games)"),
)


def draw_curves(path: Path, curves_of: dict, configs: list[str], algorithms, label: str) -> None:
    """One panel per configuration: each algorithm's mean curve over its runs, ± one
    standard deviation."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(configs), figsize=(4 * len(configs), 3.5), squeeze=False)
    for ax, config in zip(axes[0], configs, strict=True):
        for name in algorithms:
            curves = curves_of[name, config]
            if not curves:
                continue
            length = min(len(c[0]) for c in curves)
            steps = curves[0][0][:length]
            values = np.array([c[1][:length] for c in curves])
            mean = values.mean(axis=0)
            spread = values.std(axis=0)
            ax.plot(steps, mean, label=name)
            ax.fill_between(steps, mean - spread, mean + spread, alpha=0.2)
        ax.set(title=config, xlabel="learner decisions", ylabel=label)
        ax.grid(alpha=0.3)
    if axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def learning_curve(
    folder: Path, column: str = "win_heuristic"
) -> tuple[list[int], list[float]] | None:
    """(decisions, ``column``) from a run's ``evaluations.csv``: the self-play learner's
    (a row per evaluation: ``decisions``, ``win_heuristic``, in two-player Pico
    ``nash_conv``), or an SB3 run's win rate against the heuristic (a row per opponent:
    ``timesteps``, ``opponent``, ``win_rate``); ``panel_score`` from its ``PANEL_CURVE``;
    None where there is none."""
    path = folder / (PANEL_CURVE if column == "panel_score" else "evaluations.csv")
    if not path.is_file():
        return None
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    if rows and "decisions" in rows[0]:
        if column not in rows[0]:
            return None
        return [int(r["decisions"]) for r in rows], [float(r[column]) for r in rows]
    if column != "win_heuristic":
        return None
    rows = [r for r in rows if r.get("opponent") == "heuristic"]
    if not rows:  # no games against the heuristic: no curve
        return None
    return [int(r["timesteps"]) for r in rows], [float(r["win_rate"]) for r in rows]
