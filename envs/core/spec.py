"""The table of games: one ``GameSpec`` per game, looked up by either of its ids."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.core.game import Game

NAMESPACE = "hiddenhand"


@dataclass(frozen=True)
class GameSpec:
    """What the core needs to know about a game to build every interface to it."""

    game_class: type[Game]
    #: PettingZoo id stem, e.g. ``"pico"`` -> ``hiddenhand/pico-v0``.
    name: str
    #: Gymnasium id stem, e.g. ``"Pico"`` -> ``hiddenhand/Pico-v0``.
    gym_name: str
    version: int = 0
    #: Agents by name -> ``"module:factory"``; ``factory(game) -> agent``. Loaded lazily so
    #: that ``envs`` never imports ``training`` at import time. "random", "ppo" (the shipped
    #: trained baseline), "pimc" and "ismcts" (search) are always present; ``make_agent``
    #: also takes a saved model's path.
    agents: dict[str, str] = field(default_factory=dict)
    #: ``"module:Class"`` of the game's feature extractor for ``--features game`` in
    #: training (empty: none); loaded lazily, as agents are.
    features: str = ""
    #: Option sets that together cover the game (player counts, variants): the conformance
    #: suite and the benchmarks run each of them.
    configurations: tuple[dict[str, Any], ...] = ({},)

    @property
    def aec_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v{self.version}"

    @property
    def gym_id(self) -> str:
        return f"{NAMESPACE}/{self.gym_name}-v{self.version}"

    def make_game(self, **options: Any) -> Game:
        return self.game_class.from_options(**options)

    def features_class(self) -> type:
        """The game's feature extractor class (``features``); ValueError if it has none."""
        if not self.features:
            raise ValueError(
                f"{self.aec_id} has no game features; games with them: "
                + ", ".join(games_with_features())
            )
        return _load(self.features)

    def agent_factory(self, name: str) -> Callable[[Game], Any]:
        entry_points = {
            "random": "envs.core.agents:RandomAgent",
            "ppo": "training.agents.policy:shipped_policy",
            "pimc": "training.agents.search:pimc",
            "ismcts": "training.agents.search:ismcts",
            **self.agents,
        }
        if name not in entry_points:
            raise ValueError(
                f"unknown agent {name!r} for {self.aec_id}; allowed agents: "
                + ", ".join(map(repr, entry_points))
            )
        return _load(entry_points[name])

    def make_agent(self, name: str, game: Game) -> Any:
        """An agent for ``game`` from a name (``agent_factory``) or a saved model's path
        (an SB3 ``.zip`` loaded by ``training.agents.policy.load_policy``, an RLlib export
        by ``training.agents.rllib_policy.load_rllib_agent``; both checked against the game)."""
        if is_rllib_export(name):
            return _load("training.agents.rllib_policy:load_rllib_agent")(name, game, self.aec_id)
        if is_model_path(name):
            return _load("training.agents.policy:load_policy")(name, game, self.aec_id)
        return self.agent_factory(name)(game)


def is_model_path(name: str) -> bool:
    """Whether an agent name is a saved model's path (``.zip``, or a file with it; or an
    RLlib export, ``is_rllib_export``)."""
    return (
        name.endswith(".zip") or Path(name).with_suffix(".zip").is_file() or is_rllib_export(name)
    )


def is_rllib_export(name: str) -> bool:
    """Whether an agent name is an RLlib export: a ``.pt`` path or a folder with ``agent.pt``."""
    return name.endswith(".pt") or (Path(name) / "agent.pt").is_file()


def games_with_features() -> list[str]:
    """The names of the games that have a feature extractor."""
    return sorted({spec.name for spec in _SPECS.values() if spec.features})


def _load(entry_point: str) -> Any:
    """The object a ``"module:attribute"`` string names."""
    module, attr = entry_point.split(":")
    return getattr(importlib.import_module(module), attr)


_SPECS: dict[str, GameSpec] = {}


def add_spec(spec: GameSpec) -> None:
    _SPECS[spec.aec_id] = spec
    _SPECS[spec.gym_id] = spec


def get_spec(env_id: str) -> GameSpec:
    if env_id not in _SPECS:
        raise ValueError(f"unknown env id {env_id!r}; registered ids: {', '.join(all_ids())}")
    return _SPECS[env_id]


def spec_of(game: Game) -> GameSpec:
    """The spec of a game instance."""
    for spec in _SPECS.values():
        if isinstance(game, spec.game_class):
            return spec
    raise ValueError(f"{type(game).__name__} is not a registered game")


def all_ids() -> list[str]:
    """The PettingZoo ids, one per game, in registration order."""
    return list(dict.fromkeys(s.aec_id for s in _SPECS.values()))
