"""The one PettingZoo adapter: any ``Game`` as an AEC env and as a parallel env.

Hidden simultaneous choices: when several players must choose, the AEC env asks
them one at a time in seat order and holds each commitment aside on the
``Table``; only the last commitment reveals them all. Until then the state is
untouched, so no observation, info, reward, ``state()`` or render changes.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from envs.core.game import IllegalActionError, as_action, require_choice
from envs.core.render import RENDER_FPS, RENDER_MODES, check_render_mode, render
from envs.core.spec import GameSpec
from envs.core.table import Table

ILLEGAL_ACTION_POLICIES = ("raise", "penalize")
ILLEGAL_MOVE_REWARD = -1.0


def check_illegal_action(illegal_action: str) -> None:
    require_choice("illegal_action", illegal_action, ILLEGAL_ACTION_POLICIES)


def illegal_move_warning(agent: str) -> None:
    warnings.warn(
        f"{agent} made an illegal move; the game ends with {ILLEGAL_MOVE_REWARD} for it",
        stacklevel=4,
    )


def check_seed(seed: Any) -> None:
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
    ):
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")


class _Seats:
    """What the AEC and parallel views share: agent names, spaces, seeding and the table."""

    def _setup(
        self,
        spec: GameSpec,
        render_mode: str | None,
        reward_mode: str,
        illegal_action: str,
        options: dict[str, Any],
    ) -> None:
        check_render_mode(render_mode)
        check_illegal_action(illegal_action)
        self.illegal_action = illegal_action
        self.game_spec = spec
        self.game = spec.make_game(**options)
        self.table = Table(self.game, reward_mode)
        self.render_mode = render_mode
        self.metadata = {
            "name": spec.aec_id,
            "render_modes": list(RENDER_MODES),
            "render_fps": RENDER_FPS,
            # The AEC env asks only the players choosing now, not every agent in a cycle,
            # so PettingZoo's aec_to_parallel cannot wrap it; parallel_env() is built in.
            "is_parallelizable": False,
        }
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self.agent_ids = {agent: i for i, agent in enumerate(self.possible_agents)}
        low, high = self.game.observation_layout.bounds()
        n = self.game.num_actions
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
            }
        )
        self._observation_spaces = {a: self._observation_space for a in self.possible_agents}
        self._action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.state_space = spaces.Box(
            np.tile(low, self.game.num_players), np.tile(high, self.game.num_players)
        )
        self._rng: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def _deal(self, seed: int | None) -> None:
        """A new game: ``seed`` restarts the env's RNG; without one the RNG runs on. The
        game draws its chance events from the same RNG, so one seed fixes a whole series."""
        check_seed(seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.table.reset(self._rng)

    def _observation(self, player: int, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": self.table.observation(player), "action_mask": mask}

    def state(self) -> np.ndarray:
        """Every seat's observation, concatenated. The one view with hidden information
        (all players' private cards), meant for centralised critics; it never shows a
        commitment before its reveal."""
        return np.concatenate([self.table.observation(p) for p in range(self.game.num_players)])

    def render(self) -> str | np.ndarray | None:
        """The spectator's view (public information only) in the env's ``render_mode``."""
        if self.table.state is None:
            raise RuntimeError("reset() must be called before render()")
        return render(self.table.render(), self.render_mode)

    def render_for(self, agent: str) -> str:
        """``agent``'s own view as text: the public table, its private cards and its own
        face-down commitment, nothing of any other player's (for a person playing a seat)."""
        if self.table.state is None:
            raise RuntimeError("reset() must be called before render_for()")
        if agent not in self.agent_ids:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}")
        return self.table.render_for(self.agent_ids[agent])

    def close(self) -> None:
        pass


