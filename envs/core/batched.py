"""The batched engine: what every game's ``batched.py`` shares, written once.

A batched engine plays ``B`` games of one configuration in lockstep, their state as
numpy arrays with a game axis (``B`` from 1 to tens of thousands). It is the batched
multi-agent interface: every seat's observation, mask and action are arrays with a
game axis and a seat axis, and one ``step`` reveals one joint choice in every game
(or in the games named):

```python
import numpy as np
from envs.core.batched import random_actions
from envs.pico.batched import PicoVector  # each game's engine: envs/<game>/batched.py

engine = PicoVector(num_envs=1024, num_players=2, reward_mode="win", seed=0)
observations = engine.observations()   # (B, N, obs_size) float32, each seat's own view
masks = engine.masks()                 # (B, N, num_actions) bool; all False off turn
choosers = engine.choosers()           # (B, N) bool: who commits in this choice
actions = random_actions(masks, np.random.default_rng(0))  # (B, N) integers
rewards, terminated, info = engine.step(actions)
# rewards (B, N) float64, terminated (B,) bool, info a dict of arrays (below)
```

The engines are ``PicoVector``, ``PickupVector``, ``ForslagVector``,
``PickAndPackVector`` and ``EasterCollectionVector``, each in its game's ``batched.py``
and named by its spec (``GameSpec.engine``; ``engine_class(spec)`` gives it, or an error
naming the games that have one); ``envs.make_vec`` wraps one as an SB3 ``VecEnv`` with
opponents in the other seats.

The same game as the rules, seen the same way: ``observations()[b, p]`` is exactly
what ``Game.observation`` gives seat ``p`` (same layout, float32), ``masks()[b, p]``
what ``Table.legal_mask`` gives it, ``choosers()[b]`` the state's ``to_act()`` and
``scores()[b]`` its ``scores()``. Each game's engine is checked against its rules by
differential tests: ``tests/test_batched_every_game.py`` over every game and
configuration, and ``tests/test_batched_<game>.py`` for what is the game's own.

- **Choosers.** Only the seats in ``choosers()`` commit; ``step`` reads only their
  actions (the others' entries are ignored, any integer). Pico's reveals take every
  seat; turn-based phases take one.
- **Dealing.** ``reset(seed)`` makes the engine's ``numpy.random.Generator`` and deals
  every game; every later deal (``redeal``, the automatic reset) draws from the same
  generator. A batch is reproducible from its seed and its actions, but a game's
  deal is not the one the rules' ``new_initial_state`` draws from the same seed: to
  replay given positions, ``load(states, games)`` puts reference states (any
  non-terminal position, e.g. a search's determinisations) into rows.
- **Automatic reset.** A game that ends is dealt again before ``step`` returns
  (as in SB3's ``VecEnv``). ``info["done"]`` holds the indices of the games that
  ended (ascending), ``info["terminal_observations"]`` every seat's final view
  (``(len(done), N, obs_size)``) and ``info["terminal_scores"]`` their scores.
- **Rewards** follow ``envs.core.rewards``: ``"win"`` gives every seat its zero-sum
  share at the end (tied winners share), ``"score"`` the change in (own score - mean
  of the others') at every reveal.
- **Bad input** (a wrong shape or dtype, an illegal action of a chooser) raises
  ``IllegalActionError`` (a ValueError) naming the game, the seat, the action and the
  legal actions, and changes nothing.

- **Copies.** ``copy_games(source, rows, games)`` puts another engine's games into
  rows, to play on from them (from an engine that keeps its observations: see
  ``observed``), and ``state_dict()`` / ``load_state_dict(state)`` save and restore
  every game and the generator, to play on later. Each engine names the arrays that
  hold its games in ``state_arrays``.

A game's engine subclasses ``BatchedEngine``, sets ``game_class`` and writes the rules:
``_allocate`` (its arrays), ``_deal`` and ``_load`` (start rows), ``observe``,
``masks``, ``choosers``, ``scores`` and ``_apply`` (one reveal in some rows), and names
its ``state_arrays`` (with ``_restored`` where it keeps more).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.core.game import Game, IllegalActionError, State
from envs.core.rewards import check_reward_mode, score_margins, win_rewards
from envs.core.spec import GameSpec, all_ids, get_spec


def engine_class(spec: GameSpec) -> type[BatchedEngine]:
    """The batched engine class of a game (``spec.engine``); ValueError naming the games
    that have one."""
    if spec.engine is None:
        specs = [get_spec(env_id) for env_id in all_ids()]
        having = ", ".join(s.gym_id for s in specs if s.engine is not None)
        raise ValueError(
            f"{spec.gym_id} has no batched engine (make_vec); games with one: {having}. "
            "Use gymnasium.make with SB3's DummyVecEnv or SubprocVecEnv for the others."
        )
    return spec.engine


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform legal action for every row of ``masks`` (``(..., num_actions)`` bool);
    0 where a row has none. One draw per row with a choice, a rank below its number of
    legal actions, picks that legal action from the positions of every legal action in
    order: a few passes over the masks' bytes, where a random key per action costs a
    draw each."""
    flat = masks.reshape(-1, masks.shape[-1])
    actions = np.zeros(len(flat), dtype=np.int64)
    if flat.shape[1] < 256:  # row sums in bytes (exact below 256): several times `sum`'s speed
        counts = np.einsum("ij->i", flat.view(np.uint8)).astype(np.int64)
    else:
        counts = flat.sum(axis=1)
    rows = np.flatnonzero(counts)
    if len(rows):
        legal = np.flatnonzero(flat)  # row * num_actions + action, row by row
        starts = np.cumsum(counts) - counts  # where each row's legal actions start in `legal`
        ranks = rng.integers(counts[rows])
        actions[rows] = legal[starts[rows] + ranks] - rows * flat.shape[1]
    return actions.reshape(masks.shape[:-1])


