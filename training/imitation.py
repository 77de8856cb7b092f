"""Imitation before PPO: behaviour cloning, DAgger and distillation from a teacher.

``training.train --imitate-steps N`` warm-starts the policy here before PPO:

- **behaviour cloning**: the teacher (any agent the game knows, ``--teacher``, a search
  agent such as ``pimc`` included: it reads the learner's position) plays N decisions in
  the learner's seat against the run's opponent mix; the policy is fitted
  to its choices (cross-entropy under the mask) and the value head to the returns;
- **DAgger** (``--imitate-rounds R``): R - 1 more rounds in which the policy plays N
  decisions itself, the teacher labels every state it reaches, and the fit is redone on
  all the data so far;
- **distillation** (``--imitate-temperature T``): for a teacher that values its actions
  (``action_values``: an expert's from the observation, ``pimc_heuristic``'s score
  leads from its search of the position), the policy fits ``softmax(values / T)`` over
  the legal actions instead of the single best choice, so it learns which slips are cheap
  and which cost.

A PIMC teacher (``pimc``, ``pimc_heuristic``) searches with its own budget, or with
``--teacher-samples`` rollouts a decision: a larger budget labels better, at its cost.

The fit has its own Adam optimizer and learning rate (``--imitate-learning-rate``,
optionally annealed to 0 over each round with ``--imitate-anneal``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import gymnasium
import numpy as np

from envs.core.agents import Position, uses_position
from training.agents.policy import PolicyAgent, actor_and_critic_parameters


class ImitationArgs(Protocol):
    """The settings imitation reads (``training.train.Args`` has them all)."""

    imitate_steps: int
    imitate_rounds: int
    imitate_epochs: int
    imitate_learning_rate: float
    imitate_anneal: bool
    imitate_temperature: float
    teacher: str
    teacher_samples: int
    init_model: str
    batch_size: int
    gamma: float
    seed: int


def teacher_targets(values: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(values / temperature) over the legal actions (values -inf elsewhere)."""
    scaled = (values - values.max()) / temperature
    weights = np.exp(scaled)
    return (weights / weights.sum()).astype(np.float32)


