"""Does averaging a run's last policies bring two-player Pico closer to equilibrium?
A measurement whose figures docs/selfplay.md quotes.

    python -m training.selfplay --critic joint --inner-steps 10 --magnet-coef 0.1 \\
        --magnet-coef-end 0.02 --gae-lambda 0 --decisions 10000000 --eval-every 500000 \\
        --keep-checkpoints --out runs/pico-checkpoints
    python scripts/measure/averaged_policy.py runs/pico-checkpoints --last 1 2 4 8

Self-play's last iterates can circle an equilibrium rather than settle on it (the
learner's curves rise and fall by a few hundredths at the end); fictitious play and CFR
average their iterates for that reason. This prints the exact NashConv, on the 20 deals
of the learner's periodic evaluation, of the average of the last ``k`` checkpoints'
policies at every observation (each ``--last`` k; ``k = 1`` is the last policy itself).
The average of behaviour policies at each observation is not quite the average
strategy (which weights each policy by how often it reaches the observation), but it is
one network's-worth of memory and what a user can play.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from envs.core.spec import get_spec
from training.agents.network import AveragedNetworkAgent, load_network_agent
from training.evaluation.nash_conv import nash_conv
from training.evaluation.panel import EVAL_SEED
from training.evaluation.tournament import mean_interval
from training.solvers.pico import sample_deals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run folder of training.selfplay --keep-checkpoints")
    parser.add_argument("--last", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--deals", type=int, default=20)
    args = parser.parse_args()
    spec = get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    files = sorted((Path(args.run) / "checkpoints").glob("*.npz"), key=lambda p: int(p.stem))
    agents = [load_network_agent(path, game, spec.aec_id) for path in files]
    deals = sample_deals(args.deals, EVAL_SEED)
    for k in args.last:
        chosen = agents[-k:]
        averaged = AveragedNetworkAgent(chosen, deterministic=False)
        mean, ci = mean_interval(nash_conv(game, averaged, deals))
        print(
            f"last {len(chosen)} of {len(agents)} checkpoints ({files[-len(chosen)].stem} to "
            f"{files[-1].stem} decisions): NashConv {mean:.3f} ± {ci:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
