"""Game-independent machinery, written once for every game.

| module | what it holds |
|---|---|
| `game.py` | the rules interface: `Game`, `State`, `Config`; action validation |
| `observation.py` | `ObservationLayout`: named views of one flat float32 vector |
| `table.py` | `Table`: commit-then-reveal bookkeeping, per-state caches, determinisation |
| `aec.py` | `HiddenHandAEC` (`raw_env` / `env()`) and `HiddenHandParallel` |
| `single_agent.py` | `SingleAgentEnv`, the Gymnasium view (one learner, opponents inside `step`) |
| `rewards.py` | the `win` and `score` reward modes |
| `spec.py`, `registration.py` | `GameSpec`, ids, factories, registration; the agent plugins |
| `agents.py` | the agent protocol, the random agent, `decide` and `Position` (for search) |
| `render.py` | the render modes (text, printed, drawn as an image) |
| `batched.py` | `BatchedEngine`, the shared half of every batched engine |
| `vector.py`, `sb3_vec_env.py` | `make_vec` and its batched opponents; `BatchedVecEnv`, the SB3 `VecEnv` it returns |

Adding a game (see `envs/pico` for the smallest complete one):

1. `envs/<game>/layout.py`: the observation's fields (an `ObservationLayout`) and
   whatever offsets and constants the rules and the encoders share, each once.
2. `envs/<game>/rules.py` (imports the layout, never the encoder): a `Config`
   subclass (options; `validate` says what is allowed), a `State` subclass
   (`to_act`, `legal_mask`, `_apply`, `scores`, `__str__` as a spectator's view,
   `resample`, `check_invariants`) and a `Game` subclass (`num_actions`,
   `observation_layout`, `max_decisions`, `new_initial_state`, and `encode` or
   `observation`). No RL imports.
3. `envs/<game>/observation.py` (imports the rules): the plain encoder
   `encode(state, player)`, from the observer's seat, with nothing the observer may
   not know; the reference every faster path is tested against.
4. `envs/<game>/__init__.py`: the documentation page as the module docstring, and
   `SPEC = GameSpec(...)` with the `configurations` the shared suites must cover;
   `raw_env, env, parallel_env = factories(SPEC)`.
5. Add the `SPEC` to `GAMES` in `envs/__init__.py`. The conformance and trust suites
   (`tests/test_conformance.py`, `tests/test_trust.py`) then run over it; add
   `tests/test_<game>_*.py` with a test for each rule.
6. The game's rule-based agents (`envs/<game>/heuristic.py`, numpy only), named in
   `SPEC.rule_agents` (`{"heuristic": ...}`); agents that need more (trained
   policies, search) come from `training.agents`, registered as a plugin.
7. A batched engine (`envs/<game>/batched.py`, on `BatchedEngine`), named by
   `SPEC.engine`; `tests/test_batched_every_game.py` then checks it against the rules
   step by step and through `make_vec`, and `tests/test_batched_<game>.py` holds what
   is its own (its deals, phases, options).

Making it fast, once it is right (`scripts/measure/step_costs.py` times each part): keep
the plain `encode` as the reference. Then
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
