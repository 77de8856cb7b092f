"""Train a MaskablePPO agent on any Hidden Hand game.

    python -m training.train --env hiddenhand/Pico-v0 --total-timesteps 100000
    python -m training.train --env hiddenhand/pickup-v0 --num-players 4 --opponents random:1,heuristic:1,self:2

One seat learns (drawn at random each episode) through the Gymnasium
single-agent view; the other seats are filled each episode from an opponent mix
of random, the game's heuristic and past snapshots of the learner (self-play).
With ``--imitate-steps N`` the policy first imitates a teacher
(``training/imitation.py``: behaviour cloning, DAgger, distillation), and PPO improves
on it from there. A run folder collects the model, its config, TensorBoard logs, the
periodic evaluations (CSV) and a learning-curve PNG.
"""

from __future__ import annotations

import csv
import dataclasses
import inspect
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import envs
from envs.core.game import require_choice
from envs.core.spec import get_spec
from training import cli
from training.agents import features_class, games_with_features
from training.agents.policy import (
    LogitsAgent,
    PolicyAgent,
    hidden_layers_of,
    load_policy,
    policy_metadata,
    save_policy,
)
from training.cli import OPTION_HELP, arg, list_arg, parse_mixture
from training.evaluation.tournament import head_to_head
from training.imitation import imitation_rounds


@dataclass
class Args:
    env: str = arg("hiddenhand/Pico-v0", "game id, Gymnasium or PettingZoo form")
    num_players: int | None = arg(None, "number of players; default: the game's own default")
    option: list[str] = list_arg([], OPTION_HELP)
    opponents: str = arg(
        "random:1",
        "opponent mix as name:weight pairs, e.g. random:1,heuristic:1,self:2; a name is an "
        "agent the game knows or a saved model's path (runs/x/model.zip:1); 'self' draws "
        "from the learner's saved snapshots (fictitious self-play), 'latest' takes the newest "
        "(naive self-play); both random until the first snapshot exists",
    )
    reward_mode: str = arg(
        "score",
        "reward mode of the env: score (dense: the change in own score minus the others' "
        "mean at every reveal) or win (+1/0/-1 at the end)",
    )
    total_timesteps: int = arg(100_000, "learner decisions to train for")
    imitate_steps: int = arg(
        0,
        "warm start: learner decisions of the game's heuristic to imitate (behaviour cloning of "
        "the policy, Monte Carlo returns for the value) before PPO starts; 0: start from scratch",
    )
    imitate_epochs: int = arg(8, "passes over the imitation data (in every round)")
    imitate_learning_rate: float = arg(
        1e-3, "Adam learning rate of the imitation fit (PPO then uses --learning-rate)"
    )
    imitate_anneal: bool = arg(
        False,
        "lower the imitation learning rate linearly to 0 over each round's passes (a finer "
        "fit at the end of each round)",
    )
    imitate_rounds: int = arg(
        1,
        "imitation rounds: the first follows the teacher's own play (the policy's, with "
        "--init-model); each later one plays the policy, labels the states it reaches with "
        "the teacher's choices and refits on all the data so far (DAgger)",
    )
    teacher: str = arg(
        "heuristic", "the agent imitated: any agent the game knows (heuristic, expert, ...)"
    )
    teacher_samples: int = arg(
        0,
        "rollouts per decision of a PIMC teacher (pimc, pimc_heuristic); 0: its own budget",
    )
    imitate_temperature: float = arg(
        0.0,
        "0: imitate the teacher's choices; > 0: distil its action values instead (a teacher "
        "with action_values, e.g. Easter collection's expert): the policy fits "
        "softmax(values / temperature) over the legal actions, so it learns which mistakes "
        "are cheap and which are costly (values are in points: 1 is a point)",
    )
    init_model: str = arg(
        "",
        "start from a saved model's weights (a run's model.zip, checked against the env's "
        "spaces; same --net-arch) to train it further, also on another configuration of the "
        "game whose spaces agree",
    )
    n_envs: int = arg(4, "environments stepped in parallel")
    vec: str = arg(
        "gym",
        "how the environments are stepped: gym (the Gymnasium view, any opponent mix) or "
        "batched (envs.make_vec: --n-envs games in lockstep in the game's batched engine; "
        "self redraws its snapshot for every game at each new snapshot, not per episode)",
    )
    subproc: bool = arg(False, "run the environments in subprocesses (SubprocVecEnv)")
    seed: int = arg(0, "seed of everything: envs, opponents, network initialisation")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    n_steps: int = arg(256, "steps per environment per PPO update")
    batch_size: int = arg(256, "minibatch size")
    n_epochs: int = arg(10, "passes over each rollout")
    gamma: float = arg(0.995, "discount factor")
    ent_coef: float = arg(0.01, "entropy bonus")
    net_arch: str = arg("128,128", "hidden layer sizes of the policy and value networks")
    features: str = arg(
        "raw",
        "what the networks read: raw (the observation) or game (the observation and the "
        "game's own extra features, see training/agents/features.py; games with them: "
        + ", ".join(games_with_features())
        + ")",
    )
    eval_every: int = arg(25_000, "timesteps between evaluations (0: only at the end)")
    eval_games: int = arg(200, "seat-rotated games per baseline at each periodic evaluation")
    eval_opponents: str = arg(
        "random,heuristic",
        "the evaluations' opponents, comma-separated (any agent the game knows, e.g. pimc), "
        "each in every other seat; best_model is the model with the highest sum of win "
        "rates against them",
    )
    final_eval_games: int = arg(1000, "seat-rotated games per baseline at the end")
    snapshot_every: int = arg(25_000, "timesteps between self-play snapshots")
    run_dir: str = arg("runs", "folder under which the run folder is made")
    run_name: str = arg("", "run folder name; default: game and seed")
    overwrite: bool = arg(
        False, "replace the run folder if it already holds files (refused otherwise)"
    )
    progress_bar: bool = arg(True, "show a progress bar")


