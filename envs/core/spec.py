"""The table of games: one ``GameSpec`` per game, looked up by either of its ids, and
the agents other packages register for them.

``envs`` knows the agents that need nothing but numpy: ``random`` and each game's
rule-based agents (``GameSpec.rule_agents``, from ``envs/<game>/heuristic.py``). Every
other agent (the shipped trained policies, search, saved models) comes from a plugin: a
function registered under the entry-point group ``hiddenhand.agents`` (this
distribution's own is ``training.agents:register``, declared in ``pyproject.toml``),
called once, the first time an agent is looked up. A plugin calls ``register_agent``
and ``register_model_loader`` with the objects, or with ``"module:attribute"`` strings
where naming them spares a heavy import until they are used. So the dependency of
``training`` on ``envs`` is the only arrow between them, and it is declared.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from envs.core.agents import RandomAgent
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
    #: Option sets that together cover the game (player counts, variants): the conformance
    #: suite and the benchmarks run each of them.
    configurations: tuple[dict[str, Any], ...] = ({},)
    #: The batched engine (``envs/<game>/batched.py``, a ``BatchedEngine``), if the game has one.
    engine: type | None = None
    #: The game's rule-based agents (``envs/<game>/heuristic.py``): name -> ``factory(game)``.
    rule_agents: dict[str, Callable[[Game], Any]] = field(default_factory=dict, hash=False)

    @property
    def aec_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v{self.version}"

    @property
    def gym_id(self) -> str:
        return f"{NAMESPACE}/{self.gym_name}-v{self.version}"

    def make_game(self, **options: Any) -> Game:
        return self.game_class.from_options(**options)

    @property
    def agents(self) -> dict[str, Factory]:
        """The agents of this game: name -> ``factory`` (or the ``"module:factory"`` naming
        it), where ``factory(game)`` makes the agent: ``random`` first, the plugins' agents
        of every game, then the game's own (rule-based, then the plugins')."""
        _load_plugins()
        return (
            {"random": RandomAgent} | _AGENTS["*"] | self.rule_agents | _AGENTS.get(self.name, {})
        )

    def agent_factory(self, name: str) -> Callable[[Game], Any]:
        agents = self.agents
        if name not in agents:
            raise ValueError(
                f"unknown agent {name!r} for {self.aec_id}; allowed agents: "
                + ", ".join(map(repr, agents))
                + ("" if _PLUGINS_FOUND else _NO_PLUGINS)
            )
        return resolve(agents[name])

    def make_agent(self, name: str, game: Game) -> Any:
        """An agent for ``game`` from a name (``agent_factory``) or a saved model's path
        (loaded by the first registered model loader that recognises it, which checks
        the model against the game)."""
        loader = model_loader(name)
        if loader is not None:
            return resolve(loader)(name, game, self.aec_id)
        return self.agent_factory(name)(game)


# --- plugins -------------------------------------------------------------------------
#: An object as a plugin registers it: itself, or a ``"module:attribute"`` string naming it
#: (imported when first used: for objects whose module imports torch, Ray and the like).
Factory = Callable[..., Any] | str
#: Plugins' agents: game name (``"*"``: every game) -> agent name -> factory.
_AGENTS: dict[str, dict[str, Factory]] = {"*": {}}
#: Plugins' model loaders, in registration order: (suffixes, file inside a folder,
#: ``load``), ``load(path, game, env_id) -> agent``.
_MODEL_LOADERS: list[tuple[tuple[str, ...], str, Factory]] = []
_PLUGINS_FOUND = False
_NO_PLUGINS = (
    " (no agent plugins are installed: install the package, pip install -e ., so that "
    "its hiddenhand.agents entry point registers the search and trained agents)"
)


def register_agent(name: str, factory: Factory, games: Iterable[str] = ("*",)) -> None:
    """Make ``factory`` (``factory(game) -> agent``, or a ``"module:attribute"`` naming it)
    the agent ``name`` of the games named (``"*"``: every game)."""
    for game in games:
        _AGENTS.setdefault(game, {})[name] = factory


def register_model_loader(suffixes: tuple[str, ...], inside: str, load: Factory) -> None:
    """Load saved models whose path ends with one of ``suffixes`` (or with the suffix
    left off, when that file exists), or folders holding the file ``inside``, with
    ``load`` (``load(path, game, env_id) -> agent``, or a ``"module:attribute"`` naming
    it)."""
    _MODEL_LOADERS.append((suffixes, inside, load))


@functools.cache
def _load_plugins() -> None:
    global _PLUGINS_FOUND
    for entry_point in entry_points(group="hiddenhand.agents"):
        entry_point.load()()
        _PLUGINS_FOUND = True


def model_loader(name: str) -> Factory | None:
    """The loader of a saved model's path (as registered), or None if ``name`` is not
    one (see ``register_model_loader``)."""
    _load_plugins()
    for suffixes, inside, load in _MODEL_LOADERS:
        if name.endswith(suffixes) or (inside and (Path(name) / inside).is_file()):
            return load
        if any(Path(name).with_suffix(suffix).is_file() for suffix in suffixes):
            return load
    return None


def is_model_path(name: str) -> bool:
    """Whether an agent name is a saved model's path (``model_loader``)."""
    return model_loader(name) is not None


def resolve(named: Factory) -> Any:
    """The object itself, or the one a ``"module:attribute"`` string names."""
    if not isinstance(named, str):
        return named
    module, attr = named.split(":")
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
