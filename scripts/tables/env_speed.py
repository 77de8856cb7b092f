"""Speed of every game through every interface, against reference envs in the same run:
docs/performance.md's speed tables (``make bench`` runs it).

    python scripts/tables/env_speed.py                 # every id and configuration
    python scripts/tables/env_speed.py --seconds 0.5 --repeats 3 --ids hiddenhand/pico-v0

Random masked play through (a) ``raw_env`` calling ``observe`` every step, (b) the
default ``env()`` calling ``last()`` every step, (c) ``parallel_env``, (d) the
Gymnasium single-agent view. References, measured the same way in the same run:
PettingZoo's ``rps_v2`` and ``connect_four_v3`` through ``env()``, and
OpenSpiel's ``goofspiel(num_cards=13)`` as a turn-based game reading
``observation_tensor()`` at every decision (its chance nodes, the point cards, are
played but not counted as steps; install the ``[bench]`` extra). Each figure
is the median, min and max over repeats, each repeat running every case once in
turn (so load changes on a shared machine fall on all cases alike); ratios are to
``rps_v2 env()`` and to goofspiel. A last reference, the core's floor, plays a
game whose rules and encoder cost nothing through ``raw_env``: what every game pays
before its own rules.

Every row counts agent steps: one seat's decision, whoever makes it (in the
``gymnasium`` and ``make_vec`` rows, the learner's and the opponents' inside the
step). Every game has a batched engine (``envs/<game>/batched.py``) and gets more
rows: ``batched B=...``, random masked play of B games in lockstep with every
chooser's observation produced at every step, and ``make_vec B=1,024``, the SB3 VecEnv over it
with random opponents. ``× raw_env`` and ``× gymnasium`` are ratios to those rows of
the same game and configuration; games/s compares every interface directly.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import gymnasium
import numpy as np

import envs
from envs.core.aec import HiddenHandAEC, HiddenHandParallel
from envs.core.batched import random_actions
from envs.core.game import Game, State
from envs.core.observation import ObservationLayout
from envs.core.spec import GameSpec

Runner = Callable[[float], tuple[int, int, float]]  # seconds -> (steps, games, elapsed)
#: Games in lockstep for the batched engines' rows.
BATCHED_SIZES = (1, 64, 1024, 8192)


class FreeState(State):
    """A two-player game of 20 alternating moves whose rules cost next to nothing."""

    def __init__(self, game: FreeGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        self.moves = 0

    def to_act(self) -> tuple[int, ...]:
        return () if self.moves == 20 else (self.moves % 2,)

    def legal_mask(self, player: int) -> np.ndarray:
        return self.game.every_action

    def _apply(self, joint) -> None:
        self.moves += 1

    def scores(self) -> np.ndarray:
        return np.zeros(2)

    def __str__(self) -> str:
        return f"{self.moves} moves"


class FreeGame(Game):
    """The core's floor: a ``raw_env`` step of this game is the AEC bookkeeping, the
    read-only caches and the benchmark's own loop, with no rules or encoder to speak of."""

    name, num_actions, max_decisions, has_hidden_state = "free", 4, 20, False
    observation_layout = ObservationLayout().add("moves", 8, "nothing is written here")
    every_action = np.ones(4, dtype=bool)

    def new_initial_state(self, rng: np.random.Generator) -> FreeState:
        return FreeState(self, rng)

    def encode(self, state: FreeState, player: int, views: dict[str, np.ndarray]) -> None:
        pass


def pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def aec_runner(make: Callable[[], object], use_last: bool) -> Runner:
    """Random play through an AEC env; ``use_last`` reads ``last()``, else ``observe``."""

    def run(seconds: float) -> tuple[int, int, float]:
        env, rng = make(), np.random.default_rng(0)
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            env.reset(seed=games)
            for agent in env.agent_iter():
                if use_last:
                    obs, _, term, trunc, _ = env.last()
                else:
                    obs = env.observe(agent)
                    term, trunc = env.terminations[agent], env.truncations[agent]
                if term or trunc:
                    action = None
                elif isinstance(obs, dict):
                    action = pick(obs["action_mask"], rng)
                else:  # no mask (rps_v2): every action is legal
                    action = int(rng.integers(env.action_space(agent).n))
                env.step(action)
                steps += 1
            games += 1
        return steps, games, time.perf_counter() - deadline + seconds

    return run


