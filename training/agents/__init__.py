"""Agents for every game beyond the rule-based ones (``envs/<game>/heuristic.py``):
trained policies, search, Pico's equilibrium, saved models.

``register`` is this package's plugin for ``envs`` (the entry point
``hiddenhand.agents`` in ``pyproject.toml``): it names every agent here to the game
specs, so that ``env(opponent="ppo")``, ``--agents pimc`` or a model's path work
wherever ``envs`` builds a game, while ``envs`` never names ``training``. The agents'
modules import numpy and ``envs`` only (torch, SB3 and Ray where a model is loaded),
so they are named as objects; the game features, whose module imports SB3, by
``"module:Class"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envs.core.spec import register_agent, register_model_loader, resolve
from training.agents.nash import PicoNash
from training.agents.network import load_network_agent
from training.agents.policy import load_policy, shipped_policy
from training.agents.rllib_policy import load_rllib_agent
from training.agents.search import HeuristicPIMC, ismcts, pimc

#: Agents for every game: name -> ``factory(game) -> agent``.
EVERY_GAME: dict[str, Callable[..., Any]] = {
    "ppo": shipped_policy,
    "pimc": pimc,
    "ismcts": ismcts,
    "pimc_heuristic": HeuristicPIMC,
}
#: Agents of one game: game name -> agent name -> ``factory(game) -> agent``.
GAME_AGENTS: dict[str, dict[str, Callable[..., Any]]] = {"pico": {"nash": PicoNash}}


def register() -> None:
    """Register every agent and model loader of this package with ``envs``."""
    for name, factory in EVERY_GAME.items():
        register_agent(name, factory)
    for game, agents in GAME_AGENTS.items():
        for name, factory in agents.items():
            register_agent(name, factory, games=[game])
    register_model_loader((".pt",), "agent.pt", load_rllib_agent)
    register_model_loader((".zip",), "", load_policy)
    register_model_loader((".npz",), "model.npz", load_network_agent)


#: Each game's feature extractor for ``--features game``: game name -> ``"module:Class"``
#: (its module imports SB3, so it is imported only when used).
FEATURES = {
    "forslag": "training.agents.features:ForslagFeatures",
    "easter_collection": "training.agents.features:EasterCollectionFeatures",
    "pick_and_pack": "training.agents.features:PickAndPackDecisionFeatures",
}


def games_with_features() -> list[str]:
    """The names of the games that have a feature extractor."""
    return sorted(FEATURES)


def features_class(game_name: str) -> type:
    """A game's feature extractor class; ValueError naming the games that have one."""
    if game_name not in FEATURES:
        raise ValueError(
            f"{game_name} has no game features; games with them: "
            + ", ".join(games_with_features())
        )
    return resolve(FEATURES[game_name])
