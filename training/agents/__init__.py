"""Agents for every game: per-game heuristics and experts, trained policies, search.

``register`` is this package's plugin for ``envs`` (the entry point
``hiddenhand.agents`` in ``pyproject.toml``): it names every agent here to the game
specs, so that ``env(opponent="heuristic")``, ``--agents ppo`` or a model's path work
wherever ``envs`` builds a game, while ``envs`` never names ``training``.
"""

from __future__ import annotations

import importlib

#: Agents for every game: name -> ``"module:factory"`` (``factory(game) -> agent``).
EVERY_GAME = {
    "ppo": "training.agents.policy:shipped_policy",
    "pimc": "training.agents.search:pimc",
    "ismcts": "training.agents.search:ismcts",
    "pimc_heuristic": "training.agents.search:HeuristicPIMC",
}
#: Each game's own agents: game name -> agent name -> ``"module:factory"``.
GAME_AGENTS = {
    "pickup": {"heuristic": "envs.pickup.heuristic:PickupHeuristic"},
    "pico": {
        "heuristic": "envs.pico.heuristic:PicoHeuristic",
        "nash": "training.agents.nash:PicoNash",
    },
    "forslag": {
        "heuristic": "envs.forslag.heuristic:ForslagHeuristic",
        "expert": "envs.forslag.heuristic:ForslagExpert",
    },
    "pick_and_pack": {
        "heuristic": "envs.pick_and_pack.heuristic:PickAndPackHeuristic",
        "expert": "envs.pick_and_pack.heuristic:PickAndPackExpert",
        "tactician": "envs.pick_and_pack.heuristic:PickAndPackTactician",
    },
    "easter_collection": {
        "heuristic": "envs.easter_collection.heuristic:EasterCollectionHeuristic",
        "expert": "envs.easter_collection.heuristic:EasterCollectionExpert",
    },
}


def register() -> None:
    """Register every agent and model loader of this package with ``envs``."""
    from envs.core.spec import register_agent, register_model_loader

    for name, factory in EVERY_GAME.items():
        register_agent(name, factory)
    for game, agents in GAME_AGENTS.items():
        for name, factory in agents.items():
            register_agent(name, factory, games=[game])
    register_model_loader((".pt",), "agent.pt", "training.agents.rllib_policy:load_rllib_agent")
    register_model_loader((".zip",), "", "training.agents.policy:load_policy")
    register_model_loader((".npz",), "model.npz", "training.agents.network:load_network_agent")


#: Each game's feature extractor for ``--features game``: game name -> ``"module:Class"``.
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
    module, _, name = FEATURES[game_name].partition(":")
    return getattr(importlib.import_module(module), name)