def parse_args(argv: list[str] | None = None) -> Args:
    parser = cli.dataclass_parser("training.train", __doc__, Args)
    return Args(**vars(parser.parse_args(argv)))


def eval_opponent_names(args: Args) -> list[str]:
    """The agents of ``--eval-opponents``, in order."""
    return args.eval_opponents.split(",")


def game_options(args: Args) -> dict[str, Any]:
    """The game options of ``--num-players`` and ``--option`` (ValueError if one is wrong)."""
    return cli.game_options(get_spec(args.env), args.num_players, args.option)


#: Opponent names drawn from the learner's own snapshots: any of them, or the newest.
SNAPSHOT_OPPONENTS = ("self", "latest")


class OpponentMix(gymnasium.Wrapper):
    """Fills every other seat, each episode, with an opponent drawn from a weighted mix."""

    def __init__(self, env: gymnasium.Env, mix: dict[str, float], snapshot_dir: Path, seed: int):
        super().__init__(env)
        base = env.unwrapped
        self.names = list(mix)
        self.weights = np.array([mix[n] for n in self.names]) / sum(mix.values())
        self.rng = np.random.default_rng(seed)
        self.snapshot_dir = snapshot_dir
        self._fixed = {
            name: base.game_spec.make_agent(name, base.game)
            for name in self.names
            if name not in SNAPSHOT_OPPONENTS
        }
        self._snapshots: dict[Path, PolicyAgent] = {}

    def _draw(self, name: str):
        if name not in SNAPSHOT_OPPONENTS:
            return self._fixed[name]
        paths = sorted(self.snapshot_dir.glob("*.zip"))
        if not paths:
            return self.env.unwrapped.game_spec.agent_factory("random")(self.env.unwrapped.game)
        path = paths[-1] if name == "latest" else paths[self.rng.integers(len(paths))]
        if path not in self._snapshots:
            base = self.env.unwrapped
            self._snapshots[path] = load_policy(path, base.game, base.game_spec.aec_id)
        return self._snapshots[path]

    def reset(self, **kwargs):
        base = self.env.unwrapped
        picks = self.rng.choice(len(self.names), size=base.game.num_players - 1, p=self.weights)
        base.opponents = [self._draw(self.names[i]) for i in picks]
        return self.env.reset(**kwargs)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


