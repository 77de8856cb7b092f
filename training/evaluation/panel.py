"""The opponent panel (``panel-v2``): a fixed set of opponents per configuration, and the
one number that sums up an agent against them.

Members, each where it exists for the configuration:

| member | what it is |
|---|---|
| `random` | uniform over the legal actions |
| `heuristic` | the game's rule-based player |
| `expert` | the game's stronger rule-based teacher (Förslag, Easter collection, Pick & Pack) |
| `pimc` | determinised Monte Carlo search, 200 random rollouts per decision, played on the game's batched engine |
| `ismcts` | information-set MCTS, 200 iterations per decision, random rollouts |
| `ppo` | the shipped trained agent for the configuration |
| `nash` | the exact equilibrium (two-player Pico) |

The agent plays one seat and the member every other seat, the lineup rotating a seat
each game (``training.evaluate.head_to_head``; the same seeds for every agent scored).
A member's score is the agent's win rate above chance, ``(win - 1/N) / (1 - 1/N)``: 0 is
chance, 1 winning every game, negative worse than chance. The panel score is its mean
over the members, with a 95% interval from the members' intervals (independent series).
An agent is not scored against itself: a member of the same name is left out. The search
members may play fewer games than the others (``search_games``): they cost almost all of
the time.

Versions: ``panel-v2`` plays pimc's rollouts on the batched engine, all of a decision's
rollouts at once (the same search as ``panel-v1``'s, which played them one state at a
time, with other random draws, and slower: see docs/ground_truth.md).

A version is fixed: a panel score means the same opponents wherever it is quoted. Where
a configuration's shipped agent has been replaced since ``panel-v2`` was fixed, its
``ppo`` member stays the agent shipped then, kept in ``training/evaluation/panel_v2/``
under the same file name (``panel_policy_path``); ``tests/data/panel_v2.json`` pins
every ``ppo`` member's files (the model and its metadata) by their hash, so a replaced
agent cannot change the panel unnoticed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from envs.core.agents import Agent
from envs.core.game import Game
from envs.core.spec import GameSpec

PANEL_VERSION = "panel-v2"
MEMBERS = ("random", "heuristic", "expert", "pimc", "ismcts", "ppo", "nash")
#: The search members' budgets in panel-v2 (pinned here, not the agents' defaults).
SEARCH_BUDGETS: dict[str, dict[str, Any]] = {
    "pimc": {"samples": 200, "batched": True},  # (the default, pinned)
    "ismcts": {"iterations": 200},
}


#: ``panel-v2``'s ``ppo`` members that are no longer the shipped agents (see above).
KEPT_POLICIES = Path(__file__).resolve().parent / "panel_v2"


def panel_policy_path(game: Game) -> Path:
    """The file of ``panel-v2``'s ``ppo`` member for ``game``'s configuration: the agent
    kept for the panel, else the shipped one (which may not exist)."""
    from training.agents.policy import baseline_name, baseline_path

    kept = KEPT_POLICIES / f"{baseline_name(game)}.zip"
    return kept if kept.is_file() else baseline_path(game)


def panel_members(spec: GameSpec, game: Game) -> dict[str, Agent]:
    """The panel for ``game``: every member that exists for its configuration."""
    from training.agents.policy import load_policy
    from training.agents.search import ISMCTS, PIMC

    members: dict[str, Agent] = {}
    for name in MEMBERS:
        if name == "pimc":
            members[name] = PIMC(game, **SEARCH_BUDGETS["pimc"])
        elif name == "ismcts":
            members[name] = ISMCTS(game, **SEARCH_BUDGETS["ismcts"])
        elif name == "ppo":  # the kept agent, else the shipped one, where either exists
            path = panel_policy_path(game)
            if path.is_file():
                members[name] = load_policy(path, game, spec.aec_id)
        elif name in spec.agents:
            try:
                members[name] = spec.make_agent(name, game)
            except ValueError:  # no equilibrium for this configuration (nash)
                continue
    return members


def above_chance(win_rate: float, num_players: int) -> float:
    chance = 1 / num_players
    return (win_rate - chance) / (1 - chance)


def panel_score(
    game: Game,
    agent: Agent,
    members: dict[str, Agent],
    games: int,
    seed: int = 0,
    skip: str = "",
    search_games: int | None = None,
) -> dict[str, Any]:
    """``agent`` against every member (but ``skip``), ``games`` each (``search_games``
    against the search members, if given): per-member win rates with 95% intervals and
    scores above chance, and the panel score with its interval."""
    from training.evaluate import head_to_head

    rows = {}
    for name, member in members.items():
        if name == skip:
            continue
        played = search_games if search_games and name in SEARCH_BUDGETS else games
        result = head_to_head(game, agent, member, played, seed=seed)
        scale = 1 - 1 / game.num_players
        rows[name] = result | {
            "games": played,
            "above_chance": above_chance(result["win_rate"], game.num_players),
            "above_chance_ci": result["win_ci"] / scale,
        }
    values = [r["above_chance"] for r in rows.values()]
    interval = math.sqrt(sum(r["above_chance_ci"] ** 2 for r in rows.values())) / len(rows)
    return {
        "panel": PANEL_VERSION,
        "games": games,
        "search_games": search_games or games,
        "seed": seed,
        "members": rows,
        "panel_score": sum(values) / len(values),
        "panel_score_ci": interval,
    }
