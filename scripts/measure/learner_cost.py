"""What one setting of the self-play learner costs beside another, as a ratio measured in
one run: the figures of docs/selfplay.md that say what a setting costs per decision.

    python scripts/measure/learner_cost.py --decisions 300000 --rounds 2 \\
        --base "--critic joint --inner-steps 10 --minibatches 64" \\
        --other "--critic joint --inner-steps 10 --minibatches 64 --backup expanded"

``training.selfplay``'s loop (collect a rollout, update; no evaluation) is run for
``--decisions`` decisions with the ``--base`` arguments, then with ``--other``, and again
``--rounds`` times, alternating, each from a fresh learner (seed 0), on one torch thread.
Each is timed in CPU seconds of this process (a shared machine disturbs them less than
wall time). It prints each round's decisions per CPU second and the ratio of the two
settings' totals.
"""

from __future__ import annotations

import argparse
import shlex
import time

import torch

from training import cli, selfplay


def learner_args(text: str, decisions: int) -> selfplay.Args:
    parser = cli.dataclass_parser("selfplay", "", selfplay.Args)
    argv = [*shlex.split(text), "--decisions", str(decisions), "--out", "/nonexistent/run"]
    return selfplay.Args(**vars(parser.parse_args(argv)))


def decisions_per_second(args: selfplay.Args) -> float:
    """The learner's loop for ``args.decisions`` decisions: decisions per CPU second."""
    _, options, game = selfplay.check(args)
    run = selfplay.SelfPlay(args, game, options)
    started, decisions = time.process_time(), 0
    while decisions < args.decisions:
        progress = decisions / args.decisions
        rollout = run.collect(progress)
        decisions += int(rollout.deciding.sum())
        run.update(rollout, progress)
    return decisions / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="training.selfplay's arguments, quoted")
    parser.add_argument("--other", required=True, help="the setting measured against --base")
    parser.add_argument("--decisions", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.decisions < 1 or args.rounds < 1:
        parser.error("--decisions and --rounds must be at least 1")
    settings = {
        name: learner_args(getattr(args, name), args.decisions) for name in ("base", "other")
    }
    torch.set_num_threads(1)
    totals = {name: 0.0 for name in settings}
    for round_ in range(args.rounds):
        for name, setting in settings.items():
            rate = decisions_per_second(setting)
            totals[name] += setting.decisions / rate
            print(f"round {round_ + 1}, {name}: {rate:,.0f} decisions per CPU second", flush=True)
    ratio = totals["other"] / totals["base"]
    print(f"--other costs {ratio:.2f} times --base's CPU time per decision")


if __name__ == "__main__":
    main()
