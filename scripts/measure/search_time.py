"""CPU time per decision of the search agents at their default budget, in every game's
default configuration: ``pimc`` (rollouts on the batched engine), ``pimc`` with its
rollouts one state at a time (``batched=False``) and ``ismcts``, each against random
(as docs/ground_truth.md quotes them).

    python scripts/measure/search_time.py              # 2 games per agent and game
    python scripts/measure/search_time.py --games 4
    python scripts/measure/search_time.py --rollout heuristic

With ``--rollout heuristic`` every search plays its rollouts with the game's heuristic
(as ``pimc_heuristic`` does), in the games whose batched engine has it (Pico, Pickup).
The last column is the ratio of the two PIMCs' mean times, measured in the same run.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import envs
from training.agents.search import ISMCTS, PIMC, ROLLOUTS
from training.evaluation.tournament import head_to_head


class Timed:
    """An agent whose decisions are timed (CPU seconds, one entry per decision)."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.times = agent, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def act(self, *args: Any, **kwargs: Any) -> int:
        started = time.process_time()
        action = self.agent.act(*args, **kwargs)
        self.times.append(time.process_time() - started)
        return action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2, help="games per agent and game")
    parser.add_argument(
        "--rollout", choices=ROLLOUTS, default="random", help="the searches' rollout policy"
    )
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    print(f"CPU ms per decision, mean / max ({args.rollout} rollouts)")
    print("| game | pimc | pimc, batched=False | ismcts | plain / batched pimc |")
    print("|---|---|---|---|---|")
    for env_id in envs.ids():
        spec = envs.get_spec(env_id)
        game = spec.make_game()
        rollout = args.rollout
        agents = {
            "pimc": PIMC(game, rollout=rollout),
            "plain": PIMC(game, rollout=rollout, batched=False),
            "ismcts": ISMCTS(game, rollout=rollout),
        }
        if agents["pimc"].batched is None:  # played one state at a time either way
            continue
        means, cells = {}, []
        for name, agent in agents.items():
            timed = Timed(agent)
            head_to_head(game, timed, spec.make_agent("random", game), args.games, seed=1)
            means[name] = float(np.mean(timed.times))
            cells.append(f"{1000 * means[name]:.0f} / {1000 * max(timed.times):.0f}")
        ratio = means["plain"] / means["pimc"]
        print(f"| {spec.name} {game.num_players}p | {' | '.join(cells)} | {ratio:.1f}x |")


if __name__ == "__main__":
    main()