def teacher_values(
    teacher: Any,
    observation: np.ndarray,
    mask: np.ndarray,
    position: Position | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """The teacher's value of every action (-inf where illegal): from the observation, or
    for a search (given its ``position``) from its search of the legal actions (a lone
    legal action is valued 0 without one)."""
    if position is None:
        return teacher.action_values(observation, mask)
    legal = np.flatnonzero(mask)
    values = np.full(len(mask), -np.inf)
    values[legal] = teacher.action_values(position, legal, rng) if len(legal) > 1 else 0.0
    return values


def collect_demonstrations(
    args: ImitationArgs, new_env: Callable[[], gymnasium.Env], student: Any = None
) -> dict[str, np.ndarray]:
    """``args.imitate_steps`` learner decisions against the opponent mix, each labelled with
    the teacher's choice: observations, masks, the teacher's actions and the discounted
    returns of the play, and with ``--imitate-temperature`` the teacher's target
    distributions, in an env made by ``new_env`` (the learner's seat of the game, its
    opponents inside). The teacher plays, or ``student`` (an agent) when given."""
    env = new_env()
    base = env.unwrapped
    factory = base.game_spec.agent_factory(args.teacher)
    budget = {"samples": args.teacher_samples} if args.teacher_samples else {}
    teacher = factory(base.game, **budget)
    actor = student or teacher
    searches = uses_position(teacher)
    rng = np.random.default_rng(args.seed + 10_000 + (student is not None))
    observations, masks, actions, returns, targets = [], [], [], [], []
    while len(actions) < args.imitate_steps:
        observation, info = env.reset()
        rewards, done = [], False
        while not done:
            mask = info["action_mask"]
            # A search reads the learner's position, not its view.
            position = Position(base.table.state, base.learner) if searches else None
            if args.imitate_temperature:
                values = teacher_values(teacher, observation, mask, position, rng)
                targets.append(teacher_targets(values, args.imitate_temperature))
                label = int(np.argmax(values))
            elif searches:
                label = teacher.act(observation, mask, rng, position=position)
            else:
                label = teacher.act(observation, mask, rng)
            action = label if actor is teacher else actor.act(observation, mask, rng)
            observations.append(observation)
            masks.append(mask.astype(bool))
            actions.append(label)
            observation, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        running, episode_returns = 0.0, []
        for reward in reversed(rewards):
            running = reward + args.gamma * running
            episode_returns.append(running)
        returns.extend(reversed(episode_returns))
    env.close()
    data = {
        "observations": np.array(observations, dtype=np.float32),
        "masks": np.array(masks),
        "actions": np.array(actions),
        "returns": np.array(returns, dtype=np.float32),
    }
    if targets:
        data["targets"] = np.array(targets)
    return data


def greedy_agreement(model: Any, data: dict[str, np.ndarray], chunk: int = 4096) -> float:
    """Share of the demonstrations whose action the policy's greedy choice matches
    (in chunks: a feature extractor may need memory per observation)."""
    import torch

    matches = 0
    with torch.no_grad():
        for start in range(0, len(data["actions"]), chunk):
            part = slice(start, start + chunk)
            observations = torch.as_tensor(data["observations"][part])
            dist = model.policy.get_distribution(observations, action_masks=data["masks"][part])
            greedy = dist.get_actions(deterministic=True).numpy()
            matches += int((greedy == data["actions"][part]).sum())
    return matches / len(data["actions"])


def masked_log_probs(policy, observations, masks):
    """The value and the log-probabilities of every action under the mask (illegal ones
    at a large negative number, not -inf, so a zero target times them stays zero): what
    ``evaluate_actions`` computes, for all actions at once."""
    features = policy.extract_features(observations)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    distribution = policy._get_action_dist_from_latent(latent_pi)
    distribution.apply_masking(masks)
    return policy.value_net(latent_vf), distribution.distribution.logits


def imitate(model: Any, data: dict[str, np.ndarray], args: ImitationArgs) -> dict[str, float]:
    """Fit the policy to the demonstrated actions (cross-entropy under the mask; against
    the teacher's target distributions when the data has them) and the value to their
    returns; report the greedy agreement.

    The fit has its own Adam optimizer and learning rate (PPO's is usually far smaller),
    and the policy's and the value's gradients are clipped apart: the returns' squared
    errors are large, and clipped together they would shrink the policy's steps to nothing.
    """
    import torch
    import torch.nn.functional as F

    policy = model.policy
    policy_side, value_side = actor_and_critic_parameters(policy)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.imitate_learning_rate)
    tensors = {key: torch.as_tensor(value) for key, value in data.items()}
    rng = np.random.default_rng(args.seed)
    size = len(data["actions"])
    before = greedy_agreement(model, data)
    batches = max(1, size // args.batch_size)
    steps, step = args.imitate_epochs * batches, 0
    for _ in range(args.imitate_epochs):
        for batch in np.array_split(rng.permutation(size), batches):
            if args.imitate_anneal:
                for group in optimizer.param_groups:
                    group["lr"] = args.imitate_learning_rate * (1 - step / steps)
                step += 1
            if "targets" in tensors:
                values, log_probs = masked_log_probs(
                    policy, tensors["observations"][batch], tensors["masks"][batch]
                )
                policy_loss = -(tensors["targets"][batch] * log_probs).sum(dim=1).mean()
            else:
                values, log_prob, _ = policy.evaluate_actions(
                    tensors["observations"][batch],
                    tensors["actions"][batch],
                    action_masks=tensors["masks"][batch],
                )
                policy_loss = -log_prob.mean()
            value_loss = F.mse_loss(values.flatten(), tensors["returns"][batch])
            optimizer.zero_grad()
            (policy_loss + model.vf_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy_side, model.max_grad_norm)
            torch.nn.utils.clip_grad_norm_(value_side, model.max_grad_norm)
            optimizer.step()
    return {
        "agreement_before": before,
        "agreement": greedy_agreement(model, data),
        "value_loss": value_loss.item(),
    }


def imitation_rounds(
    model: Any,
    args: ImitationArgs,
    new_env: Callable[[], gymnasium.Env],
    after_round: Callable[[], Any],
) -> None:
    """``args.imitate_rounds`` rounds of ``args.imitate_steps`` decisions: the first follows
    the teacher's play (the policy's if it starts from a model), each later one the
    policy's, labelled by the teacher (DAgger); the fit is redone on all the data after
    each, and ``after_round`` is called (the trainer evaluates there)."""
    data: dict[str, np.ndarray] = {}
    for round_ in range(args.imitate_rounds):
        student = PolicyAgent(model) if round_ or args.init_model else None
        more = collect_demonstrations(args, new_env, student=student)
        if student is not None:  # unseen by the fit so far: how it imitates where it goes
            print(
                f"  agreement on the policy's own new states: {greedy_agreement(model, more):.3f}"
            )
        data = {key: np.concatenate([data[key], more[key]]) for key in more} if data else more
        fit = imitate(model, data, args)
        print(
            f"imitation round {round_ + 1}: {len(data['actions'])} decisions of the "
            f"{args.teacher}, greedy agreement {fit['agreement_before']:.3f} -> "
            f"{fit['agreement']:.3f}, value loss {fit['value_loss']:.3f}"
        )
        after_round()
