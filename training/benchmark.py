"""Benchmark RL algorithms on Hidden Hand: the harness of the protocol in docs/benchmark.md.

    python -m training.benchmark --algorithms ppo-random,ppo-fsp --configs pico-2p \\
        --seeds 0-4 --steps 50000 --out runs/bench --jobs 2
    python -m training.benchmark --algorithms sp-ppo,sp-mmd,sp-qmmd,sp-neurd,sp-fsp,sp-psro \\
        --configs pico-2p --seeds 0-4 --steps medium --nash-conv-deals 200 --out runs/bench-v2
    python -m training.benchmark --report runs/bench
    python -m training.benchmark --report runs/bench --merge other/results.csv

Protocol v1 (budgets ``small`` and ``large``) was run with the SB3 algorithms
(``ppo-random``, ``ppo-heuristic``, ``ppo-selfplay``, ``ppo-fsp``, ``psro``); protocol v2
(budgets ``medium`` on every configuration and ``large-v2`` on two-player Pico, the
NashConv over 200 deals) adds the algorithms on the self-play learner
(``training.selfplay``): ``sp-ppo``, ``sp-mmd``, ``sp-qmmd``, ``sp-neurd``, ``sp-fsp`` and
``sp-psro``, their hyperparameters in ``HYPERPARAMETERS`` (one dict each, the same for
every configuration) and what they share in ``LEARNER``. A budget counts the decisions of
every seat that learns: an SB3 algorithm's one learning seat, or the learner's
``--decisions`` (every seat in self-play, one seat a game with a pool or PSRO's mixture).

Every (algorithm, configuration, seed) is a run folder ``OUT/runs/ALG/CONFIG/seedS``:
the algorithm trains there for the step budget and saves a model that
``training.evaluate`` loads (``model.zip`` from SB3, ``model.npz`` from the learner), then
the harness scores it against the opponent panel
(``training.evaluation.panel``) with the protocol's evaluation seeds and writes
``score.json`` (with the wall and CPU seconds of training and the CPU seconds of
scoring). Finished runs are skipped, so an interrupted benchmark resumes where it
stopped, and a learner run that was cut short goes on from its last evaluation
(``training.selfplay --resume``), its cost counting both parts (``sp-psro`` trains its
finished rounds again, the same ones, and goes on in the round that was cut short).
The report aggregates the panel scores over runs (interquartile mean with
stratified bootstrap intervals, probability of improvement, performance profiles) into
``results.json``, ``results.csv``, ``results.md`` and plots, with the runs' learning
curves in ``results-curves.csv`` (with ``--curve-games G``, also each run's panel score,
G games a member, at each model it kept: a learner run's evaluations, PSRO's rounds);
``--merge`` adds the runs of another report's ``results.csv``, and their curves from
beside it (a benchmark split across machines).

An algorithm is a registered function ``(env_id, options, steps, seed, folder) -> Path``
that trains for ``steps`` decisions of its learning seats and returns the saved model's
path; register yours with ``@register("name")`` in a module given to ``--import``.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.spec import get_spec
from training.cli import tool_parser
from training.evaluation.panel import EVAL_GAMES, EVAL_SEARCH_GAMES, EVAL_SEED
from training.solvers.zero_sum import zero_sum_lp

#: (env_id, options) -> a trained model's path
Algorithm = Callable[[str, dict[str, Any], int, int, Path], Path]
ALGORITHMS: dict[str, Algorithm] = {}

#: The protocol's configurations: each game's default, Förslag's simultaneous board play
#: and Easter collection's secret positions.
CONFIGURATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "pico-2p": ("hiddenhand/pico-v0", {"num_players": 2}),
    "pickup-4p": ("hiddenhand/pickup-v0", {"num_players": 4}),
    "forslag-4p": ("hiddenhand/forslag-v0", {"num_players": 4}),
    "forslag-4p-simultaneous": (
        "hiddenhand/forslag-v0",
        {"num_players": 4, "board_play": "simultaneous"},
    ),
    "pick_and_pack-2p": ("hiddenhand/pick_and_pack-v0", {}),
    "easter_collection-2p": ("hiddenhand/easter_collection-v0", {"num_players": 2}),
    "easter_collection-2p-secret": (
        "hiddenhand/easter_collection-v0",
        {"num_players": 2, "variant": "secret_positions"},
    ),
}
#: Decisions per run, counted over every seat that learns (an SB3 algorithm's learner is
#: one seat, its timesteps; the self-play learner's ``--decisions``): protocol v1's
#: ``small`` and ``large``, protocol v2's ``medium`` (every configuration) and
#: ``large-v2`` (two-player Pico).
BUDGETS = {"small": 50_000, "large": 1_000_000, "medium": 2_000_000, "large-v2": 20_000_000}
#: Seat-rotated games of each run's learned best response against it (``--bound-decisions``).
BOUND_GAMES = 1000
#: Two-player Pico: deals of each run's exact NashConv (drawn with the evaluation seed),
#: unless ``--nash-conv-deals`` says otherwise (protocol v1: 20; v2: 200).
NASHCONV_DEALS = 20


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


# --- runs -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Run:
    algorithm: str
    config: str
    seed: int
    steps: int
    folder: Path


def plan(
    algorithms: Sequence[str], configs: Sequence[str], seeds: Sequence[int], steps: int, out: Path
) -> list[Run]:
    return [
        Run(a, c, s, steps, out / "runs" / a / c / f"seed{s}")
        for a in algorithms
        for c in configs
        for s in seeds
    ]


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """How a run is scored: games per panel member and against the search members."""

    games: int = EVAL_GAMES
    search_games: int = EVAL_SEARCH_GAMES
    #: two-player Pico: deals of the exact NashConv; None: ``NASHCONV_DEALS``
    nash_conv_deals: int | None = None
    #: decisions of each run's learned best response (0: no learned bound)
    bound_decisions: int = 0
    #: games per panel member for each kept model's panel score, the panel-score curve
    #: (0: no curve); against the search members in the same proportion as ``search_games``
    curve_games: int = 0

    def record(self) -> dict[str, Any]:
        """What a score records of how it was made: today's panel, the games and the
        learned best response's budget."""
        from training.evaluation.panel import PANEL_VERSION

        return {
            "panel": PANEL_VERSION,
            "eval_games": self.games,
            "search_games": self.search_games,
            "bound_decisions": self.bound_decisions,
            "curve_games": self.curve_games,
        }

    def matches(self, score: dict) -> bool:
        """Whether a saved score was made this way (a NashConv over as many deals)."""
        made = {"bound_decisions": 0, "curve_games": 0} | score  # older scores had neither
        same = all(made.get(key) == value for key, value in self.record().items())
        deals = self.nash_conv_deals or NASHCONV_DEALS
        return same and ("nash_conv" not in score or score.get("nash_conv_deals") == deals)


