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
seats are filled at random from all the agents is added.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from envs.core.agents import Agent
from envs.core.game import Game
from envs.core.spec import GameSpec
from training.cli import add_game_arguments, game_from_args
from training.tournament import mean_interval, play_game, seat_rotated


def make_agent(spec: GameSpec, game: Game, name: str) -> Agent:
    """An agent from a name the game knows or a saved model's path."""
    return spec.make_agent(name, game)


def head_to_head(
    game: Game, agent: Agent, opponent: Agent, games: int, seed: int = 0
) -> dict[str, float]:
    """``agent`` in one seat, ``opponent`` in every other, seat-rotated."""
    lineup = [("agent", agent)] + [("opponent", opponent)] * (game.num_players - 1)
    record = seat_rotated(game, lineup, games, seed=seed)["agent"]
    win, win_ci = mean_interval(record.wins)
    score, score_ci = mean_interval(record.scores)
    return {"win_rate": win, "win_ci": win_ci, "mean_score": score, "score_ci": score_ci}


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
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_game_arguments(parser)
    parser.add_argument("--agents", nargs="+", required=True, help="names or model paths (≥ 2)")
    parser.add_argument("--games", type=int, default=2000, help="games per ordered pair")
    parser.add_argument("--seed", type=int, default=0, help="seed of the series")
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error("give at least two agents")

    spec, _, game = game_from_args(parser, args)
    agents = {}
    for name in args.agents:
        try:
            agents[name] = make_agent(spec, game, name)
        except ValueError as error:
            parser.error(f"--agents {name!r}: {error}")
    print(f"{spec.aec_id}, {game.num_players} players, {args.games} seat-rotated games per pair")
    print("| agent | opponents | win rate (95% CI) | mean score (95% CI) | games |")
    print("|---|---|---|---|---|")
    for name, agent in agents.items():
        for other, opponent in agents.items():
            if other == name:
                continue
            r = head_to_head(game, agent, opponent, args.games, seed=args.seed)
            print(
                f"| {name} | {other} | {r['win_rate']:.3f} ± {r['win_ci']:.3f} "
                f"| {r['mean_score']:.2f} ± {r['score_ci']:.2f} | {args.games} |"
            )
    if game.num_players > 2:
        print("\n| agent | openskill mu | sigma |\n|---|---|---|")
        for name, (mu, sigma) in sorted(
            ratings(game, agents, args.games, seed=args.seed).items(), key=lambda kv: -kv[1][0]
        ):
            print(f"| {name} | {mu:.2f} | {sigma:.2f} |")


if __name__ == "__main__":
    main()
