"""Seat-rotated matches between agents, straight on the rules (no env wrappers): one
series (``seat_rotated``), one agent against one opponent (``head_to_head``), and the
intervals they are reported with (``mean_interval``).

Every seat decides from its own observation and mask, exactly as through the
envs; simultaneous choosers all decide on the same unrevealed state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from envs.core.agents import Agent, decide, uses_observation
from envs.core.game import Game
from envs.core.rewards import win_shares
from envs.core.spec import GameSpec


def play_game(game: Game, seats: Sequence[Agent], rng: np.random.Generator) -> np.ndarray:
    """Play one game with ``seats[p]`` in seat ``p``; return the final scores."""
    state = game.new_initial_state(rng.spawn(1)[0])
    while not state.is_terminal():
        joint = {}
        for player in state.to_act():
            agent = seats[player]
            mask = state.legal_mask(player).astype(np.int8)
            observation = game.observation(state, player) if uses_observation(agent) else None
            joint[player] = decide(agent, state, player, observation, mask, rng)
        state.apply(joint)
    return state.scores()


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return float(x.mean()) if len(x) else float("nan"), float("nan")
    return float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x)))


@dataclass
class Record:
    """One agent's results over a series: a score and a win share per seat played."""

    scores: list[float] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)

    def add(self, score: float, win: float) -> None:
        self.scores.append(score)
        self.wins.append(win)


def seat_rotated(
    game: Game, lineup: Sequence[tuple[str, Agent]], num_games: int, seed: int = 0
) -> dict[str, Record]:
    """Play ``num_games`` with the lineup rotated one seat each game.

    ``lineup`` has one (name, agent) per seat; names may repeat (their seats pool
    into one record). A win is shared among tied leaders (1/k each).
    """
    if len(lineup) != game.num_players:
        raise ValueError(f"the lineup needs {game.num_players} agents, got {len(lineup)}")
    rng = np.random.default_rng(seed)
    records: dict[str, Record] = {name: Record() for name, _ in lineup}
    n = game.num_players
    for g in range(num_games):
        seated = [lineup[(p + g) % n] for p in range(n)]
        scores = play_game(game, [agent for _, agent in seated], rng)
        shares = win_shares(scores)
        for p, (name, _) in enumerate(seated):
            records[name].add(float(scores[p]), float(shares[p]))
    return records


def head_to_head(
    game: Game, agent: Agent, opponent: Agent, games: int, seed: int = 0
) -> dict[str, float]:
    """``agent`` in one seat, ``opponent`` in every other, seat-rotated: its win rate and
    mean score, each with the half-width of its 95% interval."""
    lineup = [("agent", agent)] + [("opponent", opponent)] * (game.num_players - 1)
    record = seat_rotated(game, lineup, games, seed=seed)["agent"]
    win, win_ci = mean_interval(record.wins)
    score, score_ci = mean_interval(record.scores)
    return {"win_rate": win, "win_ci": win_ci, "mean_score": score, "score_ci": score_ci}


def make_agent(spec: GameSpec, game: Game, name: str) -> Agent:
    """An agent from a name the game knows or a saved model's path."""
    return spec.make_agent(name, game)