def execute(run: Run, evaluation: Evaluation, modules: Sequence[str] = ()) -> dict:
    """Train (unless a model is there) and score one run; the score is saved beside it.
    A score made another way (another panel version or number of games) is redone."""
    import torch

    for module in modules:  # a worker process registers the user's algorithms again
        importlib.import_module(module)
    torch.set_num_threads(1)
    score_path = run.folder / "score.json"
    if score_path.is_file():
        saved = json.loads(score_path.read_text())
        if evaluation.matches(saved):
            return saved
    env_id, options = CONFIGURATIONS[run.config]
    trained = run.folder / "trained.json"
    started, cpu = time.time(), time.process_time()
    if not trained.is_file():
        run.folder.mkdir(parents=True, exist_ok=True)
        spent = cost_so_far(run.folder)
        model = ALGORITHMS[run.algorithm](env_id, options, run.steps, run.seed, run.folder)
        seconds = {
            "seconds": spent["seconds"] + time.time() - started,
            "cpu_seconds": spent["cpu_seconds"] + time.process_time() - cpu,
        }
        trained.write_text(json.dumps({"model": str(model)} | seconds))
    training = json.loads(trained.read_text())
    model = Path(training["model"])
    scoring = time.process_time()
    score = score_model(env_id, options, model, evaluation)
    if evaluation.curve_games:
        write_panel_curve(run.folder, env_id, options, evaluation)
    result = dataclasses.asdict(run) | {
        "folder": str(run.folder),
        "train_seconds": training["seconds"],
        **({"train_cpu_seconds": training["cpu_seconds"]} if "cpu_seconds" in training else {}),
        "score_cpu_seconds": time.process_time() - scoring,
        **score,
    }
    score_path.write_text(json.dumps(result, indent=2))
    return result


def cost_so_far(folder: Path) -> dict[str, float]:
    """What an interrupted learner run in ``folder`` had cost by its last evaluation, from
    which it goes on (its ``resume.pt``; ``training.selfplay --resume``); nothing for others."""
    import torch

    from training.selfplay import RESUME_FILE

    if not (folder / RESUME_FILE).is_file():
        return {"seconds": 0.0, "cpu_seconds": 0.0}
    saved = torch.load(folder / RESUME_FILE, weights_only=True)
    return {"seconds": saved["seconds"], "cpu_seconds": saved["cpu_seconds"]}


def score_model(env_id: str, options: dict, model: Path, evaluation: Evaluation) -> dict:
    """The model's panel score and, in two-player Pico, its exact NashConv."""
    from training.evaluation.panel import panel_members, panel_score

    spec = get_spec(env_id)
    game = spec.make_game(**options)
    agent = spec.make_agent(str(model), game)
    members = panel_members(spec, game)
    result = panel_score(
        game, agent, members, evaluation.games, EVAL_SEED, search_games=evaluation.search_games
    )
    score = evaluation.record() | {
        "panel_score": result["panel_score"],
        "panel_score_ci": result["panel_score_ci"],
        "members": {n: r["above_chance"] for n, r in result["members"].items()},
    }
    if spec.name == "pico" and game.num_players == 2:
        from training.evaluation.nash_conv import nash_conv
        from training.solvers.pico import sample_deals

        deals = evaluation.nash_conv_deals or NASHCONV_DEALS
        from training.evaluation.tournament import mean_interval

        mean, ci = mean_interval(nash_conv(game, agent, sample_deals(deals, EVAL_SEED)))
        ci = None if deals < 2 else ci  # no interval from one deal (JSON null, not NaN)
        score |= {"nash_conv": mean, "nash_conv_ci": ci, "nash_conv_deals": deals}
    if evaluation.bound_decisions:
        from training.exploitability import learned_best_response

        bound = learned_best_response(
            env_id,
            options,
            str(model),
            evaluation.bound_decisions,
            BOUND_GAMES,
            0,
            model.parent / "best_response",
        )
        score |= {
            "bound_win_rate": bound["best_response_win_rate"],
            "bound_win_ci": bound["ci"],
            "chance": bound["chance"],
        }
    return score


