"""Record what the shipped agents choose on fixed positions, so that a refactor can show
it changed no choice (``tests/test_shipped_choices.py`` replays the positions and
compares).

    python scripts/record_choices.py            # writes tests/data/shipped_choices.json

Positions: the decisions of random games (seeds 0, 1, ...) of every configuration with a
shipped trained agent (``training/baselines/*.json``, recorded under the file's stem),
``POSITIONS`` per configuration. At each, the shipped ``ppo``
agent's choice (greedy, or drawn where its metadata says it samples) and the game's
rule-based agents' choices (with ``numpy.random.default_rng(position index)`` for their
draws and tie-breaks) are recorded; so are,
at every ``SEARCH_EVERY``-th position only (they search), the choices of the panel's
search members ``pimc`` and ``ismcts`` with the panel's budgets
(``training.evaluation.panel.SEARCH_BUDGETS``), asked through ``decide`` with the same
``rng``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

import envs
from envs.core.agents import decide
from envs.core.game import Game, State
from training.agents.policy import BASELINES
from training.agents.search import ISMCTS, PIMC
from training.evaluation.panel import SEARCH_BUDGETS

POSITIONS = 200
OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "shipped_choices.json"


def shipped() -> dict[str, tuple[str, dict]]:
    """Every configuration with a shipped agent, by its file's stem: (env id, options)."""
    found = {}
    for path in sorted(BASELINES.glob("*.json")):
        meta = json.loads(path.read_text())
        found[path.stem] = (meta["env_id"], meta["options"])
    return found


SHIPPED = shipped()
#: Agents too slow to ask at every position (a three-ply search): every tenth only.
SLOW = {"expert"}
#: The search members of the panel, asked at every ``SEARCH_EVERY``-th position only.
SEARCH = {"pimc": PIMC, "ismcts": ISMCTS}
SEARCH_EVERY = 20


def positions(game: Game, count: int) -> Iterator[tuple[State, int]]:
    """``count`` decisions of random games: ``(state, player)`` before the choice."""
    seen, seed = 0, 0
    while True:
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed + 10_000)
        while not state.is_terminal():
            joint = {}
            for player in state.to_act():
                yield state, player
                seen += 1
                if seen == count:
                    return
                joint[player] = int(rng.choice(np.flatnonzero(state.legal_mask(player))))
            state.apply(joint)
        seed += 1


def choices(env_id: str, options: dict, search: bool = False) -> dict[str, list[int]]:
    """Each agent's choices at the configuration's positions (-1 where not asked): the
    shipped and rule-based agents', or (``search``) the panel's search members'."""
    spec = envs.get_spec(env_id)
    game = spec.make_game(**options)
    if search:
        agents = {name: cls(game, **SEARCH_BUDGETS[name]) for name, cls in SEARCH.items()}
        every = {name: SEARCH_EVERY for name in agents}
    else:
        names = ["ppo", *spec.rule_agents]
        agents = {name: spec.make_agent(name, game) for name in names}
        every = {name: 10 if name in SLOW else 1 for name in agents}
    chosen: dict[str, list[int]] = {name: [] for name in agents}
    for i, (state, player) in enumerate(positions(game, POSITIONS)):
        observation = game.observation(state, player)
        mask = state.legal_mask(player).astype(np.int8)
        for name, agent in agents.items():
            if i % every[name]:
                chosen[name].append(-1)
                continue
            rng = np.random.default_rng(i)
            chosen[name].append(int(decide(agent, state, player, observation, mask, rng)))
    return chosen


def main() -> None:
    record = {
        name: choices(env_id, options) | choices(env_id, options, search=True)
        for name, (env_id, options) in SHIPPED.items()
    }
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in record.items()]
    OUTPUT.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {OUTPUT}: {sum(len(v['ppo']) for v in record.values())} positions")


if __name__ == "__main__":
    main()
