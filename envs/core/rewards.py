"""Reward modes, decided once for every game.

- ``"win"`` (default): zero-sum, only at the end. With k tied winners each gets
  w = 1/k, the others 0; reward = (w - mean(w)) * N / (N - 1). Two players:
  +1 / -1, a tie 0 / 0.
- ``"score"``: dense and zero-sum. At every reveal, each player receives the
  change in (own score - mean score of the others), so over a game the rewards
  add up to the final score margin.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envs.core.game import require_choice

REWARD_MODES = ("win", "score")


def check_reward_mode(mode: str) -> None:
    require_choice("reward_mode", mode, REWARD_MODES)


def score_margins(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Own score minus the mean of the others', for every player (along ``axis``)."""
    n = scores.shape[axis]
    return scores - (scores.sum(axis=axis, keepdims=True) - scores) / (n - 1)


def win_shares(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Each player's share of the win (along ``axis``): 1/k for each of k tied leaders,
    0 for the others."""
    leaders = scores == scores.max(axis=axis, keepdims=True)
    return leaders / leaders.sum(axis=axis, keepdims=True)


def win_rewards(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Final zero-sum rewards (along ``axis``): tied winners share the win."""
    n = scores.shape[axis]
    shares = win_shares(scores, axis)
    return (shares - shares.mean(axis=axis, keepdims=True)) * n / (n - 1)


class RewardTracker:
    """Turns score changes into per-player rewards for one reward mode."""

    def __init__(self, mode: str) -> None:
        check_reward_mode(mode)
        self.mode = mode
        self._margins: np.ndarray | None = None
        self._no_rewards: list[float] = []

    def reset(self, scores: np.ndarray) -> None:
        self._margins = score_margins(scores)
        self._no_rewards = [0.0] * len(scores)

    def rewards(self, scores: Callable[[], np.ndarray], terminal: bool) -> list[float]:
        """The rewards earned since the last call (or reset); ``scores`` is called only
        when the mode needs it."""
        if self.mode == "win":
            return win_rewards(scores()).tolist() if terminal else list(self._no_rewards)
        margins = score_margins(scores())
        rewards = (margins - self._margins).tolist()
        self._margins = margins
        return rewards