#: A run's panel-score curve (``--curve-games``): ``decisions, panel_score, panel_score_ci``.
PANEL_CURVE = "panel_curve.csv"


def curve_models(folder: Path) -> list[tuple[int, Path]]:
    """(decisions, model) for each model a run kept on its way, oldest first: a learner
    run's ``checkpoints/`` (one per evaluation), or ``sp-psro``'s rounds' best responses
    at the decisions of the rounds so far (its ``evaluations.csv``); none for others."""
    from training.selfplay import CHECKPOINTS

    kept = sorted((folder / CHECKPOINTS).glob("*.npz"), key=lambda path: int(path.stem))
    if kept:
        return [(int(path.stem), path) for path in kept]
    if not (folder / "psro.json").is_file():
        return []
    population = json.loads((folder / "psro.json").read_text())["population"][1:]
    with open(folder / "evaluations.csv", newline="") as handle:
        decisions = [int(row["decisions"]) for row in csv.DictReader(handle)]
    return [(d, Path(m)) for d, m in zip(decisions, population, strict=True)]


def write_panel_curve(folder: Path, env_id: str, options: dict, evaluation: Evaluation) -> None:
    """Score each model of ``curve_models`` against the panel with ``curve_games`` games a
    member (the evaluation seed, as the final score) into ``folder/PANEL_CURVE``."""
    from training.evaluation.panel import panel_members, panel_score

    spec = get_spec(env_id)
    game = spec.make_game(**options)
    members = panel_members(spec, game)
    games = evaluation.curve_games
    search_games = max(1, round(games * evaluation.search_games / evaluation.games))
    rows = []
    for decisions, model in curve_models(folder):
        agent = spec.make_agent(str(model), game)
        result = panel_score(game, agent, members, games, EVAL_SEED, search_games=search_games)
        rows.append([decisions, result["panel_score"], result["panel_score_ci"]])
    with open(folder / PANEL_CURVE, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["decisions", "panel_score", "panel_score_ci"])
        writer.writerows(rows)


# --- the report -------------------------------------------------------------------------------
#: What results.csv keeps of each run: enough to aggregate it again (``--merge``).
CSV_FIELDS = {
    "algorithm": str,
    "config": str,
    "seed": int,
    "steps": int,
    "panel_score": float,
    "panel_score_ci": float,
    "nash_conv": float,
    "nash_conv_ci": float,
    "nash_conv_deals": int,
    "bound_win_rate": float,
    "bound_win_ci": float,
    "bound_decisions": int,
    "chance": float,
    "train_seconds": float,
    "train_cpu_seconds": float,
    "score_cpu_seconds": float,
    "panel": str,
    "eval_games": int,
    "search_games": int,
    "curve_games": int,
}
#: What every aggregated run must share, where it records it: the budget and the scoring.
SAME_FOR_ALL = (
    "steps",
    "panel",
    "eval_games",
    "search_games",
    "nash_conv_deals",
    "bound_decisions",
)


def read_results_csv(path: Path) -> list[dict]:
    """The runs of an earlier report's ``results.csv``, typed as in their ``score.json``
    (an empty cell is left out)."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    missing = {"algorithm", "config", "seed", "steps", "panel_score"} - set(rows[0] if rows else {})
    if not rows or missing:
        raise ValueError(f"{path}: not a benchmark's results.csv (no runs, or no {missing})")
    try:
        return [
            {k: CSV_FIELDS[k](v) for k, v in row.items() if k in CSV_FIELDS and v != ""}
            for row in rows
        ]
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def chance_of(config: str) -> float:
    """A configuration's chance of winning, one over its players (for runs recorded
    before their score kept it)."""
    env_id, options = CONFIGURATIONS[config]
    return 1 / get_spec(env_id).make_game(**options).num_players


def run_key(run: dict) -> tuple:
    """What tells a report's runs apart: ``(algorithm, config, seed, steps)``."""
    return run["algorithm"], run["config"], run["seed"], run["steps"]


def finished_runs(out: Path, merge: Sequence[Path] = ()) -> list[dict]:
    """Every finished run under ``out``, and those of earlier reports' CSVs (``merge``) that
    have no folder here: a benchmark split across machines, or one whose folders are gone."""
    runs: dict[tuple, dict] = {}
    for path in merge:
        for run in read_results_csv(path):
            runs.setdefault(run_key(run), run)
    for path in out.glob("runs/*/*/seed*/score.json"):
        run = json.loads(path.read_text())
        runs[run_key(run)] = run
    return [runs[key] for key in sorted(runs)]


def curves_csv(results_csv: Path) -> Path:
    """Where a report keeps its runs' learning curves: beside its ``results.csv``, as
    ``results-curves.csv`` (and a merged CSV's curves are read from beside it the same
    way), so that the curves outlive the run folders, as the scores do."""
    return results_csv.with_name(f"{results_csv.stem}-curves.csv")


