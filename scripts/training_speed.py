"""MaskablePPO on the batched engine against the Gymnasium view: speed and learning.

    python scripts/training_speed.py                       # Pico (2) and Pickup (4)
    python scripts/training_speed.py --steps 100000 --ids hiddenhand/pico-v0

For each game, ``training.train`` runs twice with the same network, the same PPO update
(1,024 decisions per rollout: 4 environments × 256 steps through the Gymnasium view, or
``--batched-envs`` games (default 128) × the steps that make 1,024 through ``--vec
batched``; minibatches of 256, 10 epochs) and the
same opponent (the heuristic in every other seat), for the same number of learner
decisions, one after the other (measure on a quiet machine: the ratio is only as good
as the load is even). Each prints its end-to-end learner decisions per second (wall time from the first step to
the last, evaluations excluded) and its final win rate against the heuristic over
``--games`` seat-rotated games with a 95% interval.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path

from training import train

#: Decisions per rollout, the same both ways: the same PPO update.
ROLLOUT = 1024
#: How each way steps its environments: (--vec, --n-envs); --n-steps is ROLLOUT / n-envs.
WAYS = {"gym": ("gym", 4), "batched": ("batched", 128)}


def run(env_id: str, way: str, steps: int, games: int, seed: int, folder: Path) -> dict:
    vec, n_envs = WAYS[way]
    n_steps = ROLLOUT // n_envs
    argv = ["--env", env_id, "--opponents", "heuristic:1", "--total-timesteps", str(steps)]
    argv += ["--vec", vec, "--n-envs", str(n_envs), "--n-steps", str(n_steps)]
    argv += ["--batch-size", "256", "--eval-every", "0", "--final-eval-games", str(games)]
    argv += ["--seed", str(seed), "--run-dir", str(folder), "--run-name", way]
    argv += ["--no-progress-bar"]
    run_folder = train.train(train.parse_args(argv))
    seconds = json.loads((run_folder / "model.json").read_text())["train_seconds"]
    with open(run_folder / "evaluations.csv") as handle:
        final = [r for r in csv.DictReader(handle) if r["opponent"] == "heuristic"][-1]
    return {
        "way": way,
        "steps_per_s": steps / seconds,
        "win_rate": float(final["win_rate"]),
        "win_ci": float(final["win_ci"]),
        "games": games,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*", default=["hiddenhand/pico-v0", "hiddenhand/pickup-v0"])
    parser.add_argument("--steps", type=int, default=150_000, help="learner decisions per run")
    parser.add_argument("--games", type=int, default=1000, help="final evaluation games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--batched-envs", type=int, default=128, help="games in lockstep (divides 1,024)"
    )
    args = parser.parse_args()
    if args.batched_envs < 1 or ROLLOUT % args.batched_envs:
        parser.error(f"--batched-envs must divide {ROLLOUT}, got {args.batched_envs}")
    WAYS["batched"] = ("batched", args.batched_envs)
    print("| game | way | learner decisions/s | × gym | win rate vs heuristic (95% CI) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for env_id in args.ids:
            rows = [
                run(env_id, way, args.steps, args.games, args.seed, Path(folder) / env_id)
                for way in WAYS
            ]
            for row in rows:
                ratio = row["steps_per_s"] / rows[0]["steps_per_s"]
                print(
                    f"| {env_id} | {row['way']} | {row['steps_per_s']:,.0f} | {ratio:.2f}× | "
                    f"{row['win_rate']:.3f} ± {row['win_ci']:.3f} ({row['games']} games) |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
