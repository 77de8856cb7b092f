"""What asking a network once per distinct input saves the exact NashConv, in one run:
the figure docs/ground_truth.md quotes.

    python scripts/measure/distinct_inputs.py --agent training/baselines/pico_2p.npz --deals 3

``training.evaluation.nash_conv.probabilities_of`` asks an agent that names the columns
it reads (``read_columns``: a network) once per distinct input. For ``--deals`` deals of
the evaluation seed it computes the agent's NashConv that way and again asking at every
observation of the tree, and prints the rows asked, the CPU seconds and the ratios of
both, with the largest difference between the two NashConv figures (float32 rows in
other batches: not bitwise the same).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import envs
from training.evaluation.nash_conv import nash_conv, probabilities_of
from training.evaluation.tournament import make_agent
from training.solvers.pico import sample_deals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="training/baselines/pico_2p.npz")
    parser.add_argument("--deals", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1000003, help="the evaluation seed")
    args = parser.parse_args()
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agent = make_agent(spec, game, args.agent)
    deals = sample_deals(args.deals, args.seed)
    rows: dict[str, int] = {}
    seconds: dict[str, float] = {}
    figures: dict[str, np.ndarray] = {}
    ask = agent.action_probabilities_batch
    columns = agent.read_columns
    for way in ("every observation", "distinct inputs"):
        rows[way] = 0

        def counted(observations, masks, way=way):
            rows[way] += len(observations)
            return ask(observations, masks)

        agent.action_probabilities_batch = counted
        agent.read_columns = columns if way == "distinct inputs" else None
        started = time.process_time()
        figures[way] = nash_conv(game, probabilities_of(agent), deals)
        seconds[way] = time.process_time() - started
        print(f"{way}: {rows[way]:,} rows asked, {seconds[way]:.1f} CPU s")
    every, distinct = "every observation", "distinct inputs"
    print(
        f"{args.deals} deals: {rows[every] / rows[distinct]:.2f}x fewer rows, "
        f"{seconds[every] / seconds[distinct]:.2f}x less CPU time; NashConv "
        f"{figures[distinct].mean():.6f}, largest difference per deal "
        f"{np.abs(figures[every] - figures[distinct]).max():.1e}"
    )


if __name__ == "__main__":
    main()
