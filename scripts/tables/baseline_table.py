"""A trained agent's row of the shipped agents' table in docs/results.md: its win rate and mean score against the
heuristic and against random (each in every other seat), seat-rotated, with 95%
intervals, and whether the interval's lower bound is above chance (1/N).

    python scripts/tables/baseline_table.py --env hiddenhand/pickup-v0 --num-players 3 --agent ppo
    python scripts/tables/baseline_table.py --env hiddenhand/pickup-v0 --num-players 5 \\
        --agent runs/pickup-5p/model.zip --games 2000
"""

from __future__ import annotations

import argparse

from training import cli
from training.evaluation.tournament import head_to_head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_game_arguments(parser)
    parser.add_argument("--agent", default="ppo", help="an agent name or a saved model's path")
    parser.add_argument("--games", type=int, default=2000, help="games per opponent")
    parser.add_argument("--seed", type=int, default=0, help="seed of the series")
    args = parser.parse_args()
    spec, options, game = cli.game_from_args(parser, args)
    try:
        agent = spec.make_agent(args.agent, game)
    except ValueError as error:
        parser.error(str(error))
    chance = 1 / game.num_players
    print(
        "| configuration | opponent | win rate (95% CI) | mean score (95% CI) | games "
        "| lower bound above chance |"
    )
    print("|---|---|---|---|---|---|")
    named = " ".join(f"{k}={v}" for k, v in options.items())
    for opponent in ("heuristic", "random"):
        result = head_to_head(game, agent, spec.make_agent(opponent, game), args.games, args.seed)
        above = result["win_rate"] - result["win_ci"] > chance
        print(
            f"| {spec.aec_id} {named} | {opponent} | {result['win_rate']:.3f} ± "
            f"{result['win_ci']:.3f} | {result['mean_score']:.2f} ± {result['score_ci']:.2f} | "
            f"{args.games} | {'yes' if above else 'no'} (chance {chance:.3f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