class HiddenHandAEC(_Seats, AECEnv):
    """A game as a PettingZoo AEC env.

    ``illegal_action="raise"`` (``raw_env``): an illegal action raises ``ValueError``
    naming the legal actions, and nothing changes. ``"penalize"`` (``env()``, as
    PettingZoo's ``TerminateIllegalWrapper``): an integer action that the mask rules
    out ends the game with ``-1`` for the offender and 0 for the others; an integer
    outside the action space still raises. An action may be an int, a numpy integer or
    an integer array of shape ``()`` or ``(1,)`` (what ``model.predict`` returns);
    anything else raises ``ActionTypeError``. Stepping, observing, ``last()`` or
    rendering before ``reset`` is a clear error (as PettingZoo's ``OrderEnforcingWrapper``
    makes it). Built in rather than wrapped, so ``env()`` costs no more per step than
    ``raw_env``.
    """

    def __init__(
        self,
        spec: GameSpec,
        render_mode: str | None = None,
        reward_mode: str = "win",
        illegal_action: str = "raise",
        **options: Any,
    ) -> None:
        super().__init__()
        self._setup(spec, render_mode, reward_mode, illegal_action, options)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._deal(seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._rewards_shown = False  # whether ``rewards`` holds a reveal's (maybe nonzero) values
        self.agent_selection = self.possible_agents[self.table.next_chooser()]

    def last(self, observe: bool = True):
        if self.table.state is None:
            raise RuntimeError("reset() must be called before last()")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.table.state is None:
            raise RuntimeError("reset() must be called before observe()")
        player = self.agent_ids[agent]
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            return self._observation(player, self.table.legal_mask(player))
        return self._observation(player, self.table.no_actions)

    def step(self, action: Any) -> None:
        if self.table.state is None:
            raise RuntimeError("reset() must be called before step()")
        if not self.agents:
            raise ValueError("the game is over and every agent has left; call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            revealed = self.table.commit(self.agent_ids[agent], action)  # raises, changing nothing
        except IllegalActionError:
            if self.illegal_action == "raise" or not 0 <= as_action(action) < self.game.num_actions:
                raise
            self._penalize(agent)
            return
        self._cumulative_rewards[agent] = 0.0
        if revealed is not None and self.table.terminal:
            self.terminations = dict.fromkeys(self.agents, True)
        if revealed is not None and any(revealed):
            self.rewards = dict(zip(self.possible_agents, revealed, strict=True))
            self._accumulate_rewards()
            self._rewards_shown = True
        elif self._rewards_shown:  # no reward this step: clear the last reveal's
            self._clear_rewards()
            self._rewards_shown = False
        chooser = self.table.next_chooser()
        self.agent_selection = self.agents[0] if chooser is None else self.possible_agents[chooser]
        if self.render_mode == "human":
            self.render()

    def _penalize(self, agent: str) -> None:
        illegal_move_warning(agent)
        self.table.pending = {}
        self.terminations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = ILLEGAL_MOVE_REWARD
        self._cumulative_rewards[agent] = 0.0
        self._accumulate_rewards()
        self._rewards_shown = True


class HiddenHandParallel(_Seats, ParallelEnv):
    """A game as a PettingZoo parallel env.

    At every step each live agent submits an action; only the players choosing now
    (``infos[agent]["choosing"]``) are read. The others are shown a mask whose single
    legal entry is 0, a no-op that is ignored. Actions are integers as in the AEC env.
    ``illegal_action="penalize"`` (``parallel_env()``, as ``env()``): a chooser's
    integer action that its mask rules out ends the game with ``-1`` for the first such
    offender in seat order and 0 for the others; ``"raise"`` raises ``ValueError``
    naming the legal actions and changes nothing.
    """

    def __init__(
        self,
        spec: GameSpec,
        render_mode: str | None = None,
        reward_mode: str = "win",
        illegal_action: str = "raise",
        **options: Any,
    ) -> None:
        self._setup(spec, render_mode, reward_mode, illegal_action, options)
        self._noop_mask = np.zeros(self.game.num_actions, dtype=np.int8)
        self._noop_mask[0] = 1
        self._noop_mask.flags.writeable = False

    def _views(self, over: bool = False) -> tuple[dict, dict]:
        choosers = () if over else self.table.choosers
        observations, infos = {}, {}
        for agent in self.agents:
            player = self.agent_ids[agent]
            choosing = player in choosers
            mask = self.table.legal_mask(player) if choosing else self._noop_mask
            observations[agent] = self._observation(player, mask)
            infos[agent] = {"choosing": choosing}
        return observations, infos

    def reset(self, seed: int | None = None, options: dict | None = None):
        self._deal(seed)
        self.agents = list(self.possible_agents)
        return self._views()

    def step(self, actions: dict[str, Any]):
        if self.table.state is None:
            raise RuntimeError("reset() must be called before step()")
        if not self.agents:
            raise ValueError("the game is over; call reset()")
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            raise ValueError(
                f"actions for agents not in the game: {unknown}; agents: {self.agents}"
            )
        choosers = self.table.choosers
        missing = [
            self.possible_agents[p] for p in choosers if self.possible_agents[p] not in actions
        ]
        if missing:
            raise ValueError(f"no action given for {missing}; every choosing agent must act")
        for action in actions.values():
            as_action(action)  # a non-integer is a caller's bug, never a move: raise
        # Validate every action before committing any, so a bad one changes nothing.
        joint = {}
        for p in choosers:
            try:
                joint[p] = self.table.state.check_action(p, actions[self.possible_agents[p]])
            except IllegalActionError:
                action = as_action(actions[self.possible_agents[p]])
                if self.illegal_action == "raise" or not 0 <= action < self.game.num_actions:
                    raise
                return self._penalize(self.possible_agents[p])
        for p, a in joint.items():
            revealed = self.table.commit(p, a)
        terminal = self.table.terminal
        rewards = {a: float(r) for a, r in zip(self.possible_agents, revealed, strict=True)}
        return self._finish(rewards, terminal)

    def _penalize(self, offender: str):
        illegal_move_warning(offender)
        rewards = dict.fromkeys(self.agents, 0.0)
        rewards[offender] = ILLEGAL_MOVE_REWARD
        return self._finish(rewards, terminal=True)

    def _finish(self, rewards: dict[str, float], terminal: bool):
        terminations = dict.fromkeys(self.agents, terminal)
        truncations = dict.fromkeys(self.agents, False)
        observations, infos = self._views(over=terminal)
        if terminal:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos
