"""One configuration's row of a benchmark report, run by run, and its learning curves
averaged over seeds: the per-run table and the curve figures of docs/benchmark.md.

    python scripts/tables/benchmark_row.py docs/benchmark/v2-large/results.csv
    python scripts/tables/benchmark_row.py docs/benchmark/v2-medium/results.csv --config pickup-4p

From a report's ``results.csv`` (``python -m training.benchmark --report``), for the runs
of ``--config``:
- a Markdown row per run: the panel score, the exact NashConv (two-player Pico), the
  learned bound (4 × the best response's win rate − 2, two players) with their 95%
  intervals, training and scoring CPU seconds; then the runs' total cost;
- from the ``results-curves.csv`` beside it: each curve's mean over an algorithm's runs
  at each evaluation (in millions of decisions, to the nearest tenth of the budget, with
  the number of runs there), and for NashConv each run's lowest and last point.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from training.benchmark.algorithms import ALGORITHMS
from training.benchmark.report import curves_csv, read_results_csv, run_curves, run_key
from training.exploitability import nash_conv_bound


def signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")


def with_ci(figure: tuple[float, float | None] | None) -> str:
    """``value ± interval``; a dash where the run has no such figure."""
    if figure is None:
        return "—"
    value, ci = figure
    return f"{value:.3f} ± {ci or 0.0:.3f}"


def run_table(runs: list[dict], order: list[str]) -> list[str]:
    lines = [
        "| algorithm | seed | panel score | exact NashConv | learned bound | training CPU s "
        "| scoring CPU s |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in sorted(runs, key=lambda r: (order.index(r["algorithm"]), r["seed"])):
        exact = (run["nash_conv"], run.get("nash_conv_ci")) if "nash_conv" in run else None
        bound = None
        if "bound_win_rate" in run:
            bound = nash_conv_bound(run["bound_win_rate"], run.get("bound_win_ci", 0.0))
        lines.append(
            f"| `{run['algorithm']}` | {run['seed']} "
            f"| {signed(run['panel_score'])} ± {run['panel_score_ci']:.3f} "
            f"| {with_ci(exact)} | {with_ci(bound)} "
            f"| {run['train_cpu_seconds']:,.0f} | {run['score_cpu_seconds']:,.0f} |"
        )
    training = sum(r["train_cpu_seconds"] for r in runs) / 3600
    scoring = sum(r["score_cpu_seconds"] for r in runs) / 3600
    lines.append(
        f"\n{len(runs)} runs: {training + scoring:.2f} CPU hours, "
        f"{training:.2f} training and {scoring:.2f} scoring"
    )
    return lines


def mean_curves(runs: list[dict], results: Path, order: list[str]) -> list[str]:
    """The curves the report kept beside ``results`` (``run_curves``), averaged over each
    algorithm's runs at each evaluation (every tenth of the budget); for NashConv, each
    run's lowest and last point too."""
    points: dict[tuple[str, str], dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_run: dict[tuple[str, str], dict[int, tuple[list[int], list[float]]]] = defaultdict(dict)
    curves_of = run_curves(runs, [results])
    for run in runs:
        tenth = run["steps"] / 10
        for curve, (decisions, values) in curves_of[run_key(run)].items():
            per_run[curve, run["algorithm"]][run["seed"]] = (decisions, values)
            for at, value in zip(decisions, values, strict=True):
                points[curve, run["algorithm"]][round(at / tenth) * tenth / 1e6].append(value)
    lines = []
    for curve in sorted({curve for curve, _ in points}):
        lines.append(f"\n{curve}: the mean over runs at each evaluation (M decisions: mean, runs)")
        for algorithm in [a for a in order if (curve, a) in points]:
            means = " ".join(
                f"{m:g}M {sum(v) / len(v):.2f} ({len(v)})"
                for m, v in sorted(points[curve, algorithm].items())
            )
            lines.append(f"- {algorithm}: {means}")
            if curve == "nash_conv":
                for seed, (decisions, values) in sorted(per_run[curve, algorithm].items()):
                    low = min(range(len(values)), key=values.__getitem__)
                    last = max(range(len(values)), key=decisions.__getitem__)
                    lines.append(
                        f"  - seed {seed}: lowest {values[low]:.2f} at "
                        f"{decisions[low] / 1e6:.0f}M, last {values[last]:.2f}"
                    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a report's results.csv")
    parser.add_argument("--config", default="pico-2p", help="the configuration (pico-2p)")
    args = parser.parse_args()
    if not args.results.is_file():
        parser.error(f"{args.results} is not a file: give a report's results.csv")
    try:
        every_run = read_results_csv(args.results)
    except ValueError as error:
        parser.error(str(error))
    runs = [r for r in every_run if r["config"] == args.config]
    if not runs:
        configs = sorted({r["config"] for r in every_run})
        parser.error(f"no runs of {args.config!r} in {args.results}; it has {configs}")
    present = {r["algorithm"] for r in runs}  # the registry's order, then any other
    order = [a for a in ALGORITHMS if a in present] + sorted(present - set(ALGORITHMS))
    print("\n".join(run_table(runs, order)))
    if curves_csv(args.results).is_file():
        print("\n".join(mean_curves(runs, args.results, order)))


if __name__ == "__main__":
    main()
