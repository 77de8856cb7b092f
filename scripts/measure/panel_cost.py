"""CPU seconds per evaluation game against each panel member, per benchmark configuration:
what scoring a run costs (``training.benchmark`` plays 100 games against each member),
as docs/benchmark.md quotes it.

    python scripts/measure/panel_cost.py            # 4 games per member
    python scripts/measure/panel_cost.py --games 10

The scored agent is ``random`` (its own cost is nil), seat-rotated as in the panel.
"""

from __future__ import annotations

import argparse
import time

from envs import get_spec
from training.benchmark import CONFIGURATIONS
from training.evaluation.panel import panel_members
from training.evaluation.tournament import head_to_head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games per member")
    args = parser.parse_args()
    print("| configuration | " + "CPU s per game against each member |")
    print("|---|---|")
    for name, (env_id, options) in CONFIGURATIONS.items():
        spec = get_spec(env_id)
        game = spec.make_game(**options)
        agent = spec.make_agent("random", game)
        costs = []
        for member, opponent in panel_members(spec, game).items():
            started = time.process_time()
            head_to_head(game, agent, opponent, args.games, seed=1)
            costs.append(f"{member} {(time.process_time() - started) / args.games:.2f}")
        print(f"| {name} | {', '.join(costs)} |", flush=True)


if __name__ == "__main__":
    main()
