"""Registration of a game under its PettingZoo and Gymnasium ids, and its factories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import pettingzoo
from pettingzoo import AECEnv, ParallelEnv

from envs.core.aec import HiddenHandAEC, HiddenHandParallel, wrap_aec
from envs.core.spec import GameSpec, add_spec


def factories(
    spec: GameSpec,
) -> tuple[Callable[..., AECEnv], Callable[..., AECEnv], Callable[..., ParallelEnv]]:
    """``raw_env``, ``env`` and ``parallel_env`` for one game, PettingZoo style."""

    def raw_env(**options: Any) -> HiddenHandAEC:
        return HiddenHandAEC(spec, **options)

    def env(**options: Any) -> AECEnv:
        return wrap_aec(raw_env(**options))

    def parallel_env(**options: Any) -> HiddenHandParallel:
        return HiddenHandParallel(spec, **options)

    for factory in (raw_env, env, parallel_env):
        factory.__doc__ = f"{factory.__name__} for {spec.aec_id}; options as in the module docs."
    return raw_env, env, parallel_env


def register_game(spec: GameSpec) -> None:
    add_spec(spec)
    _, env, parallel_env = factories(spec)
    pettingzoo.register("aec", spec.aec_id, entry_point=env)
    pettingzoo.register("parallel", spec.aec_id, entry_point=parallel_env)
    gymnasium.register(
        spec.gym_id,
        entry_point="envs.core.single_agent:SingleAgentEnv",
        kwargs={"game_id": spec.aec_id},
    )
