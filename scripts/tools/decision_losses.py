"""Where an agent falls short of a teacher, sub-step by sub-step.

    python scripts/tools/decision_losses.py --env hiddenhand/pick_and_pack-v0 \\
        --agent ppo --teacher tactician --games 200

The agent (a name the game knows or a saved model's path) plays seat-rotated games
against an opponent, the heuristic by default. At each of its decisions with a
choice, the teacher (an agent with ``action_values``: an expert, or ``pimc_heuristic``,
which searches the position) values every legal action. Per sub-step of the game (the
observation's ``phase`` field; one row for games without one) the table gives how often
the agent chose one of the teacher's best actions, the mean value it gave up by the
teacher's reckoning (in points for the experts) and that sub-step's share of all the
value given up.
A choice the teacher does not value (a placement off its plan, a Malfunction
target it does not consider) is counted apart, as unvalued, and adds no loss.
This is what told the Pick & Pack students' weak sub-steps apart (see docs/notes/results-history-2026-11.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from envs.core.agents import Agent, uses_position
from envs.core.game import Game
from training.cli import add_game_arguments, game_from_args
from training.evaluation.tournament import make_agent, mean_interval, seat_rotated
from training.imitation import teacher_values
from training.train import valued_agents


@dataclass
class StepLosses:
    """One sub-step's decisions: how many, how many matched a best action of the
    teacher, how many it did not value, and the value given up in all."""

    decisions: int = 0
    agreed: int = 0
    unvalued: int = 0
    lost: float = 0.0


class Watched:
    """Plays as ``agent`` and books each of its choices against ``teacher``'s values."""

    def __init__(self, game: Game, agent: Agent, teacher: Agent) -> None:
        self.agent, self.teacher = agent, teacher
        #: A search (as the agent or the teacher) is handed the position by ``decide``.
        self.uses_position = uses_position(agent) or uses_position(teacher)
        self.phase = game.observation_layout.fields.get("phase")
        self.names = getattr(sys.modules[type(game).__module__], "PHASE_NAMES", None)
        self.steps: dict[str, StepLosses] = {}

    def step_name(self, observation: np.ndarray) -> str:
        if self.phase is None:
            return "every decision"
        flags = observation[self.phase.start : self.phase.stop]
        index = int(np.argmax(flags)) if flags.any() else -1
        return self.names[index] if self.names and index >= 0 else f"phase {index}"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng, position=None) -> int:
        if uses_position(self.agent):
            action = self.agent.act(observation, action_mask, rng, position=position)
        else:
            action = self.agent.act(observation, action_mask, rng)
        if action_mask.sum() > 1:
            seen = position if uses_position(self.teacher) else None
            values = teacher_values(self.teacher, observation, action_mask, seen, rng)
            step = self.steps.setdefault(self.step_name(observation), StepLosses())
            step.decisions += 1
            if not np.isfinite(values[action]):
                step.unvalued += 1
            else:
                step.agreed += int(values[action] >= values.max())
                step.lost += float(values.max() - values[action])
        return action


def decision_losses(
    game: Game, agent: Agent, teacher: Agent, opponent: Agent, games: int, seed: int = 0
) -> tuple[dict[str, StepLosses], tuple[float, float]]:
    """The agent's losses per sub-step, and its win rate (with its 95% half-width)."""
    watched = Watched(game, agent, teacher)
    lineup = [("agent", watched)] + [("opponent", opponent)] * (game.num_players - 1)
    record = seat_rotated(game, lineup, games, seed=seed)["agent"]
    return watched.steps, mean_interval(record.wins)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_game_arguments(parser)
    parser.add_argument("--agent", required=True, help="the agent examined: a name or model path")
    parser.add_argument("--teacher", default="expert", help="an agent with action_values")
    parser.add_argument("--opponent", default="heuristic", help="the agent in every other seat")
    parser.add_argument("--games", type=int, default=200, help="seat-rotated games")
    parser.add_argument("--seed", type=int, default=0, help="seed of the series")
    args = parser.parse_args(argv)

    spec, _, game = game_from_args(parser, args)
    if args.teacher not in valued_agents(spec):
        parser.error(
            f"the teacher {args.teacher!r} has no action_values to judge by (agents with "
            f"them: {', '.join(valued_agents(spec)) or 'none'})"
        )
    agent, teacher, opponent = (
        make_agent(spec, game, name) for name in (args.agent, args.teacher, args.opponent)
    )
    steps, (win, win_ci) = decision_losses(game, agent, teacher, opponent, args.games, args.seed)
    total = sum(s.lost for s in steps.values()) or 1.0
    print(
        f"{args.agent} against {args.opponent} ({args.games} seat-rotated games): win rate "
        f"{win:.3f} ± {win_ci:.3f}; judged by {args.teacher}"
    )
    print("| sub-step | decisions | best by the teacher | unvalued | mean value lost | share |")
    print("|---|---|---|---|---|---|")
    for name, s in sorted(steps.items(), key=lambda kv: -kv[1].lost):
        valued = max(1, s.decisions - s.unvalued)
        print(
            f"| {name} | {s.decisions} | {s.agreed / valued:.3f} | {s.unvalued} "
            f"| {s.lost / valued:.2f} | {s.lost / total:.2f} |"
        )


if __name__ == "__main__":
    main()