class SnapshotOpponent(LogitsAgent):
    """``self`` or ``latest`` for ``--vec batched``: a batched policy opponent (one forward
    pass for all the games it plays) that is the newest snapshot (``latest``) or one drawn
    uniformly from all of them (``self``), drawn again whenever a snapshot is saved; it
    plays uniformly at random before the first. Unlike the Gymnasium view's ``self``,
    which draws a snapshot per episode, every game it plays shares one draw until the
    next snapshot (the same snapshots over training, in larger blocks)."""

    def __init__(self, kind: str, folder: Path, game, env_id: str, seed: int) -> None:
        super().__init__(deterministic=False)  # uniform over the legal actions, until loaded
        self.kind, self.folder, self.game, self.env_id = kind, folder, game, env_id
        self.rng = np.random.default_rng([2, seed])
        self.policy: PolicyAgent | None = None

    def refresh(self) -> None:
        paths = sorted(self.folder.glob("*.zip"))
        if paths:
            path = paths[-1] if self.kind == "latest" else paths[self.rng.integers(len(paths))]
            self.policy = load_policy(path, self.game, self.env_id)
            self.deterministic = self.policy.deterministic

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        if self.policy is None:
            return np.zeros((len(observations), self.game.num_actions), dtype=np.float32)
        return self.policy.logits_batch(observations)


def make_env(args: Args, rank: int, snapshot_dir: Path):
    gym_id = get_spec(args.env).gym_id

    def thunk() -> gymnasium.Env:
        import envs  # noqa: F401  (registers the ids in a subprocess)

        env = gymnasium.make(gym_id, reward_mode=args.reward_mode, **game_options(args))
        env = OpponentMix(
            env, parse_mixture(args.opponents, "--opponents"), snapshot_dir, args.seed * 1000 + rank
        )
        env.reset(seed=args.seed * 1000 + rank)
        return env

    return thunk


def evaluate(agent, env_id: str, options: dict, opponent: str, games: int, seed: int) -> dict:
    """The agent in one seat, ``opponent`` in every other, seat-rotated."""
    spec = get_spec(env_id)
    game = spec.make_game(**options)
    result = head_to_head(game, agent, spec.make_agent(opponent, game), games, seed=seed)
    return {"opponent": opponent, "games": games, **result}


class Every:
    """Runs ``action`` once each time the learner's timesteps reach the next multiple of
    ``every`` (never if ``every`` is 0)."""

    def __init__(self, every: int, action: Callable[[], Any]) -> None:
        self.every, self.action = every, action
        self.next = every or np.inf

    def tick(self, timesteps: int) -> None:
        if timesteps >= self.next:
            self.action()
            self.next += self.every


def plot_curves(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_win, ax_score) = plt.subplots(1, 2, figsize=(10, 4))
    for opponent in sorted({r["opponent"] for r in rows}):
        mine = [r for r in rows if r["opponent"] == opponent]
        steps = [r["timesteps"] for r in mine]
        for ax, key in ((ax_win, "win_rate"), (ax_score, "mean_score")):
            values = np.array([r[key] for r in mine])
            ci = np.array(
                [
                    r[key.replace("win_rate", "win").replace("mean_score", "score") + "_ci"]
                    for r in mine
                ]
            )
            ax.plot(steps, values, marker="o", label=f"vs {opponent}")
            ax.fill_between(steps, values - ci, values + ci, alpha=0.2)
    ax_win.set(xlabel="timesteps", ylabel="win rate", title="Win rate (95% CI)")
    ax_score.set(xlabel="timesteps", ylabel="mean score", title="Mean score (95% CI)")
    for ax in (ax_win, ax_score):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def valued_agents(spec) -> list[str]:
    """The game's agents that offer ``action_values`` (teachers to distil)."""
    return [name for name in spec.agents if hasattr(spec.agent_factory(name), "action_values")]


def sampled_agents(spec) -> list[str]:
    """The game's agents whose budget is ``samples`` rollouts a decision (PIMC teachers)."""
    return [
        name
        for name in spec.agents
        if "samples" in inspect.signature(spec.agent_factory(name)).parameters
    ]


