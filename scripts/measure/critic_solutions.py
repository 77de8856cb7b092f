"""Is the joint critic a better policy than the policy network? Two diagnostics on
two-player Pico whose figures docs/selfplay.md quotes.

    python scripts/measure/critic_solutions.py train --decisions 6000000 --every 1000000 \\
        --out runs/critic -- --critic joint --inner-steps 10 --magnet-coef 0.1 \\
        --magnet-coef-end 0.02 --gae-lambda 0
    python scripts/measure/critic_solutions.py train --decisions 5000000 --every 1000000 \\
        --out runs/critic -- --algorithm minimax --gae-lambda 0
    python scripts/measure/critic_solutions.py qre runs/critic/qmmd_1015808.pt 0.3 0.1 0.03

``train`` runs ``training.selfplay`` (the arguments after ``--``; the joint critic) and
every ``--every`` decisions prints the exact NashConv, on the 20 deals of the learner's
periodic evaluation (``--deals``), of the policy network and of the critic's own solution: at each
decision the zero-sum matrix game ``Q(observation, own card, other's card)`` over both
seats' legal cards solved exactly (``training.solvers.pico.matrix_game``; the other
seat's legal cards are its hand, which two-player Pico shows). It saves the learner's
weights as ``OUT/ALGORITHM_DECISIONS.pt``.

``qre`` loads such weights and prints, on 5 of those deals, the NashConv of the policy
network and of the critic's regularised solution at each temperature ``tau``: 100
steps of magnetic mirror descent for both seats together on the matrix (the uniform
magnet, weight ``tau``), the solution ``--inner-steps`` approximates in training.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from envs.core.spec import get_spec
from training import selfplay
from training.evaluation.nash_conv import nash_conv
from training.evaluation.panel import EVAL_SEED
from training.solvers.pico import matrix_game, sample_deals


def other_hands(game) -> np.ndarray:
    """The observation's indices of the other seat's hand (its legal cards)."""
    return np.asarray(
        game.observation_layout.views(np.arange(game.observation_layout.size))["hand"][1]
    )


def exact_solution(learner, game):
    other = other_hands(game)

    def probabilities(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q, _ = learner.values(torch.as_tensor(observations, dtype=torch.float32))
        q = q.numpy().astype(np.float64)
        out = np.zeros(masks.shape)
        for i, row in enumerate(q):
            own, theirs = np.flatnonzero(masks[i]), np.flatnonzero(observations[i, other] > 0)
            out[i, own] = matrix_game(row[np.ix_(own, theirs)])[1]
        return out

    return probabilities


def regularised_solution(learner, game, tau: float, iterations: int = 100):
    other = torch.as_tensor(other_hands(game))

    def probabilities(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            seen = torch.as_tensor(observations, dtype=torch.float32)
            q = learner.values(seen)[0].double()
            own, theirs = torch.as_tensor(masks, dtype=torch.bool), seen[:, other] > 0
            x = (own / own.sum(1, keepdim=True)).double()
            y = (theirs / theirs.sum(1, keepdim=True)).double()
            for _ in range(iterations):  # MMD, 1/eta = 1, alpha = tau, uniform magnet
                gain_x = (q @ y[:, :, None])[:, :, 0]
                gain_y = -(x[:, None, :] @ q)[:, 0, :]
                x_logits = (torch.log(x.clamp(min=1e-30)) + gain_x / tau) / 2
                y_logits = (torch.log(y.clamp(min=1e-30)) + gain_y / tau) / 2
                x = torch.softmax(x_logits.masked_fill(~own, -1e9), 1)
                y = torch.softmax(y_logits.masked_fill(~theirs, -1e9), 1)
            return x.numpy()

    return probabilities


def train(args: argparse.Namespace) -> None:
    parser = selfplay.cli.dataclass_parser("training.selfplay", "", selfplay.Args)
    learner_args = selfplay.Args(
        **vars(parser.parse_args([*args.selfplay, "--out", args.out, "--overwrite"]))
    )
    learner_args.decisions = args.decisions
    _, options, game = selfplay.check(learner_args)
    run = selfplay.SelfPlay(learner_args, game, options)
    deals = sample_deals(args.deals, EVAL_SEED)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    decisions, next_evaluation, started = 0, args.every, time.time()
    while decisions < args.decisions:
        rollout = run.collect(min(decisions / args.decisions, 1.0))
        decisions += int(rollout.deciding.sum())
        run.update(rollout, min(decisions / args.decisions, 1.0))
        if decisions >= next_evaluation:
            next_evaluation += args.every
            policy = nash_conv(game, selfplay.agent_of(run.learner), deals).mean()
            critic = nash_conv(game, exact_solution(run.learner, game), deals).mean()
            row = {
                "decisions": decisions,
                "policy": round(policy, 3),
                "critic_solution": round(critic, 3),
            }
            print(json.dumps(row | {"seconds": round(time.time() - started)}), flush=True)
            torch.save(
                run.learner.state_dict(),
                Path(args.out) / f"{learner_args.algorithm}_{decisions}.pt",
            )


def qre(args: argparse.Namespace) -> None:
    game = get_spec("hiddenhand/pico-v0").make_game()
    learner = selfplay.Learner(game, selfplay.hidden_sizes(args.hidden), joint=True)
    learner.load_state_dict(torch.load(args.weights))
    deals = sample_deals(5, EVAL_SEED)
    print("policy", round(nash_conv(game, selfplay.agent_of(learner), deals).mean(), 3), flush=True)
    for tau in args.tau:
        value = nash_conv(game, regularised_solution(learner, game, tau), deals).mean()
        print("regularised solution, tau", tau, round(value, 3), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    trainer = commands.add_parser("train")
    trainer.add_argument("--decisions", type=float, required=True)
    trainer.add_argument("--every", type=float, default=1e6)
    trainer.add_argument("--out", required=True)
    trainer.add_argument("--deals", type=int, default=20, help="of the periodic evaluation's")
    trainer.add_argument(
        "selfplay", nargs=argparse.REMAINDER, help="after --: the learner's arguments"
    )
    solver = commands.add_parser("qre")
    solver.add_argument("weights")
    solver.add_argument("tau", type=float, nargs="+")
    solver.add_argument("--hidden", default="128,128")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.command == "train":
        args.decisions, args.every = int(args.decisions), int(args.every)
        args.selfplay = [a for a in args.selfplay if a != "--"]
        train(args)
    else:
        qre(args)


if __name__ == "__main__":
    main()
