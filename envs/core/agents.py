"""The agent protocol shared by opponents, baselines and trained policies."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from envs.core.game import Game


class Agent(Protocol):
    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        """Choose a legal action from one seat's flat observation and int8 mask."""


class RandomAgent:
    """Uniform over the legal actions."""

    def __init__(self, game: Game | None = None) -> None:
        self.game = game

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        return int(rng.choice(np.flatnonzero(action_mask)))
