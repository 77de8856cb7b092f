"""Mean score of each game's heuristic against random opponents, seat-rotated: the table
of heuristic baselines in docs/results.md.

    python scripts/tables/heuristic_vs_random.py --env hiddenhand/pickup-v0 --games 1000

One heuristic seat, random agents in the others, the lineup rotated every game,
for each configuration the game declares (or the --num-players given).
"""

from __future__ import annotations

import argparse

import envs
from training.evaluation.tournament import mean_interval, seat_rotated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default=None, help="a PettingZoo id; default: every game")
    parser.add_argument("--games", type=int, default=1000, help="games per configuration")
    parser.add_argument("--seed", type=int, default=0, help="seed of the series")
    args = parser.parse_args()
    print("| env | options | agent | mean score (95% CI) | win share (95% CI) | games |")
    print("|---|---|---|---|---|---|")
    for env_id in [args.env] if args.env else envs.ids():
        spec = envs.get_spec(env_id)
        for config in spec.configurations:
            game = spec.make_game(**config)
            heuristic = spec.agent_factory("heuristic")(game)
            random_agent = spec.agent_factory("random")(game)
            lineup = [("heuristic", heuristic)] + [("random", random_agent)] * (
                game.num_players - 1
            )
            records = seat_rotated(game, lineup, args.games, seed=args.seed)
            options = ", ".join(f"{k}={v}" for k, v in config.items()) or "-"
            for name, record in records.items():
                score, score_ci = mean_interval(record.scores)
                win, win_ci = mean_interval(record.wins)
                print(
                    f"| {env_id} | {options} | {name} | {score:.2f} ± {score_ci:.2f} "
                    f"| {win:.3f} ± {win_ci:.3f} | {args.games} |"
                )


if __name__ == "__main__":
    main()