def run_curves(runs: Sequence[dict], merge: Sequence[Path] = ()) -> dict[tuple, dict]:
    """Each run's learning curves, ``{run_key: {column: (decisions, values)}}`` for the
    columns of ``CURVES``: from its folder where it has one here, else from the curves
    CSV beside the merged CSV it came from (the first that has it, as ``finished_runs``)."""
    merged: dict[tuple, dict] = {}
    for path in merge:
        source = curves_csv(path)
        if not source.is_file():
            continue
        found: dict[tuple, dict] = {}
        with open(source, newline="") as handle:
            for row in csv.DictReader(handle):
                key = run_key(row | {"seed": int(row["seed"]), "steps": int(row["steps"])})
                decisions, values = found.setdefault(key, {}).setdefault(row["curve"], ([], []))
                decisions.append(int(row["decisions"]))
                values.append(float(row["value"]))
        for key, curves in found.items():
            merged.setdefault(key, curves)
    curves_of: dict[tuple, dict] = {}
    for run in runs:
        if "folder" in run:
            curves = {c: learning_curve(Path(run["folder"]), c) for c, _, _ in CURVES}
            curves_of[run_key(run)] = {c: v for c, v in curves.items() if v is not None}
        else:
            curves_of[run_key(run)] = merged.get(run_key(run), {})
    return curves_of


