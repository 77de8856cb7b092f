"""Evaluate agents against each other over seat-rotated games.

    python -m training.evaluate --env hiddenhand/pico-v0 --agents ppo heuristic random --games 2000
    python -m training.evaluate --env hiddenhand/pickup-v0 --num-players 4 \\
        --agents runs/pickup-4p-seed0/model.zip heuristic random
    python -m training.evaluate --env hiddenhand/forslag-v0 --option board_play=simultaneous \\
        --agents heuristic random

Agents are names the game knows (``random``, ``heuristic``, ``ppo`` for the shipped
baseline) or paths to saved models (checked against the env). For every ordered
pair (A, B), A plays one seat and B every other seat, the lineup rotating a seat
each game: a table of A's win rate and mean score with 95% confidence intervals.
With more than two players, a rating (openskill's Plackett-Luce) from games whose
seats are filled at random from all the agents is added. With ``--panel``, each agent
is scored against the game's opponent panel instead (``training/evaluation/panel.py``):
a win rate above chance against every member, and their mean, the panel score, scored
by default as the benchmark protocol scores a run (``training.benchmark``: its games per
member, per search member and evaluation seed; ``--games``, ``--search-games`` and
``--seed`` change them), with reference lines (chance, the shipped agent's panel score)
and a line to stderr as each member's series finishes.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence

import numpy as np

from envs.core.agents import Agent
from envs.core.game import Game
from envs.core.spec import GameSpec
from training.cli import add_game_arguments, game_from_args, one_torch_thread, tool_parser
from training.evaluation.panel import EVAL_GAMES, EVAL_SEARCH_GAMES, EVAL_SEED
from training.evaluation.tournament import head_to_head, make_agent, play_game

#: Games per ordered pair, unless ``--games`` says otherwise.
PAIR_GAMES = 2000


def ratings(
    game: Game, agents: dict[str, Agent], games: int, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """openskill (mu, sigma) per agent from games with seats filled at random."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rated = {name: model.rating(name=name) for name in agents}
    names = list(agents)
    rng = np.random.default_rng(seed)
    for _ in range(games):
        seated = [names[i] for i in rng.choice(len(names), size=game.num_players)]
        scores = play_game(game, [agents[n] for n in seated], rng)
        teams = [[rated[n]] for n in seated]
        updated = model.rate(teams, scores=scores.tolist())
        for name, (rating,) in zip(seated, updated, strict=True):
            rated[name] = rating
    return {name: (r.mu, r.sigma) for name, r in rated.items()}


