"""The benchmark's algorithms: the registry, protocol v1's on SB3 and protocol v2's on the
self-play learner (``training.selfplay``), each with its hyperparameters in one place."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.spec import get_spec
from training.solvers.zero_sum import zero_sum_lp

#: (env_id, options, steps, seed, folder) -> the trained model's path
Algorithm = Callable[[str, dict[str, Any], int, int, Path], Path]
ALGORITHMS: dict[str, Algorithm] = {}


def register(name: str) -> Callable[[Algorithm], Algorithm]:
    """Add a training function to the benchmark's algorithms under ``name``."""

    def add(function: Algorithm) -> Algorithm:
        ALGORITHMS[name] = function
        return function

    return add


# --- the first algorithms: one network and one set of hyperparameters for every game ---------
def train_ppo(
    env_id: str, options: dict, steps: int, seed: int, folder: Path, opponents: str
) -> Path:
    """MaskablePPO (training.train's defaults: 128x128, dense score reward) against a mix."""
    from training.train import Args, train

    options = dict(options)
    args = Args(
        env=env_id,
        num_players=options.pop("num_players", None),
        option=[f"{key}={value}" for key, value in options.items()],
        opponents=opponents,
        total_timesteps=steps,
        seed=seed,
        eval_every=max(1024, steps // 5),
        eval_games=100,
        final_eval_games=100,
        snapshot_every=max(256, steps // 10),
        run_dir=str(folder.parent),
        run_name=folder.name,
        overwrite=True,
        progress_bar=False,
    )
    return train(args) / "model.zip"


for _name, _mix in {
    "ppo-random": "random:1",
    "ppo-heuristic": "heuristic:1",
    "ppo-selfplay": "latest:1",
    "ppo-fsp": "self:1",
}.items():

    def _entry(env_id, options, steps, seed, folder, _mix=_mix):
        return train_ppo(env_id, options, steps, seed, folder, _mix)

    _entry.__doc__ = f"MaskablePPO against opponents {_mix!r}."
    register(_name)(_entry)


@register("psro")
def psro(env_id: str, options: dict, steps: int, seed: int, folder: Path, rounds: int = 3) -> Path:
    """PSRO with MaskablePPO best responses: the population starts with random; each round
    trains a best response for ``steps / rounds`` decisions against the population mixed
    by the meta-game's equilibrium (the agent in one seat, a member in every other; the
    antisymmetric payoff solved as a zero-sum matrix game), and adds it. The model is the
    last best response."""
    from training.evaluation.tournament import head_to_head

    spec = get_spec(env_id)
    game = spec.make_game(**options)
    population = ["random"]
    weights = np.array([1.0])
    model = Path()
    for round_ in range(rounds):
        mix = ",".join(f"{name}:{w:.6f}" for name, w in zip(population, weights, strict=True))
        model = train_ppo(
            env_id, options, steps // rounds, seed + 1000 * round_, folder / f"br{round_}", mix
        )
        population.append(str(model))
        agents = [spec.make_agent(name, game) for name in population]
        size = len(agents)
        wins = np.full((size, size), 1 / game.num_players)
        for i in range(size):
            for j in range(size):
                if i != j:
                    result = head_to_head(game, agents[i], agents[j], 50, seed=seed + 7)
                    wins[i, j] = result["win_rate"]
        weights = zero_sum_lp(wins - wins.T)[1]
    shutil.copy(model, folder / "model.zip")
    shutil.copy(model.with_suffix(".json"), folder / "model.json")
    return folder / "model.zip"


# --- protocol v2: the algorithms on the self-play learner (training.selfplay) ----------------
#: What every learner run shares, whatever its algorithm: the network, the rollouts and the
#: optimiser (pinned here rather than read from the learner's defaults, so that the table
#: does not move with them), and the periodic evaluation (``EVALUATIONS`` per run: the
#: learning curves of ``evaluations.csv``; no pimc games there, the panel scores the end),
#: whose models are kept in ``checkpoints/`` for the panel-score curve (``--curve-games``).
LEARNER: dict[str, Any] = {
    "num_games": 256,
    "num_steps": 32,
    "hidden": "128,128",
    "scale": "none",
    "learning_rate": 3e-4,
    "epochs": 4,
    "minibatches": 4,
    "gamma": 1.0,
    "value_coef": 0.5,
    "max_grad_norm": 0.5,
    "threads": 1,
    "device": "cpu",
    "eval_games": 100,
    "eval_pimc_games": 0,
    "eval_deals": 20,
    "progress_bar": False,
    "keep_checkpoints": True,
}
#: Evaluations per learner run (every ``steps // EVALUATIONS`` decisions).
EVALUATIONS = 10
#: Each learner algorithm's hyperparameters, one dict each, the same for every
#: configuration and budget (no per-game tuning); with ``LEARNER`` they are every
#: argument of the run's ``training.selfplay.Args`` but the game, the budget and the seed.
#: sp-qmmd's settings, which sp-fsp shares.
QMMD: dict[str, Any] = {
    "algorithm": "qmmd",
    "critic": "action",
    "gae_lambda": 0.5,
    "magnet_coef": 0.2,
    "kl_coef": 1.0,
    "magnet_update": 0.0,
}
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    # Self-play PPO with an entropy bonus of 0.05 (IIG-RL-Benchmark's), GAE(0.95).
    "sp-ppo": {"algorithm": "ppo", "gae_lambda": 0.95, "clip": 0.2, "entropy_coef": 0.05},
    # MMD in its PPO form, the magnet uniform over the legal actions (so its KL is an
    # entropy bonus) and its weight annealed from 0.1 to 0.01 over the run.
    "sp-mmd": {
        "algorithm": "mmd",
        "gae_lambda": 0.95,
        "clip": 0.2,
        "entropy_coef": 0.0,
        "magnet_coef": 0.1,
        "magnet_coef_end": 0.01,
        "magnet_update": 0.0,
    },
    # The learner's default: MMD's closed-form step over the action critic.
    "sp-qmmd": QMMD,
    # NeuRD over the same action critic, regularised toward the uniform magnet as sp-qmmd
    # is (the same fixed point: only the update differs), the logit threshold beta = 5
    # (the papers' 2 would keep the likeliest of 11 legal actions under about 1/2).
    "sp-neurd": {
        "algorithm": "neurd",
        "critic": "action",
        "gae_lambda": 0.5,
        "magnet_coef": 0.2,
        "magnet_update": 0.0,
        "logit_threshold": 5.0,
    },
    # Fictitious self-play: sp-qmmd's learner in one seat a game, the others played by a
    # snapshot drawn from the pool of the last 20 (one every twentieth of the budget, so
    # that by the end the pool spans the whole run: fictitious play's average, sampled).
    "sp-fsp": {**QMMD, "opponent_pool": 20},
    # PSRO: ``rounds`` best responses, each trained by the learner (the oracle: clipped
    # PPO, as training.exploitability's learned best response) against the population's
    # meta-strategy, ``meta_games`` seat-rotated games per pair for the meta-game.
    "sp-psro": {
        "rounds": 5,
        "meta_games": 100,
        "algorithm": "ppo",
        "gae_lambda": 0.95,
        "clip": 0.2,
        "entropy_coef": 0.01,
    },
}


def learner_args(
    env_id: str, options: dict, steps: int, seed: int, folder: Path, settings: dict[str, Any]
):
    """The learner's arguments for a run: ``LEARNER``, an evaluation every
    ``steps // EVALUATIONS`` decisions, then ``settings`` (which may override both)."""
    from training import selfplay

    options = dict(options)
    num_players = options.pop("num_players", None)
    settings = LEARNER | {"eval_every": max(1, steps // EVALUATIONS)} | settings
    if settings.get("opponent_pool"):  # a snapshot every 1/K of the budget
        settings.setdefault("snapshot_every", max(1, steps // settings["opponent_pool"]))
    return selfplay.Args(
        env=env_id,
        num_players=num_players,
        option=[f"{key}={value}" for key, value in options.items()],
        decisions=steps,
        seed=seed,
        out=str(folder),
        overwrite=True,
        **settings,
    )


def train_learner(
    env_id: str, options: dict, steps: int, seed: int, folder: Path, settings: dict[str, Any]
) -> Path:
    """Train the self-play learner in ``folder`` with ``settings``, going on from where an
    interrupted run stopped (its last evaluation); its ``model.npz``."""
    from training import selfplay

    args = learner_args(env_id, options, steps, seed, folder, settings)
    if (folder / selfplay.RESUME_FILE).is_file():
        args = dataclasses.replace(args, overwrite=False, resume=True)
    return selfplay.train(args) / "model.npz"


for _name in ("sp-ppo", "sp-mmd", "sp-qmmd", "sp-neurd", "sp-fsp"):

    def _entry(env_id, options, steps, seed, folder, _name=_name):
        return train_learner(env_id, options, steps, seed, folder, HYPERPARAMETERS[_name])

    _entry.__doc__ = f"The self-play learner with HYPERPARAMETERS[{_name!r}]."
    register(_name)(_entry)


@register("sp-psro")
def sp_psro(env_id: str, options: dict, steps: int, seed: int, folder: Path) -> Path:
    """PSRO with the self-play learner as its best-response oracle
    (``HYPERPARAMETERS["sp-psro"]``). The population starts with ``random``; each of the
    ``rounds`` trains, in ``folder/roundK``, a best response against the population's
    meta-strategy (``--opponent`` the weighted mixture: one member per game, drawn at
    each deal), adds it, and solves the meta-game again (``meta_strategy``). The budget
    is split across the rounds: each gets the decisions still left divided by the rounds
    still to go, so that the decisions of all the rounds add up to ``steps`` (but for the
    last rollout of the last round, as in every learner run; and every round trains at
    least one rollout, so a budget under ``rounds`` rollouts is exceeded).

    The model is the last round's best response: the harness scores one network, and the
    population's mixture is not one (a member drawn per game is not a behaviour policy
    that a single network plays); the last best response is the member trained against
    the final meta-strategy, and what the v1 ``psro`` returns. ``folder/psro.json``
    records the population, each round's meta-strategy and decisions, and the payoffs;
    ``folder/evaluations.csv`` the learning curve: each round's best response evaluated
    at its end, against the decisions of all the rounds so far."""
    from training.evaluation.tournament import make_agent

    settings = dict(HYPERPARAMETERS["sp-psro"])
    rounds, games = settings.pop("rounds"), settings.pop("meta_games")
    spec = get_spec(env_id)
    game = spec.make_game(**options)
    population, weights = ["random"], np.ones(1)
    payoffs: dict[tuple[int, int], float] = {}
    record: dict[str, Any] = {"rounds": []}
    left = steps
    model = Path()
    curve: list[dict[str, str]] = []
    for k in range(rounds):
        budget = max(1, left // (rounds - k))
        members = zip(population, weights, strict=True)
        mixture = ",".join(f"{m}:{w:.6g}" for m, w in members if w > 1e-6)
        round_settings = settings | {"opponent": mixture, "eval_every": 0}
        model = train_learner(
            env_id, options, budget, seed + 1000 * k, folder / f"round{k}", round_settings
        )
        with open(model.parent / "evaluations.csv", newline="") as handle:
            evaluation = list(csv.DictReader(handle))[-1]
        decisions = int(evaluation["decisions"])
        left -= decisions
        curve.append(evaluation | {"decisions": str(steps - left)})
        record["rounds"].append({"opponent": mixture, "decisions": decisions})
        population.append(str(model))
        if k < rounds - 1:
            agents = [make_agent(spec, game, name) for name in population]
            weights = meta_strategy(game, agents, payoffs, games, 1000 * seed + 500 + k)
    solved = range(len(population) - 1)  # the last meta-game's members
    record |= {
        "population": population,
        "payoffs": [[payoffs.get((i, j), 0.0) for j in solved] for i in solved],
    }
    (folder / "psro.json").write_text(json.dumps(record, indent=2))
    with open(folder / "evaluations.csv", "w", newline="") as handle:
        table = csv.DictWriter(handle, fieldnames=list(curve[0]))
        table.writeheader()
        table.writerows(curve)
    shutil.copy(model, folder / "model.npz")
    shutil.copy(model.with_suffix(".json"), folder / "model.json")
    return folder / "model.npz"


def meta_strategy(
    game, agents: list, payoffs: dict[tuple[int, int], float], games: int, seed: int
) -> np.ndarray:
    """PSRO's meta-strategy over ``agents``: the equilibrium of the empirical meta-game.
    ``payoffs[i, j]`` is agent i's panel-style score against agent j (seat-rotated, i in
    one seat and j in every other: its win share above chance, ``(w - 1/N) / (1 - 1/N)``),
    played for the pairs not yet in ``payoffs`` (``games`` each) and kept there for the
    next round. The antisymmetric ``S - S^T`` is solved as a two-player zero-sum game
    (``zero_sum_lp``). With two players that is the meta-game itself (``S`` is already
    antisymmetric, ties shared). With more it is an approximation: the meta-game of an
    N-player game is not two-player zero-sum and its tables may mix several members,
    while here each entry is one member against a table of another."""
    from training.evaluation.panel import above_chance
    from training.evaluation.tournament import head_to_head

    n, players = len(agents), game.num_players
    for i in range(n):
        for j in range(n):
            if i == j or (i, j) in payoffs:
                continue
            result = head_to_head(game, agents[i], agents[j], games, seed=seed + n * i + j)
            payoffs[i, j] = above_chance(result["win_rate"], players)
            if players == 2:  # the same games, seen from the other seat
                payoffs[j, i] = -payoffs[i, j]
    scores = np.array([[payoffs.get((i, j), 0.0) for j in range(n)] for i in range(n)])
    weights = np.clip(zero_sum_lp(scores - scores.T)[1], 0.0, None)
    return weights / weights.sum()