def check(args: Args) -> None:
    """Raise ValueError, naming what is wrong and what is allowed, for any argument that
    would fail the run; called before anything is created, so a typo damages no run folder."""
    spec = get_spec(args.env)
    game = spec.make_game(**game_options(args))
    for name in parse_mixture(args.opponents, "--opponents"):
        if name not in SNAPSHOT_OPPONENTS:
            spec.make_agent(name, game)
    for name in eval_opponent_names(args):
        spec.make_agent(name, game)  # an unknown name: its own error, naming the agents
    require_choice("--vec", args.vec, ("gym", "batched"))
    if args.vec == "batched":
        from envs.core.batched import engine_class

        engine_class(spec)  # a game without a batched engine: its own error, naming those with
        if args.subproc:
            raise ValueError("--vec batched steps every game in one process: drop --subproc")
    if args.imitate_steps:
        spec.agent_factory(args.teacher)
    if args.teacher_samples < 0:
        raise ValueError(f"--teacher-samples must be ≥ 0, not {args.teacher_samples}")
    if args.teacher_samples and args.teacher not in sampled_agents(spec):
        raise ValueError(
            f"--teacher-samples sets a PIMC teacher's budget; {args.teacher!r} has none "
            f"(teachers with one: {', '.join(sampled_agents(spec))})"
        )
    if args.imitate_temperature < 0:
        raise ValueError(f"--imitate-temperature must be ≥ 0, not {args.imitate_temperature}")
    if args.imitate_temperature and args.teacher not in valued_agents(spec):
        spec.agent_factory(args.teacher)  # an unknown teacher: its own error, naming the agents
        raise ValueError(
            f"--imitate-temperature distils a teacher's action values; {spec.name}'s "
            f"{args.teacher!r} has none (agents with them: "
            f"{', '.join(valued_agents(spec)) or 'none'})"
        )
    require_choice("--features", args.features, ("raw", "game"))
    if args.features == "game":
        features_class(spec.name)
    net_arch = hidden_layers(args.net_arch)
    if args.init_model:
        check_start_model(args, spec, game, net_arch)
    run = run_folder(args, spec, game)
    if run.exists() and any(run.iterdir()) and not args.overwrite:
        held = ", ".join(sorted(p.name for p in run.iterdir())[:6])
        raise ValueError(
            f"the run folder {run} already holds a run ({held}); give another --run-name, "
            "or --overwrite to replace it"
        )


