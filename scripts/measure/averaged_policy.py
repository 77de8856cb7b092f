"""Does averaging a run's last policies bring two-player Pico closer to equilibrium?
A measurement whose figures docs/selfplay.md quotes.

    python -m training.selfplay --critic joint --inner-steps 10 --magnet-coef 0.1 \\
        --magnet-coef-end 0.02 --gae-lambda 0 --decisions 10000000 --eval-every 500000 \\
        --keep-checkpoints --out runs/pico-checkpoints
    python scripts/measure/averaged_policy.py runs/pico-checkpoints --last 1 2 4 8
    python scripts/measure/averaged_policy.py training/baselines/pico_2p.npz --last 4 \\
        --combine mean geometric --temperature 0.8 1 1.2

Self-play's last iterates can circle an equilibrium rather than settle on it (the
learner's curves rise and fall by a few hundredths at the end); fictitious play and CFR
average their iterates for that reason. This prints the exact NashConv, on the 20 deals
of the learner's periodic evaluation, of the average of the last ``k`` checkpoints'
policies at every observation (each ``--last`` k; ``k = 1`` is the last policy itself).
The average of behaviour policies at each observation is not quite the average
strategy (which weights each policy by how often it reaches the observation), but it is
one network's-worth of memory and what a user can play.

``RUN`` is a run folder of ``--keep-checkpoints`` (with ``--spacing N``, only its first
checkpoint at or past each multiple of ``N`` decisions) or a saved average of networks
(its members in order, as ``average_checkpoints.py`` writes them). ``--combine geometric``
averages the log-probabilities instead (renormalised over the legal actions), and
``--temperature T`` plays the combined policy's log-probabilities divided by ``T``
(``T < 1`` sharper, ``T > 1`` flatter): each combination of the three is measured.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from envs.core.spec import get_spec
from training.agents.network import NetworkAgent, load_network_agent
from training.evaluation.nash_conv import nash_conv
from training.evaluation.panel import EVAL_SEED
from training.evaluation.tournament import mean_interval
from training.selfplay import checkpoint_files
from training.solvers.pico import sample_deals

COMBINATIONS = ("mean", "geometric")


class CombinedPolicy:
    """Networks' policies combined at every observation (``combine``: the mean of their
    probabilities or of their log-probabilities), then tempered by ``temperature``."""

    def __init__(self, members: list[NetworkAgent], combine: str, temperature: float) -> None:
        self.members, self.combine, self.temperature = members, combine, temperature
        self.read_columns = np.unique(np.concatenate([m.read_columns for m in members]))

    def action_probabilities_batch(self, observations: np.ndarray, masks: np.ndarray):
        legal = masks.astype(bool)
        policies = [m.action_probabilities_batch(observations, masks) for m in self.members]
        with np.errstate(divide="ignore"):
            if self.combine == "mean":
                log_probs = np.log(np.mean(policies, axis=0))
            else:
                log_probs = np.mean([np.log(p) for p in policies], axis=0)
        scaled = np.where(legal, log_probs / self.temperature, -np.inf)
        weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)


def members_of(run: Path, game, env_id: str, spacing: int) -> tuple[list[NetworkAgent], list[str]]:
    """The networks to average, oldest first, and a name for each."""
    if run.is_dir():
        files = checkpoint_files(run, spacing)
        return [load_network_agent(path, game, env_id) for path in files], [
            f"{path.stem} decisions" for path in files
        ]
    agent = load_network_agent(run, game, env_id)
    members = getattr(agent, "members", [agent])
    return members, [f"member {i}" for i in range(len(members))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a --keep-checkpoints run folder or an average")
    parser.add_argument("--last", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--spacing", type=int, default=0, help="see above (a run folder)")
    parser.add_argument("--combine", nargs="+", choices=COMBINATIONS, default=["mean"])
    parser.add_argument("--temperature", type=float, nargs="+", default=[1.0])
    args = parser.parse_args()
    if min(args.last) < 1 or min(args.temperature) <= 0 or args.spacing < 0:
        parser.error("--last takes positive counts, --temperature positive values, --spacing 0+")
    spec = get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agents, names = members_of(args.run, game, spec.aec_id, args.spacing)
    deals = sample_deals(args.deals, EVAL_SEED)
    for k, combine, temperature in itertools.product(args.last, args.combine, args.temperature):
        chosen = agents[-k:]
        policy = CombinedPolicy(chosen, combine, temperature)
        mean, ci = mean_interval(nash_conv(game, policy, deals))
        print(
            f"last {len(chosen)} of {len(agents)} ({names[-len(chosen)]} to {names[-1]}), "
            f"{combine}, temperature {temperature:g}: NashConv {mean:.3f} ± {ci:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