def write_curves(path: Path, curves_of: dict[tuple, dict]) -> None:
    """``run_curves`` as a CSV, a row per point: ``algorithm, config, seed, steps, curve,
    decisions, value``."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["algorithm", "config", "seed", "steps", "curve", "decisions", "value"])
        for key, curves in curves_of.items():
            for column, (decisions, values) in curves.items():
                writer.writerows(
                    [*key, column, d, v] for d, v in zip(decisions, values, strict=True)
                )


def report(out: Path, merge: Sequence[Path] = ()) -> dict:
    """Aggregate every finished run under ``out`` (and the runs of the ``merge`` CSVs with
    no folder there) into results.json/.csv/.md and plots: the configurations where every
    algorithm has all its runs (``summary["incomplete"]`` lists the others; their runs are
    in results.json and .csv all the same, and their learning curves are drawn). Before
    any configuration is complete, only the runs, their curves and that list are written,
    so that a table in progress can be merged later."""
    from training.evaluation.aggregate import (
        iqm,
        mean_t_interval,
        probability_of_improvement,
        stratified_bootstrap_ci,
    )

    every_run = finished_runs(out, merge)
    if not every_run:
        raise ValueError(f"no finished runs under {out / 'runs'}")
    algorithms = sorted({r["algorithm"] for r in every_run})
    counts = Counter((r["algorithm"], r["config"]) for r in every_run)
    present = [c for c in CONFIGURATIONS if any(r["config"] == c for r in every_run)]
    # A configuration is aggregated once every algorithm has there as many runs as it has
    # anywhere (the bootstrap stratifies by configuration); the rest wait, listed.
    most = {a: max(counts[a, c] for c in present) for a in algorithms}
    configs = [c for c in present if all(counts[a, c] == most[a] for a in algorithms)]
    incomplete = {c: {a: counts[a, c] for a in algorithms} for c in present if c not in configs}
    rows = [r for r in every_run if r["config"] in configs]
    for key in SAME_FOR_ALL:
        values = Counter(str(r[key]) for r in rows or every_run if key in r)
        if len(values) > 1:
            raise ValueError(f"the runs differ in {key} ({dict(values)}): aggregate one protocol")
    if not configs:  # nothing to aggregate yet: keep the runs and their curves to merge later
        summary = {"configs": [], "incomplete": incomplete, "algorithms": {}, "improvement": {}}
        summary["exact_beside_bound"] = exact_beside_bound(every_run)
        curves_of = write_results(out, summary, every_run, merge)
        plot_curves(out, every_run, algorithms, present, curves_of)
        return summary
    matrices = {a: score_matrix(rows, a, configs) for a in algorithms}
    summary: dict[str, Any] = {
        "configs": configs,
        "incomplete": incomplete,
        "algorithms": {},
        "improvement": {},
    }
    for algorithm, matrix in matrices.items():
        point, low, high = stratified_bootstrap_ci(iqm, matrix)
        per_config = {
            c: stratified_bootstrap_ci(iqm, matrix[:, [k]]) for k, c in enumerate(configs)
        }
        seeds = matrix.shape[0]
        summary["algorithms"][algorithm] = {
            "runs": int(matrix.size),
            "seeds": seeds,
            "iqm": point,
            "ci": interval(low, high, seeds),
            "per_config": {
                c: {"iqm": v[0], "ci": interval(v[1], v[2], seeds)} for c, v in per_config.items()
            },
        }
    for algorithm in algorithms:
        exact = [r["nash_conv"] for r in rows if r["algorithm"] == algorithm and "nash_conv" in r]
        if exact:
            mean, ci = mean_t_interval(exact)
            summary["algorithms"].setdefault(algorithm, {})["nash_conv"] = {
                "mean": mean,
                "ci": ci,  # one run: no interval (JSON null)
                "runs": len(exact),
            }
        bounds = {}  # per configuration, the learned best response's win rate over runs
        for config in configs:
            scored = [
                r
                for r in rows
                if r["algorithm"] == algorithm and r["config"] == config and "bound_win_rate" in r
            ]
            rates = [r["bound_win_rate"] for r in scored]
            if rates:
                best = max(scored, key=lambda r: r["panel_score"])  # the run one would pick
                bounds[config] = {
                    "mean": float(np.mean(rates)),
                    "max": float(np.max(rates)),
                    "best_run": {"seed": best["seed"], "win_rate": best["bound_win_rate"]},
                    "chance": scored[0].get("chance") or chance_of(config),
                    "runs": len(rates),
                }
        if bounds:
            summary["algorithms"].setdefault(algorithm, {})["bound"] = bounds
    summary["exact_beside_bound"] = exact_beside_bound(rows)
    summary["cost"] = cost(rows, configs)
    for x in algorithms:
        for y in algorithms:
            if x != y:
                point, low, high = stratified_bootstrap_ci(
                    probability_of_improvement, matrices[x], matrices[y]
                )
                seeds = min(matrices[x].shape[0], matrices[y].shape[0])
                summary["improvement"][f"{x} > {y}"] = {
                    "p": point,
                    "ci": interval(low, high, seeds),
                }
    curves_of = write_results(out, summary, every_run, merge)
    plot(out, rows, summary, matrices, curves_of)
    return summary


def write_results(
    out: Path, summary: dict, every_run: list[dict], merge: Sequence[Path]
) -> dict[tuple, dict]:
    """results.json, .csv and .md, and the runs' curves beside the CSV; returns the
    curves."""
    (out / "results.json").write_text(json.dumps({"summary": summary, "runs": every_run}, indent=2))
    with open(out / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CSV_FIELDS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(every_run)
    curves_of = run_curves(every_run, merge)
    write_curves(curves_csv(out / "results.csv"), curves_of)
    (out / "results.md").write_text(markdown_table(summary))
    return curves_of


def exact_beside_bound(rows: list[dict]) -> list[dict]:
    """Each two-player run with both an exact NashConv and a learned bound: the two side by
    side, the bound as NashConv (4 × win rate − 2, its interval × 4), and whether the bound
    exceeds the exact figure beyond both intervals (a lower bound never should)."""
    from training.exploitability import nash_conv_bound

    pairs = []
    for r in sorted(rows, key=lambda r: (r["algorithm"], r["config"], r["seed"])):
        if "nash_conv" not in r or "bound_win_rate" not in r:
            continue
        if (r.get("chance") or chance_of(r["config"])) != 0.5:
            continue  # with more players the win rate bounds no NashConv
        bound, bound_ci = nash_conv_bound(r["bound_win_rate"], r.get("bound_win_ci") or 0.0)
        exact, exact_ci = r["nash_conv"], r.get("nash_conv_ci")  # one deal: no interval
        pairs.append(
            {
                "algorithm": r["algorithm"],
                "config": r["config"],
                "seed": r["seed"],
                "nash_conv": exact,
                "nash_conv_ci": exact_ci,
                "bound": bound,
                "bound_ci": bound_ci,
                "exceeds": bound - bound_ci > exact + (exact_ci or 0.0),
            }
        )
    return pairs


#: What a run's score records of its cost, in CPU seconds (``execute``).
COST_FIELDS = ("train_cpu_seconds", "score_cpu_seconds")


def cost(rows: list[dict], configs: list[str]) -> dict[str, Any]:
    """What the aggregated runs cost in CPU seconds: per configuration the mean training and
    scoring seconds of one run (over the runs that recorded them), and the CPU hours of
    them all."""
    per_config = {}
    for config in configs:
        runs = [r for r in rows if r["config"] == config]
        means = {}
        for key in COST_FIELDS:
            values = [r[key] for r in runs if r.get(key) is not None]
            means[key] = float(np.mean(values)) if values else None
        per_config[config] = {"runs": len(runs), **means}
    seconds = {key: sum(r.get(key) or 0.0 for r in rows) for key in COST_FIELDS}
    return {
        "per_config": per_config,
        "train_cpu_hours": seconds["train_cpu_seconds"] / 3600,
        "score_cpu_hours": seconds["score_cpu_seconds"] / 3600,
    }


def interval(low: float, high: float, seeds: int) -> list[float] | None:
    """A bootstrap interval, or None (JSON null) from one seed: the stratified bootstrap
    resamples the seeds of each configuration, so one seed gives no interval at all."""
    return [low, high] if seeds > 1 else None


def score_matrix(rows: list[dict], algorithm: str, configs: list[str]) -> np.ndarray:
    """Panel scores (seeds, configs) of one algorithm, over configurations where it has the
    same number of runs (``report`` aggregates only those)."""
    columns = [
        [
            r["panel_score"]
            for r in sorted(rows, key=lambda r: r["seed"])
            if r["algorithm"] == algorithm and r["config"] == c
        ]
        for c in configs
    ]
    return np.array(columns).T


NO_INTERVAL = "(one seed: no interval)"


def with_interval(value: float, ci: list[float] | None, digits: int = 3, sign: str = "+") -> str:
    """``value [low, high]``, or the value and that one seed gives no interval."""
    if ci is None:
        return f"{value:{sign}.{digits}f} {NO_INTERVAL}"
    return f"{value:{sign}.{digits}f} [{ci[0]:{sign}.{digits}f}, {ci[1]:{sign}.{digits}f}]"


def markdown_table(summary: dict) -> str:
    configs = summary["configs"]
    lines = (
        [
            "| algorithm | IQM panel score (95% CI) | " + " | ".join(configs) + " |",
            "|---|---|" + "---|" * len(configs),
        ]
        if configs
        else ["No configuration is aggregated yet."]
    )
    for name, s in summary["algorithms"].items():
        cells = [
            with_interval(s["per_config"][c]["iqm"], s["per_config"][c]["ci"]) for c in configs
        ]
        lines.append(f"| {name} | {with_interval(s['iqm'], s['ci'])} | " + " | ".join(cells) + " |")
    exact = {name: s["nash_conv"] for name, s in summary["algorithms"].items() if "nash_conv" in s}
    if exact:
        lines += [
            "",
            "| algorithm | pico-2p NashConv, mean over runs (95% t interval) | runs |",
            "|---|---|---|",
        ]
        for name, v in exact.items():
            spread = "(one run)" if v["ci"] is None else f"± {v['ci']:.3f}"
            lines.append(f"| {name} | {v['mean']:.3f} {spread} | {v['runs']} |")
        from training.exploitability import scale

        lines += ["", f"NashConv {scale()}."]
    bounds = {name: s["bound"] for name, s in summary["algorithms"].items() if "bound" in s}
    if bounds:
        bounded = [c for c in configs if any(c in v for v in bounds.values())]
        chances = {c: next(v[c]["chance"] for v in bounds.values() if c in v) for c in bounded}
        lines += [
            "",
            "| algorithm | " + " | ".join(f"{c} (chance {chances[c]:.2f})" for c in bounded) + " |",
            "|---|" + "---|" * len(bounded),
        ]
        for name, v in bounds.items():
            cells = [
                f"{v[c]['mean']:.3f} ({v[c]['max']:.3f}; best run, seed "
                f"{v[c]['best_run']['seed']}: {v[c]['best_run']['win_rate']:.3f}), "
                f"{v[c]['runs']} run{'s' if v[c]['runs'] != 1 else ''}"
                if c in v
                else ""
                for c in bounded
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "The learned best response's win rate against each run: the mean over runs (the "
            "most exploited run's; the best run's, the one with the highest panel score). A "
            "lower bound on how far each run can be exploited; with two players, NashConv ≥ "
            "4 × win rate − 2.",
        ]
    if pairs := summary.get("exact_beside_bound"):
        lines += [
            "",
            "| algorithm | configuration | seed | exact NashConv (95% CI) | learned bound "
            "(95% CI) | share of the exact found |",
            "|---|---|---|---|---|---|",
        ]
        for v in pairs:
            spread = v["nash_conv_ci"]
            exact = f"{v['nash_conv']:.3f} " + (
                "(one deal)" if spread is None else f"± {spread:.3f}"
            )
            bound = f"{v['bound']:.3f} ± {v['bound_ci']:.3f}" if v["bound"] > 0 else "none found"
            share = f"{max(v['bound'], 0) / v['nash_conv']:.2f}" if v["nash_conv"] > 0 else "-"
            lines.append(
                f"| {v['algorithm']} | {v['config']} | {v['seed']} | {exact} | {bound} | {share} |"
            )
        over = [f"{v['algorithm']} seed {v['seed']}" for v in pairs if v["exceeds"]]
        lines += [
            "",
            "The exact NashConv beside the learned bound (4 × the best response's win rate − "
            "2) for every run that has both. "
            + (
                f"The bound exceeds the exact figure beyond both intervals in {len(over)} of "
                f"{len(pairs)} runs ({', '.join(over)}): a lower bound never should."
                if over
                else f"In none of the {len(pairs)} runs does the bound exceed the exact "
                "figure beyond both intervals."
            ),
        ]
    if "cost" in summary:
        lines += [
            "",
            "| configuration | runs | training CPU s per run (mean) | scoring CPU s per run (mean) |",
            "|---|---|---|---|",
        ]
        for config, v in summary["cost"]["per_config"].items():
            cells = ["not recorded" if v[key] is None else f"{v[key]:,.0f}" for key in COST_FIELDS]
            lines.append(f"| {config} | {v['runs']} | {cells[0]} | {cells[1]} |")
        hours = summary["cost"]["train_cpu_hours"], summary["cost"]["score_cpu_hours"]
        lines += [
            "",
            f"All these runs: {sum(hours):.2f} CPU hours, {hours[0]:.2f} training and "
            f"{hours[1]:.2f} scoring (the runs that recorded them).",
        ]
    if summary["improvement"]:
        lines += ["", "| comparison | P(X > Y) (95% CI) |", "|---|---|"]
        for pair, v in summary["improvement"].items():
            lines.append(f"| {pair} | {with_interval(v['p'], v['ci'], 2, '')} |")
    single = [name for name, s in summary["algorithms"].items() if s.get("seeds") == 1]
    if single:
        lines += [
            "",
            f"One seed per configuration for {', '.join(single)}: no interval. The intervals "
            "come from resampling the seeds, so one seed gives none; run several (--seeds 0-4).",
        ]
    if summary.get("incomplete"):
        waiting = "; ".join(
            f"{c} ({', '.join(f'{a} {n}' for a, n in runs.items())})"
            for c, runs in summary["incomplete"].items()
        )
        lines += ["", f"Not aggregated until every algorithm has all its runs there: {waiting}."]
    return "\n".join(lines) + "\n"


def plot(
    out: Path, rows: list[dict], summary: dict, matrices: dict, curves_of: dict[tuple, dict]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.evaluation.aggregate import performance_profile

    algorithms = list(summary["algorithms"])
    configs = summary["configs"]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(configs) * len(algorithms) ** 0.5), 4))
    width = 0.8 / max(1, len(algorithms))
    for i, name in enumerate(algorithms):
        per = summary["algorithms"][name]["per_config"]
        centre = np.array([per[c]["iqm"] for c in configs])
        bounds = np.array([per[c]["ci"] or [per[c]["iqm"]] * 2 for c in configs])  # one seed: 0
        low, high = centre - bounds[:, 0], bounds[:, 1] - centre
        ax.bar(
            np.arange(len(configs)) + i * width,
            centre,
            width,
            yerr=[low, high],
            capsize=3,
            label=name,
        )
    ax.set_xticks(
        np.arange(len(configs)) + width * (len(algorithms) - 1) / 2,
        configs,
        rotation=20,
        ha="right",
    )
    ax.set(ylabel="IQM panel score (95% CI)", title="Panel score by configuration")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "iqm.png", dpi=100)
    plt.close(fig)

    thresholds = np.linspace(-1, 1, 81)
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in algorithms:
        ax.plot(thresholds, performance_profile(matrices[name], thresholds), label=name)
    ax.set(
        xlabel="panel score τ",
        ylabel="fraction of runs with score > τ",
        title="Performance profiles",
    )
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "profiles.png", dpi=100)
    plt.close(fig)

    plot_curves(out, rows, algorithms, configs, curves_of)


def plot_curves(
    out: Path, rows: list[dict], algorithms: list[str], configs: list[str], curves_of: dict
) -> None:
    """The learning curves of ``CURVES``: of the runs' folders here, or kept beside a
    merged CSV; one picture per curve, a panel per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    for column, name, label in CURVES:
        per_cell = {
            (algorithm, config): [
                curves[column]
                for r in rows
                if r["algorithm"] == algorithm and r["config"] == config
                if column in (curves := curves_of[run_key(r)])
            ]
            for algorithm in algorithms
            for config in configs
        }
        drawn = [c for c in configs if any(per_cell[a, c] for a in algorithms)]
        if drawn or column == CURVES[0][0]:  # the first is drawn even empty
            draw_curves(out / name, per_cell, drawn or configs, algorithms, label)


