"""Game-independent machinery, written once for every game."""

from envs.core.agents import Agent, RandomAgent
from envs.core.game import (
    Config,
    Game,
    IllegalActionError,
    State,
    counts,
    relative_seats,
    require_choice,
)
from envs.core.observation import ObservationLayout
from envs.core.spec import GameSpec

__all__ = [
    "Agent",
    "Config",
    "Game",
    "GameSpec",
    "IllegalActionError",
    "ObservationLayout",
    "RandomAgent",
    "State",
    "counts",
    "relative_seats",
    "require_choice",
]
