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
each game (``training.evaluation.tournament.head_to_head``; the same seeds for every agent scored).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envs.core.agents import Agent
from envs.core.game import Game
from envs.core.spec import GameSpec
from training.evaluation.tournament import head_to_head

PANEL_VERSION = "panel-v2"
MEMBERS = ("random", "heuristic", "expert", "pimc", "ismcts", "ppo", "nash")
#: The scoring protocol (the benchmark's, ``python -m training.evaluate --panel``'s): games
#: per member (fewer against the search members, which cost almost all of the scoring
#: time), and their seed (never a training seed).
EVAL_GAMES = 100
EVAL_SEARCH_GAMES = 40
EVAL_SEED = 1_000_003
#: The search members' budgets in panel-v2 (pinned here, not the agents' defaults).
SEARCH_BUDGETS: dict[str, dict[str, Any]] = {
    "pimc": {"samples": 200, "batched": True},  # (the default, pinned)
    "ismcts": {"iterations": 200},
}

#: Each shipped agent's panel score (95% interval) in docs/results.md's table, by its file
#: stem (``baseline_name``): ``python scripts/tables/shipped_panel.py``, the benchmark's scoring.
#: A reference for other agents' scores; tests/test_panel.py checks it against the table.
SHIPPED_PANEL_SCORES: dict[str, tuple[float, float]] = {
    "pico_2p": (0.154, 0.094),
    "pico_3p": (0.240, 0.092),
    "pico_2p_aside-face_down": (0.308, 0.113),
    "forslag_3p": (0.175, 0.068),
    "forslag_3p_board_play-simultaneous": (0.190, 0.071),
    "forslag_4p": (0.177, 0.054),
    "forslag_4p_board_play-simultaneous": (0.130, 0.052),
    "forslag_5p": (0.146, 0.041),
    "forslag_5p_board_play-simultaneous": (0.184, 0.048),
    "forslag_6p": (0.186, 0.041),
    "forslag_6p_board_play-simultaneous": (0.171, 0.044),
    "pickup_2p": (0.340, 0.116),
    "pickup_3p": (0.084, 0.089),
    "pickup_4p": (0.153, 0.076),
    "pickup_5p": (0.016, 0.059),
    "pickup_6p": (0.083, 0.063),
    "pickup_3p_target_score-100": (0.269, 0.087),
    "pick_and_pack_2p": (0.215, 0.092),
    "pick_and_pack_2p_opponent_crates-full": (0.287, 0.086),
    "pick_and_pack_2p_placement-alternate": (0.210, 0.091),
    "pick_and_pack_2p_opponent_crates-full_placement-alternate": (0.295, 0.083),
    "pick_and_pack_2p_placement-random": (0.256, 0.088),
    "pick_and_pack_2p_opponent_crates-full_placement-random": (0.160, 0.097),
    "easter_collection_2p": (0.102, 0.104),
    "easter_collection_2p_variant-secret_positions": (0.092, 0.106),
    "easter_collection_3p": (0.192, 0.076),
    "easter_collection_3p_variant-secret_positions": (0.126, 0.076),
    "easter_collection_4p": (0.109, 0.067),
    "easter_collection_4p_variant-secret_positions": (0.094, 0.064),
    "easter_collection_5p": (0.047, 0.055),
    "easter_collection_5p_variant-secret_positions": (0.100, 0.060),
}


#: ``panel-v2``'s ``ppo`` members that are no longer the shipped agents (see above).
KEPT_POLICIES = Path(__file__).resolve().parent / "panel_v2"


def panel_policy_path(game: Game) -> Path | None:
    """The file of ``panel-v2``'s ``ppo`` member for ``game``'s configuration: the agent
    kept for the panel, else the shipped one; None where neither exists."""
    from training.agents.policy import shipped_path

    return shipped_path(game, KEPT_POLICIES) or shipped_path(game)


def panel_members(spec: GameSpec, game: Game) -> dict[str, Agent]:
    """The panel for ``game``: every member that exists for its configuration."""
    from training.agents.search import ISMCTS, PIMC

    members: dict[str, Agent] = {}
    for name in MEMBERS:
        if name == "pimc":
            members[name] = PIMC(game, **SEARCH_BUDGETS["pimc"])
        elif name == "ismcts":
            members[name] = ISMCTS(game, **SEARCH_BUDGETS["ismcts"])
        elif name == "ppo":  # the kept agent, else the shipped one, where either exists
            path = panel_policy_path(game)
            if path is not None:
                members[name] = spec.make_agent(str(path), game)
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
    progress: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """``agent`` against every member (but ``skip``), ``games`` each (``search_games``
    against the search members, if given): per-member win rates with 95% intervals and
    scores above chance, and the panel score with its interval. ``progress(member, row)``
    is called as each member's series finishes."""
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
        if progress is not None:
            progress(name, rows[name])
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
