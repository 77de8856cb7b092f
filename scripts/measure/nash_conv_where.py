"""Where in two-player Pico is a policy exploitable? A measurement whose figures
docs/selfplay.md quotes.

    python scripts/measure/nash_conv_where.py docs/selfplay/pico/14-qmmd-joint-inner10-raw-20m

Prints the exact NashConv, on the 20 deals of the learner's periodic evaluation, of
hybrids: the agent plays only in one part of the game (a round, or a round's positions
with so many cards left in both hands together) and the exact equilibrium (``nash``)
plays everywhere else. A part where the hybrid is far from 0 is one where a best
response finds the agent's mistakes; the parts do not add up to the whole, because
mistakes in one part change what the others are worth.
"""

from __future__ import annotations

import argparse

import numpy as np

from envs.core.spec import get_spec
from training.evaluation.nash_conv import nash_conv, probabilities_of
from training.evaluation.panel import EVAL_SEED
from training.evaluation.tournament import mean_interval
from training.solvers.pico import sample_deals

#: The parts measured: (round, fewest and most cards in both hands together).
PARTS = [(r, 2, 10) for r in (0, 1)] + [
    (r, low, high) for r in (0, 1) for low, high in ((2, 4), (5, 6), (7, 8), (9, 10))
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", help="an agent name or model path two-player Pico loads")
    parser.add_argument("--deals", type=int, default=20)
    args = parser.parse_args()
    spec = get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agent = probabilities_of(spec.make_agent(args.agent, game), game)
    nash = probabilities_of(spec.make_agent("nash", game), game)
    fields = game.observation_layout.fields
    rounds, hands = fields["round"], fields["hand"]
    deals = sample_deals(args.deals, EVAL_SEED)

    def hybrid(round_: int, low: int, high: int):
        def probabilities(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            played = nash(observations, masks)
            cards = observations[:, hands.start : hands.stop].sum(axis=1)
            rows = (observations[:, rounds.start + round_] == 1) & (cards >= low)
            rows &= cards <= high
            if rows.any():
                played[rows] = agent(observations[rows], masks[rows])
            return played

        return probabilities

    mean, ci = mean_interval(nash_conv(game, agent, deals))
    print(f"the agent everywhere: {mean:.3f} ± {ci:.3f} ({args.deals} deals)", flush=True)
    for round_, low, high in PARTS:
        mean, ci = mean_interval(nash_conv(game, hybrid(round_, low, high), deals))
        part = f"round {round_ + 1}, {low}-{high} cards in both hands"
        print(f"the agent only in {part}: {mean:.3f} ± {ci:.3f}", flush=True)


if __name__ == "__main__":
    main()
