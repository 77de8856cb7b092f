"""Copy a training run's model into training/baselines as the shipped agent.

    python scripts/tools/ship_baseline.py runs/pico-2p-seed0
    python scripts/tools/ship_baseline.py runs/forslag-4p-seed0 --model best_model
    python scripts/tools/ship_baseline.py runs/pico-2p-robust --model snapshots/step_000300000 --play sample

A shipped policy only plays, so the copy drops the optimizer's running statistics,
zeroes the value network, can round the policy's weights to float16 (``--half``;
loading restores float32) and is deflated; ``--play sample`` ships it drawing its choices
from its policy (a mixed strategy) rather than taking the best; it is saved as
``training/baselines/<game>_<N>p[_<option>-<value>...].zip`` (``baseline_name``) with its metadata (env, spaces, command,
training steps and time) beside it; ``opponent="ppo"`` then loads it.

A network of the self-play learner (a run folder of ``training.selfplay``, or an average
of checkpoints, ``scripts/tools/average_checkpoints.py``: a folder with ``model.npz``) is
shipped as it is, ``<name>.npz`` with its ``.json`` (``SHIPPED_SUFFIXES``), in place of
the ``.zip``: one file per configuration, so a shipped ``.zip`` must be moved first.

    python scripts/tools/ship_baseline.py runs/pico-2p-average

Replacing a shipped agent means keeping the old one for the panel first (``git mv`` it
to ``training/evaluation/panel_v2/``); every command that started from it, the new
agent's and other shipped agents', then cites that copy, so each still reproduces.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO

import envs  # noqa: F401  (registers the ids)
from envs.core.spec import get_spec
from training.agents.network import save_half
from training.agents.policy import (
    BASELINES,
    DEFAULT_PLAY,
    PLAYS,
    actor_and_critic_parameters,
    baseline_name,
    baseline_path,
    save_policy,
)
from training.evaluation.panel import KEPT_POLICIES

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file is in scripts/tools)


def compact(model, half: bool) -> None:
    """Keep only what playing needs: no optimizer statistics, a zero value network."""
    model.policy.optimizer = torch.optim.Adam(model.policy.parameters())
    with torch.no_grad():
        for parameter in actor_and_critic_parameters(model.policy)[1]:
            parameter.zero_()
    if half:
        model.policy.half()


def deflate(path: Path) -> None:
    """Rewrite a zip archive compressed (SB3 stores its members uncompressed)."""
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info.filename, data)


def cite_the_kept_agent(command: str, name: str) -> str:
    """``command`` with the shipped agent it replaces (``name``) named by the copy kept for
    the panel, so the command still reproduces the run once the new agent is shipped."""
    shipped = (BASELINES / f"{name}.zip").relative_to(ROOT).as_posix()
    if shipped not in command:
        return command
    kept = (KEPT_POLICIES / f"{name}.zip").relative_to(ROOT).as_posix()
    if not (ROOT / kept).is_file():
        raise FileNotFoundError(
            f"the run starts from the shipped {name}.zip it would replace; keep that agent "
            f"for the panel first: git mv {shipped} {kept} (and its .json)"
        )
    return command.replace(shipped, kept)


def require_play(play: str) -> None:
    """ValueError unless ``play`` is one of ``PLAYS``."""
    if play not in PLAYS:
        raise ValueError(f"play {play!r} is not allowed; allowed: {', '.join(PLAYS)}")


def ship(
    run: Path,
    which: str = "model",
    half: bool = False,
    to: Path | None = None,
    play: str = DEFAULT_PLAY,
) -> Path:
    """Copy ``run``'s model (``which``: model, best_model or one of its snapshots,
    ``snapshots/step_000300000``) to ``to``, by default the shipped baseline's path for its
    game and player count; ``play`` (``PLAYS``) is how the shipped agent chooses."""
    require_play(play)
    final = run / "model.json"  # has the command and time; written when the run ends
    if which == "model" and not final.is_file():
        raise FileNotFoundError(
            f"{final} is missing: the run has not ended (--model best_model or a snapshot)"
        )
    if not (run / f"{which}.zip").is_file():
        snapshots = sorted(f"snapshots/{p.stem}" for p in run.glob("snapshots/*.zip"))
        raise ValueError(
            f"{run} has no {which}.zip; allowed: model, best_model or a snapshot "
            f"({', '.join(snapshots[-3:]) or 'none saved'})"
        )
    metadata = json.loads((run / f"{which}.json").read_text())
    if which.startswith("snapshots/step_"):
        metadata["timesteps"] = int(which.removeprefix("snapshots/step_"))
    if final.is_file():
        ended = json.loads(final.read_text())
        metadata = ended if which == "model" else ended | {"timesteps": metadata["timesteps"]}
    else:  # a run stopped before its end: its command is in config
        metadata["command"] = json.loads((run / "config.json").read_text())["command"]
        metadata["stopped"] = "before its end; this is " + (
            "its best periodic evaluation's model"
            if which == "best_model"
            else f"its snapshot at {metadata['timesteps']} steps"
        )
    metadata["play"] = play
    game = get_spec(metadata["env_id"]).make_game(**metadata["options"])
    name = baseline_name(game)
    if "command" in metadata:
        metadata["command"] = cite_the_kept_agent(metadata["command"], name)
    model = MaskablePPO.load(run / f"{which}.zip", device="cpu")
    compact(model, half)
    if to is None:  # the other shipped agents trained from the replaced one now cite its copy
        for other in BASELINES.glob("*.json"):
            other_metadata = json.loads(other.read_text())
            cited = cite_the_kept_agent(other_metadata["command"], name)
            if cited != other_metadata["command"]:
                other.write_text(json.dumps(other_metadata | {"command": cited}, indent=2))
    path = save_policy(model, to or baseline_path(game), metadata)
    deflate(path)
    return path


def ship_network(
    folder: Path, to: Path | None = None, play: str | None = None, half: bool = False
) -> Path:
    """Copy the self-play network in ``folder`` (``model.npz`` and its ``.json``) to ``to``,
    by default the shipped agent's ``.npz`` for its configuration; ``play`` replaces the
    network's own (``PLAYS``); ``half`` stores its arrays as float16."""
    metadata = json.loads((folder / "model.json").read_text())
    if play is not None:
        require_play(play)
        metadata["play"] = play
    game = get_spec(metadata["env_id"]).make_game(**metadata["options"])
    sb3 = baseline_path(game)
    if to is None and sb3.is_file():
        kept = (sb3.relative_to(ROOT) if sb3.is_relative_to(ROOT) else sb3).as_posix()
        raise FileExistsError(
            f"{kept} is shipped for this configuration, and one agent is shipped per "
            f"configuration: move it first (git mv {kept} and its .json to where it is kept)"
        )
    target = (to or sb3).with_suffix(".npz")
    target.parent.mkdir(parents=True, exist_ok=True)
    if half:
        return save_half(folder, target, metadata)
    target.write_bytes((folder / "model.npz").read_bytes())
    target.with_suffix(".json").write_text(json.dumps(metadata, indent=2) + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run",
        type=Path,
        help="a run folder made by training.train, or a folder with a self-play network's "
        "model.npz (training.selfplay, scripts/tools/average_checkpoints.py)",
    )
    parser.add_argument(
        "--model",
        default="model",
        help="model (the final one), best_model (the one that did best in the periodic "
        "evaluations) or a snapshot, e.g. snapshots/step_000300000",
    )
    parser.add_argument("--half", action="store_true", help="store the weights as float16")
    parser.add_argument(
        "--play",
        choices=PLAYS,
        help="how the shipped agent chooses: its best legal action, or a draw from its "
        f"policy (a mixed strategy, for a policy trained to mix); default: {DEFAULT_PLAY} "
        "for an SB3 model, the network's own for a self-play network",
    )
    args = parser.parse_args()
    try:
        if (args.run / "model.npz").is_file():
            if args.model != "model":
                raise ValueError("--model is for SB3 runs: a network ships whole")
            path = ship_network(args.run, play=args.play, half=args.half)
        else:
            path = ship(args.run, args.model, args.half, play=args.play or DEFAULT_PLAY)
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        parser.error(str(error))
    print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")
    print("pin its choices for the tests: python scripts/record_choices.py")


if __name__ == "__main__":
    main()
