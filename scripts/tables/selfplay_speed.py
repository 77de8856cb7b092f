"""The self-play learner's speed against SB3's MaskablePPO, in one run, on every protocol
configuration: the self-play tables of docs/performance.md.

    python scripts/tables/selfplay_speed.py                      # the seven configurations
    python scripts/tables/selfplay_speed.py --configs pico-2p --decisions 300000 --sb3-steps 30000
    python scripts/tables/selfplay_speed.py --algorithms qmmd,ppo,qmmd@bfloat16,ppo@bfloat16
    python scripts/tables/selfplay_speed.py --device cuda --num-games 256,4096 \\
        --decisions 400000,2000000 --gpu-algorithms qmmd,ppo/ppo --jobs 12   # with a GPU

For each configuration of the benchmark protocol (``training.benchmark.CONFIGURATIONS``):
``training.train`` (SB3 MaskablePPO, today's trainer: 4 Gymnasium environments × 256
steps, minibatches of 256, 10 epochs; ``random`` in the other seats, the cheapest
opponent, so SB3's figures are its best) through the Gymnasium view and through ``--vec
batched`` (128 games, minibatches of 512: docs/training.md's fastest), then
``training.selfplay`` (``--algorithm`` each of ``--algorithms``, its defaults: 256 games ×
32 steps, 4 epochs of 4 minibatches), all with hidden layers (128, 128) and one torch
thread. A row gives the training decisions per second (play and update, no evaluation),
and its ratio to the Gymnasium view's and to ``--vec batched``'s, measured in the same
run. SB3 counts the learner's decisions; self-play counts every seat's.

Everything on the CPU is timed in CPU seconds of its own process (on a shared machine
that is disturbed less than wall time). With ``--device cuda`` the learner is run once
more on the GPU for each of ``--num-games`` (with the matching entry of ``--decisions``
and of ``--gpu-algorithms``, ``/``-separated), one run at a time, timed in wall seconds:
the GPU's work is not in any CPU clock. These come first, with nothing else running.
SB3 stays on the CPU, where its small networks are fastest. ``--jobs`` runs the CPU
measurements in that many processes (``--algorithms ""``: SB3 alone).
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from training import selfplay, train
from training.benchmark import CONFIGURATIONS


def sb3(name: str, way: str, steps: int, folder: str) -> float:
    """Decisions per CPU second of ``training.train`` (random opponents: the cheapest)."""
    torch.set_num_threads(1)
    env_id, options = CONFIGURATIONS[name]
    n_envs = 4 if way == "gym" else 128
    argv = ["--env", env_id, "--opponents", "random:1", "--total-timesteps", str(steps)]
    argv += ["--vec", way, "--n-envs", str(n_envs), "--n-steps", str(1024 // n_envs)]
    argv += ["--batch-size", str(256 if way == "gym" else 512)]  # docs/training.md's fastest
    argv += ["--eval-every", "0", "--final-eval-games", "0", "--no-progress-bar"]
    argv += ["--run-dir", str(Path(folder) / name), "--run-name", way]
    argv += [f"--option={key}={value}" for key, value in options.items() if key != "num_players"]
    if "num_players" in options:
        argv += ["--num-players", str(options["num_players"])]
    started = time.process_time()
    train.train(train.parse_args(argv))
    return steps / (time.process_time() - started)


def learner(
    name: str, algorithm: str, decisions: int, folder: str, device: str = "cpu", games: int = 256
) -> float:
    """Decisions per second of ``training.selfplay`` (no evaluation): CPU seconds on the
    CPU, wall seconds on a GPU. ``algorithm`` may name a precision, ``ppo@bfloat16``."""
    env_id, options = CONFIGURATIONS[name]
    algorithm, _, precision = algorithm.partition("@")
    args = selfplay.Args(
        env=env_id,
        num_players=options.get("num_players"),
        option=[f"{key}={value}" for key, value in options.items() if key != "num_players"],
        algorithm=algorithm,
        precision=precision or "float32",
        decisions=decisions,
        num_games=games,
        device=device,
        out=str(Path(folder) / name / f"{algorithm}-{precision}-{device}-{games}"),
        eval_every=0,
        eval_games=0,
        eval_pimc_games=0,
        eval_deals=0,
        progress_bar=False,
    )
    clock = time.process_time if device == "cpu" else time.perf_counter
    started = clock()
    out = selfplay.train(args)
    seconds = clock() - started
    with (out / "evaluations.csv").open() as file:
        trained = int(next(csv.DictReader(file))["decisions"])  # whole rollouts: a few more
    return trained / seconds


def measured(job, *args) -> float | str:
    """``job(*args)``, or the error it raised, so that one failure spoils one cell."""
    try:
        return job(*args)
    except Exception:  # noqa: BLE001 - reported in the table, the run goes on
        return traceback.format_exc(limit=3).strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="*", default=list(CONFIGURATIONS))
    parser.add_argument(
        "--decisions", default="400000", help="self-play decisions (one per --num-games)"
    )
    parser.add_argument("--sb3-steps", type=int, default=40_000, help="SB3 learner decisions")
    parser.add_argument(
        "--algorithms",
        default="qmmd,ppo",
        help="self-play on the CPU (ALGORITHM[@PRECISION], e.g. ppo@bfloat16)",
    )
    parser.add_argument("--device", default="cpu", help="also run self-play on this device")
    parser.add_argument("--num-games", default="256", help="games in lockstep on --device")
    parser.add_argument(
        "--gpu-algorithms", default="qmmd,ppo", help="on --device, one list per --num-games (/)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes for the CPU runs")
    args = parser.parse_args()
    unknown = sorted(set(args.configs) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"unknown --configs {unknown}; allowed: {', '.join(CONFIGURATIONS)}")
    decisions = [int(d) for d in args.decisions.split(",")]
    games = [int(g) for g in args.num_games.split(",")]
    gpu_algorithms = [part.split(",") for part in args.gpu_algorithms.split("/")]
    gpu = args.device != "cpu"
    if gpu and not (len(games) == len(decisions) == len(gpu_algorithms)):
        parser.error("--num-games, --decisions and --gpu-algorithms need one entry each")
    torch.set_num_threads(1)
    cpu_jobs = {}
    for name in args.configs:
        for way in ("gym", "batched"):
            cpu_jobs[name, way] = (sb3, name, way, args.sb3_steps)
        for algorithm in filter(None, args.algorithms.split(",")):
            cpu_jobs[name, f"self-play {algorithm}"] = (learner, name, algorithm, decisions[0])
    rates: dict[tuple[str, str], float | str] = {}
    with tempfile.TemporaryDirectory() as folder:
        if gpu:  # first, and alone: wall seconds are disturbed by whatever else runs
            print(f"device: {torch.cuda.get_device_name(args.device)}", flush=True)
            learner(args.configs[0], "ppo", 20_000, folder, args.device)  # untimed: CUDA starts
            for name in args.configs:
                for count, budget, algorithms in zip(games, decisions, gpu_algorithms, strict=True):
                    for algorithm in algorithms:
                        key = (name, f"self-play {algorithm} {args.device} B={count}")
                        rates[key] = measured(
                            learner, name, algorithm, budget, folder, args.device, count
                        )
                        print(f"{key}: {rates[key]}", flush=True)
        context = multiprocessing.get_context("spawn")  # no fork after CUDA starts
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            futures = {key: pool.submit(measured, *job, folder) for key, job in cpu_jobs.items()}
            for key, future in futures.items():
                rates[key] = future.result()
                print(f"{key}: {rates[key]}", flush=True)
    rates = {key: rates[key] for key in cpu_jobs} | rates  # the CPU's rows first
    print("| configuration | way | decisions per second | × Gymnasium view | × --vec batched |")
    print("|---|---|---|---|---|")
    for name in args.configs:
        reference = rates[name, "gym"], rates[name, "batched"]
        for (row, way), rate in rates.items():
            if row != name:
                continue
            if isinstance(rate, str) or any(isinstance(r, str) for r in reference):
                print(f"| {name} | {way} | {rate} | | |")
                continue
            print(
                f"| {name} | {way} | {rate:,.0f} | {rate / reference[0]:.1f}× | "
                f"{rate / reference[1]:.1f}× |"
            )


if __name__ == "__main__":
    main()
