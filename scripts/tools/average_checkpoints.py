"""The average of a self-play run's last checkpoints, saved as one model that every tool
loads.

    python -m training.selfplay ... --keep-checkpoints --out runs/pico
    python scripts/tools/average_checkpoints.py runs/pico --last 4 --out runs/pico-average

The model plays, at every observation, the mean of the last ``--last`` checkpoints'
policies (each checkpoint is the model of one periodic evaluation,
``RUN/checkpoints/DECISIONS.npz``; ``training.agents.network.save_average``). Several
runs (of one game, other seeds) give the last ``--last`` of each: an ensemble of seeds.
``--spacing N`` counts only the first checkpoint at or past each multiple of ``N``
decisions (``--spacing 2000000`` on a run kept with ``--checkpoint-every 500000`` takes
the models of its evaluations every 2M).
With ``--weights`` the model is instead one network whose weights are one run's
checkpoints' mean (as stochastic weight averaging does): as cheap to play as one
checkpoint, and batched wherever a network is. Self-play's iterates circle an
equilibrium rather than settle on it, and either average is closer (docs/selfplay.md).
The metadata is the last checkpoint's, with the averaged checkpoints named in
``"averaged"`` and, as ``"command"``, every run's training command and then this one.
An existing ``--out`` model is kept unless ``--overwrite``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from training.agents.network import read_network, save_average, save_network
from training.selfplay import checkpoint_files

#: What the averaged networks must share: the game they play and how.
PLAYED = ("env_id", "options", "num_players", "observation_size", "num_actions", "play")


def provenance(trained: list[str], argv: list[str]) -> str:
    """The commands that make the average: each run's training command, once, then this
    script's, joined by ``&&``."""
    averaged = " ".join(["python scripts/tools/average_checkpoints.py", *argv])
    return " && ".join([*dict.fromkeys(trained), averaged])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "runs", type=Path, nargs="+", help="run folders of training.selfplay --keep-checkpoints"
    )
    parser.add_argument("--last", type=int, default=4, help="checkpoints averaged from each run")
    parser.add_argument(
        "--spacing", type=int, default=0, help="decisions between the checkpoints counted"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder of the averaged model")
    parser.add_argument(
        "--weights", action="store_true", help="one network of the mean weights, not policies"
    )
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    if args.spacing < 0:
        parser.error(f"--spacing {args.spacing}: needs 0 (every checkpoint) or more decisions")
    chosen: list[Path] = []
    for run in args.runs:
        files = checkpoint_files(run, args.spacing)
        if args.last < 1 or len(files) < args.last:
            parser.error(
                f"--last {args.last}: needs at least 1 and at most the {len(files)} "
                f"checkpoints of {run} (train with --keep-checkpoints)"
            )
        chosen += files[-args.last :]
    if len(chosen) < 2:
        parser.error(f"--last {args.last}: an average needs at least 2 checkpoints in all")
    if args.weights and len(args.runs) > 1:
        parser.error("--weights averages one run's checkpoints: other seeds' weights do not mix")
    if (args.out / "model.npz").exists() and not args.overwrite:
        parser.error(f"{args.out / 'model.npz'} exists; pass --overwrite to replace it")
    members, games, trained = [], set(), []
    for path in chosen:
        networks, meta = read_network(path)
        members += networks
        trained.append(meta["command"])
        games.add(json.dumps([meta[key] for key in PLAYED], sort_keys=True))
    if len(games) > 1 or len({tuple(w.shape for w, _ in m) for m in members}) > 1:
        parser.error(f"the runs differ in the game ({', '.join(PLAYED)}) or the network's shape")
    metadata = {k: v for k, v in meta.items() if k not in ("kind", "hidden", "activation")}
    metadata["command"] = provenance(trained, argv if argv is not None else sys.argv[1:])
    metadata["averaged"] = [
        path.name if len(args.runs) == 1 else f"{path.parent.parent.name}/{path.name}"
        for path in chosen
    ]
    if args.weights:
        mean = [
            tuple(np.mean(arrays, axis=0) for arrays in zip(*layer, strict=True))
            for layer in zip(*members, strict=True)
        ]
        metadata["averaged_weights"] = True
        saved = save_network(mean, meta["activation"], args.out / "model.npz", metadata)
    else:
        saved = save_average(members, meta["activation"], args.out / "model.npz", metadata)
    print(f"{saved}: the average of {len(chosen)} checkpoints ({', '.join(metadata['averaged'])})")


if __name__ == "__main__":
    sys.exit(main())
