"""A benchmark run: its folder, its training by a registered algorithm (resumed where it
stopped) and its scoring against the panel (``score.json``)."""

from __future__ import annotations

import csv
import dataclasses
import importlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envs.core.spec import get_spec
from training.benchmark import BOUND_GAMES, CONFIGURATIONS, NASHCONV_DEALS, PANEL_CURVE
from training.benchmark.algorithms import ALGORITHMS
from training.evaluation.panel import EVAL_GAMES, EVAL_SEARCH_GAMES, EVAL_SEED


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
        from training.evaluation.tournament import mean_interval
        from training.solvers.pico import sample_deals

        deals = evaluation.nash_conv_deals or NASHCONV_DEALS
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