def hidden_layers(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(
            f"--net-arch {text!r}: give layer sizes as positive integers, e.g. 128,128"
        )
    return sizes


def run_folder(args: Args, spec, game) -> Path:
    return Path(args.run_dir) / (
        args.run_name or f"{spec.name}-{game.num_players}p-seed{args.seed}"
    )


def check_start_model(args: Args, spec, game, net_arch: list[int]):
    """The ``--init-model`` policy, checked against the env, ``--net-arch`` and ``--features``."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    start = load_policy(args.init_model, game, spec.aec_id, same_options=False).model.policy
    if hidden_layers_of(start) != net_arch:
        raise ValueError(
            f"{args.init_model} has hidden layers {start.net_arch}, not --net-arch {args.net_arch}"
        )
    reads = features_class(spec.name) if args.features == "game" else FlattenExtractor
    if type(start.features_extractor) is not reads:
        raise ValueError(
            f"{args.init_model} reads {type(start.features_extractor).__name__}, "
            f"not --features {args.features}"
        )
    return start


def train(args: Args) -> Path:
    """Train the run ``args`` describe, after ``check``ing them (a ValueError before
    anything is created); returns the run folder."""
    check(args)
    return run_training(args)


def run_training(args: Args) -> Path:
    """``train`` on arguments already checked."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import ConvertCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    spec = get_spec(args.env)
    options = game_options(args)
    game = spec.make_game(**options)
    net_arch = hidden_layers(args.net_arch)
    torch.set_num_threads(1)
    run = run_folder(args, spec, game)
    if run.exists() and args.overwrite:
        shutil.rmtree(run)  # old snapshots would otherwise join the 'self' opponents
    snapshots = run / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    policy_kwargs: dict[str, Any] = {"net_arch": net_arch}
    if args.features == "game":
        policy_kwargs["features_extractor_class"] = features_class(spec.name)
        policy_kwargs["features_extractor_kwargs"] = {"options": options}
    command = cli.command_line("training.train", args)
    if args.init_model:  # record how the starting model was made
        start = check_start_model(args, spec, game, net_arch)
        made_by_path = Path(args.init_model).with_suffix(".json")
        made_by = json.loads(made_by_path.read_text()) if made_by_path.is_file() else {}
        if "command" in made_by:
            command = f"{made_by['command']} && {command}"
    config = dataclasses.asdict(args) | {"command": command}
    (run / "config.json").write_text(json.dumps(config, indent=2))

    vec_class = SubprocVecEnv if args.subproc else DummyVecEnv
    # VecMonitor: TensorBoard's rollout/ep_rew_mean and ep_len_mean.
    snapshot_opponents: list[SnapshotOpponent] = []
    if args.vec == "batched":
        mix: dict[Any, float] = {}
        for name, weight in parse_mixture(args.opponents, "--opponents").items():
            if name in SNAPSHOT_OPPONENTS:
                opponent = SnapshotOpponent(name, snapshots, game, spec.aec_id, args.seed)
                snapshot_opponents.append(opponent)
                mix[opponent] = weight
            else:
                mix[name] = weight
        batched = envs.make_vec(
            spec.gym_id, args.n_envs, mix, reward_mode=args.reward_mode, seed=args.seed,
            **options,
        )  # fmt: skip
        vec_env = VecMonitor(batched)
    else:
        vec_env = VecMonitor(
            vec_class([make_env(args, rank, snapshots) for rank in range(args.n_envs)])
        )
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(run / "tensorboard"),
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    if args.init_model:
        model.policy.load_state_dict(start.state_dict())
    metadata = policy_metadata(spec.aec_id, game, options, reward_mode=args.reward_mode)
    rows: list[dict] = []
    best = {"value": -np.inf}
    started = time.time()

    def evaluate_now(games: int) -> float:
        agent = PolicyAgent(model)
        value = 0.0
        for opponent in eval_opponent_names(args):
            result = evaluate(agent, spec.aec_id, options, opponent, games, seed=args.seed + 1)
            result["timesteps"] = model.num_timesteps
            result["wall_seconds"] = round(time.time() - started, 1)
            rows.append(result)
            print(
                f"[{model.num_timesteps} steps] vs {opponent}: win rate "
                f"{result['win_rate']:.3f} ± {result['win_ci']:.3f}, mean score "
                f"{result['mean_score']:.2f} over {games} games",
                flush=True,
            )
            if hasattr(model, "_logger"):  # set up by learn(); not yet there after imitation
                model.logger.record(f"eval/win_rate_vs_{opponent}", result["win_rate"])
                model.logger.record(f"eval/mean_score_vs_{opponent}", result["mean_score"])
            value += result["win_rate"]
        with open(run / "evaluations.csv", "w", newline="") as handle:  # kept up to date
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        if value > best["value"]:
            best["value"] = value
            best_model = {"timesteps": model.num_timesteps, "command": config["command"]}
            save_policy(model, run / "best_model", metadata | best_model)
        return value

    def save_snapshot() -> None:
        save_policy(model, snapshots / f"step_{model.num_timesteps:09d}", metadata)
        for opponent in snapshot_opponents:
            opponent.refresh()

    periodic = [
        Every(args.snapshot_every, save_snapshot),
        Every(args.eval_every, lambda: evaluate_now(args.eval_games)),
    ]

    def on_step(_locals: dict, _globals: dict) -> bool:
        for task in periodic:
            task.tick(model.num_timesteps)
        return True

    if args.imitate_steps:
        demonstrations = make_env(args, rank=10_000, snapshot_dir=snapshots)
        imitation_rounds(model, args, demonstrations, lambda: evaluate_now(args.eval_games))
    model.learn(
        args.total_timesteps, callback=ConvertCallback(on_step), progress_bar=args.progress_bar
    )
    train_seconds = time.time() - started
    if args.final_eval_games:
        evaluate_now(args.final_eval_games)
    save_policy(
        model,
        run / "model",
        metadata
        | {
            "timesteps": model.num_timesteps,
            "train_seconds": round(train_seconds, 1),
            "command": config["command"],
        },
    )
    plot_curves(rows, run / "learning_curve.png")
    vec_env.close()
    return run


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        check(args)
    except ValueError as error:
        raise SystemExit(f"python -m training.train: error: {error}") from None
    run = run_training(args)
    print(f"run folder: {run}")
    if not args.final_eval_games:
        return
    with open(run / "evaluations.csv") as handle:
        final = list(csv.DictReader(handle))[-2:]
    for row in final:
        print(
            f"vs {row['opponent']}: win rate {float(row['win_rate']):.3f} ± {float(row['win_ci']):.3f}, "
            f"mean score {float(row['mean_score']):.2f} ± {float(row['score_ci']):.2f} "
            f"over {row['games']} seat-rotated games"
        )


if __name__ == "__main__":
    envs.ids()
    main()
