"""Share of MaskablePPO training wall time spent inside the environment, per id: the
share table of docs/performance.md.

    python scripts/tables/training_share.py                   # every id, 16,384 steps each
    python scripts/tables/training_share.py --ids hiddenhand/pico-v0 --timesteps 32768

A fixed short MaskablePPO run with the library's default hyperparameters (4 envs
in one process, so the timings add up; 16,384 steps are two rollouts) with
the environment's ``reset``, ``step`` (which plays the opponents) and
``action_masks`` timed; the share is their total over the run's wall time. Once
with random opponents (the env itself) and once with the game's heuristic.
"""

from __future__ import annotations

import argparse
import time

import gymnasium

import envs


class Timed(gymnasium.Wrapper):
    """Adds the time spent in reset, step and action_masks to ``self.seconds``."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.seconds = 0.0

    def reset(self, **kwargs):
        started = time.perf_counter()
        result = self.env.reset(**kwargs)
        self.seconds += time.perf_counter() - started
        return result

    def step(self, action):
        started = time.perf_counter()
        result = self.env.step(action)
        self.seconds += time.perf_counter() - started
        return result

    def action_masks(self):
        started = time.perf_counter()
        result = self.env.unwrapped.action_masks()
        self.seconds += time.perf_counter() - started
        return result


def share(env_id: str, opponent: str, timesteps: int, n_envs: int = 4) -> tuple[float, float]:
    """(environment share of wall time, wall seconds) of a short MaskablePPO run."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    gym_id = envs.get_spec(env_id).gym_id
    timed = [Timed(gymnasium.make(gym_id, opponent=opponent)) for _ in range(n_envs)]
    vec_env = DummyVecEnv([lambda env=env: env for env in timed])
    model = MaskablePPO("MlpPolicy", vec_env, seed=0, device="cpu")  # the library's defaults
    started = time.perf_counter()
    model.learn(timesteps)
    wall = time.perf_counter() - started
    return sum(env.seconds for env in timed) / wall, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", nargs="*", default=None, help="PettingZoo ids; default: all")
    parser.add_argument("--timesteps", type=int, default=16_384, help="steps per run")
    args = parser.parse_args()
    print("| env | opponents | env share of training time | wall seconds |")
    print("|---|---|---|---|")
    for env_id in args.ids or envs.ids():
        for opponent in ("random", "heuristic"):
            fraction, wall = share(env_id, opponent, args.timesteps)
            print(f"| {env_id} | {opponent} | {fraction:.1%} | {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
