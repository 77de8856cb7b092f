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

from envs.core.game import IllegalActionError
from envs.core.spec import GameSpec
from envs.core.table import Table

RENDER_MODES = ("ansi", "human")
ILLEGAL_ACTION_POLICIES = ("raise", "penalize")
ILLEGAL_MOVE_REWARD = -1.0


def _check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode={render_mode!r} is not allowed; allowed values: None, "
            + ", ".join(map(repr, RENDER_MODES))
        )


def render(table: Table, render_mode: str | None) -> str | None:
    """The table as text for ``"ansi"``, printed for ``"human"``, nothing without a mode."""
    if render_mode is None:
        return None
    text = table.render()
    if render_mode == "human":
        print(text)
        return None
    return text


def check_seed(seed: Any) -> None:
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
    ):
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")


class _Seats:
    """What the AEC and parallel views share: agent names, spaces, seeding and the table."""

    def _setup(self, spec: GameSpec, render_mode: str | None, reward_mode: str, options) -> None:
        _check_render_mode(render_mode)
        self.game_spec = spec
        self.game = spec.make_game(**options)
        self.table = Table(self.game, reward_mode)
        self.render_mode = render_mode
        self.metadata = {
            "name": spec.aec_id,
            "render_modes": list(RENDER_MODES),
            "is_parallelizable": True,
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

    def render(self) -> str | None:
        return render(self.table, self.render_mode)

    def close(self) -> None:
        pass


class HiddenHandAEC(_Seats, AECEnv):
    """A game as a PettingZoo AEC env.

    ``illegal_action="raise"`` (``raw_env``): an illegal action raises ``ValueError``
    naming the legal actions, and nothing changes. ``"penalize"`` (``env()``, as
    PettingZoo's ``TerminateIllegalWrapper``): an integer action that the mask rules
    out ends the game with ``-1`` for the offender and 0 for the others; actions that
    are not integers in the action space still raise. Both raise a clear error when
    called before ``reset``. Built in rather than wrapped, so ``env()`` costs no more
    per step than ``raw_env``.
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
        if illegal_action not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"illegal_action={illegal_action!r} is not allowed; allowed values: "
                + ", ".join(map(repr, ILLEGAL_ACTION_POLICIES))
            )
        self.illegal_action = illegal_action
        self._setup(spec, render_mode, reward_mode, options)

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
            in_space = (
                isinstance(action, (int, np.integer))
                and not isinstance(action, bool)
                and 0 <= action < self.game.num_actions
            )
            if self.illegal_action == "raise" or not in_space:
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
        warnings.warn(
            f"{agent} made an illegal move; the game ends with {ILLEGAL_MOVE_REWARD} for it",
            stacklevel=3,
        )
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
    legal entry is 0, a no-op that is ignored. Illegal actions raise ``ValueError``.
    """

    def __init__(
        self,
        spec: GameSpec,
        render_mode: str | None = None,
        reward_mode: str = "win",
        **options: Any,
    ) -> None:
        self._setup(spec, render_mode, reward_mode, options)
        self._noop_mask = np.zeros(self.game.num_actions, dtype=np.int8)
        self._noop_mask[0] = 1
        self._noop_mask.flags.writeable = False

    def _views(self) -> tuple[dict, dict]:
        choosers = self.table.choosers
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
        # Validate every action before committing any, so a bad one changes nothing.
        joint = {
            p: self.table.state.check_action(p, actions[self.possible_agents[p]]) for p in choosers
        }
        for p, a in joint.items():
            revealed = self.table.commit(p, a)
        terminal = self.table.terminal
        rewards = {a: float(r) for a, r in zip(self.possible_agents, revealed, strict=True)}
        terminations = dict.fromkeys(self.agents, terminal)
        truncations = dict.fromkeys(self.agents, False)
        observations, infos = self._views()
        if terminal:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos
