"""Where a step's time goes: the cost of each part of the rules, per id (docs/performance.md
and ``envs.core`` point to it).

    python scripts/measure/step_costs.py
    python scripts/measure/step_costs.py --ids hiddenhand/pico-v0 --games 500

Random games are played once to collect the states a game passes through; then
each part is timed over all of them: the encoder (``Game.observation``), the rules'
``_apply`` (one reveal), ``legal_mask``, ``to_act`` and ``scores``; and a whole
``raw_env`` step with ``observe`` (the benchmark's loop, including its random
choice). Microseconds per call, best of ``--repeats``. The parts say which code a
speed-up has to come from; the benchmark (``scripts/tables/env_speed.py``) says how fast
the whole is against the peers.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from benchmark import aec_runner  # scripts/ is on the path when run as a script

import envs
from envs.core.aec import HiddenHandAEC
from envs.core.game import Game, State


def positions(game: Game, games: int) -> list[tuple[State, dict[int, int]]]:
    """Every (state, joint action) of ``games`` random games, the state cloned before the move."""
    rng = np.random.default_rng(0)
    seen = []
    for seed in range(games):
        state = game.new_initial_state(np.random.default_rng(seed))
        while choosers := state.to_act():
            joint = {}
            for player in choosers:
                legal = np.flatnonzero(state.legal_mask(player))
                joint[player] = int(legal[rng.integers(len(legal))])
            seen.append((state.clone(), joint))
            state._apply(joint)
    return seen


def best_time(work: Callable[[], None], calls: int, repeats: int) -> float:
    """Best microseconds per call over ``repeats`` runs of ``work`` (which makes ``calls``)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) / calls * 1e6)
    return min(times)


def costs(env_id: str, games: int, repeats: int) -> dict[str, float]:
    spec = envs.get_spec(env_id)
    game = spec.make_game()
    seen = positions(game, games)
    chooser = [(state, next(iter(joint))) for state, joint in seen]

    def apply_all() -> None:
        for state, joint in copies:
            state._apply(joint)

    apply_times = []
    for _ in range(repeats):  # _apply changes the state: fresh clones each repeat, untimed
        copies = [(state.clone(), joint) for state, joint in seen]
        apply_times.append(best_time(apply_all, len(copies), 1))

    row = {
        "encode": best_time(
            lambda: [game.observation(s, p) for s, p in chooser], len(seen), repeats
        ),
        "apply": min(apply_times),
        "legal_mask": best_time(lambda: [s.legal_mask(p) for s, p in chooser], len(seen), repeats),
        "to_act": best_time(lambda: [s.to_act() for s, _ in chooser], len(seen), repeats),
        "scores": best_time(lambda: [s.scores() for s, _ in chooser], len(seen), repeats),
    }
    row["decisions_per_reveal"] = sum(len(j) for _, j in seen) / len(seen)

    run = aec_runner(partial(HiddenHandAEC, spec), use_last=False)
    rates = [run(0.5) for _ in range(repeats)]
    row["raw_env_step"] = min(0.5 / steps * 1e6 for steps, _ in rates)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*", default=None, help="PettingZoo ids; default: all")
    parser.add_argument("--games", type=int, default=300, help="random games to collect states")
    parser.add_argument("--repeats", type=int, default=5, help="timings per part (best is kept)")
    args = parser.parse_args()
    parts = ["encode", "apply", "legal_mask", "to_act", "scores", "raw_env_step"]
    print("| id | " + " | ".join(parts) + " | decisions per reveal |")
    print("|---" * (len(parts) + 2) + "|")
    for env_id in args.ids or envs.ids():
        row = costs(env_id, args.games, args.repeats)
        cells = " | ".join(f"{row[p]:.1f}" for p in parts)
        print(f"| {env_id} | {cells} | {row['decisions_per_reveal']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
