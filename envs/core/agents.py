"""The agent protocol shared by opponents, baselines and trained policies."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from envs.core.game import Game


class Agent(Protocol):
    """Anything with ``act``. An agent may set ``uses_observation = False`` (as the random
    agent does) to be handed ``None`` instead of an observation it would not read."""

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        """Choose a legal action from one seat's flat observation and int8 mask."""


def uses_observation(agent: Agent) -> bool:
    return getattr(agent, "uses_observation", True)


class RandomAgent:
    """Uniform over the legal actions."""

    uses_observation = False

    def __init__(self, game: Game | None = None) -> None:
        self.game = game

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[rng.integers(len(legal))])
