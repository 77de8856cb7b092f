"""Policy networks saved as plain arrays: the self-play learner's models, run with numpy.

A saved network is a pair: ``model.npz`` (the layers' weights and biases, numpy arrays
only: loading it runs no code, ``allow_pickle=False``) and ``model.json`` (``"kind":
"mlp"``, the env id, the game options, the spaces, the hidden sizes, the activation, how
it plays, and the command that trained it). ``GameSpec.make_agent`` loads it wherever a
saved model's path is accepted (``training.evaluate --agents DIR/model.npz`` or the
folder, ``training.exploitability``, the panel, ``training.play``, ``opponent=PATH``),
checked against the env it is loaded into as SB3 models are
(``training.agents.policy.check_metadata``). Nothing here imports torch.

An averaged network (``save_average``, ``"members": k`` in its metadata, the arrays of
member ``j`` prefixed ``member{j}_``) is ``k`` networks of the same shape whose policies
are averaged at every observation (``AveragedNetworkAgent``): the average of a
self-play run's last checkpoints (``scripts/tools/average_checkpoints.py``), whose
iterates circle an equilibrium rather than settle on it.

The arrays may be stored as float16 to halve a shipped file (``ship_baseline.py
--half``); loading always gives float32.
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


Layers = list[tuple[np.ndarray, np.ndarray]]


def save_network(layers: Layers, activation: str, path: str | Path, metadata: dict) -> Path:
    """Write ``layers`` (``(weight (out, in), bias (out,))`` each, the last the logits) to
    ``path`` (.npz) and the metadata beside it (.json); returns the .npz path."""
    return _save([layers], activation, path, metadata)


def save_average(members: list[Layers], activation: str, path: str | Path, metadata: dict) -> Path:
    """Write networks of one shape whose policies are to be averaged (see the module
    docstring); returns the .npz path."""
    if len(members) < 2 or len({tuple(w.shape for w, _ in m) for m in members}) != 1:
        raise ValueError("an average needs at least two networks of the same shape")
    return _save(members, activation, path, metadata | {"members": len(members)})


def _save(
    members: list[Layers],
    activation: str,
    path: str | Path,
    metadata: dict,
    dtype: type = np.float32,
) -> Path:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    path = weights_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for j, layers in enumerate(members):
        prefix = f"member{j}_" if len(members) > 1 else ""
        for i, (weight, bias) in enumerate(layers):
            arrays[f"{prefix}weight_{i}"] = np.asarray(weight, dtype=dtype)
            arrays[f"{prefix}bias_{i}"] = np.asarray(bias, dtype=dtype)
    with path.open("wb") as file:  # np.savez would add ".npz" to a name without it
        np.savez(file, **arrays)
    meta = {
        **metadata,
        "kind": KIND,
        "hidden": [len(bias) for _, bias in members[0][:-1]],
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
        self.activation_name = activation
        self.activation = ACTIVATIONS[activation]
        #: The observation's columns the network reads (a nonzero first-layer weight).
        self.read_columns = np.flatnonzero(np.any(layers[0][0] != 0, axis=0))

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        x = np.asarray(observations, dtype=np.float32)
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight.T + bias
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


def _read_members(weights: Path, meta: dict) -> list[Layers]:
    """The layers of each network in ``weights`` (one, or ``meta["members"]``)."""
    count = meta.get("members", 1)
    prefixes = [f"member{j}_" for j in range(count)] if count > 1 else [""]
    depth = len(meta["hidden"]) + 1
    with np.load(weights, allow_pickle=False) as arrays:
        return [
            [
                (
                    arrays[f"{p}weight_{i}"].astype(np.float32, copy=False),
                    arrays[f"{p}bias_{i}"].astype(np.float32, copy=False),
                )
                for i in range(depth)
            ]
            for p in prefixes
        ]


def save_half(path: str | Path, to: str | Path, metadata: dict | None = None) -> Path:
    """Copy the saved network(s) at ``path`` to ``to`` with float16 arrays (rounded once:
    loading the copy gives float32 again), with ``metadata`` in place of the file's own
    where given; returns the copy's .npz path."""
    members, meta = read_network(path)
    metadata = (meta if metadata is None else metadata) | {"dtype": "float16"}
    return _save(members, meta["activation"], to, metadata, np.float16)


def read_network(path: str | Path) -> tuple[list[Layers], dict]:
    """A saved file's networks (their layers) and metadata, unchecked: for tools that
    rewrite saved networks (loading one to play is ``load_network_agent``)."""
    weights = weights_path(path)
    meta = json.loads(weights.with_suffix(".json").read_text())
    return _read_members(weights, meta), meta


class AveragedNetworkAgent:
    """Networks whose policies are averaged at every observation: it plays (and states)
    the mean of their softmaxes over the legal actions, or with ``deterministic`` that
    mean's first best action. It has no ``logits_batch``: an average of policies is not
    one softmax."""

    def __init__(self, members: list[NetworkAgent], deterministic: bool) -> None:
        self.members = members
        self.deterministic = deterministic
        self.read_columns = np.unique(np.concatenate([m.read_columns for m in members]))

    def action_probabilities_batch(
        self, observations: np.ndarray, action_masks: np.ndarray
    ) -> np.ndarray:
        mean = np.mean(
            [m.action_probabilities_batch(observations, action_masks) for m in self.members], 0
        )
        if self.deterministic:
            return np.eye(mean.shape[-1])[np.argmax(mean, axis=-1)]
        return mean

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self.action_probabilities_batch(
            np.asarray(observation)[None], np.asarray(action_mask)[None]
        )[0]

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        probabilities = self.action_probabilities(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(probabilities))
        return int(rng.choice(len(probabilities), p=probabilities / probabilities.sum()))


def load_network_agent(
    path: str | Path, game: Game, env_id: str
) -> NetworkAgent | AveragedNetworkAgent:
    """Load a saved network (or average of networks) for ``game``; ValueError if it was
    made for another env or options, or if its file is not what its metadata says."""
    weights = weights_path(path)
    if not weights.is_file():
        raise ValueError(f"no saved network at {weights}")
    meta = check_metadata(weights, game, env_id, kind=KIND)
    deterministic = meta["play"] == "greedy"
    try:
        members = _read_members(weights, meta)
        sizes = [game.observation_layout.size, *meta["hidden"], game.num_actions]
        for layers in members:
            for i, (weight, bias) in enumerate(layers):
                if weight.shape != (sizes[i + 1], sizes[i]) or bias.shape != (sizes[i + 1],):
                    raise ValueError(
                        f"layer {i} has weights {weight.shape} and biases {bias.shape}; the "
                        f"env needs {(sizes[i + 1], sizes[i])} and {(sizes[i + 1],)}"
                    )
        activation = meta["activation"]
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    except (KeyError, OSError, TypeError, ValueError, EOFError) as error:
        raise ValueError(f"{weights} is not a readable saved network: {error}") from error
    if len(members) == 1:
        return NetworkAgent(members[0], activation, deterministic)
    return AveragedNetworkAgent(
        [NetworkAgent(layers, activation, deterministic=False) for layers in members],
        deterministic,
    )
