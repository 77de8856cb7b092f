"""Can the learner's network hold two-player Pico's equilibrium? Two diagnostics, whose
figures docs/selfplay.md quotes.

    python scripts/measure/pico_distill.py --hidden 128,128 --games-per-deal 100 --epochs 100
    python scripts/measure/pico_distill.py --noise 0 0.02 0.05 0.1 0.2
    python scripts/measure/pico_distill.py --states tree --deals 2 --epochs 40
    python scripts/measure/pico_distill.py --states tree --deals 2 --epochs 40 \
        --relative-fields scores --thermometer-fields scores
    python scripts/measure/pico_distill.py --deals 2 --agents RUN RUN/average

``--states tree``: the states are every state of those deals' trees (what the exact
NashConv asks about), so the fit is judged on exactly what it was fitted to: whether the
network can hold the equilibrium at all. ``--deals K`` keeps the first K of the 20 deals
(a whole tree is about 459,000 states). ``--ignore-fields``, ``--relative-fields``,
``--thermometer-fields``, ``--thermometer-range`` and ``--activation`` build the network as
the learner's options of those names do; the states are those distinct in what it reads
(``--ignore-fields last_played,last_winners``, the recipe's: each position once, not after
every reveal that leads to it).

Distillation (the default): from each of the 20 deals of the learner's periodic
evaluation (``training.selfplay``: ``sample_deals(20, EVAL_SEED)``), ``--games-per-deal``
games of uniform random play give the states; the ``nash`` agent labels each with its
equilibrium strategy; the learner's policy network (``--hidden``, ``--scale``) is fitted
to them by cross-entropy (Adam, ``--learning-rate`` 1e-3, optionally annealed linearly to
``--learning-rate-end``; minibatches of 1,024), and its exact NashConv on
those 20 deals is printed every ``--epochs``/5 epochs. A network that cannot get close
from exact labels on the very deals it is judged on shows that representing the
equilibrium, not finding it, is what is hard.

``--agents PATH...``: the exact NashConv of saved agents on the same deals, per deal and
their mean, for a fit to be set against a learner.

``--noise E...``: the exact NashConv of the equilibrium mixed with the uniform policy
over the legal actions, ``(1 - E) nash + E uniform``, on the same deals: how precise a
policy must be for a given NashConv.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from envs.core.batched import engine_class, random_actions
from envs.core.spec import get_spec
from training.agents.nash import PicoNash
from training.evaluation.nash_conv import nash_conv, probabilities_of
from training.evaluation.panel import EVAL_SEED
from training.evaluation.tournament import make_agent
from training.selfplay import (
    ACTIVATIONS,
    SCALES,
    Learner,
    agent_of,
    field_names,
    hidden_sizes,
    masked_log_probs,
    threshold_range,
)
from training.solvers.pico import Position, observations, sample_deals, state_from_observation


def states_of_random_play(game, deals, games_per_deal: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct states (observations, masks) of random games from ``deals``."""
    starts = []
    for deal in deals:
        position = Position.deal(*deal)
        seen = observations(
            game,
            0,
            np.array([position.hands]),
            np.array([position.won]),
            np.array([[-1, -1]]),
            np.array([position.scores]),
        )[0]
        starts += [state_from_observation(game, seen)] * games_per_deal
    engine = engine_class(get_spec("hiddenhand/pico-v0"))(len(starts), seed=0)
    engine.load(starts)
    rng = np.random.default_rng(0)
    seen, masks = [], []
    finished = np.zeros(len(starts), dtype=bool)  # a finished row is dealt anew: not ours
    while not finished.all():
        seen.append(engine.observations()[~finished].reshape(-1, game.observation_layout.size))
        masks.append(engine.masks()[~finished].reshape(-1, game.num_actions))
        _, terminated, _ = engine.step(random_actions(engine.masks(), rng))
        finished |= terminated
    seen, masks = np.concatenate(seen), np.concatenate(masks)
    _, first = np.unique(seen, axis=0, return_index=True)
    return seen[first], masks[first]


