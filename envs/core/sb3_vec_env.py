"""``BatchedVecEnv``: a batched engine as a Stable-Baselines3 ``VecEnv``, one learning seat
in each of its games and batched opponents in the others (``envs.make_vec`` builds it and
documents it: ``envs.core.vector``).

This module imports SB3; ``make_vec`` imports it when called, so ``envs`` does not need
SB3 to import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

try:
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
            self.assignment[games] = self.rng.choice(len(self.weights), size=shape, p=self.weights)

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
