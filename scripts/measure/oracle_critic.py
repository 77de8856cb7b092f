"""What stops the Pico recipe: its critic, the states it learns on, or its step? The recipe
on a few fixed deals, where the exact values of its own policy are known.

    RECIPE="--critic joint --inner-steps 10 --magnet-coef 0.1 --magnet-coef-end 0.02 \\
        --gae-lambda 0 --learning-rate 0.001 --minibatches 64 --ignore-fields last_played,last_winners"
    python scripts/measure/oracle_critic.py --critic learned --decisions 2000000 \\
        --every 250000 --out runs/oracle/learned.csv -- $RECIPE
    python scripts/measure/oracle_critic.py --critic exact ...                # exact values
    python scripts/measure/oracle_critic.py --critic exact --states tree ...  # and every state
    python scripts/measure/oracle_critic.py --critic supervised ...           # all cells, exact
    python scripts/measure/oracle_critic.py --critic learned ... -- $RECIPE --backup expanded
    python scripts/measure/oracle_critic.py --critic exact --tabular 40 --every 5 \\
        --out runs/oracle/tabular.csv -- --critic joint --inner-steps 10 --magnet-coef 0.1

Two-player Pico is played on ``--deals`` fixed deals only (the first of the learner's
evaluation deals, ``sample_deals(20, EVAL_SEED)``: those of ``pico_distill.py --deals``),
so the exact values of the policy being learned can be computed for every state the
learner meets, once per rollout: the exact solver's public tree of each deal, valued
with the rollout's policy in both seats (``training.solvers.pico.policy_values``).
``training.selfplay``'s ``qmmd`` with the joint critic (the arguments after ``--``) then
runs as it is, except that:

- ``--critic exact``: MMD's step at each decision uses those exact joint-action values
  instead of the learned critic's (the runs share the seed, the deals and every
  argument, so the gap between their curves is what the critic's error costs);
- ``--critic supervised``: the learned critic, fitted at each rollout's decisions to the
  exact values of every legal joint action (what ``--backup expanded`` fits to its own
  bootstrapped targets), is what MMD's step reads;
- ``--states tree`` (with ``--critic exact``): each update is made on as many states
  drawn uniformly from the deals' trees as the rollout had, not on the rollout's own;
- ``--tabular N``: no network and no sampling: the learner's MMD step (its
  ``--kl-coef``, ``--magnet-coef`` and ``--inner-steps``) at every state of the trees
  at once, with the exact values, ``N`` times: the recipe's update done exactly.

Every ``--every`` decisions (iterations with ``--tabular``) it prints the policy's exact
NashConv on the deals and, over the last rollout's decisions, the learned critic's error
against the exact values: the root mean square over legal joint actions (``q_rmse``),
that of each own card's advantage against the other seat's policy (``adv_rmse``) beside
the exact advantages' own root mean square (``adv_scale``), and the KL from MMD's step
with exact values to the step with the critic's (``step_kl``). ``--out`` gets the same
figures as a CSV. Figures are in docs/selfplay.md.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from training import selfplay
from training.evaluation.nash_conv import nash_conv, probabilities_of
from training.evaluation.panel import EVAL_SEED
from training.solvers.pico import (
    BIT_VECTORS,
    FULL,
    NUM_CARDS,
    Position,
    Probabilities,
    policy_values,
    sample_deals,
)


class ExactValues:
    """The exact joint-action values of a policy at every state of some deals' trees,
    looked up by observation (either seat's, from that seat's side)."""

    def __init__(self, game, deals: Sequence[tuple[int, int]]) -> None:
        self.game, self.deals = game, deals
        uniform = lambda obs, masks: masks / masks.sum(axis=1, keepdims=True)  # noqa: E731
        seen = np.concatenate([policy_values(game, uniform, Position.deal(*d))[0] for d in deals])
        both = np.concatenate([seen, seen[:, game.seat_permutations[1]]])
        self.keys = np.ascontiguousarray(both).view(f"V{both.shape[1] * 4}").ravel()
        self.order = np.argsort(self.keys)
        self.sorted = self.keys[self.order]
        self.size = len(seen)
        self.seen = both
        hands = self.game.observation_layout.fields["hand"]
        self.masks = both[:, hands.start : hands.start + NUM_CARDS] > 0

    def draw(self, rng: np.random.Generator, pairs: int) -> tuple[np.ndarray, np.ndarray]:
        """``pairs`` states drawn uniformly from the trees, both seats' observations of each
        (rows ``2k`` and ``2k + 1``) and their masks."""
        drawn = rng.integers(self.size, size=pairs)
        rows = np.stack([drawn, drawn + self.size], axis=1).ravel()
        return self.seen[rows], self.masks[rows]

    def refresh(self, probabilities: Probabilities) -> None:
        values = np.concatenate(
            [policy_values(self.game, probabilities, Position.deal(*d))[1] for d in self.deals]
        )
        self.values = np.concatenate([values, -values.transpose(0, 2, 1)])

    def index(self, observations: np.ndarray) -> np.ndarray:
        """The rows of ``seen`` that are these observations."""
        keys = np.ascontiguousarray(observations).view(self.keys.dtype).ravel()
        at = np.minimum(np.searchsorted(self.sorted, keys), len(self.sorted) - 1)
        if not (self.sorted[at] == keys).all():
            raise RuntimeError("a state the learner met is not in the deals' trees")
        return self.order[at]

    def lookup(self, observations: np.ndarray) -> np.ndarray:
        """``(n, 11, 11)``: the observer's card the row, in the observer's payoff."""
        return self.values[self.index(observations)]


def write(rows: list[dict], out: Path) -> None:
    with out.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def tabular(table: ExactValues, a: selfplay.Args, iterations: int, every: int, out: Path) -> None:
    """The recipe's update with no network and no sampling: at every state of the trees at
    once, MMD's step over the exact values (``SelfPlay._mmd_targets``' arithmetic, its
    ``--inner-steps`` on each reveal's matrix), ``iterations`` times, printing the
    NashConv every ``every``."""
    masks = table.masks
    policy = masks / masks.sum(axis=1, keepdims=True)
    partners = np.concatenate([np.arange(table.size) + table.size, np.arange(table.size)])

    def probabilities(observations: np.ndarray, _masks: np.ndarray) -> np.ndarray:
        return policy[table.index(observations)]

    started = time.perf_counter()
    rows: list[dict] = []
    for i in range(iterations + 1):
        if i % every == 0 or i == iterations:
            value = nash_conv(table.game, probabilities, table.deals).mean()
            rows.append({"iteration": i, "seconds": round(time.perf_counter() - started)})
            rows[-1]["nash_conv"] = float(value)
            print(", ".join(f"{k} {v:.4g}" for k, v in rows[-1].items()), flush=True)
            write(rows, out)
        if i == iterations:
            break
        alpha = selfplay.schedule(a.magnet_coef, a.magnet_coef_end, i / iterations)
        kl_coef = selfplay.schedule(a.kl_coef, a.kl_coef_end, i / iterations)
        table.refresh(probabilities)
        goal = policy
        for _ in range(a.inner_steps):  # each step from the last, as the learner's
            values = np.einsum("nab,nb->na", table.values, goal[partners])
            last = np.log(np.maximum(goal, 1e-30))
            logits = np.where(masks, (kl_coef * last + values) / (kl_coef + alpha), -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            goal = np.exp(logits)
            goal /= goal.sum(axis=1, keepdims=True)
        policy = goal


def fix_deals(engine, deals: Sequence[tuple[int, int]]) -> None:
    """Make the engine deal only ``deals`` (uniformly, from its generator), and redeal."""
    sets = np.array([[BIT_VECTORS[s0], BIT_VECTORS[s1]] for s0, s1 in deals]).astype(np.int64)
    aside = np.array([BIT_VECTORS[FULL & ~(s0 | s1)] for s0, s1 in deals]).astype(np.int64)

    def deal(games: np.ndarray) -> None:
        drawn = engine.rng.integers(len(deals), size=len(games))
        engine._start(games, sets[drawn], aside[drawn])

    engine._deal = deal
    engine.redeal(np.arange(engine.num_envs))


class OracleSelfPlay(selfplay.SelfPlay):
    """``qmmd`` whose MMD step reads ``self.exact`` (the batch's exact joint values)."""

    exact: torch.Tensor | None = None

    @torch.no_grad()
    def _mmd_targets(self, batch, magnet_coef: float, kl_coef: float) -> torch.Tensor:
        if self.exact is None:
            return super()._mmd_targets(batch, magnet_coef, kl_coef)
        learned = self.learner.values_of
        self.learner.values_of = lambda x: (self.exact, None)  # type: ignore[method-assign]
        try:
            return super()._mmd_targets(batch, magnet_coef, kl_coef)
        finally:
            self.learner.values_of = learned  # type: ignore[method-assign]


def tree_update(run: OracleSelfPlay, table: ExactValues, pairs: int, progress: float) -> None:
    """qmmd's policy update on states drawn uniformly from the deals' trees instead of the
    rollout's (``--states tree``): MMD's step with the exact values at each, fitted as
    ``SelfPlay.update`` fits it (the critic is not trained)."""
    a = run.args
    seen, masks = table.draw(run.rng, pairs)
    observations = torch.as_tensor(seen)
    masks_t = torch.as_tensor(masks)
    with torch.no_grad():
        old = selfplay.masked_log_probs(run.learner.logits(observations), masks_t)
    partners = torch.as_tensor(np.arange(len(seen)) ^ 1)
    batch = {
        "inputs": run.learner.prepare(observations),
        "masks": masks_t,
        "old": old,
        "partner_probs": old.exp()[partners],
        "partners": partners,
    }
    run.exact = torch.as_tensor(table.lookup(seen))
    alpha = selfplay.schedule(a.magnet_coef, a.magnet_coef_end, progress)
    goal = run._mmd_targets(batch, alpha, selfplay.schedule(a.kl_coef, a.kl_coef_end, progress))
    for group in run.optimizer.param_groups:
        group["lr"] = selfplay.schedule(a.learning_rate, a.learning_rate_end, progress)
    mb_all = {
        "observations": observations,
        "masks": masks_t,
        "goal": goal,
        "goal_probs": goal.exp(),
    }
    for _ in range(a.epochs):
        for rows in run._minibatches(len(seen)):
            mb = selfplay.at_rows(mb_all, list(mb_all), rows)
            log_probs = selfplay.masked_log_probs(
                run.learner.logits(mb["observations"]), mb["masks"]
            )
            run._step(run._distillation_loss(mb, log_probs, {}))


def critic_error(
    run: OracleSelfPlay, batch_obs, masks, old, partners, exact, alpha: float, kl_coef: float
) -> dict:
    """The learned critic against the exact values on a batch of decisions."""
    with torch.no_grad():
        q = run.learner.values(torch.as_tensor(batch_obs))[0].numpy()
    legal = masks[:, :, None] & masks[partners][:, None, :]
    q_rmse = np.sqrt(((q - exact) ** 2)[legal].mean())
    partner = np.exp(old[partners])

    def advantages(joint: np.ndarray) -> np.ndarray:
        own = np.einsum("nab,nb->na", joint, partner)
        return own - (np.exp(old) * np.where(masks, own, 0.0)).sum(1, keepdims=True)

    learned, true = advantages(q), advantages(exact)
    batch = {
        "old": torch.as_tensor(old),
        "masks": torch.as_tensor(masks),
        "inputs": run.learner.prepare(torch.as_tensor(batch_obs)),
        "partner_probs": torch.as_tensor(partner, dtype=torch.float32),
        "partners": torch.as_tensor(partners),
    }
    run.exact = None
    with_critic = run._mmd_targets(batch, alpha, kl_coef)
    run.exact = torch.as_tensor(exact)
    with_exact = run._mmd_targets(batch, alpha, kl_coef)
    gap = (with_exact - with_critic).masked_fill(~batch["masks"], 0.0)
    return {
        "q_rmse": float(q_rmse),
        "adv_rmse": float(np.sqrt(((learned - true) ** 2)[masks].mean())),
        "adv_scale": float(np.sqrt((true**2)[masks].mean())),
        "step_kl": float((with_exact.exp() * gap).sum(1).mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--critic",
        choices=("learned", "supervised", "exact"),
        required=True,
        help="the MMD step's values: the learned critic; the learned critic fitted to the "
        "exact values of every legal joint action at the rollout's states (supervised); "
        "or the exact values",
    )
    parser.add_argument(
        "--states",
        choices=("rollout", "tree"),
        default="rollout",
        help="the states of each policy update: the rollout's, or as many drawn uniformly "
        "from the deals' trees (needs --critic exact)",
    )
    parser.add_argument(
        "--tabular",
        type=int,
        default=0,
        metavar="ITERATIONS",
        help="no network: the MMD step at every state of the trees at once, with exact "
        "values, this many times (--every counts iterations)",
    )
    parser.add_argument("--deals", type=int, default=2, help="the fixed deals (1 to 20)")
    parser.add_argument("--decisions", type=int, default=4_000_000)
    parser.add_argument("--every", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="a CSV of the figures")
    parser.add_argument("learner", nargs=argparse.REMAINDER, help="-- then training.selfplay's")
    args = parser.parse_args()
    if not 1 <= args.deals <= 20:
        parser.error(f"--deals must be 1 to 20, got {args.deals}")
    if (args.states == "tree" or args.tabular) and args.critic != "exact":
        parser.error("--states tree and --tabular need --critic exact")
    if args.tabular < 0 or args.every < 1 or args.decisions < 1:
        parser.error("--tabular must be >= 0, --every and --decisions >= 1")
    rest = [a for a in args.learner if a != "--"]
    learner_args = selfplay.Args(
        **vars(
            selfplay.cli.dataclass_parser("selfplay", "", selfplay.Args).parse_args(
                [*rest, "--decisions", str(args.decisions), "--seed", str(args.seed)]
            )
        )
    )
    spec, options, game = selfplay.check(learner_args)
    if learner_args.algorithm != "qmmd" or learner_args.critic != "joint":
        parser.error("the arguments after -- must give qmmd with --critic joint")
    torch.set_num_threads(1)
    deals = sample_deals(20, EVAL_SEED)[: args.deals]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.tabular:
        tabular(ExactValues(game, deals), learner_args, args.tabular, args.every, args.out)
        return
    run = OracleSelfPlay(learner_args, game, options)
    fix_deals(run.engine, deals)
    started = time.perf_counter()
    table = ExactValues(game, deals)
    print(
        f"{table.size} states on {len(deals)} deals, indexed in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    rows: list[dict] = []
    decisions, next_report = 0, 0
    while decisions < args.decisions:
        progress = min(decisions / args.decisions, 1.0)
        rollout = run.collect(progress)
        observed = np.concatenate(rollout.observations)
        report = decisions >= next_report
        if args.critic != "learned" or report:
            policy = probabilities_of(selfplay.agent_of(run.learner), game)
            table.refresh(policy)
            exact = table.lookup(observed)
        if report:
            row = {"decisions": decisions, "seconds": round(time.perf_counter() - started)}
            row["nash_conv"] = float(nash_conv(game, policy, deals).mean())
            partners = np.concatenate(rollout.partners)
            masks = np.concatenate(rollout.masks)
            alpha = selfplay.schedule(
                learner_args.magnet_coef, learner_args.magnet_coef_end, progress
            )
            old = np.concatenate(rollout.log_probs).astype(np.float32)
            kl_coef = selfplay.schedule(learner_args.kl_coef, learner_args.kl_coef_end, progress)
            row |= critic_error(run, observed, masks, old, partners, exact, alpha, kl_coef)
            rows.append(row)
            print(", ".join(f"{k} {v:.4g}" for k, v in row.items()), flush=True)
            write(rows, args.out)
            next_report += args.every
        run.exact = torch.as_tensor(exact) if args.critic == "exact" else None
        if args.critic == "supervised":  # as --backup expanded, with the exact targets
            rollout.expanded = [exact.astype(np.float32)]
        decisions += int(rollout.deciding.sum())
        if args.states == "tree":
            tree_update(run, table, len(observed) // 2, min(decisions / args.decisions, 1.0))
        else:
            run.update(rollout, min(decisions / args.decisions, 1.0))
    policy = probabilities_of(selfplay.agent_of(run.learner), game)
    print(f"final: decisions {decisions}, nash_conv {nash_conv(game, policy, deals).mean():.4f}")


if __name__ == "__main__":
    main()
