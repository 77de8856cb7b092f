"""Learning curves of several runs in one picture, from their ``evaluations.csv``.

    python scripts/tools/plot_curves.py --run "RLlib PPO, self-play=runs/rllib-pico" \\
        --run "SB3 MaskablePPO, self:1=runs/pico-self60k" --out docs/rllib_pico_curve.png

Reads both trainers' files: the SB3 trainer's (``timesteps``: the learning seat's
decisions) and the RLlib backend's (``agent_steps``: every learning seat's decisions).
One panel per opponent, the win rate with its 95% interval over decisions trained on.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def read(folder: Path) -> dict[str, list[tuple[int, float, float]]]:
    """Per opponent: (decisions, win rate, its 95% half-width), in order."""
    curves: dict[str, list[tuple[int, float, float]]] = {}
    with open(folder / "evaluations.csv") as handle:
        for row in csv.DictReader(handle):
            steps = int(row.get("agent_steps") or row["timesteps"])
            curves.setdefault(row["opponent"], []).append(
                (steps, float(row["win_rate"]), float(row["win_ci"]))
            )
    return curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, metavar="LABEL=FOLDER")
    parser.add_argument("--out", required=True, help="the PNG to write")
    args = parser.parse_args()
    runs = []
    for text in args.run:
        label, equals, folder = text.rpartition("=")
        if not equals or not (Path(folder) / "evaluations.csv").is_file():
            parser.error(f"--run {text!r}: give LABEL=FOLDER, a run folder with evaluations.csv")
        runs.append((label, read(Path(folder))))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    opponents = sorted({o for _, curves in runs for o in curves})
    fig, axes = plt.subplots(1, len(opponents), figsize=(5 * len(opponents), 4), squeeze=False)
    for ax, opponent in zip(axes[0], opponents, strict=True):
        for label, curves in runs:
            points = curves.get(opponent, [])
            steps = [p[0] for p in points]
            rate = [p[1] for p in points]
            ax.plot(steps, rate, marker="o", label=label)
            ax.fill_between(
                steps, [p[1] - p[2] for p in points], [p[1] + p[2] for p in points], alpha=0.2
            )
        ax.set(title=f"vs {opponent}", xlabel="decisions trained on", ylabel="win rate (95% CI)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
