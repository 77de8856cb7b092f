"""Policy networks saved as plain arrays: the self-play learner's models, run with numpy.

A saved network is a pair: ``model.npz`` (the layers' weights and biases, numpy arrays
only: loading it runs no code, ``allow_pickle=False``) and ``model.json`` (``"kind":
"mlp"``, the env id, the game options, the spaces, the hidden sizes, the activation, how
it plays, and the command that trained it). ``GameSpec.make_agent`` loads it wherever a
saved model's path is accepted (``training.evaluate --agents DIR/model.npz`` or the
folder, ``training.exploitability``, the panel, ``training.play``, ``opponent=PATH``),
checked against the env it is loaded into as SB3 models are
(``training.agents.policy.check_metadata``). Nothing here imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from envs.core.game import Game
from training.agents.policy import LogitsAgent, check_metadata

#: The file names of a saved network inside a run folder.
WEIGHTS_NAME = "model.npz"
KIND = "mlp"
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


def weights_path(path: str | Path) -> Path:
    """The ``.npz`` file given the file itself, its stem or the folder that holds it."""
    path = Path(path)
    return path / WEIGHTS_NAME if path.is_dir() else path.with_suffix(".npz")


def save_network(
    layers: list[tuple[np.ndarray, np.ndarray]], activation: str, path: str | Path, metadata: dict
) -> Path:
    """Write ``layers`` (``(weight (out, in), bias (out,))`` each, the last the logits) to
    ``path`` (.npz) and the metadata beside it (.json); returns the .npz path."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    path = weights_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for i, (weight, bias) in enumerate(layers):
        arrays[f"weight_{i}"] = np.asarray(weight, dtype=np.float32)
        arrays[f"bias_{i}"] = np.asarray(bias, dtype=np.float32)
    with path.open("wb") as file:  # np.savez would add ".npz" to a name without it
        np.savez(file, **arrays)
    meta = {
        **metadata,
        "kind": KIND,
        "hidden": [len(bias) for _, bias in layers[:-1]],
        "activation": activation,
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=str))
    return path


class NetworkAgent(LogitsAgent):
    """A saved MLP behind the agent protocol (see ``LogitsAgent`` for how it chooses)."""

    def __init__(
        self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, deterministic: bool
    ) -> None:
        super().__init__(deterministic)
        self.layers = layers
        self.activation = ACTIVATIONS[activation]

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        x = np.asarray(observations, dtype=np.float32)
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight.T + bias
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


def load_network_agent(path: str | Path, game: Game, env_id: str) -> NetworkAgent:
    """Load a saved network for ``game``; ValueError if it was made for another env or
    options, or if its file is not what its metadata says."""
    weights = weights_path(path)
    if not weights.is_file():
        raise ValueError(f"no saved network at {weights}")
    meta = check_metadata(weights, game, env_id, kind=KIND)
    play = meta["play"]
    try:
        with np.load(weights, allow_pickle=False) as arrays:
            count = len(meta["hidden"]) + 1
            layers = [(arrays[f"weight_{i}"], arrays[f"bias_{i}"]) for i in range(count)]
        sizes = [game.observation_layout.size, *meta["hidden"], game.num_actions]
        for i, (weight, bias) in enumerate(layers):
            if weight.shape != (sizes[i + 1], sizes[i]) or bias.shape != (sizes[i + 1],):
                raise ValueError(
                    f"layer {i} has weights {weight.shape} and biases {bias.shape}; the env "
                    f"needs {(sizes[i + 1], sizes[i])} and {(sizes[i + 1],)}"
                )
        activation = meta["activation"]
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    except (KeyError, OSError, TypeError, ValueError, EOFError) as error:
        raise ValueError(f"{weights} is not a readable saved network: {error}") from error
    return NetworkAgent(layers, activation, deterministic=play == "greedy")
