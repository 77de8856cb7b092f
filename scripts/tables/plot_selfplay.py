"""The NashConv curves of self-play runs on two-player Pico, in one figure and one table:
docs/selfplay.md's table of runs and its figure (docs/selfplay/pico_curves.png).

    python scripts/tables/plot_selfplay.py docs/selfplay/pico/[0-9]* --out docs/selfplay/pico_curves.png

Each argument is a run folder of ``training.selfplay`` (or a copy holding its
``config.json`` and ``evaluations.csv``). Prints a Markdown table (the run, the
arguments that differ from the defaults, NashConv at each evaluation) and draws every
curve with its 95% interval.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import json
from pathlib import Path

from training.exploitability import RANDOM_NASH_CONV
from training.selfplay import Args

#: Arguments that say where and how a run is logged, not what it learns.
NOT_SETTINGS = {
    "out",
    "overwrite",
    "progress_bar",
    "eval_every",
    "eval_games",
    "eval_pimc_games",
    "eval_deals",
    "device",
    "threads",
    "keep_checkpoints",
    "command",
}


def settings(config: dict) -> str:
    """The arguments of a run that differ from ``Args``' defaults."""
    defaults = dataclasses.asdict(Args())
    changed = [
        f"--{key.replace('_', '-')} {value}"
        for key, value in config.items()
        if key not in NOT_SETTINGS and key in defaults and value != defaults[key]
    ]
    return " ".join(changed) or "(defaults)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("pico_curves.png"))
    args = parser.parse_args()
    for run in args.runs:
        if not (run / "config.json").is_file() or not (run / "evaluations.csv").is_file():
            parser.error(
                f"{run} is not a run folder of training.selfplay (config.json, evaluations.csv)"
            )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(11, 6))
    # 20 colours, solid, then dashed, then dotted, then again: every run its own line up to 60
    colours = plt.cm.tab20.colors
    styles = itertools.cycle([(c, style) for style in ("-", "--", ":") for c in colours])
    print("| run | settings | NashConv (20 deals) at each evaluation |")
    print("|---|---|---|")
    for (colour, style), run in zip(styles, args.runs, strict=False):
        config = json.loads((run / "config.json").read_text())
        with (run / "evaluations.csv").open() as file:
            rows = [row for row in csv.DictReader(file) if row.get("nash_conv")]
        x = [int(row["decisions"]) / 1e6 for row in rows]
        y = [float(row["nash_conv"]) for row in rows]
        ci = [float(row["nash_conv_ci"]) for row in rows]
        axis.errorbar(
            x,
            y,
            yerr=ci,
            marker="o",
            markersize=3,
            capsize=2,
            label=run.name,
            color=colour,
            linestyle=style,
        )
        print(f"| {run.name} | `{settings(config)}` | {', '.join(f'{v:.2f}' for v in y)} |")
    axis.axhline(
        RANDOM_NASH_CONV[0], color="grey", linestyle="--", linewidth=1, label="uniform random"
    )
    axis.set_xlabel("decisions (millions)")
    axis.set_ylabel("exact NashConv (0: equilibrium, 2: most exploitable)")
    # one column per 30 runs, so that every run's name fits beside the plot
    columns = -(-(len(args.runs) + 1) // 30)
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=columns)
    figure.tight_layout()
    figure.savefig(args.out, dpi=90, bbox_inches="tight")  # the legend in


if __name__ == "__main__":
    main()