def main(argv: Sequence[str] | None = None) -> None:
    one_torch_thread()
    parser = tool_parser("training.evaluate", __doc__)
    add_game_arguments(parser)
    parser.add_argument(
        "--agents", nargs="+", required=True, help="names or model paths (≥ 2; ≥ 1 with --panel)"
    )
    parser.add_argument(
        "--panel",
        action="store_true",
        help="score each agent against the game's opponent panel (panel-v2) instead",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=None,
        help=f"games per ordered pair (default {PAIR_GAMES}); with --panel, per member "
        f"(default {EVAL_GAMES}, the benchmark protocol's)",
    )
    parser.add_argument(
        "--search-games",
        type=int,
        default=None,
        help=f"with --panel: games per search member, pimc and ismcts (default "
        f"{EVAL_SEARCH_GAMES}, the protocol's; they cost almost all of the time)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"seed of the series (default 0; with --panel {EVAL_SEED}, the protocol's)",
    )
    args = parser.parse_args(argv)
    if len(args.agents) < (1 if args.panel else 2):
        parser.error("give at least two agents (or one with --panel)")
    if args.search_games is not None and not args.panel:
        parser.error("--search-games applies only with --panel (games per search member)")
    games = args.games if args.games is not None else EVAL_GAMES if args.panel else PAIR_GAMES
    search_games = args.search_games if args.search_games is not None else EVAL_SEARCH_GAMES
    seed = args.seed if args.seed is not None else EVAL_SEED if args.panel else 0
    if games < 1:
        parser.error(f"--games must be at least 1, got {games}")
    if search_games < 1:
        parser.error(f"--search-games must be at least 1, got {search_games}")

    spec, _, game = game_from_args(parser, args)
    agents = {}
    for name in args.agents:
        try:
            agents[name] = make_agent(spec, game, name)
        except ValueError as error:
            parser.error(f"--agents {name!r}: {error}")
    if args.panel:
        print_panel(spec, game, agents, games, search_games, seed)
        return
    print(f"{spec.aec_id}, {game.num_players} players, {games} seat-rotated games per pair")
    print("| agent | opponents | win rate (95% CI) | mean score (95% CI) | games |")
    print("|---|---|---|---|---|")
    for name, agent in agents.items():
        for other, opponent in agents.items():
            if other == name:
                continue
            r = head_to_head(game, agent, opponent, games, seed=seed)
            print(
                f"| {name} | {other} | {r['win_rate']:.3f} ± {r['win_ci']:.3f} "
                f"| {r['mean_score']:.2f} ± {r['score_ci']:.2f} | {games} |"
            )
    if game.num_players > 2:
        print("\n| agent | openskill mu | sigma |\n|---|---|---|")
        for name, (mu, sigma) in sorted(
            ratings(game, agents, games, seed=seed).items(), key=lambda kv: -kv[1][0]
        ):
            print(f"| {name} | {mu:.2f} | {sigma:.2f} |")


def print_panel(
    spec: GameSpec, game: Game, agents: dict, games: int, search_games: int, seed: int
) -> None:
    """Each agent against the panel: a table per agent with its reference lines (chance, the
    shipped agent's score), then a JSON line of every score. A line to stderr as each
    member's series finishes."""
    from training.agents.policy import baseline_name
    from training.evaluation.panel import (
        PANEL_VERSION,
        SEARCH_BUDGETS,
        SHIPPED_PANEL_SCORES,
        panel_members,
        panel_score,
    )

    members = panel_members(spec, game)
    protocol = (games, search_games, seed) == (EVAL_GAMES, EVAL_SEARCH_GAMES, EVAL_SEED)
    print(
        f"{spec.aec_id}, {game.num_players} players: {PANEL_VERSION} ({', '.join(members)}), "
        f"{games} seat-rotated games per member, {search_games} per search member "
        f"({', '.join(SEARCH_BUDGETS)}), seed {seed}"
        f"{' (the benchmark protocol)' if protocol else ''}; score = win rate above chance, "
        "(win - 1/N) / (1 - 1/N)"
    )
    chance = 1 / game.num_players
    shipped = SHIPPED_PANEL_SCORES.get(baseline_name(game))
    results = {}
    for name, agent in agents.items():
        started = time.perf_counter()

        def progress(member: str, row: dict, name: str = name, started: float = started) -> None:
            print(
                f"{name} against {member}: win rate {row['win_rate']:.3f} over {row['games']} "
                f"games ({time.perf_counter() - started:.0f} s so far)",
                file=sys.stderr,
                flush=True,
            )

        result = results[name] = panel_score(
            game,
            agent,
            members,
            games,
            seed=seed,
            skip=name,
            search_games=search_games,
            progress=progress,
        )
        print(f"\n| {name} against | win rate (95% CI) | above chance (95% CI) | games |")
        print("|---|---|---|---|")
        for member, r in result["members"].items():
            print(
                f"| {member} | {r['win_rate']:.3f} ± {r['win_ci']:.3f} "
                f"| {r['above_chance']:+.3f} ± {r['above_chance_ci']:.3f} | {r['games']} |"
            )
        print(
            f"| **panel score** | | **{result['panel_score']:+.3f} ± "
            f"{result['panel_score_ci']:.3f}** | |"
        )
        print(f"| *reference: chance* | {chance:.3f} | +0.000 | |")
        if shipped is not None:
            print(
                f"| *reference: the shipped agent (ppo), panel score* | | {shipped[0]:+.3f} ± "
                f"{shipped[1]:.3f} | {EVAL_GAMES} / {EVAL_SEARCH_GAMES} |"
            )
    print(
        json.dumps(
            {
                "env": spec.aec_id,
                "options": dataclasses.asdict(game.config),
                "games": games,
                "search_games": search_games,
                "seed": seed,
                "scores": results,
            },
            default=str,
        )
    )


if __name__ == "__main__":
    main()
