"""Commit-then-reveal bookkeeping, written once for every interface.

A ``Table`` holds one game in play: the rules state, the commitments made so far
in the current choice, and the reward tracker. Players commit one at a time (the
AEC view), all at once (the parallel view) or mixed with opponents (the
single-agent view); the state is touched only when the last chooser has
committed, so until then nothing any player can read changes.

The table is also the one place that caches what the views read: the choosers,
each player's observation and mask are computed at most once per state (the
state changes only in ``reset`` and at a reveal). Cached arrays are read-only,
so a caller that keeps or shares them can never corrupt them.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from envs.core.game import Game, IllegalActionError, State, as_action
from envs.core.rewards import RewardTracker


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _read_only_copy(array: np.ndarray, dtype: type) -> np.ndarray:
    """A read-only copy of ``array``'s bytes as ``dtype`` (an array over immutable bytes is
    born read-only, which is cheaper than copying and then setting the flag)."""
    return np.frombuffer(array.tobytes(), dtype)


class Table:
    def __init__(self, game: Game, reward_mode: str = "win") -> None:
        self.game = game
        self.tracker = RewardTracker(reward_mode)
        self.state: State | None = None
        self.pending: dict[int, int] = {}
        self.no_actions = _frozen(np.zeros(game.num_actions, dtype=np.int8))

    def reset(self, rng: np.random.Generator) -> None:
        self.state = self.game.new_initial_state(rng)
        self.pending = {}
        self.tracker.reset(self.state.scores())
        self._state_changed()

    def _state_changed(self) -> None:
        self.choosers: tuple[int, ...] = self.state.to_act()
        self.terminal = not self.choosers
        self._observations: dict[int, np.ndarray] = {}
        self._masks: dict[int, np.ndarray] = {}

    # --- commitments -----------------------------------------------------------------
    def waiting_for(self) -> list[int]:
        """Choosers who have not committed yet, in seat order."""
        return [p for p in self.choosers if p not in self.pending]

    def next_chooser(self) -> int | None:
        for player in self.choosers:
            if player not in self.pending:
                return player
        return None

    def check(self, player: int, action: Any) -> int:
        """``action`` as an int if ``player`` may commit it now; else raise and change nothing
        (``ActionTypeError`` for a non-integer, ``IllegalActionError`` for an illegal one)."""
        if type(action) is int and player in self.choosers and player not in self.pending:
            mask = self._legal(player)
            if 0 <= action < len(mask) and mask[action]:
                return action  # the common case, checked first
        value = as_action(action)
        if player in self.pending:
            raise IllegalActionError(f"player {player} has already committed this choice")
        if player not in self.choosers:
            raise IllegalActionError(
                f"player {player} is not choosing now; the players to act are {list(self.choosers)}"
            )
        mask = self._legal(player)
        if not (0 <= value < len(mask) and mask[value]):
            return self.state.check_action(player, value)  # raises, naming the legal actions
        return value

    def commit(self, player: int, action: Any) -> list[float] | None:
        """Hold ``player``'s action aside; when it is the last one needed, reveal all.

        Returns every player's rewards when a reveal happened, else None. Raises
        ``IllegalActionError`` (a ValueError) and changes nothing on bad input.
        """
        joint = self.pending
        joint[player] = self.check(player, action)
        if len(joint) < len(self.choosers):
            return None
        self.pending = {}
        self.state._apply(joint if len(joint) == 1 else dict(sorted(joint.items())))  # seat order
        self._state_changed()
        return self.tracker.rewards(self.state.scores, self.terminal)

    def determinise(self, player: int, rng: np.random.Generator) -> Table:
        """A table ``player`` cannot tell from this one: the state resampled for them
        (``State.resample``) and every other player's pending face-down commitment drawn
        again among its legal actions there; ``player``'s own commitment is kept."""
        twin = Table.__new__(Table)
        twin.game, twin.no_actions = self.game, self.no_actions
        twin.tracker = copy.deepcopy(self.tracker)
        twin.state = self.state.resample(player, rng)
        twin._state_changed()
        twin.pending = {}
        for other, action in self.pending.items():
            if other != player:
                legal = np.flatnonzero(twin.state.legal_mask(other))
                action = int(legal[rng.integers(len(legal))])
            twin.pending[other] = action
        return twin

    # --- what the views read ---------------------------------------------------------
    def _legal(self, player: int) -> np.ndarray:
        mask = self._masks.get(player)
        if mask is None:
            mask = self._masks[player] = _read_only_copy(
                self.state.legal_mask(player).astype(bool, copy=False), np.int8
            )
        return mask

    def legal_mask(self, player: int) -> np.ndarray:
        """``player``'s int8 mask: their legal actions while they still have to commit."""
        if player in self.pending or player not in self.choosers:
            return self.no_actions
        return self._legal(player)

    def observation(self, player: int) -> np.ndarray:
        """``player``'s flat observation of the current state (read-only, cached)."""
        observation = self._observations.get(player)
        if observation is None:
            observation = self._observations[player] = _frozen(
                self.game.observation(self.state, player)
            )
        return observation

    def render(self) -> str:
        text = str(self.state)
        if self.pending:
            committed = ", ".join(f"player_{p}" for p in sorted(self.pending))
            text += f"\n(committed face down: {committed})"
        return text

    def render_for(self, player: int) -> str:
        """``player``'s view as text: the spectator's table, their private view
        (``State.private_view``), their own face-down commitment in the choice under way
        and who else has committed (never what)."""
        text = str(self.state)
        private = self.state.private_view(player)
        if private:
            text += "\n" + private
        own = self.pending.get(player)
        if own is not None:
            text += f"\n(you committed {self.game.action_name(own)} face down)"
        others = [p for p in sorted(self.pending) if p != player]
        if others:
            committed = ", ".join(f"player_{p}" for p in others)
            text += f"\n(committed face down: {committed})"
        return text
