"""Self-play on the batched engines: one network in every seat, millions of decisions.

    python -m training.selfplay --env hiddenhand/pico-v0 --decisions 20000000 --out runs/pico
    python -m training.selfplay --env hiddenhand/pickup-v0 --num-players 4 --algorithm ppo \\
        --decisions 2000000 --out runs/pickup-4p

``B`` games (``--num-games``) of the game's batched engine (``envs/<game>/batched.py``)
are played in lockstep by one policy network in every seat; every chooser's decision is
a training sample. A seat's trajectory is its own decisions, with every reward that
reaches it until its next one (in turn-based phases that may be several engine steps
later); a game's end closes every seat's trajectory, and the engine's automatic reset
starts new ones. A rollout is ``--num-steps`` engine steps; a trajectory still open at
its end is bootstrapped from the critic's value of the seat's latest observation.

Algorithms (``--algorithm``):

- ``ppo``: clipped PPO with masks, GAE(lambda) advantages from a state-value critic, and
  an entropy bonus (``--entropy-coef``).
- ``mmd``: magnetic mirror descent in its PPO form (Sokota et al. 2023): the same
  clipped objective plus ``--magnet-coef`` times the reverse KL from the policy to a
  magnet. The magnet is the uniform policy over the legal actions (then the term is an
  entropy bonus), or, with ``--magnet-update r > 0``, a copy of the policy network that
  follows it (its weights move a fraction ``r`` toward the policy's after each update).
- ``qmmd``: magnetic mirror descent with an action-value critic. The critic learns
  ``Q(observation, action)`` from lambda-returns with expected backups (the next
  decision's value is ``sum_a pi(a) Q(a)``, not the action taken), and the policy is
  fitted at every decision of the batch to MMD's closed-form step over all legal
  actions: ``pi_new ∝ (pi_old^(1/eta) * magnet^alpha * exp(Q))^(1/(1/eta + alpha))``
  with ``1/eta = --kl-coef`` and ``alpha = --magnet-coef``. No action's advantage is
  sampled, which is what stalls self-play PPO short of equilibrium in Pico. With
  ``--critic joint`` (two players choosing together at every step:
  ``Game.every_seat_chooses``) the critic is ``Q(observation, own action, other's
  action)``; ``--backup expanded`` fits every legal joint action of each
  decision to its reward plus the critic's value of the position it leads to, each
  played on a copy of the game (``BatchedEngine.copy_games``), instead of the one played;
  ``--off-path K`` also fits the policy's step at up to K of those positions per game
  and reveal (drawn from those where the game goes on): positions one reveal off the
  played path, where a best response steers.
  With the joint critic both seats take ``--inner-steps`` such steps together on each
  decision's matrix; ``--inner-method extragradient`` (each step against the other
  seat's look-ahead) takes them to the matrix's regularised equilibrium, a soft
  Minimax-Q target, where plain MMD steps of that length circle.
- ``neurd``: neural replicator dynamics (Hennes et al. 2020) over the same action critic
  and its expected backups: each legal logit moves along its action's advantage under
  the current policy, ``Q(a) - sum_b pi(b) Q(b)``, at every decision of the batch (the
  loss ``-sum_a z_a * stopgrad(advantage_a)``, ``z`` the logits less their legal mean),
  with NeuRD's threshold ``--logit-threshold`` beta: no gradient pushes a ``z_a`` beyond
  ``+-beta`` further out. With ``--magnet-coef alpha > 0`` the action values are
  regularised toward the magnet first, ``Q(a) - alpha * log(pi(a) / magnet(a))`` (the
  per-decision form of R-NaD's reward transform; its fixed point is qmmd's, ``pi ∝
  magnet * exp(Q / alpha)``); ``--magnet-coef 0`` is plain NeuRD.
- ``minimax``: Minimax-Q (Littman 1994) for two players choosing together (always the
  joint critic). Every decision's matrix ``Q(observation, own action, other's action)``
  over both seats' legal actions is solved as a zero-sum game
  (``training.solvers.zero_sum.zero_sum_batch``, ``--solver-iterations``): the critic
  learns from the returns with the next decision's game value as its backup, the seats
  play the solution mixed with ``--explore`` uniform exploration, and the policy
  network is fitted to the solution at every decision of the batch.

``--explore e`` (qmmd, neurd, minimax) mixes ``e`` of other play into what the seats
play, so play reaches positions a best response could steer to; what is learned there
stays the policy's own (expected backups; keep ``--gae-lambda 0``, whose returns are
the backups alone). The other play is ``--exploration``'s: ``uniform`` (every legal
action alike) or ``greedy`` (the action the critic values most against the other seat's
policy: a one-step best response, which steers where the critic sees the policy lose).
``--magnet-coef``, ``--kl-coef``, ``--entropy-coef``, ``--explore`` and
``--learning-rate`` can be annealed linearly to ``--*-end`` values. ``--opponent-pool
K`` (fictitious self-play): one seat per game learns, the others are played by one of
the last ``K`` snapshots (one drawn per rollout, a snapshot taken every
``--snapshot-every`` decisions).
``--opponent AGENT`` (a name the game knows or a model path): one seat per game learns,
the others are played by that fixed agent, so the run trains a best response to it
(``training.exploitability --method learned``).
``--opponent`` also takes a weighted mixture, ``NAME_OR_PATH:weight,...`` (the syntax of
``training.train --opponents``; a weight of 1 where none is given): at each new deal a
game draws one member in proportion to the weights, which plays every other seat of that
game until its end; each member's rows are played in one batched call (PSRO's best
responses, ``training.benchmark``'s ``sp-psro``). ``--ignore-fields NAMES``: observation
fields (the game's layout names them) that the networks do not read.
``--init PATH`` starts the policy from a saved network (a best response that starts as
the agent it answers, ``training.exploitability --warm-start``).
``--relative-fields NAMES``: fields with one row per seat that the networks read as each
other seat's row less the observer's (the observer's own level is dropped).
``--thermometer-fields NAMES``: each entry of these fields (as the networks read it, so a
margin where the field is also relative) gets fixed step units in the first hidden layer
of the policy and the critic, ``tanh(4 (x - k + 1/2))`` for every integer ``k`` of
``--thermometer-range LOW,HIGH``: a thermometer code of the entry, so a value that
decides a game by one point is as easy to read as one of ten (with ``--activation relu``
they are hinges, ``relu`` of the same). The saved policy is a plain MLP whose first hidden
layer has these units after the learned ones.

A run folder (``--out``) holds ``model.npz`` + ``model.json`` (the policy as plain
arrays, loadable by path wherever an agent is named: ``training.evaluate``,
``training.exploitability``, the panel, ``training.play``, ``opponent=PATH``; it plays
by sampling its policy), ``config.json`` (every argument and the command),
``evaluations.csv`` and ``curve.png`` (every ``--eval-every`` decisions: the exact
NashConv on ``--eval-deals`` deals in two-player Pico, win rates against random, the
heuristic and ``pimc`` elsewhere too), TensorBoard scalars (``tb/``) and, with
``--keep-checkpoints``, the model of every evaluation (``checkpoints/DECISIONS.npz``;
with ``--checkpoint-every``, more often, for ``scripts/tools/average_checkpoints.py``).
The same seed gives the same run on CPU at one ``--threads`` (the tests check one thread;
another thread count sums the networks' products in another order, and the run drifts
apart). Results and the recipes are in ``docs/selfplay.md``.

A run that stops (a machine that goes away, a session's end) continues from its last
evaluation, the same run it would have been:

    python -m training.selfplay --out runs/pico --resume

Each evaluation before the end saves everything the rest of the run depends on in
``resume.pt`` (the networks, the optimiser, the magnet, the snapshots, every game in
play and every generator; ``torch.load(weights_only=True)`` reads it, running no code),
removed when the run finishes. ``--resume`` takes the run's own arguments from its
``config.json``; any given with it must equal them.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from envs.core.batched import engine_class
from envs.core.game import require_choice
from envs.core.spec import get_spec
from training import cli
from training.agents.network import NetworkAgent, save_network
from training.agents.policy import policy_metadata
from training.cli import OPTION_HELP, arg, parse_mixture
from training.evaluation.panel import EVAL_SEED  # never a training seed
from training.solvers.pico import Probabilities
from training.solvers.zero_sum import zero_sum_batch

#: The file in a run folder that ``--resume`` continues from (until the run finishes).
RESUME_FILE = "resume.pt"
#: The folder in a run folder of ``--keep-checkpoints``' models, ``DECISIONS.npz`` each.
CHECKPOINTS = "checkpoints"
#: The reward: the zero-sum win reward, tied winners sharing (envs.core.rewards).
REWARD_MODE = "win"

ALGORITHMS = ("ppo", "mmd", "qmmd", "neurd", "minimax")
#: The algorithms that learn the action critic ``Q(observation, action)`` with expected
#: backups.
ACTION_VALUE = ("qmmd", "neurd")
#: What ``--explore`` mixes into the seats' play.
EXPLORATIONS = ("uniform", "greedy")
#: The networks' activations (``--activation``), as a saved network names them.
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
#: The networks' arithmetic (``--precision``): torch dtypes by name.
PRECISIONS = ("float32", "bfloat16")
CRITICS = ("action", "joint")
BACKUPS = ("sampled", "expanded")
INNER_METHODS = ("mmd", "extragradient")
#: ``--thermometer-fields``: the slope of a step unit (``tanh(2)``: 0.96 half a unit away)
#: and the most thresholds per entry.
STEP_SLOPE = 4.0
MAX_THRESHOLDS = 201
SCALES = ("bounds", "none")


@dataclass
class Args:
    env: str = arg("hiddenhand/pico-v0", "game id, either form")
    num_players: int | None = arg(None, "number of players; default: the game's own")
    option: list[str] = field(default_factory=list, metadata={"help": OPTION_HELP})
    algorithm: str = arg("qmmd", f"one of {', '.join(ALGORITHMS)}")
    decisions: int = arg(20_000_000, "training decisions, counted over every learning seat")
    seed: int = arg(0, "seed of the engine, the network and the action draws")
    out: str = arg("runs/selfplay", "the run folder")
    overwrite: bool = arg(False, "replace an existing run folder")
    resume: bool = arg(
        False,
        "continue the stopped run in --out from its last evaluation (its resume.pt), with "
        "the arguments it was started with (any others given must equal them)",
    )
    device: str = arg("cpu", "torch device (cpu, cuda)")
    threads: int = arg(1, "torch threads (a run's bits depend on it; 1 is fastest when shared)")
    precision: str = arg(
        "float32",
        "the networks' arithmetic: float32, or bfloat16 (torch's autocast: matrix products "
        "in bfloat16, every output and loss in float32, the weights float32; faster on CPUs "
        "with AVX-512 BF16 (docs/performance.md), but rounds what is learned)",
    )
    num_games: int = arg(256, "games played in lockstep (B)")
    num_steps: int = arg(32, "engine steps per rollout")
    hidden: str = arg("128,128", "hidden layer sizes of the policy and the critic")
    activation: str = arg("tanh", f"the networks' activation: {', '.join(ACTIVATIONS)}")
    init: str = arg(
        "",
        "a saved network (a learner's model, one network) to start the policy from: its "
        "hidden sizes and activation must be --hidden's and --activation's, and the networks "
        "must read the raw observation (--scale none, no --*-fields)",
    )
    scale: str = arg(
        "none",
        "observations as the networks see them: bounds (each entry "
        "divided by its layout's upper bound) or none (as the engine gives them)",
    )
    ignore_fields: str = arg(
        "",
        "observation fields the networks do not read, comma-separated names of the game's "
        "observation layout (e.g. Pico's last_played,last_winners: what the last reveal "
        "showed, which does not change how the game can go on)",
    )
    relative_fields: str = arg(
        "",
        "per-seat observation fields the networks read relative to the observer: each other "
        "seat's row less the observer's, whose own row they do not read (e.g. Pico's scores: "
        "with the win reward only the margins count)",
    )
    thermometer_fields: str = arg(
        "",
        "observation fields each of whose entries (as read, after --relative-fields) gets "
        "fixed step units in the first hidden layers, one per integer of --thermometer-range",
    )
    thermometer_range: str = arg(
        "-25,25", "LOW,HIGH: the integer thresholds of --thermometer-fields' units"
    )
    learning_rate: float = arg(3e-4, "Adam learning rate")
    learning_rate_end: float | None = arg(
        None, "Adam learning rate at the end (linear); default: same"
    )
    epochs: int = arg(4, "passes over each rollout")
    critic_epochs: int | None = arg(
        None, "qmmd, neurd, minimax: the critic's passes, fitted first; default: --epochs"
    )
    minibatches: int = arg(4, "minibatches per pass")
    gamma: float = arg(1.0, "discount per own decision")
    gae_lambda: float = arg(0.5, "lambda of the returns")
    clip: float = arg(0.2, "ppo, mmd: the ratio clip")
    entropy_coef: float = arg(0.01, "ppo, mmd: entropy bonus")
    entropy_coef_end: float | None = arg(None, "entropy bonus at the end (linear); default: same")
    magnet_coef: float = arg(0.2, "mmd, qmmd, neurd: alpha, the weight of the KL to the magnet")
    magnet_coef_end: float | None = arg(None, "alpha at the end (linear); default: same")
    magnet_update: float = arg(
        0.0, "mmd, qmmd, neurd: how far the magnet follows the policy per update"
    )
    kl_coef: float = arg(1.0, "qmmd: 1/eta, the weight of the KL to the rollout's policy")
    kl_coef_end: float | None = arg(None, "qmmd: 1/eta at the end (linear); default: same")
    logit_threshold: float = arg(
        2.0, "neurd: beta; no gradient pushes a logit (less the legal mean) beyond +-beta"
    )
    explore: float = arg(
        0.0, "qmmd, neurd, minimax: share of --exploration's play mixed into what the seats play"
    )
    explore_end: float | None = arg(None, "--explore at the end (linear); default: same")
    exploration: str = arg(
        "uniform",
        "what --explore mixes in: uniform (every legal action alike) or greedy (the critic's "
        "best action against the other seats' policy)",
    )
    solver_iterations: int = arg(100, "minimax: regret-matching+ iterations per matrix game")
    inner_steps: int = arg(1, "qmmd with the joint critic: MMD steps per update on each matrix")
    inner_method: str = arg(
        "mmd",
        "qmmd with the joint critic: each inner step an MMD step against the other seat's "
        "latest iterate (mmd), or extragradient (a look-ahead step first, then the step "
        "against the other seat's look-ahead: converges at longer steps)",
    )
    critic: str = arg(
        "action",
        "qmmd: action (Q over the seat's own actions) or joint (two players choosing together: "
        "Q over both seats' actions, the other's policy known)",
    )
    backup: str = arg(
        "sampled",
        "the joint critic's targets: sampled (the joint action played, its return) or "
        "expanded (every legal joint action, its reward plus the critic's value of the "
        "position it leads to, played on copies of the games; engines that copy games: Pico)",
    )
    off_path: int = arg(
        0,
        "qmmd with --backup expanded: also fit the policy's step at this many positions "
        "per game and reveal one reveal off the played path (joint actions drawn from those "
        "the backup tried; 0: the played path only)",
    )
    value_coef: float = arg(0.5, "weight of the critic's loss")
    max_grad_norm: float = arg(0.5, "gradient clipping")
    opponent_pool: int = arg(0, "snapshots kept as the other seats' players; 0: pure self-play")
    opponent: str = arg(
        "",
        "fixed agents in the other seats, NAME_OR_PATH[:weight],... (names the game knows or "
        "model paths; one member per game, drawn at each deal in proportion to its weight): "
        "a best response to the mixture",
    )
    snapshot_every: int = arg(1_000_000, "decisions between snapshots (--opponent-pool)")
    eval_every: int = arg(1_000_000, "decisions between evaluations; 0: only at the end")
    eval_games: int = arg(100, "seat-rotated games against random and the heuristic")
    eval_pimc_games: int = arg(10, "seat-rotated games against pimc (0: none)")
    eval_deals: int = arg(20, "two-player Pico: deals of the exact NashConv (0: none)")
    keep_checkpoints: bool = arg(False, "also keep the model of every evaluation in checkpoints/")
    checkpoint_every: int = arg(
        0, "with --keep-checkpoints, also keep the model every this many decisions (0: none)"
    )
    progress_bar: bool = arg(True, "show a progress bar with decisions per second")


def joint_critic(args: Args) -> bool:
    """Whether the critic values joint actions (``--critic joint``; minimax always)."""
    return args.critic == "joint" or args.algorithm == "minimax"


def check(args: Args) -> tuple[Any, dict[str, Any], Any]:
    """The spec, options and game of ``args``; ValueError naming what is wrong and what is
    allowed. Nothing is written before this passes."""
    spec = get_spec(args.env)
    options = cli.game_options(spec, args.num_players, args.option)
    game = spec.make_game(**options)
    require_choice("--algorithm", args.algorithm, ALGORITHMS)
    require_choice("--critic", args.critic, CRITICS)
    require_choice("--backup", args.backup, BACKUPS)
    require_choice("--inner-method", args.inner_method, INNER_METHODS)
    require_choice("--scale", args.scale, SCALES)
    require_choice("--exploration", args.exploration, EXPLORATIONS)
    require_choice("--activation", args.activation, tuple(ACTIVATIONS))
    require_choice("--precision", args.precision, PRECISIONS)
    ignored = field_names(game, args.ignore_fields, "--ignore-fields")
    field_names(game, args.relative_fields, "--relative-fields", per_seat=True)
    thermometer = field_names(game, args.thermometer_fields, "--thermometer-fields")
    if set(thermometer) & set(ignored):
        both = ", ".join(sorted(set(thermometer) & set(ignored)))
        raise ValueError(f"--thermometer-fields: {both} also ignored")
    threshold_range(args.thermometer_range)
    if args.critic == "joint" and args.algorithm != "qmmd":
        raise ValueError("--critic joint is for --algorithm qmmd")
    if joint_critic(args) and not (game.num_players == 2 and game.every_seat_chooses):
        raise ValueError(
            "--critic joint and --algorithm minimax are for two players choosing together "
            "at every step (two-player Pico; Easter collection's secret positions); "
            f"{spec.name} with these options has {game.num_players} players"
            + ("" if game.every_seat_chooses else " and turns: use --critic action")
        )
    if args.critic != "joint" and (args.inner_steps != 1 or args.inner_method != "mmd"):
        raise ValueError(
            "--inner-steps and --inner-method are steps on each reveal's matrix of joint "
            "actions: they need --critic joint (two players choosing together)"
        )
    if args.backup == "expanded" and args.critic != "joint":
        raise ValueError(
            "--backup expanded plays every joint action of a reveal: it needs --critic joint "
            "(two players choosing together, as in Pico)"
        )
    if args.off_path < 0:
        raise ValueError(f"--off-path is a count of positions, 0 or more, got {args.off_path}")
    if args.off_path and (args.backup != "expanded" or args.algorithm != "qmmd"):
        raise ValueError(
            "--off-path fits qmmd's step at the positions that --backup expanded plays: "
            "pass --algorithm qmmd --critic joint --backup expanded"
        )
    positive = ["decisions", "num_games", "num_steps", "epochs", "minibatches", "threads"]
    positive += ["learning_rate", "clip", "kl_coef", "max_grad_norm", "inner_steps"]
    positive += ["solver_iterations", "logit_threshold"]
    positive += [
        name for name in ("critic_epochs", "kl_coef_end") if getattr(args, name) is not None
    ]
    for name in positive:
        if not getattr(args, name) > 0:
            raise ValueError(
                f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}"
            )
    for name in (
        "entropy_coef",
        "magnet_coef",
        "learning_rate",
        "value_coef",
        "eval_every",
        "eval_games",
    ):
        for flag in (name, f"{name}_end"):  # and its schedule's end, where it has one
            value = getattr(args, flag, None)
            if value is not None and value < 0:
                raise ValueError(f"--{flag.replace('_', '-')} must be at least 0, got {value}")
    for name in ("eval_pimc_games", "eval_deals", "opponent_pool", "snapshot_every"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 0")
    if args.checkpoint_every < 0 or (args.checkpoint_every and not args.keep_checkpoints):
        raise ValueError(
            f"--checkpoint-every must be at least 0 and needs --keep-checkpoints, got "
            f"{args.checkpoint_every}{'' if args.keep_checkpoints else ' without it'}"
        )
    if not 0 < args.gamma <= 1 or not 0 <= args.gae_lambda <= 1:
        raise ValueError("--gamma must be in (0, 1] and --gae-lambda in [0, 1]")
    if not 0 <= args.magnet_update <= 1:
        raise ValueError(f"--magnet-update must be in [0, 1], got {args.magnet_update}")
    for value in (args.explore, args.explore_end):
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"--explore and --explore-end must be in [0, 1], got {value}")
    if (args.explore or args.explore_end) and args.algorithm not in (*ACTION_VALUE, "minimax"):
        raise ValueError(
            "--explore is for the algorithms whose critic backs up the policy's value "
            "(qmmd, neurd, minimax): ppo and mmd learn from the actions played"
        )
    if args.opponent_pool and args.opponent:
        raise ValueError("--opponent-pool and --opponent exclude each other: choose one")
    if (args.opponent_pool or args.opponent) and joint_critic(args):
        raise ValueError(
            "--opponent-pool and --opponent train one seat per game; the joint critic "
            "(--critic joint, --algorithm minimax) needs every seat learning"
        )
    if args.opponent:
        from training.evaluation.tournament import make_agent

        for name in parse_mixture(args.opponent, "--opponent"):
            try:
                make_agent(spec, game, name)
            except ValueError as error:
                raise ValueError(f"--opponent: {error}") from None
    hidden_sizes(args.hidden)
    if args.init:
        initial_layers(args, spec, game)
    try:
        torch.empty(1, device=args.device)
    except (RuntimeError, AssertionError) as error:
        raise ValueError(f"--device {args.device!r} is not available here ({error})") from None
    out = Path(args.out)
    if args.resume:
        check_resume(args)
    elif out.exists() and not args.overwrite:
        raise ValueError(f"{out} exists; pass --overwrite to replace it, or name another --out")
    return spec, options, game


#: What ``--resume`` may differ in from the run's own arguments.
NOT_RESUMED = ("out", "overwrite", "resume", "progress_bar")


def check_resume(args: Args) -> None:
    """``--resume``: the run in ``--out`` stopped after an evaluation, and ``args`` are the
    ones it was started with."""
    out = Path(args.out)
    if args.overwrite:
        raise ValueError("--resume continues the run in --out; --overwrite would replace it")
    if not (out / RESUME_FILE).is_file():
        raise ValueError(
            f"{out / RESUME_FILE} does not exist: --resume continues a run that stopped after "
            "an evaluation (--eval-every), and a finished run leaves none"
        )
    saved = json.loads((out / "config.json").read_text())
    defaults = Args()  # an argument added since the run started has its default there
    changed = [
        f"{cli.flag_of(f.name)} {saved.get(f.name)!r}, not {getattr(args, f.name)!r}"
        for f in dataclasses.fields(Args)
        if f.name not in NOT_RESUMED
        and saved.get(f.name, getattr(defaults, f.name)) != getattr(args, f.name)
    ]
    if changed:
        raise ValueError(f"--resume continues the run with its own arguments: {'; '.join(changed)}")
    try:
        torch.load(out / RESUME_FILE, weights_only=True)["schedule"]
    except Exception as error:  # a damaged or foreign file: say so, change nothing
        raise ValueError(
            f"{out / RESUME_FILE} is not a state saved by training.selfplay ({error}); "
            "the run can start again with --overwrite"
        ) from None


def resumed_args(args: Args, given: set[str]) -> Args:
    """``--resume`` on the command line: the run's own arguments (its ``config.json``),
    with those ``given`` explicitly over them (``check_resume`` then requires them equal)."""
    config = Path(args.out) / "config.json"
    if not config.is_file():
        return args
    saved = json.loads(config.read_text())
    names = {f.name for f in dataclasses.fields(Args)}
    kept = given | set(NOT_RESUMED)
    return Args(
        **{n: saved[n] for n in names - kept if n in saved}
        | {n: getattr(args, n) for n in names & kept}
    )


def field_names(game, text: str, flag: str, per_seat: bool = False) -> list[str]:
    """The observation fields named in ``text`` (``--ignore-fields``, and with
    ``per_seat`` ``--relative-fields``: fields whose first axis is the seats, the
    observer's first); ValueError for a name the game's layout lacks."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    layout = game.observation_layout
    allowed, what = list(layout.fields), "not in this game's observation; its fields"
    if per_seat:
        views = layout.views(np.arange(layout.size))
        allowed = [name for name, view in views.items() if view.shape[0] == game.num_players]
        what = "not a field with one row per seat; this game's"
    wrong = [name for name in names if name not in allowed]
    if wrong:
        raise ValueError(f"{flag}: {', '.join(wrong)} {what}: {', '.join(allowed)}")
    return names


def initial_layers(args: Args, spec, game) -> list[tuple[np.ndarray, np.ndarray]]:
    """``--init``'s layers, checked against the env and the run's network; ValueError
    saying what does not fit."""
    from training.agents.network import load_network_agent

    transformed = args.scale != "none" or any(
        (args.ignore_fields, args.relative_fields, args.thermometer_fields)
    )
    if transformed:
        raise ValueError(
            "--init starts from a saved network, which reads the raw observation: use "
            "--scale none and no --ignore-fields, --relative-fields or --thermometer-fields"
        )
    try:
        agent = load_network_agent(args.init, game, spec.aec_id)
    except ValueError as error:
        raise ValueError(f"--init: {error}") from None
    if not isinstance(agent, NetworkAgent):
        raise ValueError("--init: an average of networks is not one network to start from")
    hidden = [len(bias) for _, bias in agent.layers[:-1]]
    if hidden != hidden_sizes(args.hidden) or agent.activation_name != args.activation:
        raise ValueError(
            f"--init: the saved network is {','.join(map(str, hidden))} "
            f"{agent.activation_name}; pass --hidden and --activation to match it"
        )
    return agent.layers


def threshold_range(text: str) -> tuple[int, int]:
    """``--thermometer-range``'s ``LOW,HIGH``: integers, ``LOW <= HIGH``, at most
    ``MAX_THRESHOLDS`` of them."""
    try:
        low, high = (int(value) for value in text.split(","))
    except ValueError:
        low, high = 1, 0
    if not 0 <= high - low < MAX_THRESHOLDS:
        raise ValueError(
            f"--thermometer-range must be LOW,HIGH, integers with LOW <= HIGH and at most "
            f"{MAX_THRESHOLDS} thresholds, got {text!r}"
        )
    return low, high


def hidden_sizes(text: str) -> list[int]:
    try:
        sizes = [int(width) for width in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--hidden must be positive widths separated by commas, got {text!r}")
    return sizes


def mlp(
    sizes: list[int],
    activation: str = "tanh",
    steps: tuple[np.ndarray, np.ndarray] | None = None,
) -> nn.Sequential:
    """Linear layers of ``sizes`` with ``activation`` between them; ``steps`` (weights
    ``(c, sizes[0])`` and biases ``(c,)``): ``c`` fixed units after the first layer's."""
    extra = 0 if steps is None else len(steps[1])
    widths_in = [sizes[0], sizes[1] + extra, *sizes[2:-1]]
    layers: list[nn.Module] = []
    for i, (width_in, width_out) in enumerate(zip(widths_in, sizes[1:], strict=True)):
        linear = nn.Linear(width_in, width_out)
        layers += [StepUnits(linear, *steps) if i == 0 and steps else linear]
        layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers[:-1])


class StepUnits(nn.Module):
    """A linear layer and fixed units after its own: ``--thermometer-fields``' steps."""

    def __init__(self, linear: nn.Linear, weight: np.ndarray, bias: np.ndarray) -> None:
        super().__init__()
        self.linear = linear
        for name, value in (("weight", weight), ("bias", bias)):  # derived: not saved
            self.register_buffer(name, torch.as_tensor(value, dtype=torch.float32), False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.linear(x), x @ self.weight.T + self.bias], 1)


