"""The agent protocol shared by opponents, baselines, trained policies and search.

An agent has ``act(observation, action_mask, rng) -> int``; it may also offer
``action_probabilities(observation, action_mask) -> np.ndarray`` (a distribution over
the actions, zero outside the mask), as OpenSpiel's policies do. Two optional flags
change what it is handed:

- ``uses_observation = False`` (the random agent): ``None`` instead of an observation
  it would not read.
- ``uses_position = True`` (search agents): ``act`` also gets ``position=``, a
  ``Position`` through which the agent may draw full states that its seat cannot
  tell from the real one, and nothing else. Pending face-down commitments are never
  part of it: a position is the state before the current choice is revealed.

``decide`` is the one place that calls an agent this way; every caller uses it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from envs.core.game import Game, State


class Agent(Protocol):
    """Anything with ``act``."""

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        """Choose a legal action from one seat's flat observation and int8 mask."""


class Position:
    """A seat's view of the game in play, for search: ``resample(rng)`` draws a full state
    (``State.resample``) that ``player`` cannot tell from the real one."""

    __slots__ = ("_state", "player")

    def __init__(self, state: State, player: int) -> None:
        self._state = state
        self.player = player

    def resample(self, rng: np.random.Generator) -> State:
        return self._state.resample(self.player, rng)


def uses_observation(agent: Agent) -> bool:
    return getattr(agent, "uses_observation", True)


def uses_position(agent: Agent) -> bool:
    return getattr(agent, "uses_position", False)


def decide(
    agent: Agent,
    state: State,
    player: int,
    observation: np.ndarray | None,
    action_mask: np.ndarray,
    rng: np.random.Generator,
) -> int:
    """``agent``'s action for ``player`` in ``state`` (``observation`` may be None when the
    agent does not use it)."""
    if uses_position(agent):
        return agent.act(observation, action_mask, rng, position=Position(state, player))
    return agent.act(observation, action_mask, rng)


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

    def action_probabilities(
        self, observation: np.ndarray | None, action_mask: np.ndarray
    ) -> np.ndarray:
        legal = np.asarray(action_mask, dtype=bool)
        return legal / legal.sum()
