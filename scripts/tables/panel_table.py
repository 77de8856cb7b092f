"""Every member of a configuration's opponent panel against every other: the panel
tables of docs/ground_truth.md, one per configuration.

    python scripts/tables/panel_table.py --env hiddenhand/pico-v0 --games 200

Row agent in one seat, column member in every other, seat-rotated: the row agent's win
rate with its 95% interval, and the row's panel score (its mean win rate above chance
over the other members). With two players a game's win shares add up to one, so each
unordered pair is played once and the other order is its complement.
"""

from __future__ import annotations

import argparse
import time

from training.cli import add_game_arguments, game_from_args
from training.evaluation.panel import PANEL_VERSION, above_chance, panel_members
from training.evaluation.tournament import head_to_head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_game_arguments(parser)
    parser.add_argument("--games", type=int, default=200, help="seat-rotated games per pair")
    parser.add_argument("--seed", type=int, default=0, help="seed of every series")
    args = parser.parse_args()
    spec, _, game = game_from_args(parser, args)
    members = panel_members(spec, game)
    names = list(members)
    started = time.time()
    results: dict[tuple[str, str], tuple[float, float]] = {}
    for row in names:
        for column in names:
            if row == column or (row, column) in results:
                continue
            r = head_to_head(game, members[row], members[column], args.games, seed=args.seed)
            results[row, column] = (r["win_rate"], r["win_ci"])
            if game.num_players == 2:
                results[column, row] = (1 - r["win_rate"], r["win_ci"])
    print(
        f"{spec.aec_id} {game.config}: {PANEL_VERSION}, row agent in one seat, column member in "
        f"every other, {args.games} seat-rotated games per pair (seed {args.seed}), "
        f"{time.time() - started:.0f} s"
    )
    print("| agent | " + " | ".join(names) + " | panel score |")
    print("|---|" + "---|" * (len(names) + 1))
    for row in names:
        cells = [
            "-"
            if row == column
            else f"{results[row, column][0]:.2f} ± {results[row, column][1]:.2f}"
            for column in names
        ]
        scores = [above_chance(results[row, c][0], game.num_players) for c in names if c != row]
        print(f"| {row} | " + " | ".join(cells) + f" | {sum(scores) / len(scores):+.3f} |")


if __name__ == "__main__":
    main()
