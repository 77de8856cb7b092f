"""Policies trained with Ray RLlib (``training.rllib``) as agents, loaded with torch alone.

An export is a pair in the run folder: ``agent.pt`` (the masked policy network's torch
weights: the actor's MLP and its action head, a ``torch.nn.Sequential`` state dict) and
``agent.json`` (``"kind": "rllib"``, the env id, the game options, the spaces and the
network's shape). ``GameSpec.make_agent`` loads it wherever a saved model's path is
accepted (``training.evaluate --agents DIR/agent.pt``, ``opponent=`` in the Gymnasium
view, the panel, ``--opponents`` of either trainer), from the ``.pt`` file or from the
folder that holds it, checked against the env it is loaded into as SB3 models are
(``training.agents.policy.check_metadata``). Nothing here imports ray, so evaluation
works in the default install.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.game import Game
from training.agents.policy import LogitsAgent, check_metadata

#: The file names of an export inside a run folder.
WEIGHTS_NAME = "agent.pt"
METADATA_NAME = "agent.json"
KIND = "rllib"
ACTIVATIONS = ("tanh", "relu")


def export_path(path: str | Path) -> Path:
    """The ``.pt`` file of an export given the file itself or the folder that holds it."""
    path = Path(path)
    return path / WEIGHTS_NAME if path.is_dir() else path


def build_network(observation_size: int, hidden: list[int], num_actions: int, activation: str):
    """The policy network: ``Linear`` + activation per hidden layer, then the logits."""
    import torch

    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    layers: list[torch.nn.Module] = []
    size = observation_size
    for width in hidden:
        layers += [
            torch.nn.Linear(size, width),
            {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation](),
        ]
        size = width
    layers.append(torch.nn.Linear(size, num_actions))
    return torch.nn.Sequential(*layers)


def save_rllib_agent(network, path: str | Path, metadata: dict[str, Any]) -> Path:
    """Write ``network`` (from ``build_network``) to ``path`` (.pt) and its metadata beside
    it (.json, with ``kind``, ``hidden`` and ``activation`` added); returns the .pt path."""
    import torch

    path = Path(path).with_suffix(".pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    linear = [m for m in network if isinstance(m, torch.nn.Linear)]
    activation = "relu" if any(isinstance(m, torch.nn.ReLU) for m in network) else "tanh"
    torch.save(network.state_dict(), path)
    meta = {
        **metadata,
        "kind": KIND,
        "hidden": [layer.out_features for layer in linear[:-1]],
        "activation": activation,
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=str))
    return path


class RLlibPolicyAgent(LogitsAgent):
    """An exported RLlib policy behind the agent protocol (see ``LogitsAgent`` for how it
    chooses: greedy by default, or sampling the masked softmax RLlib trained with)."""

    def __init__(self, network, deterministic: bool = True) -> None:
        super().__init__(deterministic)
        self.network = network.eval()

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        """The unmasked logits for a batch of flat observations (one row each)."""
        import torch

        with torch.no_grad():
            batch = torch.as_tensor(np.array(observations, dtype=np.float32))
            return self.network(batch).numpy()


def load_rllib_agent(path: str | Path, game: Game, env_id: str) -> RLlibPolicyAgent:
    """Load an export for ``game``; ValueError if it was made for another env or options."""
    import torch

    weights = export_path(path)
    if not weights.is_file():
        raise ValueError(f"no RLlib export at {weights}")
    meta = check_metadata(weights, game, env_id, kind=KIND)
    play = meta["play"]
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
        network = build_network(
            game.observation_layout.size,
            [int(width) for width in meta["hidden"]],
            game.num_actions,
            meta["activation"],
        )
        network.load_state_dict(state)
    except (KeyError, RuntimeError, TypeError, ValueError, EOFError) as error:
        raise ValueError(f"{weights} is not a readable RLlib export: {error}") from error
    return RLlibPolicyAgent(network, deterministic=play == "greedy")
