"""Soak test: many random games per id, reporting errors, speed and memory.

    python scripts/tools/soak.py                  # 100,000 games per id
    python scripts/tools/soak.py --games 1000 --ids hiddenhand/pico-v0

Games go through ``raw_env`` with random legal actions, cycling through each
game's configurations, with a new seed every game. Any exception is an error (there
must be none). Resident memory is read at the start and the end of each id's run.
"""

from __future__ import annotations

import argparse
import time
import traceback

import numpy as np

import envs
from envs.core.aec import HiddenHandAEC


def resident_mib() -> float:
    """Resident memory of this process in MiB (Linux /proc, else psutil)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import psutil

        return psutil.Process().memory_info().rss / 2**20


def soak(env_id: str, games: int, seed: int = 0) -> dict:
    spec = envs.get_spec(env_id)
    environments = [HiddenHandAEC(spec, **config) for config in spec.configurations]
    rng = np.random.default_rng(seed)
    errors: list[str] = []
    steps = 0
    memory_start = resident_mib()
    started = time.perf_counter()
    for game_index in range(games):
        env = environments[game_index % len(environments)]
        try:
            env.reset(seed=seed + game_index)
            while env.agents:
                agent = env.agent_selection
                if env.terminations[agent] or env.truncations[agent]:
                    env.step(None)
                else:
                    legal = np.flatnonzero(env.observe(agent)["action_mask"])
                    env.step(int(legal[rng.integers(len(legal))]))
                steps += 1
        except Exception:  # noqa: BLE001 - every failure is reported, none is fatal
            errors.append(f"game {game_index} (seed {seed + game_index}): {traceback.format_exc()}")
    seconds = time.perf_counter() - started
    return {
        "env": env_id,
        "games": games,
        "errors": errors,
        "games_per_s": games / seconds,
        "steps_per_s": steps / seconds,
        "memory_start_mib": memory_start,
        "memory_end_mib": resident_mib(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000, help="games per id")
    parser.add_argument("--ids", nargs="*", default=None, help="PettingZoo ids; default: all")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game")
    args = parser.parse_args()
    print("| env | games | errors | games/s | steps/s | RSS start → end (MiB) |")
    print("|---|---|---|---|---|---|")
    failed = False
    for env_id in args.ids or envs.ids():
        r = soak(env_id, args.games, args.seed)
        failed |= bool(r["errors"])
        print(
            f"| {env_id} | {r['games']:,} | {len(r['errors'])} | {r['games_per_s']:,.0f} "
            f"| {r['steps_per_s']:,.0f} | {r['memory_start_mib']:.1f} → {r['memory_end_mib']:.1f} |",
            flush=True,
        )
        for error in r["errors"][:3]:
            print(error)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
