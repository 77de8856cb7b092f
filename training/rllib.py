"""Train any Hidden Hand game with Ray RLlib's PPO (new API stack), masked, in self-play.

    python -m training.rllib --env hiddenhand/pico-v0 --iterations 50 --out runs/rllib-pico
    python -m training.rllib --env hiddenhand/pickup-v0 --num-players 4 --opponents self heuristic \\
        --num-env-runners 4 --address auto --out runs/rllib-pickup

Needs the optional extra: ``pip install -c constraints.txt -e ".[rllib]"``.

Every seat of the project's parallel env (``envs.core.aec.HiddenHandParallel``) is an
RLlib agent through ``HiddenHandMultiAgentEnv``, written once for every id: it asks
only the seats choosing now (the others' no-op is filled in), renames the observation
dict to the ``observations``/``action_mask`` keys of RLlib's action-masking example
and plays any frozen opponents itself. Every learning seat maps to one shared module,
``main``: RLlib's ``ActionMaskingTorchRLModule`` (the masked PPO module of its
examples), which adds ``log(mask)`` to the logits so an illegal action is never
sampled. ``--opponents`` is the pool the other seats are drawn from each episode (the
learner's own seat is drawn at random): ``self`` is the shared policy (self-play,
trained), ``random``, ``heuristic`` or any agent the game knows, or a saved policy
(an SB3 ``model.zip`` or an RLlib export) are frozen and played inside the env.

A run folder (``--out``) collects the TensorBoard logs (RLlib's own result logging,
``tensorboard --logdir DIR``), RLlib checkpoints (``DIR/checkpoint``), the periodic
evaluations (``evaluations.csv``: the exported policy, greedy, in ``--eval-games``
seat-rotated games against the heuristic and random, ``training.evaluation.tournament.head_to_head``)
and the export: ``DIR/agent.pt`` + ``DIR/agent.json``, the masked policy network as an
agent that loads with torch alone (``training.agents.rllib_policy``) wherever a saved
model's path is accepted. ``docs/rllib.md`` has running on a Ray cluster and what scales.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from envs.core.aec import HiddenHandParallel
from envs.core.agents import Agent, decide
from envs.core.game import Game
from envs.core.spec import get_spec
from training import cli
from training.agents.policy import policy_metadata
from training.agents.rllib_policy import RLlibPolicyAgent, build_network, save_rllib_agent
from training.cli import OPTION_HELP, arg, list_arg
from training.evaluation.tournament import head_to_head

try:
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
except ImportError as error:  # the default install has no ray
    raise ImportError(
        f"training.rllib needs Ray RLlib ({error}); install the extra: "
        "pip install -c constraints.txt -e '.[rllib]'"
    ) from error

#: The one trained module, shared by every learning seat.
MODULE = "main"
#: ``--opponents`` entry for the shared, trained policy.
SELF = "self"
#: Opponents the periodic evaluation plays against.
EVAL_OPPONENTS = ("heuristic", "random")


# --- the env: every id as an RLlib MultiAgentEnv -------------------------------------------
class HiddenHandMultiAgentEnv(MultiAgentEnv):
    """Any Hidden Hand game as an RLlib ``MultiAgentEnv``, over ``HiddenHandParallel``.

    ``config``: ``env_id``, ``options`` (game options, ``reward_mode`` among them),
    ``opponents`` (the pool other seats are drawn from each episode: ``"self"`` or an
    agent name or path; default ``["self"]``). Only the learning seats choosing now get
    an observation (``{"observations": float32, "action_mask": float32}``), so every
    sample RLlib collects is a real decision; the seats not choosing submit the no-op
    and frozen opponents are asked inside ``step`` (seeing only their own seat's view,
    through ``envs.core.agents.decide``). Rewards reach every learning seat as they
    happen; at the end every learning seat gets its final observation and
    ``terminated``. An illegal action raises (the masked module never makes one;
    ``illegal_action="penalize"`` in the config ends the game with -1 instead, as
    ``parallel_env()`` does).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        spec = get_spec(config.get("env_id", "hiddenhand/pico-v0"))
        self.env = HiddenHandParallel(
            spec, illegal_action=config.get("illegal_action", "raise"), **config.get("options", {})
        )
        self.game: Game = self.env.game
        self.pool = list(config.get("opponents", [SELF]))
        self.opponents: dict[str, Agent] = {
            name: spec.make_agent(name, self.game) for name in self.pool if name != SELF
        }
        self.possible_agents = list(self.env.possible_agents)
        self.agents = list(self.possible_agents)
        low, high = self.game.observation_layout.bounds()
        n = self.game.num_actions
        space = gymnasium.spaces.Dict(
            {
                "observations": gymnasium.spaces.Box(low, high, dtype=np.float32),
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (n,), dtype=np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gymnasium.spaces.Discrete(n))
        self.observation_space = gymnasium.spaces.Dict(self.observation_spaces)
        self.action_space = gymnasium.spaces.Dict(self.action_spaces)
        self.rng = np.random.default_rng()
        self.seats: dict[str, Agent | None] = {}
        self._obs: dict = {}
        self._infos: dict = {}

    @staticmethod
    def adapt(observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The project's observation dict in the keys and dtypes of RLlib's masking module."""
        return {
            "observations": np.asarray(observation["observation"], dtype=np.float32),
            "action_mask": np.asarray(observation["action_mask"], dtype=np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        while True:  # a deal in which the opponents alone finish the game is dealt again
            self._obs, self._infos = self.env.reset(seed=int(self.rng.integers(2**31)))
            learner = self.possible_agents[int(self.rng.integers(len(self.possible_agents)))]
            self.seats = {
                agent: None if agent == learner else self._draw_opponent()
                for agent in self.possible_agents
            }
            self.agents = [a for a in self.possible_agents if self.seats[a] is None]
            rewards = dict.fromkeys(self.agents, 0.0)
            if self._play_opponents(rewards):
                break
        return self._learner_views(), {a: {} for a in self._choosing_learners()}

    def _draw_opponent(self) -> Agent | None:
        name = self.pool[int(self.rng.integers(len(self.pool)))]
        return None if name == SELF else self.opponents[name]

    def _choosing_learners(self) -> list[str]:
        return [a for a in self.agents if self._infos[a]["choosing"]]

    def _learner_views(self, agents: list[str] | None = None) -> dict:
        agents = self._choosing_learners() if agents is None else agents
        return {agent: self.adapt(self._obs[agent]) for agent in agents}

    def _joint(self, actions: dict) -> dict[str, int]:
        """Every live seat's action: learners' from ``actions``, opponents asked, no-ops."""
        joint = {}
        state = self.env.table.state
        for agent in self.possible_agents:
            if not self._infos[agent]["choosing"]:
                joint[agent] = 0
            elif self.seats[agent] is None:
                joint[agent] = actions[agent]
            else:
                player = self.env.agent_ids[agent]
                joint[agent] = decide(
                    self.seats[agent],
                    state,
                    player,
                    self._obs[agent]["observation"],
                    self._obs[agent]["action_mask"],
                    self.rng,
                )
        return joint

    def _advance(self, actions: dict, rewards: dict[str, float]) -> bool:
        """One step of the parallel env; rewards added up; whether the game is over."""
        self._obs, step_rewards, terminations, _, self._infos = self.env.step(self._joint(actions))
        for agent in rewards:
            rewards[agent] += step_rewards[agent]
        return all(terminations.values())

    def _play_opponents(self, rewards: dict[str, float]) -> bool:
        """Play while only frozen opponents choose; False if the game ended meanwhile."""
        while not self._choosing_learners():
            if self._advance({}, rewards):
                return False
        return True

    def step(self, action_dict: dict):
        rewards = dict.fromkeys(self.agents, 0.0)
        over = self._advance(action_dict, rewards) or not self._play_opponents(rewards)
        if over:
            observations = self._learner_views(self.agents)
            done = dict.fromkeys(self.agents, True)
            infos = {a: {} for a in self.agents}
        else:
            observations = self._learner_views()
            done = dict.fromkeys(self.agents, False)
            infos = {a: {} for a in observations}
        return (
            observations,
            rewards,
            {**done, "__all__": over},
            {**dict.fromkeys(self.agents, False), "__all__": False},
            infos,
        )


# --- the exported policy ---------------------------------------------------------------------
def policy_network(weights: dict[str, Any], game: Game, hidden: list[int], activation: str):
    """The masked module's actor (encoder + ``pi`` head) from its state dict (``get_weights``)
    as the plain ``torch.nn.Sequential`` of ``training.agents.rllib_policy``."""
    import torch

    actor_prefixes = ("encoder.actor_encoder.", "encoder.encoder.", "pi.")
    keys = [
        key
        for prefix in actor_prefixes
        for key in weights
        if key.startswith(prefix) and key.endswith((".weight", ".bias"))
    ]
    network = build_network(game.observation_layout.size, hidden, game.num_actions, activation)
    targets = list(network.state_dict())
    if len(keys) != len(targets):
        raise ValueError(f"unexpected RLModule layout: {keys}; expected {len(targets)} tensors")
    network.load_state_dict(
        {
            target: torch.as_tensor(np.asarray(weights[key]), dtype=torch.float32)
            for target, key in zip(targets, keys, strict=True)
        }
    )
    return network


# --- the command line ------------------------------------------------------------------------
@dataclass
class Args:
    env: str = arg("hiddenhand/pico-v0", "game id, PettingZoo or Gymnasium form")
    num_players: int | None = arg(None, "number of players; default: the game's own default")
    option: list[str] = list_arg([], OPTION_HELP)
    out: str = arg("", "run folder (refused if it holds files, unless --overwrite); required")
    overwrite: bool = arg(False, "replace the run folder's contents if it holds files")
    iterations: int = arg(20, "PPO iterations (each samples --train-batch-size env steps)")
    num_env_runners: int = arg(
        2,
        "env runner actors sampling in parallel (spread over the cluster's nodes); 0: sample "
        "in the driver",
    )
    num_envs_per_env_runner: int = arg(1, "envs stepped together (batched) in each env runner")
    num_learners: int = arg(0, "learner actors (data-parallel updates); 0: learn in the driver")
    address: str = arg(
        "local",
        "Ray cluster: local (start one on this machine), auto (join the cluster `ray start` "
        "made here), HOST:PORT (its GCS) or ray://HOST:PORT (Ray Client)",
    )
    opponents: list[str] = list_arg(
        [SELF],
        "the pool the other seats are drawn from each episode: self (the shared policy, "
        "trained: self-play), random, heuristic or any agent the game knows, or a saved "
        "policy's path (SB3 model.zip or RLlib agent.pt), frozen",
        nargs="+",
    )
    reward_mode: str = arg("score", "reward mode of the env: score (dense margin) or win (±1)")
    seed: int = arg(0, "seed of the env runners, the opponents and the network initialisation")
    train_batch_size: int = arg(4000, "env steps sampled per iteration (per learner)")
    minibatch_size: int = arg(256, "PPO minibatch size")
    num_epochs: int = arg(10, "passes over each iteration's batch")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    gamma: float = arg(0.995, "discount factor")
    entropy_coeff: float = arg(0.01, "entropy bonus")
    net_arch: str = arg("128,128", "hidden layer sizes of the policy and value networks")
    activation: str = arg("tanh", "hidden-layer activation: tanh or relu")
    eval_every: int = arg(5, "iterations between evaluations (0: only at the end)")
    eval_games: int = arg(200, "seat-rotated games per evaluation opponent")
    checkpoint_every: int = arg(0, "iterations between RLlib checkpoints (0: only at the end)")


ADDRESS = re.compile(r"^(local|auto|(ray://)?[A-Za-z0-9._-]+:\d+)$")


def parse_args(argv: list[str] | None = None) -> tuple[Args, dict[str, Any], Game]:
    """The arguments, the game options and the game, all checked before ray starts (an
    argparse error, exit 2, naming what is allowed)."""
    parser = cli.dataclass_parser("training.rllib", __doc__, Args)
    namespace = parser.parse_args(argv)
    args = Args(**vars(namespace))
    spec, options, game = cli.game_from_args(parser, namespace)
    if args.reward_mode not in ("score", "win"):
        parser.error(f"--reward-mode {args.reward_mode!r}; allowed: score, win")
    for name in ("iterations", "train_batch_size", "minibatch_size", "num_epochs", "eval_games"):
        if getattr(args, name) < 1:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
            )
    for name in ("num_env_runners", "num_learners", "eval_every", "checkpoint_every"):
        if getattr(args, name) < 0:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 0, got {getattr(args, name)}"
            )
    if args.num_envs_per_env_runner < 1:
        parser.error("--num-envs-per-env-runner must be at least 1")
    if args.minibatch_size > args.train_batch_size:
        parser.error("--minibatch-size must not exceed --train-batch-size")
    if args.activation not in ("tanh", "relu"):
        parser.error(f"--activation {args.activation!r}; allowed: tanh, relu")
    try:
        hidden = [int(width) for width in args.net_arch.split(",")]
        if not hidden or min(hidden) < 1:
            raise ValueError
    except ValueError:
        parser.error(f"--net-arch {args.net_arch!r}: comma-separated positive sizes, e.g. 128,128")
    if not ADDRESS.match(args.address):
        parser.error(
            f"--address {args.address!r}; allowed: local, auto, HOST:PORT or ray://HOST:PORT"
        )
    for name in args.opponents:
        if name == SELF:
            continue
        try:
            spec.make_agent(name, game)
        except (ValueError, OSError) as error:
            parser.error(f"--opponents {name!r}: {error}; or {SELF!r} for the trained policy")
    if not args.out:
        parser.error("--out DIR is required: the run folder")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not args.overwrite:
        parser.error(f"--out {args.out} already holds files; pass --overwrite to replace them")
    options = {**options, "reward_mode": args.reward_mode}
    return args, options, game


def hidden_sizes(args: Args) -> list[int]:
    return [int(width) for width in args.net_arch.split(",")]


def build_config(args: Args, options: dict[str, Any]) -> PPOConfig:
    """PPO on the new API stack: one shared masked module for every learning seat."""
    env_config = {
        "env_id": get_spec(args.env).aec_id,
        "options": options,
        "opponents": args.opponents,
    }
    model = DefaultModelConfig(
        fcnet_hiddens=hidden_sizes(args), fcnet_activation=args.activation, vf_share_layers=False
    )
    return (
        PPOConfig()
        # RLlib's env check steps random actions, blind to the masks: the masked games refuse.
        .environment(HiddenHandMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
        )
        .learners(num_learners=args.num_learners)
        .multi_agent(
            policies={MODULE},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE,
            policies_to_train=[MODULE],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    MODULE: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule, model_config=model
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.learning_rate,
            gamma=args.gamma,
            entropy_coeff=args.entropy_coeff,
        )
        .debugging(seed=args.seed, log_level="ERROR")
    )


def start_ray(args: Args) -> None:
    """Join or start the cluster ``--address`` names (a local one sized to the env runners)."""
    import os

    if args.address == "local":
        cpus = max(os.cpu_count() or 1, args.num_env_runners + args.num_learners + 1)
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=True)
    else:
        ray.init(address=args.address, log_to_driver=True)


def runner_nodes(algo) -> int:
    """The number of distinct cluster nodes the remote env runners run on (1 without any)."""
    nodes = algo.env_runner_group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
    )
    return len(set(nodes)) or 1


def _get(result: dict, *path: str, default: Any = float("nan")) -> Any:
    for key in path:
        if not isinstance(result, dict) or key not in result:
            return default
        result = result[key]
    return result


def progress(result: dict, seconds: float) -> dict[str, float]:
    """What the console shows of an iteration's result (which took ``seconds``): lifetime env
    steps and agent steps (decisions), env steps per second of the whole iteration (sampling
    and learning) and of sampling alone (RLlib's smoothed sampling timer), and the learning
    seats' summed return and the episode length."""
    agent_steps = _get(result, "env_runners", "num_agent_steps_sampled_lifetime", default={})
    sampled = _get(result, "env_runners", "num_env_steps_sampled", default=0)
    return {
        "env_steps": int(_get(result, "env_runners", "num_env_steps_sampled_lifetime", default=0)),
        "agent_steps": int(sum(agent_steps.values()) if isinstance(agent_steps, dict) else 0),
        "steps_per_s": sampled / seconds,
        "sampling_steps_per_s": sampled / _get(result, "timers", "env_runner_sampling_timer"),
        "episode_return": _get(result, "env_runners", "episode_return_mean"),
        "episode_length": _get(result, "env_runners", "episode_len_mean"),
    }


EVALUATION_COLUMNS = [
    "iteration",
    "env_steps",
    "agent_steps",
    "opponent",
    "win_rate",
    "win_ci",
    "mean_score",
    "wall_seconds",
]


def train(args: Args, options: dict[str, Any], game: Game) -> Path:
    """Run the training ``args`` describe; returns the run folder."""
    from ray.tune.utils import flatten_dict
    from tensorboardX import SummaryWriter

    out = Path(args.out)
    if out.is_dir() and args.overwrite:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = get_spec(args.env)
    game_options = {k: v for k, v in options.items() if k != "reward_mode"}
    metadata = policy_metadata(
        spec.aec_id,
        game,
        game_options,
        command=cli.command_line("training.rllib", args),
        reward_mode=args.reward_mode,
        opponents=args.opponents,
    )
    config = {**dataclasses.asdict(args), **metadata}
    (out / "config.json").write_text(json.dumps(config, indent=2, default=str))
    evaluators = {name: spec.make_agent(name, game) for name in EVAL_OPPONENTS}
    start_ray(args)
    writer = SummaryWriter(str(out / "tensorboard"))
    table = (out / "evaluations.csv").open("w", newline="")
    rows = csv.writer(table)
    rows.writerow(EVALUATION_COLUMNS)
    begun = time.perf_counter()
    try:
        algo = build_config(args, options).build_algo()
        print(
            f"{spec.aec_id} {game.num_players}p, opponents {' '.join(args.opponents)}: "
            f"{args.num_env_runners} env runner(s) on {runner_nodes(algo)} node(s), "
            f"{args.num_learners} learner actor(s); run folder {out}",
            flush=True,
        )
        for iteration in range(1, args.iterations + 1):
            started = time.perf_counter()
            result = algo.train()
            p = progress(result, time.perf_counter() - started)
            print(
                f"[{iteration}/{args.iterations}] {p['env_steps']} env steps, "
                f"{p['agent_steps']} decisions, {p['steps_per_s']:.0f} env steps/s "
                f"(sampling {p['sampling_steps_per_s']:.0f}/s) | "
                f"episode return {p['episode_return']:.3f}, length {p['episode_length']:.1f}",
                flush=True,
            )
            for key, value in flatten_dict(result, delimiter="/").items():
                if isinstance(value, (int, float)) and np.isfinite(value):
                    writer.add_scalar(f"ray/tune/{key}", value, global_step=p["env_steps"])
            last = iteration == args.iterations
            if last or (args.eval_every and iteration % args.eval_every == 0):
                weights = algo.get_weights([MODULE])[MODULE]
                network = policy_network(weights, game, hidden_sizes(args), args.activation)
                agent = RLlibPolicyAgent(network)
                parts = []
                for name, opponent in evaluators.items():
                    r = head_to_head(game, agent, opponent, args.eval_games, seed=args.seed)
                    rows.writerow(
                        [iteration, p["env_steps"], p["agent_steps"], name]
                        + [r["win_rate"], r["win_ci"], r["mean_score"]]
                        + [round(time.perf_counter() - begun, 1)]
                    )
                    writer.add_scalar(
                        f"evaluation/win_rate_vs_{name}", r["win_rate"], global_step=p["env_steps"]
                    )
                    parts.append(f"vs {name}: win rate {r['win_rate']:.3f} ± {r['win_ci']:.3f}")
                table.flush()
                print(f"    [{p['env_steps']} env steps] " + " | ".join(parts), flush=True)
                save_rllib_agent(
                    network,
                    out / "agent.pt",
                    {**metadata, "iterations": iteration, "env_steps": p["env_steps"]},
                )
            if last or (args.checkpoint_every and iteration % args.checkpoint_every == 0):
                algo.save_to_path(str((out / "checkpoint").resolve()))
        algo.stop()
        print(
            f"exported the policy to {out / 'agent.pt'}; RLlib checkpoint in {out / 'checkpoint'}"
        )
    finally:
        table.close()
        writer.close()
        ray.shutdown()
    return out


def main(argv: list[str] | None = None) -> Path:
    args, options, game = parse_args(argv)
    return train(args, options, game)


if __name__ == "__main__":
    main()
