"""The Gymnasium single-agent view: one learning seat, opponents played inside ``step``.

Made for Stable-Baselines3: the observation is the learner's flat vector, the
legal actions come from ``action_masks()`` (sb3-contrib's MaskablePPO) and from
``info["action_mask"]``. An action is an int, a numpy integer or an integer array of
shape ``()`` or ``(1,)`` (what ``model.predict`` returns); anything else raises
``ActionTypeError``. An illegal integer ends the episode with ``illegal_reward``
(Gymnasium's env checker samples unmasked actions). Stepping a finished episode, or
before ``reset``, raises. The learner's reward includes everything that happens on
the opponents' moves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs.core.aec import check_seed
from envs.core.agents import Agent, decide, uses_observation
from envs.core.game import Game, IllegalActionError, require_choice
from envs.core.render import RENDER_FPS, RENDER_MODES, check_render_mode, render
from envs.core.spec import GameSpec, get_spec
from envs.core.table import Table

OpponentSpec = str | Agent | Callable[[np.ndarray, np.ndarray, np.random.Generator], int]


class _CallableAgent:
    def __init__(self, function: Callable[[np.ndarray, np.ndarray, np.random.Generator], int]):
        self.function = function

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        return self.function(observation, action_mask, rng)


def resolve_agent(spec: GameSpec, game: Game, opponent: OpponentSpec) -> Agent:
    """An agent from a name (``"random"``, ``"heuristic"``, ...), a saved model's path, an
    object with ``act``, or a function ``(observation, action_mask, rng) -> int``."""
    if isinstance(opponent, str):
        return spec.make_agent(opponent, game)
    if hasattr(opponent, "act"):
        return opponent
    if callable(opponent):
        return _CallableAgent(opponent)
    raise TypeError(
        f"an opponent must be an agent name, a saved model's path, an object with "
        f"act(observation, action_mask, rng) or such a function; got {opponent!r}"
    )


class SingleAgentEnv(gym.Env):
    """One seat of a game as a ``gymnasium.Env``.

    Args:
        game_id: a registered id (either form).
        opponent: one opponent for every other seat, or a sequence with one per other seat
            (in seat order going left from the learner): names, saved models' paths, agents
            or functions.
        seat: the learner's seat; ``None`` (default) draws it at random every episode.
        reward_mode: ``"win"`` or ``"score"``.
        illegal_reward: the reward for an illegal action, which ends the episode.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (the spectator's
            view; ``render_for()`` is the learner's own).
        **options: the game's options (``num_players`` ...).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(
        self,
        game_id: str,
        opponent: OpponentSpec | Sequence[OpponentSpec] = "random",
        seat: int | None = None,
        reward_mode: str = "win",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        check_render_mode(render_mode)
        self.game_spec = get_spec(game_id)
        self.game = self.game_spec.make_game(**options)
        self.table = Table(self.game, reward_mode)
        n = self.game.num_players
        require_choice("seat", seat, (None, *range(n)))
        self.fixed_seat = seat
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        if isinstance(opponent, Sequence) and not isinstance(opponent, str):
            if len(opponent) != n - 1:
                raise ValueError(f"give one opponent or {n - 1} opponents, got {len(opponent)}")
            self.opponents = [resolve_agent(self.game_spec, self.game, o) for o in opponent]
        else:
            self.opponents = [resolve_agent(self.game_spec, self.game, opponent)] * (n - 1)
        low, high = self.game.observation_layout.bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self.learner = 0
        self._carried_reward = 0.0
        self._finished: str | None = "reset() has not been called"  # why step() may not run

    # --- gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_seed(seed)
        super().reset(seed=seed)
        self.table.reset(self.np_random)  # one RNG: the deal, chance, seats, opponents
        n = self.game.num_players
        self.learner = (
            self.fixed_seat if self.fixed_seat is not None else int(self.np_random.integers(n))
        )
        # Rewards revealed before the learner's first choice reach it with its first step.
        self._carried_reward = self._play_opponents()
        self._finished = "the game is over" if self.table.terminal else None
        return self._observe(), self._info()

    def step(self, action: Any):
        if self._finished is not None:
            raise RuntimeError(f"step() cannot be called now: {self._finished}; call reset()")
        try:
            revealed = self.table.commit(self.learner, action)
        except IllegalActionError as error:
            self._finished = "the episode ended on an illegal action"
            info = self._info() | {"illegal_action": str(error)}
            return self._observe(), self.illegal_reward, True, False, info
        reward = self._carried_reward + (0.0 if revealed is None else float(revealed[self.learner]))
        self._carried_reward = 0.0
        reward += self._play_opponents()
        if self.table.terminal:
            self._finished = "the game is over"
        return self._observe(), reward, self.table.terminal, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (sb3-contrib's MaskablePPO reads it)."""
        return self.table.legal_mask(self.learner).astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The spectator's view (public information only) in the env's ``render_mode``."""
        if self.table.state is None:
            raise RuntimeError("reset() must be called before render()")
        return render(self.table.render(), self.render_mode)

    def render_for(self, seat: int | None = None) -> str:
        """A seat's own view as text (the learner's by default): the public table and that
        seat's private cards, nothing of any other player's."""
        if self.table.state is None:
            raise RuntimeError("reset() must be called before render_for()")
        return self.table.render_for(self.learner if seat is None else seat)

    # --- internals -------------------------------------------------------------------
    def _opponent(self, player: int) -> Agent:
        return self.opponents[(player - self.learner) % self.game.num_players - 1]

    def _play_opponents(self) -> float:
        """Let opponents commit until the learner must choose or the game ends; return the
        learner's share of the rewards revealed on the way."""
        reward = 0.0
        table = self.table
        while not table.terminal:
            for player in table.waiting_for():
                if player == self.learner:
                    continue
                opponent = self._opponent(player)
                observation = table.observation(player) if uses_observation(opponent) else None
                action = decide(
                    opponent,
                    table.state,
                    player,
                    observation,
                    table.legal_mask(player),
                    self.np_random,
                )
                revealed = table.commit(player, action)
                if revealed is not None:
                    reward += revealed[self.learner]
            if self.learner in table.waiting_for():
                break
        return reward

    # Gymnasium asks for new arrays on every call (users keep what they are given).
    def _observe(self) -> np.ndarray:
        return self.table.observation(self.learner).copy()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.table.legal_mask(self.learner).copy(), "seat": self.learner}
