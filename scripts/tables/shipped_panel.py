"""Every shipped agent against the opponent panel: one row per configuration each game
declares, with the agent's panel score and its win rate against ``pimc`` at the panel
budget, scored as the benchmark scores a run (``training.benchmark``: 100 games per
member, 40 against each search member, evaluation seed 1000003): the panel score and
``pimc`` columns of docs/results.md's table (and ``SHIPPED_PANEL_SCORES`` in
``training.evaluation.panel``).

    python scripts/tables/shipped_panel.py                          # every configuration
    python scripts/tables/shipped_panel.py --only forslag_3p pickup_3p_target_score-100
    python scripts/tables/shipped_panel.py --games 20 --search-games 10
    python scripts/tables/shipped_panel.py --members pimc --search-games 400   # a longer pimc series

A configuration is named by its shipped file's stem (``baseline_name``). ``--members``
scores against some members only: the score is then their mean, not the panel score.
After the table, a JSON line of every result.
"""

from __future__ import annotations

import argparse
import json

import envs
from training.agents.policy import baseline_name
from training.evaluation.panel import (
    EVAL_GAMES,
    EVAL_SEARCH_GAMES,
    EVAL_SEED,
    MEMBERS,
    PANEL_VERSION,
    panel_members,
    panel_score,
)


def every_configuration() -> dict[str, tuple[str, dict]]:
    """Each configuration every game declares, by its shipped file's stem."""
    named = {}
    for env_id in envs.ids():
        spec = envs.get_spec(env_id)
        for config in spec.configurations:
            named[baseline_name(spec.make_game(**config))] = (env_id, config)
    return named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[], help="configurations to score")
    parser.add_argument("--games", type=int, default=EVAL_GAMES, help="games per member")
    parser.add_argument(
        "--search-games", type=int, default=EVAL_SEARCH_GAMES, help="games per search member"
    )
    parser.add_argument(
        "--members",
        nargs="+",
        choices=[m for m in MEMBERS if m != "ppo"],
        help="score against these members only (must include pimc); default: the whole panel",
    )
    args = parser.parse_args()
    configurations = every_configuration()
    unknown = sorted(set(args.only) - set(configurations))
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)}; known: {', '.join(configurations)}")
    if args.members and "pimc" not in args.members:
        parser.error("--members must include pimc (the table's last columns are against it)")
    if min(args.games, args.search_games) < 1:
        parser.error("--games and --search-games must be at least 1")

    print(
        f"{PANEL_VERSION}: {args.games} seat-rotated games per member, {args.search_games} "
        f"per search member, seed {EVAL_SEED}; score = win rate above chance, "
        "(win - 1/N) / (1 - 1/N)"
    )
    score = f"score over {', '.join(args.members)}" if args.members else "panel score"
    print(f"| configuration | {score} (95% CI) | vs pimc: win rate (chance) | win rate ≥ chance |")
    print("|---|---|---|---|")
    results = {}
    for name in args.only or configurations:
        env_id, config = configurations[name]
        spec = envs.get_spec(env_id)
        game = spec.make_game(**config)
        members = panel_members(spec, game)
        if args.members:
            members = {m: members[m] for m in args.members if m in members}
        result = results[name] = panel_score(
            game,
            spec.make_agent("ppo", game),
            members,
            args.games,
            EVAL_SEED,
            skip="ppo",
            search_games=args.search_games,
        )
        pimc = result["members"]["pimc"]
        print(
            f"| {name} | {result['panel_score']:+.3f} ± {result['panel_score_ci']:.3f} "
            f"| {pimc['win_rate']:.3f} ± {pimc['win_ci']:.3f} (1/{game.num_players}) "
            f"| {'yes' if pimc['win_rate'] >= 1 / game.num_players else 'no'} |",
            flush=True,
        )
    print(json.dumps(results, default=str))


if __name__ == "__main__":
    main()
