"""Is the magnet's fixed point what stops the recipe? A measurement whose figures
docs/selfplay.md quotes.

    python scripts/measure/regularized_equilibrium.py --alpha 0.1 0.05 0.02 --deals 2

MMD with a uniform magnet of weight ``alpha`` (``training.selfplay``'s ``qmmd``) has a
fixed point where every decision's policy is ``softmax(Q / alpha)`` over the values of
play under those same policies: the logit agent quantal-response equilibrium at
temperature ``alpha``, not the Nash equilibrium. This computes that fixed point exactly
in two-player Pico, by the exact solver's backward induction with each reveal's matrix
game solved with entropy regularisation (``regularized``), and prints its exact NashConv
on the first ``--deals`` of the learner's 20 evaluation deals: how exploitable a learner
would be that reached its own target perfectly.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from envs.core.spec import get_spec
from training.agents.nash import PicoNash
from training.evaluation.nash_conv import nash_conv
from training.evaluation.panel import EVAL_SEED
from training.solvers.pico import PicoSolver, sample_deals


def regularized(matrix: np.ndarray, alpha: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The saddle point of ``x' M y + alpha H(x) - alpha H(y)`` (rows maximise, columns
    minimise; ``H`` the entropy): its value without the entropy terms, ``x' M y``, and
    ``x``, ``y``. Each side is the logit response of the other, ``x = softmax(M y /
    alpha)``; ``y`` minimises the convex ``alpha logsumexp(M y / alpha) - alpha H(y)``."""
    matrix = np.asarray(matrix, dtype=float)

    def objective(logits: np.ndarray) -> tuple[float, np.ndarray]:
        y = softmax(logits)
        scaled = matrix @ y / alpha
        x = softmax(scaled)
        log_y = np.log(np.maximum(y, 1e-300))
        gradient = matrix.T @ x + alpha * (log_y + 1)  # in y; then through the softmax
        value = alpha * (logsumexp(scaled) + y @ log_y)
        return value, y * (gradient - y @ gradient)

    found = minimize(
        objective,
        np.zeros(matrix.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-10, "maxiter": 500},
    )
    y = softmax(found.x)
    x = softmax(matrix @ y / alpha)
    return float(x @ matrix @ y), x, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, nargs="+", required=True)
    parser.add_argument("--deals", type=int, default=2, help="the first K evaluation deals")
    args = parser.parse_args()
    if not 1 <= args.deals <= 20 or min(args.alpha) <= 0:
        parser.error("--deals must be 1 to 20 and every --alpha positive")
    game = get_spec("hiddenhand/pico-v0").make_game()
    deals = sample_deals(20, EVAL_SEED)[: args.deals]
    for alpha in args.alpha:
        agent = PicoNash(game)
        agent.solver = PicoSolver("win", game.points, lambda m, a=alpha: regularized(m, a))
        started = time.perf_counter()
        values = nash_conv(game, agent, deals)
        print(
            f"alpha {alpha}: NashConv {values.mean():.3f} (per deal {np.round(values, 3)}), "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
