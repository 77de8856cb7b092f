"""Hidden Hand: RL environments for games of hidden simultaneous choice.

``import envs`` registers every game: PettingZoo ids such as
``hiddenhand/pico-v0`` (``pettingzoo.make("aec" | "parallel", id)``) and
Gymnasium single-agent ids such as ``hiddenhand/Pico-v0``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import pettingzoo

from envs import easter_collection, forslag, pick_and_pack, pickup, pico
from envs.core.registration import register_game
from envs.core.spec import GameSpec, all_ids, get_spec
from envs.core.vector import make_vec

#: Every game's spec (``SPEC`` of its package under ``envs``), in registration order.
GAMES: tuple[GameSpec, ...] = (
    pico.SPEC,
    forslag.SPEC,
    pickup.SPEC,
    pick_and_pack.SPEC,
    easter_collection.SPEC,
)

for _spec in GAMES:
    register_game(_spec)


def ids() -> list[str]:
    """The PettingZoo ids of every game."""
    return all_ids()


def gym_ids() -> list[str]:
    """The Gymnasium single-agent ids of every game."""
    return [get_spec(env_id).gym_id for env_id in all_ids()]


def make(env_id: str, **options: Any):
    """An AEC env for a PettingZoo id, or a Gymnasium env for a Gymnasium id."""
    spec = get_spec(env_id)
    if env_id == spec.gym_id:
        return gymnasium.make(env_id, **options)
    return pettingzoo.make("aec", env_id, **options)


def make_parallel(env_id: str, **options: Any):
    """A parallel env for a PettingZoo id."""
    return pettingzoo.make("parallel", get_spec(env_id).aec_id, **options)


__all__ = ["GAMES", "get_spec", "gym_ids", "ids", "make", "make_parallel", "make_vec"]