def parallel_runner(make: Callable[[], HiddenHandParallel]) -> Runner:
    def run(seconds: float) -> tuple[int, int, float]:
        env, rng = make(), np.random.default_rng(0)
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            observations, _ = env.reset(seed=games)
            while env.agents:
                actions = {a: pick(observations[a]["action_mask"], rng) for a in env.agents}
                observations, *_ = env.step(actions)
                steps += 1
            games += 1
        return steps, games, time.perf_counter() - deadline + seconds

    return run


class CountingRandom:
    """A random opponent that counts its decisions (one by one, or a batch at a time)."""

    uses_observation = False

    def __init__(self) -> None:
        self.decisions = 0

    def act(self, observation, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        self.decisions += 1
        return pick(action_mask, rng)

    def act_batch(self, observations, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        self.decisions += len(masks)
        return random_actions(masks, rng)


def gym_runner(gym_id: str, config: dict) -> Runner:
    def run(seconds: float) -> tuple[int, int, float]:
        opponent = CountingRandom()
        env = gymnasium.make(gym_id, opponent=opponent, **config)
        rng = np.random.default_rng(0)
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            env.reset(seed=games)
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(pick(env.unwrapped.action_masks(), rng))
                done = terminated or truncated
                steps += 1
            games += 1
        return steps + opponent.decisions, games, time.perf_counter() - deadline + seconds

    return run


def openspiel_runner() -> Runner:
    import pyspiel

    game = pyspiel.load_game_as_turn_based("goofspiel(num_cards=13)")

    def run(seconds: float) -> tuple[int, int, float]:
        rng = np.random.default_rng(0)
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():  # the point card: chance, not a decision
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                    continue
                state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                steps += 1
            games += 1
        return steps, games, time.perf_counter() - deadline + seconds

    return run


def batched_runner(engine_class: type, config: dict, num_envs: int) -> Runner:
    """Random masked play through a batched engine (``envs/<game>/batched.py``): every
    chooser's observation produced at every step, as the other rows produce the acting
    seat's; an agent step is one seat's decision."""

    def run(seconds: float) -> tuple[int, int, float]:
        engine, rng = engine_class(num_envs, seed=0, **config), np.random.default_rng(0)
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            rows, seats = np.nonzero(engine.choosers())
            engine.observe(rows, seats)
            masks = engine.masks()
            steps += len(rows)
            _, terminated, _ = engine.step(random_actions(masks, rng))
            games += int(terminated.sum())
        return steps, games, time.perf_counter() - deadline + seconds

    return run


def batched_plays(engine_class: type, config: dict) -> bool:
    """Whether the batched engine plays this configuration (it may cover only some)."""
    try:
        engine_class(1, **config)
    except ValueError:
        return False
    return True


def vec_env_runner(gym_id: str, config: dict, num_envs: int) -> Runner:
    """Random masked play of the learner through ``envs.make_vec`` against random
    opponents: the learner's decisions and the opponents' (as the Gymnasium row)."""

    def run(seconds: float) -> tuple[int, int, float]:
        opponent = CountingRandom()
        vec_env = envs.make_vec(gym_id, num_envs=num_envs, opponent=opponent, seed=0, **config)
        rng = np.random.default_rng(0)
        vec_env.reset()
        steps = games = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            masks = vec_env.action_masks()
            _, _, dones, _ = vec_env.step(random_actions(masks, rng))
            steps += num_envs
            games += int(dones.sum())
        return steps + opponent.decisions, games, time.perf_counter() - deadline + seconds

    return run


def summarise(rates: list[tuple[int, int, float]]) -> dict[str, float]:
    """Median, min and max over repeats, each a rate over its actual elapsed time (the last
    step of a repeat may end after the deadline)."""
    steps = [s / elapsed for s, _, elapsed in rates]
    games = [g / elapsed for _, g, elapsed in rates]
    return {
        "steps_per_s": statistics.median(steps),
        "steps_min": min(steps),
        "steps_max": max(steps),
        "games_per_s": statistics.median(games),
        "games_min": min(games),
        "games_max": max(games),
    }


def free_env() -> HiddenHandAEC:
    return HiddenHandAEC(GameSpec(FreeGame, name="free", gym_name="Free"))


def reference_cases() -> list[tuple[str, str, Runner]]:
    """The references (they need the ``[bench]`` extra)."""
    from pettingzoo.classic import connect_four_v3, rps_v2

    return [
        ("rps_v2", "env()", aec_runner(rps_v2.env, use_last=True)),
        ("connect_four_v3", "env()", aec_runner(connect_four_v3.env, use_last=True)),
        ("goofspiel(13) OpenSpiel", "observation_tensor", openspiel_runner()),
        ("core floor (rules that cost nothing)", "raw_env", aec_runner(free_env, False)),
    ]


def cases(ids: list[str], default_only: bool = False) -> list[tuple[str, str, Runner]]:
    """Every interface of every configuration of the games ``ids``."""
    out: list[tuple[str, str, Runner]] = []
    for env_id in ids:
        spec = envs.get_spec(env_id)
        default = spec.make_game().config
        for config in spec.configurations:
            if default_only and spec.make_game(**config).config != default:
                continue
            name = env_id + "".join(f" {k}={v}" for k, v in config.items())
            out += [
                (name, "raw_env", aec_runner(partial(HiddenHandAEC, spec, **config), False)),
                (name, "env()", aec_runner(partial(envs.make, env_id, **config), True)),
                (
                    name,
                    "parallel_env",
                    parallel_runner(partial(envs.make_parallel, env_id, **config)),
                ),
                (name, "gymnasium", gym_runner(spec.gym_id, config)),
            ]
            engine = spec.engine
            if engine is not None and batched_plays(engine, config):
                out += [
                    (name, f"batched B={b:,}", batched_runner(engine, config, b))
                    for b in BATCHED_SIZES
                ]
                out.append((name, "make_vec B=1,024", vec_env_runner(spec.gym_id, config, 1024)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*", default=None, help="PettingZoo ids; default: all")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats per figure")
    parser.add_argument("--out", default="runs/env_speed", help="path stem of the JSON and CSV")
    parser.add_argument(
        "--default-only", action="store_true", help="each game's default configuration only"
    )
    args = parser.parse_args()

    # Every repeat runs every case once, so a change in the machine's load falls on all
    # cases of a repeat alike rather than on whichever case ran at that moment.
    measured = reference_cases() + cases(args.ids or envs.ids(), args.default_only)
    for _, _, run in measured:
        run(0.1)  # warm up
    rates: list[list[tuple[int, int, float]]] = [[] for _ in measured]
    for _ in range(args.repeats):
        for index, (_, _, run) in enumerate(measured):
            rates[index].append(run(args.seconds))
    rows = [
        {"env": name, "interface": interface, **summarise(rates[i])}
        for i, (name, interface, _) in enumerate(measured)
    ]
    reference = next(r for r in rows if r["env"] == "rps_v2")["steps_per_s"]
    goofspiel = next(r for r in rows if r["env"].startswith("goofspiel"))["steps_per_s"]
    for row in rows:
        row["ratio_to_rps_env"] = row["steps_per_s"] / reference
        row["ratio_to_goofspiel"] = row["steps_per_s"] / goofspiel
        same_game = {r["interface"]: r["steps_per_s"] for r in rows if r["env"] == row["env"]}
        row["ratio_to_raw_env"] = row["steps_per_s"] / same_game.get("raw_env", np.nan)
        row["ratio_to_gymnasium"] = row["steps_per_s"] / same_game.get("gymnasium", np.nan)

    print(
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
        f"python {platform.python_version()}; {args.repeats} × {args.seconds}s per figure"
    )
    print(
        "| env | interface | steps/s median (min-max) | games/s median | × rps_v2 env() "
        "| × goofspiel | × raw_env | × gymnasium |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['env']} | {r['interface']} | {r['steps_per_s']:,.0f} "
            f"({r['steps_min']:,.0f}-{r['steps_max']:,.0f}) | {r['games_per_s']:,.1f} "
            f"| {r['ratio_to_rps_env']:.2f} | {r['ratio_to_goofspiel']:.2f} "
            f"| {r['ratio_to_raw_env']:.2f} | {r['ratio_to_gymnasium']:.2f} |"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=2))
    with open(out.with_suffix(".csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
