"""Registration of a game under its PettingZoo and Gymnasium ids, and its factories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import pettingzoo
from pettingzoo import AECEnv, ParallelEnv

from envs.core.aec import HiddenHandAEC, HiddenHandParallel
from envs.core.spec import GameSpec, add_spec


def factories(
    spec: GameSpec,
) -> tuple[Callable[..., AECEnv], Callable[..., AECEnv], Callable[..., ParallelEnv]]:
    """``raw_env``, ``env`` and ``parallel_env`` for one game, PettingZoo style."""

    def raw_env(**options: Any) -> HiddenHandAEC:
        return HiddenHandAEC(spec, illegal_action="raise", **options)

    def env(**options: Any) -> AECEnv:
        return HiddenHandAEC(spec, illegal_action="penalize", **options)

    def parallel_env(**options: Any) -> HiddenHandParallel:
        return HiddenHandParallel(spec, illegal_action="penalize", **options)

    raw_env.__doc__ = f"{spec.aec_id}: illegal actions raise ValueError; options as in the docs."
    env.__doc__ = f"{spec.aec_id}: an illegal action ends the game with -1 for the offender."
    parallel_env.__doc__ = (
        f"{spec.aec_id} as a PettingZoo parallel env: an illegal action ends the game with -1 "
        "for the offender (illegal_action='raise' raises instead)."
    )
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
