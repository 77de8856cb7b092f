"""What an agent's policy is, stated as probabilities, and its exact NashConv in
two-player Pico: the measures ``training.exploitability`` prints and the learners'
periodic evaluations record.

``probabilities_of`` turns any agent into a checked, batched ``(observations, masks) ->
probabilities``; ``nash_conv`` gives an agent's exact NashConv per deal
(``training.solvers.pico.best_responses``; ``training.exploitability`` documents the
definition and its scale).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envs.core.agents import Agent, uses_observation, uses_position
from envs.core.agents import Position as SeatPosition
from envs.pico.rules import PicoGame
from training.solvers.pico import (
    Position,
    Probabilities,
    best_responses,
    future_key,
    state_from_observation,
)

#: Searches kept per search agent (a deal's tree has tens of thousands of futures).
SEARCH_CACHE = 500_000


def probabilities_of(agent: Agent, game: PicoGame | None = None) -> Probabilities:
    """A batched ``(observations, masks) -> probabilities`` for an agent, checked: each row
    must be a distribution that is zero outside its mask. A search agent (``uses_position``)
    searches from the state each observation shows (``state_from_observation``), with a
    fixed rng per position, so its stated policy is one run of its search; observations
    that differ only in the last reveal share it (``future_key``). An agent that names the
    observation's columns it reads (``read_columns``: a network's inputs) is asked once
    per distinct input: the exact tree meets each position after every reveal that leads
    to it, and a network that ignores the last reveal sees one position."""
    batch = getattr(agent, "action_probabilities_batch", None)
    single = getattr(agent, "action_probabilities", None)
    if batch is None and single is None:
        raise ValueError(f"{type(agent).__name__} does not state its action probabilities")
    if uses_position(agent):
        if game is None:
            raise ValueError("a search agent's probabilities need the game")
        searched = single
        found: dict[bytes, np.ndarray] = {}  # one search per future (``future_key``)

        def single(observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
            key = future_key(game, observation) + np.asarray(mask, dtype=np.int8).tobytes()
            if key not in found:
                if len(found) >= SEARCH_CACHE:
                    found.clear()
                state = state_from_observation(game, observation)
                rng = np.random.default_rng(0)
                position = SeatPosition(state, 0)
                found[key] = searched(observation, mask, position=position, rng=rng)
            return found[key]

    def probabilities(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if batch is not None:
            result = np.asarray(batch(observations, masks), dtype=np.float64)
        elif not uses_observation(agent):
            unique, inverse = np.unique(masks, axis=0, return_inverse=True)
            table = np.array([single(None, mask) for mask in unique], dtype=np.float64)
            result = table[inverse.reshape(-1)]
        else:
            result = np.array(
                [single(o, m) for o, m in zip(observations, masks, strict=True)], dtype=np.float64
            )
        outside = np.abs(np.where(masks.astype(bool), 0.0, result)).max(initial=0.0)
        if outside > 1e-9 or np.abs(result.sum(axis=1) - 1.0).max(initial=0.0) > 1e-6:
            raise ValueError(
                f"{type(agent).__name__}'s action probabilities are not distributions over "
                "the legal actions"
            )
        return result

    columns = getattr(agent, "read_columns", None)
    if columns is None:
        return probabilities

    def distinct(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        read = np.concatenate([observations[:, columns], masks], axis=1, dtype=np.float32)
        rows = np.ascontiguousarray(read).view(np.dtype((np.void, 4 * read.shape[1])))[:, 0]
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
        return probabilities(observations[first], masks[first])[inverse.reshape(-1)]

    return distinct


def nash_conv(
    game: PicoGame,
    agent: Agent | Probabilities,
    deals: Sequence[tuple[int, int]],
    objective: str = "win",
) -> np.ndarray:
    """The agent's exact NashConv on each deal (player_0's set, player_1's set as masks)."""
    probabilities = agent if callable(agent) and not hasattr(agent, "act") else None
    probabilities = probabilities or probabilities_of(agent, game)
    values = []
    for deal in deals:
        best0, best1 = best_responses(game, probabilities, Position.deal(*deal), None, objective)
        values.append(best0 - best1)
    return np.array(values)