#: The learning curves a report draws: the column of the runs' ``evaluations.csv``, the
#: picture and its axis.
CURVES = (
    ("win_heuristic", "curves.png", "win rate vs heuristic"),
    ("nash_conv", "nash_conv_curves.png", "NashConv (the learner's deals)"),
    ("panel_score", "panel_curves.png", "panel score (--curve-games)"),
)


def draw_curves(path: Path, curves_of: dict, configs: list[str], algorithms, label: str) -> None:
    """One panel per configuration: each algorithm's mean curve over its runs, ± one
    standard deviation."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(configs), figsize=(4 * len(configs), 3.5), squeeze=False)
    for ax, config in zip(axes[0], configs, strict=True):
        for name in algorithms:
            curves = curves_of[name, config]
            if not curves:
                continue
            length = min(len(c[0]) for c in curves)
            steps = curves[0][0][:length]
            values = np.array([c[1][:length] for c in curves])
            mean = values.mean(axis=0)
            spread = values.std(axis=0)
            ax.plot(steps, mean, label=name)
            ax.fill_between(steps, mean - spread, mean + spread, alpha=0.2)
        ax.set(title=config, xlabel="learner decisions", ylabel=label)
        ax.grid(alpha=0.3)
    if axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def learning_curve(
    folder: Path, column: str = "win_heuristic"
) -> tuple[list[int], list[float]] | None:
    """(decisions, ``column``) from a run's ``evaluations.csv``: the self-play learner's
    (a row per evaluation: ``decisions``, ``win_heuristic``, in two-player Pico
    ``nash_conv``), or an SB3 run's win rate against the heuristic (a row per opponent:
    ``timesteps``, ``opponent``, ``win_rate``); ``panel_score`` from its ``PANEL_CURVE``;
    None where there is none."""
    path = folder / (PANEL_CURVE if column == "panel_score" else "evaluations.csv")
    if not path.is_file():
        return None
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    if rows and "decisions" in rows[0]:
        if column not in rows[0]:
            return None
        return [int(r["decisions"]) for r in rows], [float(r[column]) for r in rows]
    if column != "win_heuristic":
        return None
    rows = [r for r in rows if r.get("opponent") == "heuristic"]
    if not rows:  # no games against the heuristic: no curve
        return None
    return [int(r["timesteps"]) for r in rows], [float(r["win_rate"]) for r in rows]


# --- the command line -------------------------------------------------------------------------
def parse_seeds(text: str) -> list[int]:
    """``0-4`` or ``0,2,7``."""
    seeds: list[int] = []
    for part in text.split(","):
        first, dash, last = part.partition("-")
        seeds += list(range(int(first), int(last) + 1)) if dash else [int(first)]
    return seeds


def main(argv: Sequence[str] | None = None) -> None:
    parser = tool_parser("training.benchmark", __doc__)
    parser.add_argument("--algorithms", default="", help="comma-separated registered names")
    parser.add_argument(
        "--configs", default=",".join(CONFIGURATIONS), help="comma-separated configurations"
    )
    parser.add_argument("--seeds", default="0-4", help="training seeds: 0-4 or 0,2,7")
    parser.add_argument(
        "--steps", default="small", help=f"learner decisions per run, or one of {BUDGETS}"
    )
    parser.add_argument("--eval-games", type=int, default=EVAL_GAMES, help="per panel member")
    parser.add_argument(
        "--eval-search-games",
        type=int,
        default=EVAL_SEARCH_GAMES,
        help="per search member of the panel (pimc, ismcts)",
    )
    parser.add_argument(
        "--nash-conv-deals",
        type=int,
        default=NASHCONV_DEALS,
        help="two-player Pico: deals of each run's exact NashConv (protocol v2: 200)",
    )
    parser.add_argument(
        "--bound-decisions",
        type=int,
        default=0,
        help="decisions of each run's learned best response (0: none; protocol v2: 1000000)",
    )
    parser.add_argument(
        "--curve-games",
        type=int,
        default=0,
        help="games per panel member for the panel score of each model a learner run kept, "
        "its panel-score curve (0: none; protocol v2's large-v2: 40)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument("--out", default="runs/benchmark", help="the benchmark's folder")
    parser.add_argument("--report", metavar="DIR", help="only redo the report of DIR")
    parser.add_argument(
        "--merge",
        action="append",
        default=[],
        metavar="CSV",
        help="add the runs of an earlier report's results.csv that have no folder here "
        "(a benchmark split across machines); repeatable",
    )
    parser.add_argument(
        "--import",
        dest="modules",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module that registers more algorithms (repeatable)",
    )
    args = parser.parse_args(argv)
    for module in args.modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            parser.error(f"--import {module}: {error}")
    merge = [Path(path) for path in args.merge]
    for path in merge:
        try:
            read_results_csv(path)
        except (OSError, ValueError) as error:
            parser.error(f"--merge {path}: {error}; give an earlier report's results.csv")
    if args.report:
        try:
            print(markdown_table(report(Path(args.report), merge)))
        except ValueError as error:
            parser.error(str(error))
        return
    algorithms = [a for a in args.algorithms.split(",") if a]
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if not algorithms or unknown:
        parser.error(
            f"--algorithms: unknown {unknown or 'none given'}; registered: {', '.join(ALGORITHMS)}"
        )
    configs = args.configs.split(",")
    wrong = [c for c in configs if c not in CONFIGURATIONS]
    if wrong:
        parser.error(f"--configs: unknown {wrong}; the protocol's: {', '.join(CONFIGURATIONS)}")
    try:
        seeds = parse_seeds(args.seeds)
        steps = BUDGETS[args.steps] if args.steps in BUDGETS else int(args.steps)
    except ValueError as error:
        parser.error(f"--seeds or --steps: {error}")
    if min(steps, args.jobs, args.eval_games, args.eval_search_games, args.nash_conv_deals) < 1:
        parser.error(
            "--steps, --jobs, --eval-games, --eval-search-games and --nash-conv-deals must be "
            "positive"
        )
    for name, value in (
        ("--bound-decisions", args.bound_decisions),
        ("--curve-games", args.curve_games),
    ):
        if value < 0:
            parser.error(f"{name} must be at least 0, got {value}")
    evaluation = Evaluation(
        args.eval_games,
        args.eval_search_games,
        args.nash_conv_deals,
        args.bound_decisions,
        args.curve_games,
    )
    out = Path(args.out)
    runs = plan(algorithms, configs, seeds, steps, out)
    started = time.time()
    print(f"{len(runs)} runs ({steps} decisions each) in {out}, {args.jobs} at a time")
    if args.jobs == 1:
        results = [execute(run, evaluation, args.modules) for run in runs]
    else:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            results = list(
                pool.map(execute, runs, [evaluation] * len(runs), [args.modules] * len(runs))
            )
    for r in results:
        print(
            f"{r['algorithm']} {r['config']} seed {r['seed']}: panel score "
            f"{r['panel_score']:+.3f} ± {r['panel_score_ci']:.3f}"
        )
    print(f"wall time: {time.time() - started:.0f} s")
    print(markdown_table(report(out, merge)))


if __name__ == "__main__":
    # Under ``python -m`` this file runs as ``__main__``, a second copy of the module:
    # run the importable one, whose ALGORITHMS the ``--import`` modules register into
    # (and whose ``execute`` the worker processes unpickle).
    from training.benchmark import main as benchmark_main

    benchmark_main()
