"""A search agent at other budgets against the panel's ``pimc``: does more search beat it?
(Quoted in docs/notes/results-history-2026-11.md.)

    python scripts/measure/search_budget.py --env hiddenhand/easter_collection-v0 --num-players 5 \\
        --agent pimc --budgets 800 2000 --games 200 --seed 1000003

The agent (``pimc``: rollouts a decision; ``ismcts``: iterations) in one seat, the
panel's ``pimc`` (its budget pinned in ``training/evaluation/panel.py``) in every other,
seat-rotated: a row per budget with the agent's win rate and mean score and their 95%
intervals, and the CPU seconds of the series. It tells whether a teacher with a larger
budget is stronger than the panel member it is meant to beat.
"""

from __future__ import annotations

import argparse
import time

from training.agents.search import ISMCTS, PIMC
from training.cli import add_game_arguments, game_from_args
from training.evaluation.panel import SEARCH_BUDGETS
from training.evaluation.tournament import head_to_head

#: The search agents and the name of their budget.
SEARCHES = {"pimc": (PIMC, "samples"), "ismcts": (ISMCTS, "iterations")}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_game_arguments(parser)
    parser.add_argument("--agent", choices=sorted(SEARCHES), default="pimc", help="the search")
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[800], help="budgets to play (each ≥ 1)"
    )
    parser.add_argument("--games", type=int, default=200, help="seat-rotated games per budget")
    parser.add_argument("--seed", type=int, default=0, help="seed of every series")
    args = parser.parse_args()
    if min(args.budgets) < 1:
        parser.error(f"--budgets must all be at least 1, got {args.budgets}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    spec, _, game = game_from_args(parser, args)
    search, budget_name = SEARCHES[args.agent]
    panel_pimc = PIMC(game, **SEARCH_BUDGETS["pimc"])
    print(
        f"{spec.aec_id} {game.config}: {args.agent} in one seat, the panel's pimc "
        f"({SEARCH_BUDGETS['pimc']['samples']} samples) in every other, {args.games} games, "
        f"seed {args.seed}"
    )
    print(f"| {budget_name} | win rate | mean score | CPU s |")
    print("|---|---|---|---|")
    for budget in args.budgets:
        started = time.process_time()
        r = head_to_head(
            game, search(game, **{budget_name: budget}), panel_pimc, args.games, args.seed
        )
        print(
            f"| {budget} | {r['win_rate']:.3f} ± {r['win_ci']:.3f} | {r['mean_score']:.2f} ± "
            f"{r['score_ci']:.2f} | {time.process_time() - started:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
