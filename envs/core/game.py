"""The rules interface every game implements: a pure, seeded state machine.

A game is two classes and no RL imports:

- ``Game``: the static description (config, number of actions, observation
  layout) and the factory of initial states.
- ``State``: one position. ``to_act()`` names the players who must choose now;
  more than one means a hidden simultaneous choice, which the adapters in this
  package collect one commitment at a time and hand to ``apply`` together.

Cross-cutting decisions live here, once: ``State.apply`` validates the joint
action (every chooser present, every action an integer that is legal) and raises
a ``ValueError`` naming the player, the action and the legal actions, leaving
the state unchanged; games implement only ``_apply`` for validated input.
"""

from __future__ import annotations

import abc
import ast
import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from envs.core.observation import ObservationLayout


class IllegalActionError(ValueError):
    """An action that the rules do not allow now. The state is unchanged."""


class ActionTypeError(TypeError, ValueError):
    """An action that is not an integer at all (a float, a string, an array of several
    numbers). Never scored as an illegal move: it is a bug in the caller, not a move."""


def as_action(action: Any) -> int:
    """``action`` as a Python int: an int, a numpy integer, or an integer array holding one
    number (what ``model.predict`` returns: shape ``()`` or ``(1,)``). Anything else raises
    ``ActionTypeError``."""
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        if action.dtype.kind in "iu":
            return int(action.reshape(()))
    elif isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    described = (
        f"an array of dtype {action.dtype} and shape {action.shape}"
        if isinstance(action, np.ndarray)
        else f"{action!r} of type {type(action).__name__}"
    )
    raise ActionTypeError(
        "an action must be an integer: an int, a numpy integer, or an integer array of shape "
        f"() or (1,); got {described}"
    )


class State(abc.ABC):
    """One position of a game. Subclasses keep their own fields and RNG."""

    def __init__(self, game: Game, rng: np.random.Generator) -> None:
        self.game = game
        self.rng = rng

    # --- what subclasses implement -------------------------------------------------
    @abc.abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """The players who must choose now, in seat order; empty when terminal."""

    @abc.abstractmethod
    def legal_mask(self, player: int) -> np.ndarray:
        """Boolean mask of length ``game.num_actions``; all False if ``player`` is not choosing."""

    @abc.abstractmethod
    def _apply(self, joint: Mapping[int, int]) -> None:
        """Apply one validated legal action per chooser (keys in seat order)."""

    @abc.abstractmethod
    def scores(self) -> np.ndarray:
        """Game points of every player so far (float array of length num_players)."""

    @abc.abstractmethod
    def __str__(self) -> str:
        """The table as a spectator sees it: public information only."""

    def private_view(self, player: int) -> str:
        """What ``player`` knows that the spectator's view (``__str__``) does not show, as
        text lines in the same card names: their own hand, secret set-up ... and never
        anything of another player's. Empty for games without private information (the
        default); games with hidden state override it."""
        return ""

    # --- shared behaviour ----------------------------------------------------------
    def is_terminal(self) -> bool:
        return not self.to_act()

    def legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(self.legal_mask(player)).tolist()

    def check_action(self, player: int, action: Any) -> int:
        """Return ``action`` as an int if ``player`` may take it now, else raise."""
        choosers = self.to_act()
        if player not in choosers:
            raise IllegalActionError(
                f"player {player} is not choosing now; the players to act are {list(choosers)}"
            )
        value = as_action(action)
        mask = self.legal_mask(player)
        if not (0 <= value < len(mask) and mask[value]):
            legal = self.legal_actions(player)
            names = ", ".join(f"{a} ({self.game.action_name(a)})" for a in legal)
            raise IllegalActionError(
                f"action {value} is illegal for player {player}; legal actions: {names}"
            )
        return value

    def apply(self, joint: Mapping[int, Any]) -> None:
        """Apply one action for every player in ``to_act()``; raise and change nothing if any
        is missing, extra or illegal."""
        choosers = self.to_act()
        if set(joint) != set(choosers):
            raise IllegalActionError(
                f"expected one action for each of players {list(choosers)}, "
                f"got actions for {sorted(joint)}"
            )
        checked = {p: self.check_action(p, joint[p]) for p in choosers}
        self._apply(checked)

    def apply_legal(self, joint: Mapping[int, int]) -> None:
        """``apply`` for a caller that took every action from ``legal_mask`` just now, an
        int per chooser in seat order (a search's rollouts): the same move, not checked
        again. Anything else corrupts the state: use ``apply``."""
        self._apply(joint)

    def random_action(self, player: int, rng: np.random.Generator) -> int:
        """A uniformly random legal action of ``player``: one draw, ``rng.integers(k)``,
        picks among the ``k`` legal actions in ascending order."""
        legal = self.legal_mask(player).nonzero()[0]
        return int(legal[rng.integers(len(legal))])

    def random_play_out(self, rng: np.random.Generator) -> np.ndarray:
        """Play to the end (in place) with ``random_action`` for every chooser, in seat
        order; return the final scores. A game may override it with a faster rollout
        that makes the same draws (a search's random rollouts call it)."""
        while choosers := self.to_act():
            self.apply_legal({p: self.random_action(p, rng) for p in choosers})
        return self.scores()

    def clone(self) -> State:
        """An independent copy of the state; the (immutable) game is shared, not copied."""
        return copy.deepcopy(self, {id(self.game): self.game})

    def resample(self, player: int, rng: np.random.Generator) -> State:
        """A determinisation: a full state that ``player`` cannot tell from this one.

        Everything ``player`` has observed stays as it is; everything hidden from them
        (other players' private cards, the order of the deck, other seats' hidden
        arrangements) is drawn again at random, consistently with what they know. The
        copy gets its own RNG from ``rng``, so future chance events differ too. Search
        agents use it; the leak tests check that every view of ``player`` is the same
        in the real state and in its determinisations. Games override it (the default
        suits games without hidden state, such as Pico).
        """
        if self.game.has_hidden_state:
            raise NotImplementedError(f"{type(self).__name__} does not implement resample()")
        copy_ = self.clone()
        copy_.rng = np.random.default_rng(rng.integers(2**63))
        return copy_

    def check_invariants(self) -> None:
        """Raise AssertionError if the state is inconsistent (a card in two places, a
        score that its pile does not explain ...). Games override it; the invariant
        tests call it after every step of random games."""
        return None


