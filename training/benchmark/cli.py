"""The benchmark's command line (``python -m training.benchmark``): train and score the
runs, or only report them."""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import training.benchmark
from training.benchmark import BUDGETS, CONFIGURATIONS, NASHCONV_DEALS
from training.benchmark.algorithms import ALGORITHMS
from training.benchmark.harness import Evaluation, execute, plan
from training.benchmark.report import markdown_table, read_results_csv, report
from training.cli import tool_parser
from training.evaluation.panel import EVAL_GAMES, EVAL_SEARCH_GAMES


def parse_seeds(text: str) -> list[int]:
    """``0-4`` or ``0,2,7``."""
    seeds: list[int] = []
    for part in text.split(","):
        first, dash, last = part.partition("-")
        seeds += list(range(int(first), int(last) + 1)) if dash else [int(first)]
    return seeds


def main(argv: Sequence[str] | None = None) -> None:
    parser = tool_parser("training.benchmark", training.benchmark.__doc__)
    parser.add_argument("--algorithms", default="", help="comma-separated registered names")
    parser.add_argument(
        "--configs", default=",".join(CONFIGURATIONS), help="comma-separated configurations"
    )
    parser.add_argument("--seeds", default="0-4", help="training seeds: 0-4 or 0,2,7")
    parser.add_argument(
        "--steps", default="small", help=f"learner decisions per run, or one of {BUDGETS}"
    )
    parser.add_argument("--eval-games", type=int, default=EVAL_GAMES, help="per panel member")
    parser.add_argument(
        "--eval-search-games",
        type=int,
        default=EVAL_SEARCH_GAMES,
        help="per search member of the panel (pimc, ismcts)",
    )
    parser.add_argument(
        "--nash-conv-deals",
        type=int,
        default=NASHCONV_DEALS,
        help="two-player Pico: deals of each run's exact NashConv (protocol v2: 200)",
    )
    parser.add_argument(
        "--bound-decisions",
        type=int,
        default=0,
        help="decisions of each run's learned best response (0: none; protocol v2: 1000000)",
    )
    parser.add_argument(
        "--curve-games",
        type=int,
        default=0,
        help="games per panel member for the panel score of each model a learner run kept, "
        "its panel-score curve (0: none; protocol v2's large-v2: 40)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument("--out", default="runs/benchmark", help="the benchmark's folder")
    parser.add_argument("--report", metavar="DIR", help="only redo the report of DIR")
    parser.add_argument(
        "--merge",
        action="append",
        default=[],
        metavar="CSV",
        help="add the runs of an earlier report's results.csv that have no folder here "
        "(a benchmark split across machines); repeatable",
    )
    parser.add_argument(
        "--import",
        dest="modules",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module that registers more algorithms (repeatable)",
    )
    args = parser.parse_args(argv)
    for module in args.modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            parser.error(f"--import {module}: {error}")
    merge = [Path(path) for path in args.merge]
    for path in merge:
        try:
            read_results_csv(path)
        except (OSError, ValueError) as error:
            parser.error(f"--merge {path}: {error}; give an earlier report's results.csv")
    if args.report:
        try:
            print(markdown_table(report(Path(args.report), merge)))
        except ValueError as error:
            parser.error(str(error))
        return
    algorithms = [a for a in args.algorithms.split(",") if a]
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if not algorithms or unknown:
        parser.error(
            f"--algorithms: unknown {unknown or 'none given'}; registered: {', '.join(ALGORITHMS)}"
        )
    configs = args.configs.split(",")
    wrong = [c for c in configs if c not in CONFIGURATIONS]
    if wrong:
        parser.error(f"--configs: unknown {wrong}; the protocol's: {', '.join(CONFIGURATIONS)}")
    try:
        seeds = parse_seeds(args.seeds)
        steps = BUDGETS[args.steps] if args.steps in BUDGETS else int(args.steps)
    except ValueError as error:
        parser.error(f"--seeds or --steps: {error}")
    if min(steps, args.jobs, args.eval_games, args.eval_search_games, args.nash_conv_deals) < 1:
        parser.error(
            "--steps, --jobs, --eval-games, --eval-search-games and --nash-conv-deals must be "
            "positive"
        )
    for name, value in (
        ("--bound-decisions", args.bound_decisions),
        ("--curve-games", args.curve_games),
    ):
        if value < 0:
            parser.error(f"{name} must be at least 0, got {value}")
    evaluation = Evaluation(
        args.eval_games,
        args.eval_search_games,
        args.nash_conv_deals,
        args.bound_decisions,
        args.curve_games,
    )
    out = Path(args.out)
    runs = plan(algorithms, configs, seeds, steps, out)
    started = time.time()
    print(f"{len(runs)} runs ({steps} decisions each) in {out}, {args.jobs} at a time")
    if args.jobs == 1:
        results = [execute(run, evaluation, args.modules) for run in runs]
    else:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            results = list(
                pool.map(execute, runs, [evaluation] * len(runs), [args.modules] * len(runs))
            )
    for r in results:
        print(
            f"{r['algorithm']} {r['config']} seed {r['seed']}: panel score "
            f"{r['panel_score']:+.3f} ± {r['panel_score_ci']:.3f}"
        )
    print(f"wall time: {time.time() - started:.0f} s")
    print(markdown_table(report(out, merge)))
