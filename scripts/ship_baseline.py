"""Copy a training run's model into training/baselines as the shipped agent.

    python scripts/ship_baseline.py runs/pico-2p-seed0
    python scripts/ship_baseline.py runs/forslag-4p-seed0 --model best_model

The copy drops the optimizer's running statistics (a shipped policy only plays),
which makes it about three times smaller, and is saved as
``training/baselines/<game>_<N>p.zip`` with its metadata (env, spaces, command,
training steps and time) beside it; ``opponent="ppo"`` then loads it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO

import envs  # noqa: F401  (registers the ids)
from envs.core.spec import get_spec
from training.agents.policy import baseline_path, save_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder made by training.train")
    parser.add_argument(
        "--model",
        default="model",
        choices=("model", "best_model"),
        help="the final model, or the one that did best in the periodic evaluations",
    )
    args = parser.parse_args()
    metadata = json.loads((args.run / "model.json").read_text())  # has the command and time
    if args.model != "model":
        chosen = json.loads((args.run / f"{args.model}.json").read_text())
        metadata["timesteps"] = chosen["timesteps"]
    model = MaskablePPO.load(args.run / f"{args.model}.zip", device="cpu")
    model.policy.optimizer = torch.optim.Adam(model.policy.parameters())  # no statistics
    name = get_spec(metadata["env_id"]).name
    path = save_policy(model, baseline_path(name, metadata["num_players"]), metadata)
    print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