def layer_arrays(module: nn.Module) -> tuple[np.ndarray, np.ndarray]:
    """A linear layer's weight and bias as arrays (with ``StepUnits``, its fixed units'
    rows after the learned ones)."""
    parts = [module.linear, module] if isinstance(module, StepUnits) else [module]
    weight, bias = (
        np.concatenate([getattr(part, name).detach().cpu().numpy() for part in parts])
        for name in ("weight", "bias")
    )
    return weight, bias


def step_units(
    layout, names: Sequence[str], relative: Sequence[str], factors: np.ndarray, bounds: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """``--thermometer-fields``' units over the networks' inputs (``Learner.inputs``):
    for each entry of ``names`` as read (a relative field's other rows, the margins) and
    each integer ``k`` of ``bounds``, ``STEP_SLOPE * (x - k + 1/2)``, ``x`` the entry
    unscaled (``factors``: the inputs' scale)."""
    views = layout.views(np.arange(layout.size))
    read = [(views[name][1:] if name in relative else views[name]).reshape(-1) for name in names]
    thresholds = np.arange(bounds[0], bounds[1] + 1)
    entries = np.repeat(np.concatenate(read), len(thresholds))
    weight = np.zeros((len(entries), layout.size))
    weight[np.arange(len(entries)), entries] = STEP_SLOPE / factors[entries]
    bias = -STEP_SLOPE * (np.tile(thresholds, len(entries) // len(thresholds)) - 0.5)
    return weight, bias


def masked_log_probs(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the softmax over the legal actions (about -1e9 elsewhere)."""
    return torch.log_softmax(logits.masked_fill(~masks, -1e9), dim=-1)


def probabilities(log_probs: torch.Tensor) -> torch.Tensor:
    """``exp`` of ``masked_log_probs``, floored at -87 first: ``exp`` is several times
    slower where it underflows (the masked entries), and exp(-87) < 2e-38 counts as 0."""
    return log_probs.clamp(min=-87.0).exp()


class Learner(nn.Module):
    """The policy (logits) and the critic (action values and one state value), separate
    MLPs over the observation as ``inputs`` gives it: scaled as ``--scale`` says
    (``scale``), the ``ignore`` fields scaled by 0, and the ``relative`` fields' rows less
    the observer's. All of it is linear, so a saved policy folds it into its first layer
    and still reads the whole observation. The ``thermometer`` fields' step units
    (``step_units``, at the integers of ``thresholds``) follow each first layer's own."""

    def __init__(
        self,
        game,
        hidden: list[int],
        joint: bool = False,
        scale: str = "none",
        ignore: Sequence[str] = (),
        relative: Sequence[str] = (),
        thermometer: Sequence[str] = (),
        thresholds: tuple[int, int] = (-25, 25),
        activation: str = "tanh",
        precision: str = "float32",
    ) -> None:
        super().__init__()
        self.activation = activation
        self.dtype = getattr(torch, precision)  # what the networks' products compute in
        size, actions = game.observation_layout.size, game.num_actions
        self.joint = joint
        _, high = game.observation_layout.bounds()
        if scale == "none":
            high = np.ones_like(high)
        factors = 1.0 / np.maximum(np.abs(high), 1.0)
        for name in ignore:
            ignored = game.observation_layout.fields[name]
            factors[ignored.start : ignored.stop] = 0.0
        self.register_buffer("scale", torch.as_tensor(factors))
        self.scaled = bool((factors != 1.0).any())  # else the product would change nothing
        views = game.observation_layout.views(np.arange(size))
        others = [views[name][1:].reshape(-1) for name in relative]
        own = [np.tile(views[name][0].reshape(-1), len(views[name]) - 1) for name in relative]
        indices = {"others": others, "own": own}  # derived from the game: not saved
        for name, rows in indices.items():
            index = torch.as_tensor(np.concatenate([[], *rows]).astype(np.int64))
            self.register_buffer(name, index, persistent=False)
        layout = game.observation_layout
        steps = (
            step_units(layout, thermometer, relative, factors, thresholds) if thermometer else None
        )
        self.policy = mlp([size, *hidden, actions], activation, steps)
        self.critic = mlp([size, *hidden, actions ** (2 if joint else 1) + 1], activation, steps)

    def inputs(self, observations: torch.Tensor) -> torch.Tensor:
        """The observations as the networks read them."""
        x = observations * self.scale if self.scaled else observations
        if len(self.others):
            relative = x[:, self.others] - x[:, self.own]
            x = x.index_fill(1, self.own, 0.0).index_copy(1, self.others, relative)
        return x

    def prepare(self, observations: torch.Tensor) -> torch.Tensor:
        """``inputs`` in the dtype the networks compute in (``precision``; autocast would
        round them the same way): a batch that is read several times is prepared once."""
        return self.inputs(observations).to(self.dtype)

    def run(self, network: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """``network`` (the policy, the critic, the magnet or a snapshot) over prepared
        inputs ``x`` in the learner's ``precision``; its output in float32."""
        if self.dtype == torch.float32:
            return network(x)
        with torch.autocast(x.device.type, dtype=self.dtype):
            return network(x).float()

    def logits(self, observations: torch.Tensor) -> torch.Tensor:
        return self.logits_of(self.prepare(observations))

    def logits_of(self, x: torch.Tensor) -> torch.Tensor:
        """The policy's logits ``(n, A)`` at prepared inputs ``x``."""
        return self.run(self.policy, x)

    def values(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.values_of(self.prepare(observations))

    def values_of(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action values (``(n, A)``, or ``(n, A, A)`` own action first with the joint
        critic) and state values ``(n,)`` at prepared inputs ``x``."""
        out = self.run(self.critic, x)
        q = out[:, :-1]
        return (q.unflatten(1, (-1, int(q.shape[1] ** 0.5))) if self.joint else q), out[:, -1]

    @staticmethod
    def action_values(q: torch.Tensor, partner_probs: torch.Tensor | None) -> torch.Tensor:
        """Each own action's value ``(n, A)``: the joint critic's expected over the other
        seat's policy."""
        return q if partner_probs is None else (q @ partner_probs[:, :, None])[:, :, 0]

    def policy_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The policy's layers as arrays, ``inputs`` folded into the first: it is ``x @ F``
        with ``F`` its image of the identity, so the first layer ``W`` becomes ``W F^T``."""
        layers = [layer_arrays(m) for m in self.policy if isinstance(m, (nn.Linear, StepUnits))]
        first, bias = layers[0]
        size = first.shape[1]
        with torch.no_grad():
            folded = self.inputs(torch.eye(size, device=self.scale.device)).cpu().numpy()
        layers[0] = (first @ folded.T, bias)
        return layers


def neurd_loss(
    logits: torch.Tensor,
    masks: torch.Tensor,
    q: torch.Tensor,
    probs: torch.Tensor,
    beta: float,
) -> torch.Tensor:
    """NeuRD's loss (Hennes et al. 2020), the mean over rows of ``-sum_a legal z_a *
    force_a``: ``z`` the logits less their legal mean, ``force`` the advantages ``Q(a) -
    sum_b pi(b) Q(b)`` (no gradient through them or through ``probs``), a positive force
    dropped where ``z_a >= beta`` and a negative one where ``z_a <= -beta`` (the threshold:
    no gradient pushes a logit further out)."""
    legal = masks.float()
    q = q.masked_fill(~masks, 0.0)
    force = (q - (probs * q).sum(1, keepdim=True)).detach()
    z = logits - (logits * legal).sum(1, keepdim=True) / legal.sum(1, keepdim=True)
    force = torch.where(force > 0, force * (z < beta), force * (z > -beta))
    return -(z * force * legal).sum(1).mean()


def log_of(probs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Log-probabilities as ``masked_log_probs`` gives them: about -1e9 outside the mask,
    and never below -69 (a probability of 1e-30) inside it."""
    return np.where(masks, np.log(np.maximum(probs, 1e-30)), -1e9)


def at_rows(
    batch: dict[str, torch.Tensor], keys: Sequence[str], rows: torch.Tensor
) -> dict[str, torch.Tensor]:
    """``batch``'s ``keys`` at ``rows`` (``index_select``: the same values as ``[rows]``,
    several times faster on the CPU for wide rows)."""
    return {key: batch[key].index_select(0, rows) for key in keys}


def checkpoint_files(run: str | Path, spacing: int = 0) -> list[Path]:
    """A run's kept models (``--keep-checkpoints``), oldest first; with ``spacing``, only
    the first at or past each multiple of it (a ``--checkpoint-every`` run's models at the
    spacing of its evaluations, say)."""
    files = sorted((Path(run) / CHECKPOINTS).glob("*.npz"), key=lambda path: int(path.stem))
    if not spacing:
        return files
    multiples = [int(path.stem) // spacing for path in files]
    previous = [0, *multiples[:-1]]
    return [path for path, m, p in zip(files, multiples, previous, strict=True) if m > p]


def agent_of(learner: Learner, deterministic: bool = False) -> NetworkAgent:
    return NetworkAgent(learner.policy_layers(), learner.activation, deterministic)


def schedule(start: float, end: float | None, progress: float) -> float:
    return start if end is None else start + (end - start) * progress


@dataclass
class Rollout:
    """``T`` engine steps of ``B`` games: per-step arrays ``(T, B, N)`` and the decisions'
    rows (the learning choosers, in (step, game, seat) order)."""

    deciding: np.ndarray  # (T, B, N) bool
    rewards: np.ndarray  # (T, B, N)
    terminated: np.ndarray  # (T, B)
    values: np.ndarray  # (T, B, N): the critic's value at each decision
    last_values: np.ndarray  # (B, N): the state value of every seat's latest observation
    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    log_probs: list[np.ndarray] = field(default_factory=list)  # (n, A) the rollout's policy
    partners: list[np.ndarray] = field(default_factory=list)  # joint critic: the other seat's row
    expanded: list[np.ndarray] = field(default_factory=list)  # --backup expanded: (n, A, A)
    off_path: list[np.ndarray] = field(default_factory=list)  # --off-path: observations
    off_path_masks: list[np.ndarray] = field(default_factory=list)  # and their masks


def returns(rollout: Rollout, gamma: float, lam: float) -> np.ndarray:
    """The lambda-return of every decision, ``(T, B, N)`` (0 where no decision): a seat's
    return counts every reward it receives until its next decision, whose value and
    return bootstrap it; a game's end closes it (the next game is another trajectory)."""
    steps = rollout.rewards.shape[0]
    targets = np.zeros_like(rollout.rewards)
    since = np.zeros_like(rollout.last_values)  # rewards since the step looked at
    next_value = rollout.last_values.copy()
    next_return = rollout.last_values.copy()
    for t in reversed(range(steps)):
        ended = rollout.terminated[t]
        since[ended], next_value[ended], next_return[ended] = 0.0, 0.0, 0.0
        since += rollout.rewards[t]
        target = since + gamma * (lam * next_return + (1 - lam) * next_value)
        deciding = rollout.deciding[t]
        targets[t][deciding] = target[deciding]
        next_value[deciding] = rollout.values[t][deciding]
        next_return[deciding] = target[deciding]
        since[deciding] = 0.0
    return targets


class SelfPlay:
    """The training loop's state: the engine, the learner, the optimiser, the magnet and
    the opponent pool."""

    def __init__(self, args: Args, game, options: dict[str, Any]) -> None:
        self.args = args
        self.game = game
        self.device = torch.device(args.device)
        torch.manual_seed(args.seed)
        self.rng = np.random.default_rng(args.seed)
        self.engine = engine_class(get_spec(args.env))(
            num_envs=args.num_games, reward_mode=REWARD_MODE, seed=args.seed, **options
        )
        self.joint = joint_critic(args)
        #: ``--backup expanded``: copies of the games, one row per joint action tried.
        self.copies = None
        if args.backup == "expanded":
            self.copies = engine_class(get_spec(args.env))(
                num_envs=args.num_games * game.num_actions**2,
                reward_mode=REWARD_MODE,
                seed=args.seed,
                **options,
            )
        self.learner = Learner(
            game,
            hidden_sizes(args.hidden),
            self.joint,
            args.scale,
            field_names(game, args.ignore_fields, "--ignore-fields"),
            field_names(game, args.relative_fields, "--relative-fields", per_seat=True),
            field_names(game, args.thermometer_fields, "--thermometer-fields"),
            threshold_range(args.thermometer_range),
            args.activation,
            args.precision,
        )
        if args.init:
            linear = [m for m in self.learner.policy if isinstance(m, nn.Linear)]
            with torch.no_grad():
                for module, (weight, bias) in zip(
                    linear, initial_layers(args, get_spec(args.env), game), strict=True
                ):
                    module.weight.copy_(torch.as_tensor(weight))
                    module.bias.copy_(torch.as_tensor(bias))
        self.learner.to(self.device)
        self.magnet = copy.deepcopy(self.learner.policy).requires_grad_(False)
        self.optimizer = torch.optim.Adam(  # foreach: the same steps, 3-4% faster on CPU
            self.learner.parameters(), lr=args.learning_rate, eps=1e-5, foreach=True
        )
        self.pool: list[nn.Sequential] = []
        self.learning = np.ones((args.num_games, game.num_players), dtype=bool)
        self.members: list[Probabilities] = []  # --opponent: the mixture's agents
        self.member_weights = np.ones(1)
        self.member = np.zeros(args.num_games, dtype=np.int64)  # each game's member
        if args.opponent:
            from training.evaluation.nash_conv import probabilities_of
            from training.evaluation.tournament import make_agent

            spec = get_spec(args.env)
            mix = {
                name: w for name, w in parse_mixture(args.opponent, "--opponent").items() if w > 0
            }
            self.members = [probabilities_of(make_agent(spec, game, n), game) for n in mix]
            self.member_weights = np.array(list(mix.values())) / sum(mix.values())
        if args.opponent_pool:
            self.pool.append(copy.deepcopy(self.learner.policy))
        if args.opponent_pool or args.opponent:
            self._draw_learning_seats(np.arange(args.num_games))

    def _draw_learning_seats(self, games: np.ndarray) -> None:
        """A new deal in ``games``: its learning seat, and its member of the ``--opponent``
        mixture (in proportion to the weights)."""
        self.learning[games] = False
        self.learning[games, self.rng.integers(self.game.num_players, size=len(games))] = True
        if len(self.members) > 1:
            drawn = self.rng.choice(len(self.members), size=len(games), p=self.member_weights)
            self.member[games] = drawn

    def _mixture(self, rows: np.ndarray, observations: np.ndarray, masks: np.ndarray):
        """The ``--opponent`` mixture's probabilities at flat (game, seat) rows: each
        game's member at that game's rows, one batched call per member."""
        members = self.member[rows // self.game.num_players]
        probs = np.zeros(masks.shape)
        for m in np.unique(members):
            group = members == m
            probs[group] = self.members[m](observations[group], masks[group])
        return probs

    def _tensor(self, array: np.ndarray, dtype=torch.float32) -> torch.Tensor:
        return torch.as_tensor(array, dtype=dtype, device=self.device)

    @torch.no_grad()
    def _choose(self, policy: nn.Module, x: torch.Tensor, masks: np.ndarray):
        """Actions of ``policy`` at prepared inputs ``x`` and their log-probabilities."""
        logits = self.learner.run(policy, x)
        log_probs = masked_log_probs(logits, self._tensor(masks, torch.bool)).cpu().numpy()
        return self._sample(np.exp(log_probs), masks), log_probs

    def _sample(self, probs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row of ``probs``, always a legal one."""
        draws = self.rng.random(len(probs))[:, None]
        actions = np.minimum((probs.cumsum(axis=1) < draws).sum(axis=1), probs.shape[1] - 1)
        return np.where(masks[np.arange(len(masks)), actions], actions, masks.argmax(axis=1))

    def _solve(self, q: torch.Tensor, masks: np.ndarray, partners: np.ndarray):
        """Each decision's matrix game over the joint critic's values (own action the
        row, the other seat's the column): values ``(n,)`` and own strategies ``(n, A)``."""
        values, strategies, _ = zero_sum_batch(
            q.cpu().numpy(), masks, masks[partners], self.args.solver_iterations
        )
        return values, strategies

    def _observe(self, rows: np.ndarray) -> np.ndarray:
        """The observations of flat (game, seat) rows, ``game * N + seat``."""
        return self.engine.observe(*np.divmod(rows, self.game.num_players))

    @torch.no_grad()
    def collect(self, progress: float = 0.0) -> Rollout:
        """``--num-steps`` engine steps of every game; ``progress`` (0 to 1) sets the
        annealed ``--explore``."""
        a, engine = self.args, self.engine
        explore = schedule(a.explore, a.explore_end, progress)
        shape = (a.num_steps, a.num_games, self.game.num_players)
        rollout = Rollout(
            deciding=np.zeros(shape, dtype=bool),
            rewards=np.zeros(shape),
            terminated=np.zeros(shape[:2], dtype=bool),
            values=np.zeros(shape),
            last_values=np.zeros(shape[1:]),
        )
        opponent = self.pool[self.rng.integers(len(self.pool))] if self.pool else None
        for t in range(a.num_steps):
            choosers = engine.choosers()
            masks = engine.masks().reshape(-1, self.game.num_actions)
            actions = np.zeros(choosers.shape, dtype=np.int64)
            deciding = choosers & self.learning
            rows = np.flatnonzero(deciding)  # (game, seat) in order; only choosers observed
            flat_obs = self._observe(rows)
            flat_masks = masks[rows]
            x = self.learner.prepare(self._tensor(flat_obs))
            q, v = self.learner.values_of(x)
            partners = self._partners(deciding, rows) if self.joint else None
            if partners is not None:
                rollout.partners.append(partners + sum(map(len, rollout.actions)))
            if self.copies is not None:
                rollout.expanded.append(self._expanded(rows, flat_masks, rollout))
            if a.algorithm == "minimax":  # play the solution, back up the game's value
                values, solution = self._solve(q, flat_masks, partners)
                log_probs = log_of(solution, flat_masks)
            else:
                chosen, log_probs = self._choose(self.learner.policy, x, flat_masks)
                values = v.cpu().numpy()
            if a.algorithm == "minimax" or explore:  # the behaviour: the policy and more
                other = self._exploration(q, log_probs, partners, flat_masks)
                behaviour = (1 - explore) * np.exp(log_probs) + explore * other
                chosen = self._sample(behaviour, flat_masks)
            if a.algorithm in ACTION_VALUE:  # expected backups: the value under the policies
                probs = self._tensor(np.exp(log_probs))
                partner = None if partners is None else probs[partners]
                values = (probs * Learner.action_values(q, partner)).sum(1).cpu().numpy()
            actions.reshape(-1)[rows] = chosen
            rollout.values[t].reshape(-1)[rows] = values
            others = np.flatnonzero(choosers & ~self.learning)
            if len(others):
                observed = self._observe(others)
                if self.members:
                    mixture = self._mixture(others, observed, masks[others])
                    played = self._sample(mixture, masks[others])
                else:
                    seen = self.learner.prepare(self._tensor(observed))
                    played = self._choose(opponent, seen, masks[others])[0]
                actions.reshape(-1)[others] = played
            rewards, terminated, info = engine.step(actions)
            rollout.deciding[t] = deciding
            rollout.rewards[t] = rewards
            rollout.terminated[t] = terminated
            rollout.observations.append(flat_obs)
            rollout.masks.append(flat_masks)
            rollout.actions.append(chosen)
            rollout.log_probs.append(log_probs)
            if (self.pool or self.members) and len(info["done"]):
                self._draw_learning_seats(info["done"])
        observations = engine.observations()
        _, v = self.learner.values(self._tensor(observations.reshape(-1, observations.shape[-1])))
        rollout.last_values = v.cpu().numpy().reshape(shape[1:])
        return rollout

    def _exploration(self, q, log_probs, partners, masks: np.ndarray) -> np.ndarray:
        """What ``--explore`` mixes in at each row: uniform over the legal actions, or
        ``greedy``, one-hot on the legal action the critic values most against the other
        seat's policy (the action critic: against the policies it was learned under)."""
        if self.args.exploration == "uniform":
            return masks / masks.sum(axis=1, keepdims=True)
        probs = self._tensor(np.exp(log_probs))
        values = Learner.action_values(q, None if partners is None else probs[partners])
        best = np.where(masks, values.cpu().numpy(), -np.inf).argmax(axis=1)
        return np.eye(masks.shape[1])[best]

    @torch.no_grad()
    def _expanded(self, rows: np.ndarray, masks: np.ndarray, rollout: Rollout) -> np.ndarray:
        """``--backup expanded``: each decision's targets ``(n, A, A)``, own action first:
        every legal joint action's reward plus (``--gamma``) the critic's value of the
        position it leads to from the seat's side (none where the game ends), each played
        on a copy of the game. Two players; ``rows`` in pairs, seat 0 then seat 1. With
        ``--off-path K`` it keeps in ``rollout`` both seats' observations and masks at up
        to K of those positions per game, drawn uniformly from the ones that go on."""
        size = self.game.num_actions
        pairs = np.argwhere(masks[0::2, :, None] & masks[1::2, None, :])  # (P, 3): game, a0, a1
        copies = np.arange(len(pairs))
        self.copies.copy_games(self.engine, rows[2 * pairs[:, 0]] // 2, copies)
        rewards, terminated, _ = self.copies.step(pairs[:, 1:], copies)
        observations = self.copies.observe(np.repeat(copies, 2), np.tile([0, 1], len(pairs)))
        _, v = self.learner.values(self._tensor(observations))
        following = np.where(terminated[:, None], 0.0, v.cpu().numpy().reshape(-1, 2))
        targets = rewards + self.args.gamma * following  # (P, 2): each seat's
        expanded = np.zeros((len(rows), size, size), dtype=np.float32)
        expanded[2 * pairs[:, 0], pairs[:, 1], pairs[:, 2]] = targets[:, 0]
        expanded[2 * pairs[:, 0] + 1, pairs[:, 2], pairs[:, 1]] = targets[:, 1]
        if self.args.off_path:
            keys = np.where(terminated, np.inf, self.rng.random(len(pairs)))
            order = np.lexsort((keys, pairs[:, 0]))  # by game, then by its random key
            games = pairs[order, 0]
            rank = np.arange(len(order)) - np.searchsorted(games, games)
            kept = order[(rank < self.args.off_path) & np.isfinite(keys[order])]
            rollout.off_path.append(
                observations.reshape(len(pairs), -1)[kept].reshape(-1, observations.shape[1])
            )
            rollout.off_path_masks.append(self.copies.masks()[kept].reshape(-1, size))
        return expanded

    @staticmethod
    def _partners(deciding: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each decision row of a step, the other seat's (both seats of every game
        choose, ``check`` made sure: rows come in pairs)."""
        assert deciding.all(), "the game's every_seat_chooses is wrong"
        return np.arange(len(rows)) ^ 1

    def update(self, rollout: Rollout, progress: float) -> dict[str, float]:
        a = self.args
        targets = returns(rollout, a.gamma, a.gae_lambda)[rollout.deciding]
        values = rollout.values[rollout.deciding]
        batch = {
            "inputs": self.learner.prepare(self._tensor(np.concatenate(rollout.observations))),
            "masks": self._tensor(np.concatenate(rollout.masks), torch.bool),
            "actions": self._tensor(np.concatenate(rollout.actions), torch.int64),
            "old": self._tensor(np.concatenate(rollout.log_probs)),
            "targets": self._tensor(targets),
            "advantages": self._tensor(targets - values),
        }
        if self.joint:
            partners = self._tensor(np.concatenate(rollout.partners), torch.int64)
            own = probabilities(batch["old"])
            batch["partner_actions"] = batch["actions"][partners]
            batch["partner_probs"] = own[partners]
            batch["partners"] = partners
        if rollout.expanded:  # every legal joint action has its target
            batch["expanded"] = expanded = self._tensor(np.concatenate(rollout.expanded))
            masks = batch["masks"]
            batch["legal"] = masks[:, :, None] & masks[batch["partners"]][:, None, :]
            partner = batch["partner_probs"]
            batch["state_targets"] = torch.einsum("na,nab,nb->n", own, expanded, partner)
        entropy_coef = schedule(a.entropy_coef, a.entropy_coef_end, progress)
        magnet_coef = schedule(a.magnet_coef, a.magnet_coef_end, progress)
        kl_coef = schedule(a.kl_coef, a.kl_coef_end, progress)
        learning_rate = schedule(a.learning_rate, a.learning_rate_end, progress)
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        stats: dict[str, list[float]] = {}
        if a.algorithm == "neurd":
            self._fit_critic(batch, stats)
            with torch.no_grad():
                batch["q"] = self.learner.values_of(batch["inputs"])[0]
            needed = ["inputs", "masks", "q"]
        elif a.algorithm in ("qmmd", "minimax"):
            self._fit_critic(batch, stats)
            if a.algorithm == "qmmd":
                batch["goal"] = self._mmd_targets(batch, magnet_coef, kl_coef)
                if rollout.off_path:
                    self._add_off_path(batch, rollout, magnet_coef, kl_coef)
            else:
                batch["goal"] = self._minimax_targets(batch)
            batch["goal_probs"] = probabilities(batch["goal"])
            legal_goal = batch["goal"].masked_fill(~batch["masks"], 0.0)
            stats["entropy"] = [-(batch["goal_probs"] * legal_goal).sum(1).mean().item()]
            needed = ["inputs", "masks", "goal", "goal_probs"]
        else:
            needed = ["inputs", "masks", "actions", "old", "advantages", "targets"]
        for _ in range(a.epochs):
            for rows in self._minibatches(len(batch["inputs"])):
                mb = at_rows(batch, needed, rows)
                logits = self.learner.logits_of(mb["inputs"])
                log_probs = masked_log_probs(logits, mb["masks"])
                if a.algorithm == "neurd":
                    loss = self._neurd_loss(mb, logits, log_probs, magnet_coef, stats)
                elif a.algorithm in ("qmmd", "minimax"):
                    loss = self._distillation_loss(mb, log_probs, stats)
                else:
                    loss = self._ppo_loss(mb, log_probs, entropy_coef, magnet_coef, stats)
                self._step(loss)
        if a.magnet_update:
            with torch.no_grad():
                for magnet, current in zip(
                    self.magnet.parameters(), self.learner.policy.parameters(), strict=True
                ):
                    magnet.lerp_(current, a.magnet_update)
        stats["entropy_coef"] = [entropy_coef]
        stats["magnet_coef"] = [magnet_coef]
        stats["kl_coef"] = [kl_coef]
        stats["learning_rate"] = [learning_rate]
        return {key: float(np.mean(value)) for key, value in stats.items()}

    def _minibatches(self, n: int) -> list[torch.Tensor]:
        order = torch.as_tensor(self.rng.permutation(n), device=self.device)
        return list(order.tensor_split(self.args.minibatches))

    def _step(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.learner.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    def _magnet_log_probs(self, mb: dict[str, torch.Tensor]) -> torch.Tensor:
        with torch.no_grad():
            logits = self.learner.run(self.magnet, mb["inputs"])
            return masked_log_probs(logits, mb["masks"])

    def _ppo_loss(self, mb, log_probs, entropy_coef, magnet_coef, stats) -> torch.Tensor:
        a = self.args
        taken = log_probs.gather(1, mb["actions"][:, None])[:, 0]
        old = mb["old"].gather(1, mb["actions"][:, None])[:, 0]
        advantages = mb["advantages"]
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        ratio = (taken - old).exp()
        clipped = ratio.clamp(1 - a.clip, 1 + a.clip)
        policy_loss = -torch.min(ratio * advantages, clipped * advantages).mean()
        probs = probabilities(log_probs)
        entropy = -(probs * log_probs.clamp(min=-1e4)).sum(1).mean()
        loss = policy_loss - entropy_coef * entropy
        if a.algorithm == "mmd":
            magnet = self._magnet_log_probs(mb)
            kl = (probs * (log_probs - magnet).masked_fill(~mb["masks"], 0.0)).sum(1).mean()
            loss = loss + magnet_coef * kl
        _, v = self.learner.values_of(mb["inputs"])
        value_loss = (v - mb["targets"]).pow(2).mean()
        stats.setdefault("entropy", []).append(entropy.item())
        stats.setdefault("value_loss", []).append(value_loss.item())
        return loss + a.value_coef * value_loss

    def _fit_critic(self, batch, stats) -> None:
        for _ in range(self.args.critic_epochs or self.args.epochs):
            for rows in self._minibatches(len(batch["targets"])):
                loss = self._critic_loss(batch, rows)
                self._step(self.args.value_coef * loss)
                stats.setdefault("value_loss", []).append(loss.item())

    def _critic_loss(self, batch, rows: torch.Tensor) -> torch.Tensor:
        """The squared errors of the action values and the state value at ``rows``:
        the played action's (the joint critic: the played pair's) against its return, or
        with ``--backup expanded`` every legal joint action's against its target."""
        if "expanded" in batch:
            mb = at_rows(batch, ("inputs", "legal", "expanded", "state_targets"), rows)
            q, v = self.learner.values_of(mb["inputs"])
            gap = (q - mb["expanded"]).masked_fill(~mb["legal"], 0.0)
            return gap.pow(2).sum() / mb["legal"].sum() + (v - mb["state_targets"]).pow(2).mean()
        keys = ("inputs", "actions", "targets") + (("partner_actions",) if self.joint else ())
        mb = at_rows(batch, keys, rows)
        q, v = self.learner.values_of(mb["inputs"])
        if self.joint:
            q = q[torch.arange(len(rows), device=q.device), :, mb["partner_actions"]]
        taken = q.gather(1, mb["actions"][:, None])[:, 0]
        return (taken - mb["targets"]).pow(2).mean() + (v - mb["targets"]).pow(2).mean()

    @torch.no_grad()
    def _mmd_targets(self, batch, magnet_coef: float, kl_coef: float) -> torch.Tensor:
        """MMD's step at every decision: log pi_new ∝ (log pi_old / eta + alpha log magnet
        + Q) / (1/eta + alpha), over the legal actions, ``1/eta = kl_coef``. With the
        joint critic and ``--inner-steps K``, both seats of a game take K such steps
        together on the critic's matrix (each against the other's latest iterate), from
        the rollout's policies: iterations toward the reveal's regularised equilibrium,
        which converge only where eta is small beside alpha (docs/selfplay.md).
        ``--inner-method extragradient`` steps from each iterate against the other seat's
        look-ahead step instead (Cen et al. 2021's extragradient for entropy-regularised
        matrix games), which converges to that equilibrium for eta up to about 1/2."""
        a = self.args
        q, _ = self.learner.values_of(batch["inputs"])
        magnet = self._magnet_log_probs(batch).clamp(min=-1e4)

        def step(goal: torch.Tensor, partner: torch.Tensor | None) -> torch.Tensor:
            values = Learner.action_values(q, partner)
            logits = (kl_coef * goal + magnet_coef * magnet + values) / (kl_coef + magnet_coef)
            return masked_log_probs(logits, batch["masks"])

        goal = batch["old"].clamp(min=-1e4)
        if not self.joint:
            return step(goal, None)
        partners = batch["partners"]
        for _ in range(a.inner_steps):  # against the other seat's iterate, or its look-ahead
            ahead = goal
            if a.inner_method == "extragradient":
                ahead = step(goal, probabilities(goal)[partners])
            goal = step(goal, probabilities(ahead)[partners])
        return goal

    @torch.no_grad()
    def _add_off_path(self, batch, rollout: Rollout, magnet_coef: float, kl_coef: float) -> None:
        """``--off-path``: MMD's step at the positions off the played path, from the
        current policy there, appended to the rows the policy is fitted to."""
        x = self.learner.prepare(self._tensor(np.concatenate(rollout.off_path)))
        masks = self._tensor(np.concatenate(rollout.off_path_masks), torch.bool)
        off = {
            "inputs": x,
            "masks": masks,
            "old": masked_log_probs(self.learner.logits_of(x), masks),
            "partners": torch.arange(len(masks), device=self.device) ^ 1,
        }
        goal = self._mmd_targets(off, magnet_coef, kl_coef)
        batch["inputs"] = torch.cat([batch["inputs"], x])
        batch["masks"] = torch.cat([batch["masks"], masks])
        batch["goal"] = torch.cat([batch["goal"], goal])

    @torch.no_grad()
    def _minimax_targets(self, batch) -> torch.Tensor:
        """Each decision's solution of its matrix game under the critic just fitted."""
        q, _ = self.learner.values_of(batch["inputs"])
        masks = batch["masks"].cpu().numpy()
        _, solution = self._solve(q, masks, batch["partners"].cpu().numpy())
        return self._tensor(log_of(solution, masks))

    def _neurd_loss(self, mb, logits, log_probs, magnet_coef: float, stats) -> torch.Tensor:
        """NeuRD's loss at the minibatch's decisions: each legal logit moves along its
        action's advantage under the current policy, the action values regularised
        toward the magnet (``alpha``: ``Q(a) - alpha * log(pi(a) / magnet(a))``)."""
        current = log_probs.detach().clamp(min=-1e4)
        q = mb["q"]
        if magnet_coef:
            q = q - magnet_coef * (current - self._magnet_log_probs(mb).clamp(min=-1e4))
        probs = probabilities(current)
        loss = neurd_loss(logits, mb["masks"], q, probs, self.args.logit_threshold)
        entropy = -(probs * current).masked_fill(~mb["masks"], 0.0).sum(1).mean()
        stats.setdefault("entropy", []).append(entropy.item())
        stats.setdefault("policy_loss", []).append(loss.item())
        return loss

    def _distillation_loss(self, mb, log_probs, stats) -> torch.Tensor:
        """KL(goal || policy) over the legal actions."""
        gap = (mb["goal"] - log_probs).masked_fill(~mb["masks"], 0.0)
        kl = (mb["goal_probs"] * gap).sum(1).mean()
        stats.setdefault("policy_kl", []).append(kl.item())
        return kl

    def snapshot(self) -> None:
        self.pool.append(copy.deepcopy(self.learner.policy).requires_grad_(False))
        del self.pool[: -self.args.opponent_pool]

    def state_dict(self) -> dict[str, Any]:
        """Everything the rest of the run depends on, as tensors and plain data (``--resume``:
        loaded with ``torch.load(weights_only=True)``, which runs no code)."""
        engines = {"engine": self.engine} | ({"copies": self.copies} if self.copies else {})
        return {
            "learner": self.learner.state_dict(),
            "magnet": self.magnet.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "pool": [member.state_dict() for member in self.pool],
            "engines": {
                name: {
                    key: torch.from_numpy(value) if isinstance(value, np.ndarray) else value
                    for key, value in engine.state_dict().items()
                }
                for name, engine in engines.items()
            },
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "learning": torch.from_numpy(self.learning.copy()),
            "member": torch.from_numpy(self.member.copy()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state["learner"])
        self.magnet.load_state_dict(state["magnet"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.pool = []
        for weights in state["pool"]:
            self.pool.append(copy.deepcopy(self.learner.policy).requires_grad_(False))
            self.pool[-1].load_state_dict(weights)
        for name, saved in state["engines"].items():
            getattr(self, name).load_state_dict(
                {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in saved.items()}
            )
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        self.learning[...] = state["learning"].numpy()
        self.member[...] = state["member"].numpy()


def evaluate(spec, game, agent: NetworkAgent, args: Args) -> dict[str, float]:
    """The periodic evaluation: exact NashConv (two-player Pico, public hands) and win
    rates against random, the heuristic and pimc, seat-rotated, the evaluation seed."""
    from training.evaluation.tournament import head_to_head, make_agent

    row: dict[str, float] = {}
    if args.eval_deals and exact_nash_conv_applies(spec, game):
        from training.evaluation.nash_conv import nash_conv
        from training.evaluation.tournament import mean_interval
        from training.solvers.pico import sample_deals

        values = nash_conv(game, agent, sample_deals(args.eval_deals, EVAL_SEED))
        row["nash_conv"], row["nash_conv_ci"] = mean_interval(values)
    for name, games in (
        ("random", args.eval_games),
        ("heuristic", args.eval_games),
        ("pimc", args.eval_pimc_games),
    ):
        if games:
            result = head_to_head(game, agent, make_agent(spec, game, name), games, EVAL_SEED)
            row[f"win_{name}"], row[f"win_{name}_ci"] = result["win_rate"], result["win_ci"]
    return row


def exact_nash_conv_applies(spec, game) -> bool:
    return spec.name == "pico" and game.num_players == 2 and game.config.aside == "face_up"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in ("nash_conv", "win_random", "win_heuristic", "win_pimc") if k in rows[0]]
    if not keys:
        return
    figure, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.2), squeeze=False)
    x = [row["decisions"] for row in rows]
    for axis, key in zip(axes[0], keys, strict=True):
        y = np.array([row[key] for row in rows])
        ci = np.array([row[f"{key}_ci"] for row in rows])
        axis.plot(x, y, marker="o")
        axis.fill_between(x, y - ci, y + ci, alpha=0.2)
        axis.set_title(key.replace("_", " "))
        axis.set_xlabel("decisions")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def train(args: Args) -> Path:
    """Run self-play as ``args`` say (checked first); return the run folder."""
    return run_training(args, *check(args))


def run_training(args: Args, spec, options: dict[str, Any], game) -> Path:
    """Self-play with arguments ``check`` has passed."""
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    run = SelfPlay(args, game, options)
    rows: list[dict] = []
    decisions, next_eval, next_snapshot = 0, args.eval_every, args.snapshot_every
    seconds = cpu_seconds = 0.0
    if args.resume:
        command = json.loads((out / "config.json").read_text())["command"]
        saved = torch.load(out / RESUME_FILE, weights_only=True)
        run.load_state_dict(saved["run"])
        rows = json.loads(saved["rows"])
        decisions, next_eval, next_snapshot = saved["schedule"]
        seconds, cpu_seconds = saved["seconds"], saved["cpu_seconds"]
    else:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        command = cli.command_line("training.selfplay", args)
        (out / "config.json").write_text(
            json.dumps({**dataclasses.asdict(args), "command": command}, indent=2)
        )
    from torch.utils.tensorboard import SummaryWriter

    # a resumed run's scalars from after its last evaluation are written again: purge them
    writer = SummaryWriter(str(out / "tb"), purge_step=decisions if args.resume else None)
    metadata = policy_metadata(
        spec.aec_id, game, options, reward_mode=REWARD_MODE, play="sample", command=command
    )
    started, cpu_started = time.perf_counter() - seconds, time.process_time() - cpu_seconds
    progress = None
    if args.progress_bar:
        from tqdm import tqdm

        progress = tqdm(
            total=args.decisions, initial=decisions, unit="dec", unit_scale=True, file=sys.stderr
        )

    def save(layers, path: Path) -> None:
        save_network(layers, args.activation, path, metadata | {"decisions": decisions})

    def checkpoint() -> None:
        """Save the model and evaluate it."""
        layers = run.learner.policy_layers()
        save(layers, out / "model.npz")
        if args.keep_checkpoints:
            save(layers, out / CHECKPOINTS / f"{decisions}.npz")
        row = {"decisions": decisions, "seconds": round(time.perf_counter() - started, 1)}
        row |= evaluate(spec, game, NetworkAgent(layers, args.activation, False), args)
        rows.append(row)
        for key, value in row.items():
            writer.add_scalar(f"eval/{key}", value, decisions)
        with (out / "evaluations.csv").open("w", newline="") as file:
            table = csv.DictWriter(file, fieldnames=list(row))
            table.writeheader()
            table.writerows(rows)
        plot(rows, out / "curve.png")

    def save_resume() -> None:
        """What ``--resume`` continues from, replaced whole (a stop while saving keeps the
        last one)."""
        state = {
            "run": run.state_dict(),
            "rows": json.dumps(rows, default=lambda value: value.item()),
            "schedule": [decisions, next_eval, next_snapshot],
            "seconds": time.perf_counter() - started,  # what the run has cost so far
            "cpu_seconds": time.process_time() - cpu_started,
        }
        torch.save(state, out / f"{RESUME_FILE}.partial")
        (out / f"{RESUME_FILE}.partial").replace(out / RESUME_FILE)

    while decisions < args.decisions:
        rollout = run.collect(min(decisions / args.decisions, 1.0))
        before, decisions = decisions, decisions + int(rollout.deciding.sum())
        stats = run.update(rollout, min(decisions / args.decisions, 1.0))
        for key, value in stats.items():
            writer.add_scalar(f"train/{key}", value, decisions)
        rate = decisions / (time.perf_counter() - started)
        writer.add_scalar("train/decisions_per_second", rate, decisions)
        if progress is not None:
            progress.update(min(decisions, args.decisions) - progress.n)
        every = args.checkpoint_every  # keep at the first rollout past each multiple
        if every and before // every < decisions // every and decisions < args.decisions:
            save(run.learner.policy_layers(), out / CHECKPOINTS / f"{decisions}.npz")
        if args.opponent_pool and decisions >= next_snapshot:
            run.snapshot()
            next_snapshot += args.snapshot_every
        if args.eval_every and decisions >= next_eval and decisions < args.decisions:
            checkpoint()
            next_eval += args.eval_every
            save_resume()
    if progress is not None:
        progress.close()
    checkpoint()
    (out / RESUME_FILE).unlink(missing_ok=True)
    writer.close()
    print(json.dumps(rows[-1]))
    return out


def main(argv: list[str] | None = None) -> Path:
    parser = cli.dataclass_parser("training.selfplay", __doc__, Args)
    args = Args(**vars(parser.parse_args(argv)))
    try:
        if args.resume:
            args = resumed_args(args, cli.given_fields(parser, argv))
        checked = check(args)
    except ValueError as error:
        parser.error(str(error))
    return run_training(args, *checked)


if __name__ == "__main__":
    main()
