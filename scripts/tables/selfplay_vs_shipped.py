"""Self-play agents against the shipped ones, on the benchmark protocol's configurations:
the table of self-play candidates in docs/results.md.

    python scripts/tables/selfplay_vs_shipped.py --out runs/selfplay-vs-shipped --decisions 2000000
    python scripts/tables/selfplay_vs_shipped.py --configs pickup-4p --algorithm ppo --out runs/x

For each configuration (``training.benchmark.CONFIGURATIONS``): ``training.selfplay``
trains an agent with the learner alone (no imitation; ``--algorithm``, ``--decisions``,
``--seed``, every other argument its default) into ``OUT/<configuration>`` unless that
folder already holds a model, then the agent plays 2,000 seat-rotated games (``--games``)
against the shipped agent (``ppo``: it in one seat, the shipped agent in every other)
and against the heuristic, and is scored on the panel as the benchmark protocol scores
a run (``training.benchmark``: games per member, per search member, evaluation seed).
One Markdown row per configuration, with 95% intervals, and the shipped agent's panel
score beside it (``training.evaluation.panel.SHIPPED_PANEL_SCORES``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from envs.core.spec import get_spec
from training import selfplay
from training.agents.policy import baseline_name
from training.benchmark import CONFIGURATIONS
from training.evaluation.panel import (
    EVAL_GAMES,
    EVAL_SEARCH_GAMES,
    EVAL_SEED,
    SHIPPED_PANEL_SCORES,
    panel_members,
    panel_score,
)
from training.evaluation.tournament import head_to_head, make_agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="*", default=list(CONFIGURATIONS))
    parser.add_argument("--out", required=True, help="folder of the runs (kept: reused)")
    parser.add_argument("--algorithm", default="qmmd", choices=selfplay.ALGORITHMS)
    parser.add_argument("--decisions", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", type=int, default=2000, help="head-to-head games")
    args = parser.parse_args()
    unknown = sorted(set(args.configs) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"unknown --configs {unknown}; allowed: {', '.join(CONFIGURATIONS)}")
    torch.set_num_threads(1)
    print(
        "| configuration | vs shipped (95% CI) | vs heuristic (95% CI) | panel (95% CI) "
        "| shipped's panel |"
    )
    print("|---|---|---|---|---|")
    for name in args.configs:
        env_id, options = CONFIGURATIONS[name]
        spec = get_spec(env_id)
        game = spec.make_game(**options)
        run = Path(args.out) / name
        if not (run / "model.npz").is_file():
            selfplay.train(
                selfplay.Args(
                    env=env_id,
                    num_players=options.get("num_players"),
                    option=[f"{k}={v}" for k, v in options.items() if k != "num_players"],
                    algorithm=args.algorithm,
                    decisions=args.decisions,
                    seed=args.seed,
                    out=str(run),
                    overwrite=True,
                    eval_pimc_games=0,
                    progress_bar=False,
                )
            )
        agent = make_agent(spec, game, str(run))
        shipped = head_to_head(game, agent, make_agent(spec, game, "ppo"), args.games)
        heuristic = head_to_head(game, agent, make_agent(spec, game, "heuristic"), args.games)
        panel = panel_score(
            game,
            agent,
            panel_members(spec, game),
            EVAL_GAMES,
            EVAL_SEED,
            search_games=EVAL_SEARCH_GAMES,
        )
        reference = SHIPPED_PANEL_SCORES[baseline_name(game)]
        print(
            f"| {name} | {shipped['win_rate']:.3f} ± {shipped['win_ci']:.3f} "
            f"(chance {1 / game.num_players:.3f}) | {heuristic['win_rate']:.3f} ± "
            f"{heuristic['win_ci']:.3f} | {panel['panel_score']:+.3f} ± "
            f"{panel['panel_score_ci']:.3f} | {reference[0]:+.3f} ± {reference[1]:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
