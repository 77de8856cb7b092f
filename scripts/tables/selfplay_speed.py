"""The self-play learner's speed against SB3's MaskablePPO, in one run, on every protocol
configuration: the self-play table of docs/performance.md.

    python scripts/tables/selfplay_speed.py                      # the seven configurations
    python scripts/tables/selfplay_speed.py --configs pico-2p --decisions 300000 --sb3-steps 30000

For each configuration of the benchmark protocol (``training.benchmark.CONFIGURATIONS``),
one after the other in this process: ``training.train`` (SB3 MaskablePPO, today's
trainer: 4 Gymnasium environments × 256 steps, minibatches of 256, 10 epochs; ``random``
in the other seats, the cheapest opponent, so SB3's figures are its best) through the
Gymnasium view and through ``--vec batched`` (128 games, minibatches of 512: docs/training.md's
fastest), then ``training.selfplay``
(``--algorithm`` each of ``--algorithms``, its defaults: 256 games × 32 steps, 4 epochs of
4 minibatches), all with hidden layers (128, 128) and one torch thread. A row gives the
training decisions per CPU second of this process (play and update, no evaluation),
and its ratio to the Gymnasium view's and to ``--vec batched``'s, measured in the same
run. SB3 counts the learner's decisions; self-play counts every seat's.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import torch

from training import selfplay, train
from training.benchmark import CONFIGURATIONS


def sb3(env_id: str, options: dict, way: str, steps: int, folder: Path) -> float:
    """Decisions per CPU second of ``training.train`` (random opponents: the cheapest)."""
    n_envs = 4 if way == "gym" else 128
    argv = ["--env", env_id, "--opponents", "random:1", "--total-timesteps", str(steps)]
    argv += ["--vec", way, "--n-envs", str(n_envs), "--n-steps", str(1024 // n_envs)]
    argv += [
        "--batch-size",
        str(256 if way == "gym" else 512),
    ]  # batched: docs/training.md's fastest
    argv += ["--eval-every", "0", "--final-eval-games", "0", "--no-progress-bar"]
    argv += ["--run-dir", str(folder), "--run-name", way]
    argv += [f"--option={key}={value}" for key, value in options.items() if key != "num_players"]
    if "num_players" in options:
        argv += ["--num-players", str(options["num_players"])]
    started = time.process_time()
    train.train(train.parse_args(argv))
    return steps / (time.process_time() - started)


def learner(env_id: str, options: dict, algorithm: str, decisions: int, folder: Path) -> float:
    """Decisions per CPU second of ``training.selfplay`` (no evaluation)."""
    args = selfplay.Args(
        env=env_id,
        num_players=options.get("num_players"),
        option=[f"{key}={value}" for key, value in options.items() if key != "num_players"],
        algorithm=algorithm,
        decisions=decisions,
        out=str(folder / algorithm),
        eval_every=0,
        eval_games=0,
        eval_pimc_games=0,
        eval_deals=0,
        progress_bar=False,
    )
    started = time.process_time()
    out = selfplay.train(args)
    seconds = time.process_time() - started
    with (out / "evaluations.csv").open() as file:
        trained = int(next(csv.DictReader(file))["decisions"])  # whole rollouts: a few more
    return trained / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="*", default=list(CONFIGURATIONS))
    parser.add_argument("--decisions", type=int, default=400_000, help="self-play decisions")
    parser.add_argument("--sb3-steps", type=int, default=40_000, help="SB3 learner decisions")
    parser.add_argument("--algorithms", default="qmmd,ppo")
    args = parser.parse_args()
    unknown = sorted(set(args.configs) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"unknown --configs {unknown}; allowed: {', '.join(CONFIGURATIONS)}")
    torch.set_num_threads(1)
    print("| configuration | way | decisions per CPU second | × Gymnasium view | × --vec batched |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.configs:
            env_id, options = CONFIGURATIONS[name]
            place = Path(folder) / name
            rates = {
                way: sb3(env_id, options, way, args.sb3_steps, place) for way in ("gym", "batched")
            }
            for algorithm in args.algorithms.split(","):
                rates[f"selfplay {algorithm}"] = learner(
                    env_id, options, algorithm, args.decisions, place
                )
            for way, rate in rates.items():
                print(
                    f"| {name} | {way} | {rate:,.0f} | {rate / rates['gym']:.1f}× | "
                    f"{rate / rates['batched']:.1f}× |",
                    flush=True,
                )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
