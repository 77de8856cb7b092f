"""MaskablePPO on the batched engine against the Gymnasium view: speed and learning (the
table of training on the batched engine in docs/performance.md).

    python scripts/tables/training_speed.py                       # Pico (2) and Pickup (4)
    python scripts/tables/training_speed.py --steps 100000 --ids hiddenhand/pico-v0 --batch-sizes 256,1024

For each game, ``training.train`` runs with the same network, the same opponent (the
heuristic in every other seat) and the same number of learner decisions, one way after
the other: through the Gymnasium view (4 environments × 256 steps: 1,024 decisions per
rollout, minibatches of 256, 10 epochs: today's trainer), then through ``--vec batched``
(``--batched-envs`` games, default 128, × the steps that make 1,024) once per minibatch
size in ``--batch-sizes`` (256: the same PPO update). Each row gives the learner decisions
per CPU second of the training process (torch runs one thread, the environments in the
same process, so CPU time is what the run costs, and it is less disturbed than wall time
by other work on a shared machine), its ratio to the Gymnasium view's, and the final
policy's win rate against the heuristic over ``--games`` seat-rotated games with a 95%
interval (played after the timing).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from envs import get_spec
from training import train
from training.agents.policy import load_policy
from training.evaluation.tournament import head_to_head

#: Decisions per rollout, the same every way.
ROLLOUT = 1024
GYM_ENVS = 4


def run(env_id: str, way: str, n_envs: int, batch_size: int, args, folder: Path) -> dict:
    argv = ["--env", env_id, "--opponents", "heuristic:1", "--total-timesteps", str(args.steps)]
    argv += ["--vec", way, "--n-envs", str(n_envs), "--n-steps", str(ROLLOUT // n_envs)]
    argv += ["--batch-size", str(batch_size), "--eval-every", "0", "--final-eval-games", "0"]
    argv += ["--seed", str(args.seed), "--run-dir", str(folder)]
    argv += ["--run-name", f"{way}-{batch_size}"]
    argv += ["--no-progress-bar"]
    started = time.process_time()
    run_folder = train.train(train.parse_args(argv))
    seconds = time.process_time() - started
    spec = get_spec(env_id)
    game = spec.make_game()
    agent = load_policy(run_folder / "model.zip", game, spec.aec_id)
    result = head_to_head(game, agent, spec.make_agent("heuristic", game), args.games, args.seed)
    return {
        "way": f"{way}, {n_envs} envs, minibatch {batch_size}",
        "steps_per_s": args.steps / seconds,
        "win_rate": result["win_rate"],
        "win_ci": result["win_ci"],
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
    parser.add_argument(
        "--batch-sizes", default="256", help="minibatch sizes of the batched runs (comma-separated)"
    )
    args = parser.parse_args()
    if args.batched_envs < 1 or ROLLOUT % args.batched_envs:
        parser.error(f"--batched-envs must divide {ROLLOUT}, got {args.batched_envs}")
    try:
        batch_sizes = [int(size) for size in args.batch_sizes.split(",")]
    except ValueError:
        parser.error(f"--batch-sizes takes integers like 256,1024, not {args.batch_sizes!r}")
    if any(size < 2 or ROLLOUT % size for size in batch_sizes):
        parser.error(f"every --batch-sizes value must divide {ROLLOUT} (and be ≥ 2)")
    ways = [("gym", GYM_ENVS, 256)] + [("batched", args.batched_envs, s) for s in batch_sizes]
    print(
        "| game | way | learner decisions per CPU second | × gym | win rate vs heuristic (95% CI) |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for env_id in args.ids:
            reference = None
            for way, n_envs, batch_size in ways:
                row = run(env_id, way, n_envs, batch_size, args, Path(folder) / env_id)
                reference = reference or row["steps_per_s"]
                print(
                    f"| {env_id} | {row['way']} | {row['steps_per_s']:,.0f} | "
                    f"{row['steps_per_s'] / reference:.2f}× | {row['win_rate']:.3f} ± "
                    f"{row['win_ci']:.3f} ({args.games} games) |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