@dataclasses.dataclass(frozen=True)
class Config:
    """Base of every game's options. Subclasses add fields and validate in ``validate``."""

    num_players: int = 2

    def validate(self) -> None:
        """Raise ValueError naming what is wrong and what is allowed."""

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Config:
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(map(repr, unknown))}; "
                f"allowed options: {', '.join(allowed)}"
            )
        config = cls(**options)
        config.validate()
        return config

    @classmethod
    def parse_options(cls, texts: Iterable[str]) -> dict[str, Any]:
        """Options from command-line ``key=value`` texts, each value typed by its field:
        ``board_play=simultaneous``, ``num_players=3``, ``chain_rush_orders=false``,
        ``target_score=none``, ``points={2: 1, 3: 1}`` (Python literals for containers).
        Raises ValueError naming the option and what is allowed; the values themselves are
        checked when the game is made."""
        types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        options: dict[str, Any] = {}
        for text in texts:
            key, equals, raw = text.partition("=")
            key = key.strip().replace("-", "_")
            if not equals or not key:
                raise ValueError(f"an option is key=value, got {text!r}")
            if key not in types:
                raise ValueError(f"unknown option {key!r}; allowed options: {', '.join(types)}")
            options[key] = _parse_value(key, types[key], raw.strip())
        return options


def _parse_value(key: str, type_text: str, raw: str) -> Any:
    """``raw`` read as the type a ``Config`` field declares (as text, e.g. ``"int | None"``)."""
    if type_text == "str":
        return raw
    if type_text == "bool":
        words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
        if raw.lower() not in words:
            raise ValueError(f"option {key}={raw!r}: expected true or false")
        return words[raw.lower()]
    if raw.lower() == "none" and "None" in type_text:
        return None
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        if "str" in type_text.split(" | "):
            return raw
        raise ValueError(f"option {key}={raw!r}: expected a value of type {type_text}") from None


