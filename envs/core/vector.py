"""Batched engines behind a Stable-Baselines3 ``VecEnv``: one learning seat in each of B
games, the other seats played inside ``step_wait`` by batched opponents.

```python
import envs
from sb3_contrib import MaskablePPO

vec_env = envs.make_vec("hiddenhand/Pico-v0", num_envs=64, opponent="heuristic", seed=0)
model = MaskablePPO("MlpPolicy", vec_env, n_steps=64).learn(100_000)
```

``make_vec`` is the batched counterpart of the Gymnasium single-agent view
(``envs.core.single_agent``) for the games that have a batched engine (a
``vector.py`` beside their rules, named by their spec's ``engine``). It plays the same game, seen the same
way: the observation is the learner's flat vector (the same layout and values as
the Gymnasium view's), ``action_masks()`` gives the learner's legal actions (and
``env_method("action_masks")``, which sb3-contrib's MaskablePPO calls, one row per
game), the reward modes are the same and the learner's reward includes what
happens on the opponents' moves. As in every SB3 ``VecEnv``, a finished game is
dealt again at once: its last observation is ``infos[i]["terminal_observation"]``,
with ``infos[i]["seat"]`` and ``infos[i]["scores"]`` (the final game points, seat
order). An illegal action ends the learner's game with ``illegal_reward``, as in the
Gymnasium view (``infos[i]["illegal_action"]`` says why), and a new game starts.

The learner's seat is drawn at random for each game at every new deal (or fixed
by ``seat=``). Seeding: ``make_vec(seed=...)`` or SB3's ``seed()`` before ``reset()``
seeds the engine's deals (``seed``) and, apart, the seats and opponents' draws.

Opponents: one for every other seat, a sequence with one per other seat (going left
from the learner), or a weighted mix ``{opponent: weight}`` from which each other
seat's opponent is drawn at every deal; each distinct opponent runs once per step for
all the seats it plays:

- ``"random"``: uniform over the legal actions;
- ``"heuristic"``: the game's batched heuristic where its engine has one
  (``heuristic_actions``, making the same choices as the game's heuristic agent),
  else the heuristic agent game by game;
- a saved model's path, another agent name the game knows, or an agent object: a
  ``PolicyAgent`` (anything with ``logits_batch``) in one forward pass for all games
  (greedy when ``deterministic``, else sampled); an object with
  ``act_batch(observations, masks, rng) -> actions`` as it is; any other agent
  (``act``) or function ``(observation, action_mask, rng) -> int`` game by game.

The batched multi-agent interface is the engine itself (``envs.pico.vector.PicoVector``):
all seats' observations, masks and actions as arrays, one joint action per game a step.

The engines are ``envs.core.batched.BatchedEngine``s. Where a game's turns leave
the learner out (``choosers()``), the opponents play those turns inside the same
``step``; what is revealed before the learner's first choice in a game reaches it
with its first step, as in the Gymnasium view.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from envs.core.batched import random_actions
from envs.core.game import Game, require_choice
from envs.core.single_agent import OpponentSpec, resolve_agent
from envs.core.spec import GameSpec, all_ids, get_spec


def engine_class(spec: GameSpec) -> type:
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


# --- batched opponents ---------------------------------------------------------------
class _RandomOpponent:
    uses_observation = False

    def choose(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return random_actions(masks, rng)


class _HeuristicOpponent:
    uses_observation = True

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return self.engine.heuristic_actions(observations, masks, rng)


class _PolicyOpponent:
    """A policy with ``logits_batch``: one forward pass for every game."""

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        logits = np.asarray(self.agent.logits_batch(observations), dtype=np.float64)
        if not getattr(self.agent, "deterministic", True):  # a sample: the Gumbel-max trick
            logits = logits - np.log(-np.log(rng.random(logits.shape)))
        return np.argmax(np.where(masks, logits, -np.inf), axis=1)


class _BatchAgentOpponent:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.uses_observation = getattr(agent, "uses_observation", True)

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return np.asarray(self.agent.act_batch(observations, masks, rng))


class _PerGameOpponent:
    """Any agent with ``act``, called game by game (no faster than the Gymnasium view)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.uses_observation = getattr(agent, "uses_observation", True)

    def choose(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        masks8 = masks.astype(np.int8)
        return np.array(
            [
                self.agent.act(None if observations is None else observations[i], masks8[i], rng)
                for i in range(len(masks8))
            ],
            dtype=np.int64,
        )


def batched_opponent(spec: GameSpec, game: Game, engine: Any, opponent: Any) -> Any:
    """A batched opponent (``choose(observations, masks, rng) -> actions``) from a name,
    a saved model's path, an agent or a function (see the module docstring)."""
    if opponent == "random":
        return _RandomOpponent()
    if opponent == "heuristic" and callable(getattr(engine, "heuristic_actions", None)):
        return _HeuristicOpponent(engine)
    agent = resolve_agent(spec, game, opponent)
    if hasattr(agent, "logits_batch"):
        return _PolicyOpponent(agent)
    if hasattr(agent, "act_batch"):
        return _BatchAgentOpponent(agent)
    return _PerGameOpponent(agent)


# --- the VecEnv ----------------------------------------------------------------------
@functools.cache
def vec_env_class() -> type:
    """``BatchedVecEnv``, made on first use so that ``envs`` does not need SB3 to import."""
    try:
        from gymnasium import spaces
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as error:
        raise ImportError(
            "make_vec returns a Stable-Baselines3 VecEnv: install the train extra "
            "(pip install 'hiddenhand[train]')"
        ) from error

    class BatchedVecEnv(VecEnv):
        """One learning seat in each of the engine's games (see ``envs.core.vector``)."""

        render_mode = None

        def __init__(
            self,
            engine: Any,
            opponents: list[Any],
            lineup: np.ndarray | None,
            weights: np.ndarray | None,
            seat: int | None,
            illegal_reward: float,
            seed: int | None,
        ) -> None:
            self.engine = engine
            #: The distinct opponents; each game's other seats (going left from the
            #: learner) are played by ``opponents[assignment[game, offset]]``, fixed
            #: (``lineup``) or drawn from ``weights`` at every deal.
            self.opponents = opponents
            self.lineup, self.weights = lineup, weights
            self.assignment = np.zeros((engine.num_envs, engine.num_players - 1), dtype=np.int64)
            if lineup is not None:
                self.assignment[:] = lineup
            self.fixed_seat = seat
            self.illegal_reward = float(illegal_reward)
            low, high = engine.observation_layout.bounds()
            super().__init__(
                engine.num_envs,
                spaces.Box(low, high, dtype=np.float32),
                spaces.Discrete(engine.num_actions),
            )
            self._rows = np.arange(self.num_envs)
            self._actions: np.ndarray | None = None
            self._fresh = np.ones(self.num_envs, dtype=bool)
            self._carried = np.zeros(self.num_envs)
            self._seed_everything(seed)
            if seed is not None:  # the first reset() deals the seed's games again
                self.seed(seed)

        def _seed_everything(self, seed: int | None) -> None:
            self.engine.reset(seed)
            entropy = None if seed is None else [1, seed]
            self.rng = np.random.default_rng(entropy)
            self.seats = self._draw_seats(self.num_envs)
            self._new_games(self._rows)

        def _draw_seats(self, count: int) -> np.ndarray:
            if self.fixed_seat is not None:
                return np.full(count, self.fixed_seat, dtype=np.int64)
            return self.rng.integers(self.engine.num_players, size=count)

        def _new_games(self, games: np.ndarray) -> None:
            """Games just dealt (``games``): the learner has not chosen in them yet, and
            what is revealed before it does reaches it with its first step."""
            self._fresh[games] = True
            self._carried[games] = 0.0
            if self.weights is not None:  # a mix: every other seat's opponent drawn anew
                shape = (len(games), self.engine.num_players - 1)
                self.assignment[games] = self.rng.choice(
                    len(self.weights), size=shape, p=self.weights
                )

        # --- VecEnv API ------------------------------------------------------------
        def reset(self) -> np.ndarray:
            """Deal every game again (from the seed given to ``seed()``, if any)."""
            seed = self._seeds[0]
            if seed is not None:
                self._seed_everything(seed)
            else:
                self.engine.redeal(self._rows)
                self.seats = self._draw_seats(self.num_envs)
                self._new_games(self._rows)
            self._reset_seeds()
            self._reset_options()
            self._until_the_learner_chooses(
                np.zeros(self.num_envs),
                np.zeros(self.num_envs, dtype=bool),
                [{} for _ in range(self.num_envs)],
            )
            return self.engine.observations_of(self.seats)

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions)

        def step_wait(self):
            if self._actions is None:
                raise RuntimeError("step_wait() needs step_async(actions) first")
            actions, self._actions = self._actions.reshape(-1), None
            if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
                raise ValueError(
                    f"actions must be {self.num_envs} integers, got {actions.dtype} {actions.shape}"
                )
            engine, rows, seats = self.engine, self._rows, self.seats
            mine = engine.masks()[rows, seats]  # the learner chooses in every game now
            in_range = (actions >= 0) & (actions < engine.num_actions)
            legal = in_range & mine[rows, np.where(in_range, actions, 0)]
            joint = np.zeros((self.num_envs, engine.num_players), dtype=np.int64)
            joint[rows, seats] = np.where(legal, actions, np.argmax(mine, axis=1))
            self._play_opponents(joint, rows)
            illegal = np.flatnonzero(~legal)
            before = engine.observations_of(seats)[illegal] if len(illegal) else None
            rewards, terminated, info = engine.step(joint)
            reward = rewards[rows, seats] + self._carried  # float64 until returned
            self._carried[:] = 0.0
            self._fresh[:] = False
            dones = terminated.copy()
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            self._report_ends(info, dones, infos)
            if len(illegal):  # the learner's game ends there, as in the Gymnasium view
                engine.redeal(illegal)
                reward[illegal] = self.illegal_reward
                dones[illegal] = True
                for i, game in enumerate(illegal.tolist()):
                    infos[game] = {
                        "terminal_observation": before[i],
                        "seat": int(seats[game]),
                        "illegal_action": self._illegal_message(
                            int(actions[game]), int(seats[game]), mine[game]
                        ),
                    }
                self._restart(illegal)
            self._until_the_learner_chooses(reward, dones, infos)
            return engine.observations_of(self.seats), reward.astype(np.float32), dones, infos

        def _report_ends(
            self, info: dict[str, np.ndarray], dones: np.ndarray, infos: list[dict[str, Any]]
        ) -> None:
            """The games that ended (``info`` of ``engine.step``): the learner's episode
            ends where it has chosen; every one is dealt again with a new seat."""
            for i, game in enumerate(info["done"].tolist()):
                if self._fresh[game]:  # it ended before the learner's first choice
                    continue
                dones[game] = True
                infos[game] = {
                    "terminal_observation": info["terminal_observations"][i, self.seats[game]],
                    "seat": int(self.seats[game]),
                    "scores": info["terminal_scores"][i],
                }
            self._restart(info["done"])

        def _restart(self, games: np.ndarray) -> None:
            if len(games):
                self.seats = self.seats.copy()
                self.seats[games] = self._draw_seats(len(games))
                self._new_games(games)

        def _until_the_learner_chooses(
            self, reward: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]]
        ) -> None:
            """Let the opponents play alone the games where the learner does not choose
            now, until it does in every game (games whose turns leave seats out)."""
            engine = self.engine
            while True:
                waiting = np.flatnonzero(~engine.choosers()[self._rows, self.seats])
                if not len(waiting):
                    return
                joint = np.zeros((len(waiting), engine.num_players), dtype=np.int64)
                self._play_opponents(joint, waiting)
                rewards, _, info = engine.step(joint, waiting)
                learner = rewards[np.arange(len(waiting)), self.seats[waiting]]
                fresh = self._fresh[waiting]
                self._carried[waiting[fresh]] += learner[fresh]
                reward[waiting[~fresh]] += learner[~fresh]
                self._report_ends(info, dones, infos)

        def _illegal_message(self, action: int, seat: int, mask: np.ndarray) -> str:
            legal = ", ".join(map(str, np.flatnonzero(mask).tolist()))
            return f"action {action} is illegal for player {seat}; legal actions: {legal}"

        def _play_opponents(self, joint: np.ndarray, games: np.ndarray) -> None:
            """Fill the opponents' choices in ``joint`` (the rows ``games``), for the seats
            that choose now: each distinct opponent once, for all the seats and games it
            plays (one forward pass for a policy)."""
            engine, n = self.engine, self.engine.num_players
            seats = self.seats[games]
            masks = engine.masks()[games]
            choosing = engine.choosers()[games]
            assignment = self.assignment[games].T  # (offset, row): seats in offset order
            for index, opponent in enumerate(self.opponents):
                offsets, rows = np.nonzero(assignment == index)
                stacked = (seats[rows] + offsets + 1) % n
                keep = choosing[rows, stacked]
                if not keep.all():
                    rows, stacked = rows[keep], stacked[keep]
                if not len(rows):
                    continue
                observations = (
                    engine.observe(games[rows], stacked) if opponent.uses_observation else None
                )
                joint[rows, stacked] = opponent.choose(observations, masks[rows, stacked], self.rng)

        def action_masks(self) -> np.ndarray:
            """The learner's legal actions in every game: ``(num_envs, num_actions)`` bool."""
            return self.engine.masks()[self._rows, self.seats]

        def close(self) -> None:
            return None

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, int):
                return [indices]
            return list(indices)

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            value = getattr(self, attr_name)
            return [value] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self, attr_name, value)

        def env_method(
            self, method_name: str, *method_args, indices: Any = None, **method_kwargs
        ) -> list[Any]:
            chosen = self._indices(indices)
            if method_name == "action_masks":
                return list(self.action_masks()[chosen])
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result] * len(chosen)

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

    return BatchedVecEnv


