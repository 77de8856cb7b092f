"""Batched engines behind a Stable-Baselines3 ``VecEnv``: one learning seat in each of B
games, the other seats played inside ``step_wait`` by batched opponents.

```python
import envs
from sb3_contrib import MaskablePPO

vec_env = envs.make_vec("hiddenhand/Pico-v0", num_envs=64, opponent="heuristic", seed=0)
model = MaskablePPO("MlpPolicy", vec_env, n_steps=64).learn(100_000)
```

``make_vec`` is the batched counterpart of the Gymnasium single-agent view
(``envs.core.single_agent``) for the games that have a batched engine (a ``batched.py``
beside their rules, named by their spec's ``engine``); it returns a
``envs.core.sb3_vec_env.BatchedVecEnv``. It plays the same game, seen the same way: the observation is the learner's flat vector (the same layout and values as
the Gymnasium view's), ``action_masks()`` gives the learner's legal actions (and
``env_method("action_masks")``, which sb3-contrib's MaskablePPO calls, one row per
game), the reward modes are the same and the learner's reward includes what
happens on the opponents' moves. As in every SB3 ``VecEnv``, a finished game is
dealt again at once: its last observation is ``infos[i]["terminal_observation"]``,
with ``infos[i]["seat"]`` and ``infos[i]["scores"]`` (the final game points, seat
order). An illegal action ends the learner's game with ``illegal_reward``, as in the
Gymnasium view (``infos[i]["illegal_action"]`` says why), and a new game starts.

The learner's seat is drawn at random for each game at every new deal (or fixed
by ``seat=``). Seeding: ``make_vec(seed=...)`` or SB3's ``seed()`` before ``reset()``
seeds the engine's deals (``seed``) and, apart, the seats and opponents' draws.

Opponents: one for every other seat, a sequence with one per other seat (going left
from the learner), or a weighted mix ``{opponent: weight}`` from which each other
seat's opponent is drawn at every deal; each distinct opponent runs once per step for
all the seats it plays:

- ``"random"``: uniform over the legal actions;
- ``"heuristic"``: the game's batched heuristic where its engine has one
  (``heuristic_actions``, making the same choices as the game's heuristic agent),
  else the heuristic agent game by game;
- a saved model's path, another agent name the game knows, or an agent object: a
  ``PolicyAgent`` (anything with ``logits_batch``) in one forward pass for all games
  (greedy when ``deterministic``, else sampled); an object with
  ``act_batch(observations, masks, rng) -> actions`` as it is; any other agent
  (``act``) or function ``(observation, action_mask, rng) -> int`` game by game.

The batched multi-agent interface is the engine itself (``envs.pico.batched.PicoVector``):
all seats' observations, masks and actions as arrays, one joint action per game a step.

The engines are ``envs.core.batched.BatchedEngine``s. Where a game's turns leave
the learner out (``choosers()``), the opponents play those turns inside the same
``step``; what is revealed before the learner's first choice in a game reaches it
with its first step, as in the Gymnasium view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from envs.core.batched import engine_class, random_actions
from envs.core.game import Game, require_choice
from envs.core.single_agent import OpponentSpec, resolve_agent
from envs.core.spec import GameSpec, get_spec


# --- batched opponents ---------------------------------------------------------------
class _RandomOpponent:
    uses_observation = False

    def choose(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return random_actions(masks, rng)


class _HeuristicOpponent:
    uses_observation = True

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return self.engine.heuristic_actions(observations, masks, rng)


class _PolicyOpponent:
    """A policy with ``logits_batch``: one forward pass for every game."""

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        logits = np.asarray(self.agent.logits_batch(observations), dtype=np.float64)
        if not getattr(self.agent, "deterministic", True):  # a sample: the Gumbel-max trick
            logits = logits - np.log(-np.log(rng.random(logits.shape)))
        return np.argmax(np.where(masks, logits, -np.inf), axis=1)


class _BatchAgentOpponent:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.uses_observation = getattr(agent, "uses_observation", True)

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        return np.asarray(self.agent.act_batch(observations, masks, rng))


class _PerGameOpponent:
    """Any agent with ``act``, called game by game (no faster than the Gymnasium view)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.uses_observation = getattr(agent, "uses_observation", True)

    def choose(
        self, observations: np.ndarray | None, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        masks8 = masks.astype(np.int8)
        return np.array(
            [
                self.agent.act(None if observations is None else observations[i], masks8[i], rng)
                for i in range(len(masks8))
            ],
            dtype=np.int64,
        )


def batched_opponent(spec: GameSpec, game: Game, engine: Any, opponent: Any) -> Any:
    """A batched opponent (``choose(observations, masks, rng) -> actions``) from a name,
    a saved model's path, an agent or a function (see the module docstring)."""
    if opponent == "random":
        return _RandomOpponent()
    if opponent == "heuristic" and callable(getattr(engine, "heuristic_actions", None)):
        return _HeuristicOpponent(engine)
    agent = resolve_agent(spec, game, opponent)
    if hasattr(agent, "logits_batch"):
        return _PolicyOpponent(agent)
    if hasattr(agent, "act_batch"):
        return _BatchAgentOpponent(agent)
    return _PerGameOpponent(agent)


def make_vec(
    gym_id: str,
    num_envs: int = 64,
    opponent: OpponentSpec | Sequence[OpponentSpec] | Mapping[OpponentSpec, float] = "random",
    seat: int | None = None,
    reward_mode: str = "win",
    illegal_reward: float = -1.0,
    seed: int | None = None,
    **options: Any,
):
    """An SB3 ``VecEnv`` of ``num_envs`` games of ``gym_id`` (either id form) played by a
    batched engine, one seat learning in each (see the module docstring).

    Args:
        gym_id: a registered id of a game with a batched engine.
        num_envs: the number of games played in lockstep.
        opponent: one opponent for every other seat; a sequence with one per other seat
            (going left); or a mix, ``{opponent: weight}``, from which every other seat's
            opponent is drawn at each deal.
        seat: the learner's seat; ``None`` (default) draws it per game at every deal.
        reward_mode: ``"win"`` or ``"score"``.
        illegal_reward: the reward for an illegal action, which ends that game.
        seed: seeds the deals, seats and opponents (``seed()`` reseeds at the next reset).
        **options: the game's options (``num_players`` ...).
    """
    spec = get_spec(gym_id)
    engine_type = engine_class(spec)
    from envs.core.sb3_vec_env import BatchedVecEnv  # imports SB3: only here

    engine = engine_type(num_envs, reward_mode=reward_mode, seed=seed, **options)
    n = engine.num_players
    require_choice("seat", seat, (None, *range(n)))
    game = engine.game

    def make(one: Any) -> Any:
        return batched_opponent(spec, game, engine, one)

    lineup = weights = None
    if isinstance(opponent, Mapping):
        values = np.array(list(opponent.values()), dtype=np.float64)
        if not len(values) or (values < 0).any() or values.sum() <= 0:
            raise ValueError(f"a mix needs weights >= 0 with a positive sum, got {opponent!r}")
        opponents, weights = [make(one) for one in opponent], values / values.sum()
    elif isinstance(opponent, Sequence) and not isinstance(opponent, str):
        if len(opponent) != n - 1:
            raise ValueError(f"give one opponent or {n - 1} opponents, got {len(opponent)}")
        opponents, lineup = [make(one) for one in opponent], np.arange(n - 1)
    else:
        opponents, lineup = [make(opponent)], np.zeros(n - 1, dtype=np.int64)
    return BatchedVecEnv(engine, opponents, lineup, weights, seat, illegal_reward, seed)


__all__ = ["make_vec"]