def not_allowed(name: str, value: Any, allowed: str) -> ValueError:
    """The error for an option's value outside what ``allowed`` describes."""
    return ValueError(f"{name}={value!r} is not allowed; allowed values: {allowed}")


def require_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raise ``not_allowed`` if ``value`` is not one of ``allowed``. Integers only match
    integers (``3.0`` is not the player count 3) and booleans only booleans (``True`` is
    not 1)."""
    flags = all(isinstance(a, bool) for a in allowed)
    integers = not flags and all(isinstance(a, int) for a in allowed)
    wrong_type = isinstance(value, bool) != flags or (
        integers and not isinstance(value, (int, np.integer))
    )
    if wrong_type or value not in allowed:
        raise not_allowed(name, value, ", ".join(map(repr, allowed)))


class Game(abc.ABC):
    """A game's static description. Subclasses set ``name``, ``config_class``,
    ``num_actions`` and ``observation_layout`` and implement the two factories."""

    name: ClassVar[str]
    config_class: ClassVar[type[Config]] = Config
    #: Whether any player ever lacks information about the state outside a pending
    #: simultaneous choice (hidden hands, deck order ...). Pico has none. A game may set
    #: it per instance when it depends on the options (Pick & Pack: only with a secret
    #: set-up). Game objects do not change after construction (states share them).
    has_hidden_state: ClassVar[bool] = True
    #: Whether every seat chooses at every step: simultaneous choices only, no turns
    #: (Pico; Easter collection's secret positions, per instance).
    every_seat_chooses: ClassVar[bool] = False
    #: Upper bound on the decisions (actions, counting every chooser) in one game.
    max_decisions: ClassVar[int]

    def __init__(self, config: Config) -> None:
        self.config = config
        self.num_players: int = config.num_players

    num_actions: int
    observation_layout: ObservationLayout

    @classmethod
    def from_options(cls, **options: Any) -> Game:
        return cls(cls.config_class.from_options(options))

    @abc.abstractmethod
    def new_initial_state(self, rng: np.random.Generator) -> State:
        """A new game, dealt with ``rng`` (the state keeps it for later chance events)."""

    def encode(self, state: State, player: int, views: dict[str, np.ndarray]) -> None:
        """Write ``player``'s observation of ``state`` into the zeroed named ``views``.

        A game implements either this or ``observation`` (returning the flat vector
        directly, e.g. as one gather from a buffer its state keeps); this default serves
        the second kind by copying that vector into the views."""
        if type(self).observation is Game.observation:
            raise NotImplementedError(
                f"{type(self).__name__} must implement encode() or observation()"
            )
        flat = self.observation(state, player)
        for name, view in self.observation_layout.views(flat).items():
            views[name][...] = view

    def action_name(self, action: int) -> str:
        return str(action)

    def __getstate__(self) -> dict[str, Any]:
        # The scratch buffer's views would not survive a copy as views: drop it, and the
        # copy makes its own on first use.
        state = self.__dict__.copy()
        state.pop("_scratch", None)
        return state

    def observation(self, state: State, player: int) -> np.ndarray:
        """The flat observation vector of ``player`` (a new array), made with ``encode``."""
        scratch = self.__dict__.get("_scratch")
        if scratch is None:  # one zeroed buffer with its views, reused for every encoding
            flat = self.observation_layout.zeros()
            scratch = self._scratch = (flat, self.observation_layout.views(flat))
        flat, views = scratch
        flat.fill(0.0)
        self.encode(state, player, views)
        return flat.copy()


def relative_seats(player: int, num_players: int) -> list[int]:
    """Seats in observer order: ``player`` first, then the others going left."""
    return [(player + k) % num_players for k in range(num_players)]


def counts(values: Iterable[int], size: int) -> np.ndarray:
    """How many times each index in ``range(size)`` appears in ``values``."""
    return np.bincount(np.fromiter(values, dtype=np.int64), minlength=size)[:size]