class BatchedEngine(abc.ABC):
    """``num_envs`` games of ``game_class`` in lockstep (see the module docstring).

    Args:
        num_envs: the number of games ``B``.
        reward_mode: ``"win"`` or ``"score"``.
        seed: the seed of the first ``reset`` (``reset`` is called here).
        **options: the game's options (``num_players`` ...), checked by the game.
    """

    game_class: type[Game]
    #: Whether the generator draws after the deal (chance during play); False lets a
    #: search skip dealing the rows its rollouts finish, drawing nothing it would use.
    draws_after_deal: bool = True
    #: Whether the observations are kept up to date as the games are played. A caller
    #: that reads only masks, choosers and scores (a search's rollouts, through
    #: ``advance``) may set it False once, before playing; an engine may then skip
    #: writing its observations, and reading one raises.
    observed: bool = True
    #: The attributes that hold the games' state (arrays, the game axis first), which
    #: ``copy_games`` copies; empty where an engine does not name them.
    state_arrays: tuple[str, ...] = ()

    def __init__(
        self, num_envs: int, reward_mode: str = "win", seed: int | None = None, **options: Any
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        check_reward_mode(reward_mode)
        self.game = game = self.game_class.from_options(**options)
        self.num_envs = int(num_envs)
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.observation_layout = game.observation_layout
        self.observation_size = game.observation_layout.size
        self.reward_mode = reward_mode
        self._all = np.arange(self.num_envs)
        self._margins = np.zeros((self.num_envs, self.num_players))
        self._allocate()
        self.reset(seed)

    # --- what a game's engine writes -------------------------------------------------
    @abc.abstractmethod
    def _allocate(self) -> None:
        """Create the state arrays for ``num_envs`` games (values are set by ``_deal``)."""

    @abc.abstractmethod
    def _deal(self, games: np.ndarray) -> None:
        """Start new games in rows ``games`` (ascending indices), drawing from ``self.rng``."""

    @abc.abstractmethod
    def _load(self, games: np.ndarray, states: Sequence[State]) -> None:
        """Put ``states[i]`` (reference states of this configuration) into row ``games[i]``."""

    @abc.abstractmethod
    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Seat ``seats[i]``'s observation of game ``games[i]``: ``(k, obs_size)`` float32."""

    @abc.abstractmethod
    def masks(self) -> np.ndarray:
        """Every seat's legal actions: ``(B, N, num_actions)`` bool, all False for a seat
        that does not choose now."""

    @abc.abstractmethod
    def choosers(self) -> np.ndarray:
        """Who commits in the current choice of every game: ``(B, N)`` bool."""

    @abc.abstractmethod
    def scores(self) -> np.ndarray:
        """Every seat's score (``State.scores``): ``(B, N)`` float64."""

    @abc.abstractmethod
    def _apply(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Reveal ``actions`` (``(k, N)``, legal for the choosers) in rows ``games``
        (ascending); return which of them ended, ``(k,)`` bool. The rows that ended keep
        their final state until ``step`` has read it."""

    # --- shared ----------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """A new generator from ``seed`` and a new deal in every game."""
        self.rng = np.random.default_rng(seed)
        self.redeal(self._all)

    def redeal(self, games: np.ndarray) -> None:
        """Deal new games in rows ``games`` (indices), from the engine's generator."""
        games = np.unique(np.asarray(games, dtype=np.int64))
        if len(games):
            self._deal(games)
            self._started(games)

    def load(self, states: Sequence[State], games: np.ndarray | None = None) -> None:
        """Put reference states (``Table.state``, ``State.resample``...; any position of
        this configuration that is not over) into rows ``games`` (default: all ``B``)."""
        games = self._all if games is None else np.asarray(games, dtype=np.int64)
        if len(states) != len(games) or len(np.unique(games)) != len(games):
            raise ValueError(f"load needs one state per distinct row: {len(states)} for {games}")
        if len(games) and (games.min() < 0 or games.max() >= self.num_envs):
            raise ValueError(f"rows must be in 0-{self.num_envs - 1}, got {games}")
        for state in states:
            if state.game.config != self.game.config or state.is_terminal():
                raise ValueError("load takes positions of this configuration that are not over")
        order = np.argsort(games)
        self._load(games[order], [states[i] for i in order])
        self._started(games[order])

    def copy_games(self, source: BatchedEngine, rows: np.ndarray, games: np.ndarray) -> None:
        """Put the games ``rows`` of ``source`` (an engine of the same configuration) into
        this engine's rows ``games``, to play on from copies of them: a learner that
        tries every joint choice of a reveal, say. The generator is not copied, so where
        the game draws chance during play (Pickup's next hand) the copies draw their own."""
        if type(source) is not type(self) or source.game.config != self.game.config:
            raise ValueError("copy_games copies from an engine of the same configuration")
        games = np.asarray(games, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        for name in self._state_names():
            getattr(self, name)[games] = getattr(source, name)[rows]
        self._restored(games)

    def state_dict(self) -> dict[str, Any]:
        """Every game's state and the generator's, copied (arrays by name, and ``"rng"``),
        with the game's options (``"options"``): an engine of the same configuration and
        size that loads it (``load_state_dict``) plays on exactly as this one would, draws
        included (a learner's ``--resume``)."""
        state: dict[str, Any] = {name: getattr(self, name).copy() for name in self._state_names()}
        return state | {"rng": self.rng.bit_generator.state, "options": self._options()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take the games and the generator of ``state_dict``; ValueError, changing nothing,
        where ``state`` is not of an engine of this kind, configuration and size."""
        names = self._state_names()
        if set(state) != {*names, "rng", "options"}:
            raise ValueError(
                f"a state of {type(self).__name__} has {sorted(names)}, rng and options"
            )
        options = self._options()
        if state["options"] != options:
            raise ValueError(
                f"a state of {self.game.name} with options {state['options']}; this engine's "
                f"are {options}"
            )
        for name in names:
            mine, theirs = getattr(self, name), np.asarray(state[name])
            if theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                raise ValueError(
                    f"state {name!r} is {theirs.dtype} {theirs.shape}; this engine's is "
                    f"{mine.dtype} {mine.shape} (same configuration and num_envs needed)"
                )
        for name in names:
            getattr(self, name)[...] = state[name]
        self.rng.bit_generator.state = state["rng"]
        self._restored(self._all)

    def _options(self) -> dict[str, Any]:
        return dataclasses.asdict(self.game.config)

    def _restored(self, games: np.ndarray) -> None:  # noqa: B027 (an optional hook)
        """Bring what the engine keeps beside its ``state_arrays`` (caches, arrays derived
        from the state) up to date in rows ``games``, once ``copy_games`` or
        ``load_state_dict`` has written their state; nothing by default."""

    def _state_names(self) -> tuple[str, ...]:
        if not self.state_arrays:
            raise NotImplementedError(f"{type(self).__name__} does not name its state arrays")
        return (*self.state_arrays, "_margins")

    def _started(self, games: np.ndarray) -> None:
        self._margins[games] = score_margins(self.scores()[games])

    def observations(self) -> np.ndarray:
        """Every seat's observation of every game: ``(B, N, obs_size)`` float32."""
        return self._every_seat(self._all)

    def observations_of(self, seats: np.ndarray) -> np.ndarray:
        """One seat's observation per game (``seats``: ``(B,)``): ``(B, obs_size)``."""
        return self.observe(self._all, np.asarray(seats, dtype=np.int64))

    def _every_seat(self, games: np.ndarray) -> np.ndarray:
        views = [self.observe(games, np.full(len(games), p)) for p in range(self.num_players)]
        return np.stack(views, axis=1)

    def advance(self, actions: np.ndarray, games: np.ndarray) -> np.ndarray:
        """``step`` for a search's rollouts, whose actions come from ``masks()``: reveal
        ``actions`` (``(k, N)``, not checked) in rows ``games`` (ascending); return which
        ended. No rewards, observations or new deals: a row that ended keeps its final
        state (``scores()``) until ``redeal`` or ``load``."""
        return self._apply(games, np.where(self.choosers()[games], actions, 0))

    def step(
        self, actions: np.ndarray, games: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Reveal one joint choice in every game, or in the rows ``games`` (ascending
        distinct indices): ``actions[i, p]`` is seat ``p``'s action in the i-th of them.

        Returns ``rewards`` (``(k, N)`` float64), ``terminated`` (``(k,)`` bool) and
        ``info`` (see the module docstring; ``info["done"]`` indexes all ``B`` rows)."""
        games = self._all if games is None else np.asarray(games, dtype=np.int64)
        actions = np.asarray(actions)
        shape = (len(games), self.num_players)
        if actions.shape != shape or actions.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions must be an integer array of shape {shape}, got "
                f"{actions.dtype} {actions.shape}"
            )
        actions = actions.astype(np.int64, copy=False)
        every = games is self._all  # no row gathers when every game steps
        choosing = self.choosers() if every else self.choosers()[games]
        masks = self.masks() if every else self.masks()[games]
        clipped = actions.clip(0, self.num_actions - 1)
        cells = np.arange(0, clipped.size * self.num_actions, self.num_actions)
        chosen = masks.reshape(-1).take(cells + clipped.ravel()).reshape(shape)
        legal = ~choosing | ((clipped == actions) & chosen)
        if not legal.all():
            row, seat = (int(i) for i in np.argwhere(~legal)[0])
            names = ", ".join(
                f"{a} ({self.game.action_name(int(a))})" for a in np.flatnonzero(masks[row, seat])
            )
            raise IllegalActionError(
                f"game {int(games[row])}: action {int(actions[row, seat])} is illegal for "
                f"player {seat}; legal actions: {names}"
            )
        terminated = self._apply(games, np.where(choosing, actions, 0))
        scores = self.scores() if every else self.scores()[games]
        done = games[terminated]
        if self.reward_mode == "score":
            margins = score_margins(scores)
            rewards = margins - self._margins[games]
            self._margins[games] = margins
        else:
            rewards = np.zeros(shape)
            if len(done):
                rewards[terminated] = win_rewards(scores[terminated])
        info = {
            "done": done,
            "terminal_observations": self._every_seat(done)
            if len(done)
            else np.zeros((0, self.num_players, self.observation_size), dtype=np.float32),
            "terminal_scores": scores[terminated],
        }
        self.redeal(done)
        return rewards, terminated, info