def make_vec(
    gym_id: str,
    num_envs: int = 64,
    opponent: OpponentSpec | Sequence[OpponentSpec] | Mapping[OpponentSpec, float] = "random",
    seat: int | None = None,
    reward_mode: str = "win",
    illegal_reward: float = -1.0,
    seed: int | None = None,
    **options: Any,
):
    """An SB3 ``VecEnv`` of ``num_envs`` games of ``gym_id`` (either id form) played by a
    batched engine, one seat learning in each (see the module docstring).

    Args:
        gym_id: a registered id of a game with a batched engine.
        num_envs: the number of games played in lockstep.
        opponent: one opponent for every other seat; a sequence with one per other seat
            (going left); or a mix, ``{opponent: weight}``, from which every other seat's
            opponent is drawn at each deal.
        seat: the learner's seat; ``None`` (default) draws it per game at every deal.
        reward_mode: ``"win"`` or ``"score"``.
        illegal_reward: the reward for an illegal action, which ends that game.
        seed: seeds the deals, seats and opponents (``seed()`` reseeds at the next reset).
        **options: the game's options (``num_players`` ...).
    """
    spec = get_spec(gym_id)
    engine_type = engine_class(spec)
    vec_class = vec_env_class()
    engine = engine_type(num_envs, reward_mode=reward_mode, seed=seed, **options)
    n = engine.num_players
    require_choice("seat", seat, (None, *range(n)))
    game = engine.game

    def make(one: Any) -> Any:
        return batched_opponent(spec, game, engine, one)

    lineup = weights = None
    if isinstance(opponent, Mapping):
        values = np.array(list(opponent.values()), dtype=np.float64)
        if not len(values) or (values < 0).any() or values.sum() <= 0:
            raise ValueError(f"a mix needs weights >= 0 with a positive sum, got {opponent!r}")
        opponents, weights = [make(one) for one in opponent], values / values.sum()
    elif isinstance(opponent, Sequence) and not isinstance(opponent, str):
        if len(opponent) != n - 1:
            raise ValueError(f"give one opponent or {n - 1} opponents, got {len(opponent)}")
        opponents, lineup = [make(one) for one in opponent], np.arange(n - 1)
    else:
        opponents, lineup = [make(opponent)], np.zeros(n - 1, dtype=np.int64)
    return vec_class(engine, opponents, lineup, weights, seat, illegal_reward, seed)


__all__ = ["engine_class", "make_vec", "vec_env_class"]
