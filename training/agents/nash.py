"""``nash``: two-player Pico played at equilibrium.

``PicoNash`` plays, at every reveal, an equilibrium mixed strategy of the ``win``
objective (the env's default reward) computed by the exact solver
(``training.solvers.pico``): a subgame-perfect equilibrium, so no opponent can beat
it in expectation and its NashConv is zero (up to the solver's rounding).

It acts from its observation alone: every hand, won pile and score is shown, so the
position is rebuilt from the observation in the agent's own frame (itself as seat 0;
the rules are the same from either seat). The solver runs lazily: the first decision
of a deal solves the deal (a fraction of a second to a few seconds, mostly small
linear programs; second-round positions are shared between deals), and values and
strategies stay in a per-agent cache for later decisions and deals.
"""

from __future__ import annotations

import numpy as np

from envs.pico.rules import PicoGame
from training.solvers.pico import PicoSolver, Position


def canonical(position: Position) -> Position:
    """A position with the same equilibrium play: the margin as player_0's score, and in the
    last round no won piles (they only set the hands of the round after)."""
    won = position.won if position.round == 0 else (0, 0)
    margin = position.scores[0] - position.scores[1]
    return Position(position.round, position.hands, won, (margin, 0))


class PicoNash:
    """The equilibrium player of two-player Pico (``win`` objective)."""

    def __init__(self, game: PicoGame, objective: str = "win") -> None:
        if game.num_players != 2:
            raise ValueError(
                "the nash agent plays only two-player Pico (both hands are public and the "
                f"game is solved exactly); this game has {game.num_players} players"
            )
        if game.config.aside != "face_up":
            raise ValueError(
                "the nash agent needs both hands public (the game is solved exactly), but "
                f"aside={game.config.aside!r} hides the other hand in round 1; allowed "
                "values: aside='face_up'"
            )
        self.game = game
        self.solver = PicoSolver.for_game(game, objective)
        self._strategies: dict[Position, np.ndarray] = {}
        fields = game.observation_layout.fields
        bits = 1 << np.arange(11, dtype=np.int64)
        #: Reads the fields a position needs from a batch of observations.
        self._fields = {
            name: (fields[name].start, fields[name].stop) for name in ("hand", "won", "scores")
        }
        self._round = fields["round"].start
        self._bits = bits

    def strategy(self, position: Position) -> np.ndarray:
        """The equilibrium strategy of seat 0 at ``position`` (cached per class of positions
        with the same future: the score margin matters, not the scores, and the won piles
        only before the swap)."""
        position = canonical(position)
        strategy = self._strategies.get(position)
        if strategy is None:
            strategy = self._strategies[position] = self.solver.strategy(position, 0)
        return strategy

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        position = Position.from_observation(self.game, observation)
        return self.strategy(position).copy()

    def action_probabilities_batch(
        self, observations: np.ndarray, action_masks: np.ndarray
    ) -> np.ndarray:
        """``action_probabilities`` of every row (each distinct position solved once)."""
        obs = np.asarray(observations)
        columns = []
        for name in ("hand", "won"):
            start, _ = self._fields[name]
            for seat in range(2):
                at = start + 11 * seat
                columns.append(np.rint(obs[:, at : at + 11]).astype(np.int64) @ self._bits)
        start, _ = self._fields["scores"]
        columns += [np.rint(obs[:, start + s]).astype(np.int64) for s in range(2)]
        rounds = obs[:, self._round : self._round + 2]
        columns.append(np.where(rounds.any(axis=1), rounds.argmax(axis=1), 2))
        keys = np.stack(columns, axis=1)
        last = keys[:, 6] == 1
        keys[:, 4] -= keys[:, 5]  # the margin, and no won piles in the last round: see canonical
        keys[:, 5] = 0
        keys[last, 2:4] = 0
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        table = np.empty((len(unique), 11))
        for i, (h0, h1, w0, w1, s0, s1, r) in enumerate(unique.tolist()):
            table[i] = self.strategy(Position(r, (h0, h1), (w0, w1), (s0, s1)))
        return table[inverse.reshape(-1)]

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        probabilities = self.action_probabilities(observation, action_mask)
        return int(rng.choice(len(probabilities), p=probabilities))


__all__ = ["PicoNash"]
