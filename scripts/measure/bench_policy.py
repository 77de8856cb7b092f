"""Speed of a trained policy's decisions: ``PolicyAgent.act`` against SB3's ``predict``
(the speed-up ``training.agents.policy`` quotes).

    python scripts/measure/bench_policy.py                       # every shipped SB3 model
    python scripts/measure/bench_policy.py --decisions 2000 --repeats 5

Both play the same recorded decisions (observations and masks from games of the
baseline against the heuristic), in turn within each repeat, so load changes on a
shared machine fall on both alike. The script also checks that the two choose the
same action at every decision, and fails if they do not (both greedy, also for an agent
shipped to sample its policy: ``predict`` would draw with torch's generator). A shipped
self-play network (``.npz``) has no ``predict`` and is left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from envs.core.spec import get_spec
from training.agents.policy import BASELINES, load_policy


def recorded_decisions(env_id: str, options: dict, agent, count: int, seed: int) -> list:
    """``count`` (observation, mask) pairs from the agent's seat in games against the heuristic."""
    import gymnasium

    env = gymnasium.make(get_spec(env_id).gym_id, opponent="heuristic", **options)
    rng = np.random.default_rng(seed)
    decisions = []
    observation, info = env.reset(seed=seed)
    while len(decisions) < count:
        mask = info["action_mask"]
        decisions.append((observation, mask))
        observation, _, terminated, truncated, info = env.step(agent.act(observation, mask, rng))
        if terminated or truncated:
            observation, info = env.reset()
    env.close()
    return decisions


def time_both(agent, decisions: list, repeats: int) -> tuple[dict, dict]:
    """Microseconds per decision of ``predict`` and ``act`` in each repeat, and their choices."""
    rng = np.random.default_rng(0)

    def by_predict(observation, mask):
        action, _ = agent.model.predict(
            observation, action_masks=mask.astype(bool), deterministic=True
        )
        return int(action)

    def by_act(observation, mask):
        return agent.act(observation, mask, rng)

    timings: dict[str, list[float]] = {"predict": [], "act": []}
    choices: dict[str, list[int]] = {}
    for _ in range(repeats):
        for label, choose in (("predict", by_predict), ("act", by_act)):
            start = time.perf_counter()
            choices[label] = [choose(o, m) for o, m in decisions]
            timings[label].append((time.perf_counter() - start) / len(decisions) * 1e6)
    return timings, choices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=1000, help="decisions timed per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="repeats; the median is shown")
    args = parser.parse_args()
    print("| baseline | predict (µs) | act (µs) | speed-up | same choices |")
    print("|---|---|---|---|---|")
    for path in sorted(BASELINES.glob("*.zip")):
        meta = json.loads(path.with_suffix(".json").read_text())
        spec = get_spec(meta["env_id"])
        agent = load_policy(path, spec.make_game(**meta["options"]), spec.aec_id)
        agent.deterministic = True  # greedy, also where it samples: SB3 draws with torch's rng
        decisions = recorded_decisions(spec.aec_id, meta["options"], agent, args.decisions, seed=0)
        timings, choices = time_both(agent, decisions, args.repeats)
        same = choices["predict"] == choices["act"]
        predict, act = (statistics.median(timings[k]) for k in ("predict", "act"))
        print(f"| {path.stem} | {predict:.0f} | {act:.0f} | {predict / act:.1f}× | {same} |")
        if not same:
            raise SystemExit(f"{path.stem}: act and predict chose differently")


if __name__ == "__main__":
    main()
