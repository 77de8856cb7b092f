"""What one setting of the self-play learner costs beside another, as a ratio measured in
one run: the figures of docs/selfplay.md that say what a setting costs per decision.

    python scripts/measure/learner_cost.py --decisions 300000 --rounds 2 \\
        --base "--critic joint --inner-steps 10 --minibatches 64" \\
        --other "--critic joint --inner-steps 10 --minibatches 64 --backup expanded"

``training.selfplay`` (its whole training loop, as ``selfplay.train`` runs it, with no
evaluation) is run for ``--decisions`` decisions with the ``--base`` arguments, then with
``--other``, and again ``--rounds`` times, alternating, each from a fresh learner (seed
0, one torch thread) into a temporary folder. Each is timed in CPU seconds of this
process (a shared machine disturbs them less than wall time). It prints each round's
decisions per CPU second and the ratio of the two settings' totals.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import shlex
import tempfile
import time
from pathlib import Path

from training import cli, selfplay

#: No evaluation: only training is timed.
QUIET = ["--eval-every", "0", "--eval-games", "0", "--eval-pimc-games", "0", "--eval-deals", "0"]


def learner_args(text: str, decisions: int, out: Path) -> selfplay.Args:
    parser = cli.dataclass_parser("selfplay", "", selfplay.Args)
    argv = [*shlex.split(text), *QUIET, "--no-progress-bar", "--decisions", str(decisions)]
    return selfplay.Args(**vars(parser.parse_args([*argv, "--out", str(out)])))


def decisions_per_second(args: selfplay.Args) -> float:
    """``selfplay.train(args)``: the decisions it trained (whole rollouts, a few more than
    ``--decisions``) per CPU second."""
    started = time.process_time()
    out = selfplay.train(args)
    seconds = time.process_time() - started
    with (out / "evaluations.csv").open() as file:
        return int(next(csv.DictReader(file))["decisions"]) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="training.selfplay's arguments, quoted")
    parser.add_argument("--other", required=True, help="the setting measured against --base")
    parser.add_argument("--decisions", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.decisions < 1 or args.rounds < 1:
        parser.error("--decisions and --rounds must be at least 1")
    totals = {"base": 0.0, "other": 0.0}  # CPU seconds per decision, summed over rounds
    with tempfile.TemporaryDirectory(prefix="learner-cost-") as folder:
        settings = {
            name: learner_args(getattr(args, name), args.decisions, Path(folder) / name)
            for name in totals
        }
        for round_ in range(args.rounds):
            for name, setting in settings.items():
                rate = decisions_per_second(dataclasses.replace(setting, overwrite=round_ > 0))
                totals[name] += 1 / rate
                print(f"round {round_ + 1}, {name}: {rate:,.0f} decisions per CPU second")
    ratio = totals["other"] / totals["base"]
    print(f"--other costs {ratio:.2f} times --base's CPU time per decision")


if __name__ == "__main__":
    main()
