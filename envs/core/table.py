"""Commit-then-reveal bookkeeping, written once for every interface.

A ``Table`` holds one game in play: the rules state, the commitments made so far
in the current choice, and the reward tracker. Players commit one at a time (the
AEC view), all at once (the parallel view) or mixed with opponents (the
single-agent view); the state is touched only when the last chooser has
committed, so until then nothing any player can read changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.core.game import Game, IllegalActionError, State
from envs.core.rewards import RewardTracker


class Table:
    def __init__(self, game: Game, reward_mode: str = "win") -> None:
        self.game = game
        self.tracker = RewardTracker(reward_mode)
        self.state: State | None = None
        self.pending: dict[int, int] = {}

    def reset(self, rng: np.random.Generator) -> None:
        self.state = self.game.new_initial_state(rng)
        self.pending = {}
        self.tracker.reset(self.state.scores())

    def waiting_for(self) -> list[int]:
        """Choosers who have not committed yet, in seat order."""
        return [p for p in self.state.to_act() if p not in self.pending]

    def next_chooser(self) -> int | None:
        waiting = self.waiting_for()
        return waiting[0] if waiting else None

    def commit(self, player: int, action: Any) -> np.ndarray | None:
        """Hold ``player``'s action aside; when it is the last one needed, reveal all.

        Returns every player's rewards when a reveal happened, else None. Raises
        ``IllegalActionError`` (a ValueError) and changes nothing on bad input.
        """
        if player in self.pending:
            raise IllegalActionError(f"player {player} has already committed this choice")
        self.pending[player] = self.state.check_action(player, action)
        if self.waiting_for():
            return None
        joint, self.pending = self.pending, {}
        self.state.apply(dict(sorted(joint.items())))
        return self.tracker.rewards(self.state.scores(), self.state.is_terminal())

    def legal_mask(self, player: int) -> np.ndarray:
        """``player``'s int8 mask: their legal actions while they still have to commit."""
        if player in self.pending or player not in self.state.to_act():
            return np.zeros(self.game.num_actions, dtype=np.int8)
        return self.state.legal_mask(player).astype(np.int8)

    def render(self) -> str:
        text = str(self.state)
        if self.pending:
            committed = ", ".join(f"player_{p}" for p in sorted(self.pending))
            text += f"\n(committed face down: {committed})"
        return text
