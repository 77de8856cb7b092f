"""Game-independent machinery, written once for every game.

| module | what it holds |
|---|---|
| `game.py` | the rules interface: `Game`, `State`, `Config`; action validation |
| `observation.py` | `ObservationLayout`: named views of one flat float32 vector |
| `table.py` | `Table`: commit-then-reveal bookkeeping, per-state caches, determinisation |
| `aec.py` | `HiddenHandAEC` (`raw_env` / `env()`) and `HiddenHandParallel` |
| `single_agent.py` | `SingleAgentEnv`, the Gymnasium view (one learner, opponents inside `step`) |
| `rewards.py` | the `win` and `score` reward modes |
| `spec.py`, `registration.py` | `GameSpec`, ids, factories, registration |
| `agents.py` | the agent protocol and the random agent |

Adding a game (see `envs/pico` for the smallest complete one):

1. `envs/<game>/rules.py`: a `Config` subclass (options; `validate` says what is
   allowed), a `State` subclass (`to_act`, `legal_mask`, `_apply`, `scores`,
   `__str__` as a spectator's view, `resample`, `check_invariants`) and a `Game`
   subclass (`num_actions`, `observation_layout`, `max_decisions`,
   `new_initial_state`, and `encode` or `observation`). No RL imports.
2. `envs/<game>/observation.py`: the layout and the encoder, from the observer's
   seat, with nothing the observer may not know.
3. `envs/<game>/__init__.py`: the documentation page as the module docstring, and
   `SPEC = GameSpec(...)` with the heuristic's entry point and the
   `configurations` the shared suites must cover; `raw_env, env, parallel_env =
   factories(SPEC)`.
4. Add the package name to `GAME_MODULES` in `envs/__init__.py`. The conformance
   and trust suites (`tests/test_conformance.py`, `tests/test_trust.py`) then run
   over it; add `tests/test_<game>.py` with a test for each rule.

Making it fast, once it is right (`scripts/step_costs.py` times each part): write
the plain `encode` first and keep it as the reference in the game's tests. Then
let the state keep everything its observations show in one float32 buffer, laid
out by absolute seat and written by the rules as they move, and override
`Game.observation` with one gather (`buffer.take(index[player])`, the index built
once per seat, pointing hidden entries at a zero); the core's `encode` then copies
from it. Keep legal moves and counts up to date rather than recounting them, plain
Python for values read one at a time, and check every kept value against a
recomputation from scratch in `check_invariants`, which the conformance suite runs
after every step.
"""

from envs.core.agents import Agent, RandomAgent
from envs.core.game import (
    ActionTypeError,
    Config,
    Game,
    IllegalActionError,
    State,
    counts,
    relative_seats,
    require_choice,
)
from envs.core.observation import ObservationLayout
from envs.core.spec import GameSpec

__all__ = [
    "ActionTypeError",
    "Agent",
    "Config",
    "Game",
    "GameSpec",
    "IllegalActionError",
    "ObservationLayout",
    "RandomAgent",
    "State",
    "counts",
    "relative_seats",
    "require_choice",
]