def states_of_the_tree(game, deals) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct state (observation, mask) the exact NashConv asks a policy about on
    ``deals``: the whole public tree of each deal, where any best response may go."""
    asked: list[tuple[np.ndarray, np.ndarray]] = []

    def uniform(seen: np.ndarray, masks: np.ndarray) -> np.ndarray:
        asked.append((seen.copy(), masks.copy()))
        return masks / masks.sum(axis=1, keepdims=True)

    nash_conv(game, uniform, deals)
    seen = np.concatenate([s for s, _ in asked])
    masks = np.concatenate([m for _, m in asked]).astype(bool)
    _, first = np.unique(seen, axis=0, return_index=True)
    return seen[first], masks[first]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", default="128,128")
    parser.add_argument("--scale", default="none", choices=SCALES)
    parser.add_argument("--games-per-deal", type=int, default=100)
    parser.add_argument(
        "--states",
        default="random",
        choices=("random", "tree"),
        help="the states fitted: of random play, or every state of the deals' trees",
    )
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument(
        "--learning-rate-end",
        type=float,
        default=None,
        help="anneal Adam's rate linearly to this over the epochs (default: constant)",
    )
    parser.add_argument("--deals", type=int, default=20, help="the first K evaluation deals")
    parser.add_argument("--ignore-fields", default="", help="as training.selfplay's")
    parser.add_argument("--relative-fields", default="", help="as training.selfplay's")
    parser.add_argument("--thermometer-fields", default="", help="as training.selfplay's")
    parser.add_argument("--thermometer-range", default="-25,25", help="as training.selfplay's")
    parser.add_argument("--activation", default="tanh", choices=ACTIVATIONS)
    parser.add_argument("--noise", type=float, nargs="*", help="measure nash + noise instead")
    parser.add_argument("--agents", nargs="*", help="measure these saved agents instead")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    game = get_spec("hiddenhand/pico-v0").make_game()
    nash = PicoNash(game)
    if not 1 <= args.deals <= 20:
        parser.error(f"--deals must be 1 to 20, got {args.deals}")
    deals = sample_deals(20, EVAL_SEED)[: args.deals]
    if args.agents:
        spec = get_spec("hiddenhand/pico-v0")
        for path in args.agents:
            agent = probabilities_of(make_agent(spec, game, path), game)
            values = nash_conv(game, agent, deals)
            print(f"{path}: NashConv {values.mean():.3f} (per deal {np.round(values, 3)})")
        return
    if args.noise:
        for noise in args.noise:

            def mixed(seen, masks, noise=noise):
                uniform = masks / masks.sum(axis=1, keepdims=True)
                return (1 - noise) * nash.action_probabilities_batch(seen, masks) + noise * uniform

            print(f"noise {noise}: NashConv {nash_conv(game, mixed, deals).mean():.3f}", flush=True)
        return
    started = time.perf_counter()
    if args.states == "tree":
        seen, masks = states_of_the_tree(game, deals)
    else:
        seen, masks = states_of_random_play(game, deals, args.games_per_deal)
    ignored = field_names(game, args.ignore_fields, "--ignore-fields")
    if ignored:  # the rules never read them: the labels stay the same
        for name in ignored:
            field = game.observation_layout.fields[name]
            seen[:, field.start : field.stop] = 0.0
        _, first = np.unique(seen, axis=0, return_index=True)
        seen, masks = seen[first], masks[first]
    labels = torch.as_tensor(nash.action_probabilities_batch(seen, masks), dtype=torch.float32)
    print(f"{len(seen)} distinct states labelled in {time.perf_counter() - started:.0f} s")
    relative = field_names(game, args.relative_fields, "--relative-fields", per_seat=True)
    learner = Learner(
        game,
        hidden_sizes(args.hidden),
        scale=args.scale,
        ignore=ignored,
        relative=relative,
        thermometer=field_names(game, args.thermometer_fields, "--thermometer-fields"),
        thresholds=threshold_range(args.thermometer_range),
        activation=args.activation,
    )
    optimizer = torch.optim.Adam(learner.policy.parameters(), lr=args.learning_rate)
    inputs, legal = torch.as_tensor(seen), torch.as_tensor(masks)
    steps, step = args.epochs * -(-len(inputs) // 1024), 0
    end = args.learning_rate if args.learning_rate_end is None else args.learning_rate_end
    for epoch in range(args.epochs):
        for rows in torch.randperm(len(inputs)).split(1024):
            rate = args.learning_rate + step / steps * (end - args.learning_rate)
            optimizer.param_groups[0]["lr"] = rate
            step += 1
            log_probs = masked_log_probs(learner.logits(inputs[rows]), legal[rows])
            loss = -(labels[rows] * log_probs.masked_fill(~legal[rows], 0.0)).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % max(1, args.epochs // 5) == 0 or epoch == args.epochs - 1:
            value = nash_conv(game, agent_of(learner), deals).mean()
            print(
                f"epoch {epoch}: cross-entropy {loss.item():.3f}, NashConv {value:.3f}", flush=True
            )


if __name__ == "__main__":
    main()
