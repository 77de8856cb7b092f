"""# Pico

| | |
|---|---|
| Ids | `hiddenhand/pico-v0` (PettingZoo aec + parallel), `hiddenhand/Pico-v0` (Gymnasium) |
| Agents | `player_0`, `player_1` (and `player_2` with 3 players) |
| Players | 2, or 3 with two sets |
| Action space | `Discrete(11)`: action `i` plays a card of value `(2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16)[i]` |
| Observation space | `Dict(observation=Box(float32, (35N + 14,)), action_mask=Box(int8, (11,)))`; `aside="face_down"`: `(95,)` |
| Hidden choice | every reveal: all players choose a card face down, then all are shown |
| Reward | `reward_mode="win"` (default, ±1 at the end, ties shared) or `"score"` (dense margin) |

Two players hold five cards each from the eleven (2-10, 13 and 16); the
eleventh is set aside face up. Both choose a card secretly and reveal: the
higher wins unless it is more than twice the lower (10 beats 5, 4 beats 10,
16 beats 8, 7 beats 16). The winning card is set aside in front of its owner and
scores its points; the losing card returns to its owner's hand. The round ends
the moment a player holds exactly one card. The players swap their original five
cards for a second round; the higher two-round total wins.

Three players use two sets without both 2s and one 3 (19 cards): six each, one
aside face up, and each passes the dealt hand to the left before round 1. If two
show the same value, both win; otherwise the highest wins unless it is greater
than the sum of the other two, and then the lowest wins. Hands pass right
between rounds; three rounds in all.

## Arguments

| option | default | meaning |
|---|---|---|
| `num_players` | 2 | 2, or 3 (two sets) |
| `points` | 2,3,4→1; 5,6,7→2; 8,9,10,13→3; 16→4 | card value → points |
| `aside` | `"face_up"` | the two-player aside card: `"face_up"` (both hands public) or `"face_down"` (round 1's other hand hidden; see below); 3 players: `"face_up"` only |
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` (text), `"human"` (printed) or `"rgb_array"` (the text drawn as an image; needs Pillow, in the `train` extra): the spectator's view |

## Observation space

From the observer's seat: rows of per-seat fields are ordered own seat first, then
the others going left. Every hand is public knowledge to a careful player (the
aside card is face up, and with three players you saw the set you passed), so all
hands are shown (but see `aside="face_down"` below). `N` is the number of players; 11 card values.

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 0 - 11N-1 | `hand` | N × 11 | 0-2 | cards of each value in each seat's hand |
| 11N - 22N-1 | `won` | N × 11 | 0-2 | cards each seat has won this round |
| 22N - 22N+10 | `aside` | 11 | 0-1 | the face-up aside card |
| 22N+11 - 33N+10 | `last_played` | N × 11 | 0-1 | one-hot: the card each seat showed last reveal |
| 33N+11 - 34N+10 | `last_winners` | N | 0-1 | seats that won the last reveal |
| 34N+11 - 35N+10 | `scores` | N | 0-100 | game points so far, all rounds |
| 35N+11 - 35N+13 | `round` | 3 | 0-1 | one-hot: the round being played (zeros at the end) |

`action_mask` marks the values in the player's hand while it is their choice.
`state()` is every seat's observation concatenated.

### `aside="face_down"` (two players)

The aside card lies face down, so in round 1 a player knows its own five cards and, of
the other hand, only the cards it has shown at a reveal (won or lost); its other cards
and the aside card are among the six the player was not dealt, in an order it cannot
tell. The layout above gets one more field, and two fields hide round 1's unknowns:

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 11 - 21 | `hand` (other seat's row) | 11 | 0-1 | round 1: only the other seat's shown cards still in its hand (zeros for the unknown ones) |
| 44 - 54 | `aside` | 11 | 0-1 | zeros in round 1; the aside card from round 2 |
| 84 - 94 | `unseen` | 11 | 0-1 | round 1: the cards the observer has not seen, the other hand's unshown cards and the aside card (one more than the other hand's unknown cards); zeros from round 2 |

In round 2 the players swap their original sets, so each holds the other's set and
knows both, and the aside card is the one card in neither: the observation is then the
face-up one (both hands, the aside card, `unseen` zeros). The render hides the same
(`?` for an unknown card; `render_for` adds the player's hand and unseen cards), and
`has_hidden_state` is true: `state.resample(player, rng)` deals the player's unseen cards
again between the other hand (which keeps its shown cards, size and won pile) and the
aside card. The `nash` agent and the exact solver need public hands and refuse this
reading, as does the shipped `ppo` baseline (trained face up); the heuristic assumes the other hand is any of the unseen cards but one,
equally likely.

## Rules decisions

- Point values (missing from the rulebook's copy) are the later edition's for the
  shared cards; the `points` option changes them.
- The aside card is face up in both player counts by default. With two players the
  rulebook's copy says only that the extra card "is put aside and not used" (face up is
  stated for three players), so `aside="face_down"` offers the other reading (see
  above); with three players the book says face up and `"face_down"` is refused.
- Face down, a player remembers every card the other has shown in round 1, and from
  round 2 knows the aside card by elimination: the observation shows it then.
- Three players: a highest card exactly equal to the sum of the other two wins.

## Modules

Dependencies run one way: `layout` ← `rules` ← `observation`.

- `layout.py`: the card values, the observation's fields (`observation_layout`), and
  the flat indices and per-seat gathers the rules write and read the public table through.
- `rules.py`: the game (`PicoGame`, `PicoState`); the state keeps seat 0's observation up
  to date and `observe` gathers a player's from it (the fast observation).
- `observation.py`: `encode`, the plain reference encoder, field by field from the state
  (tested equal to the fast one).
- `heuristic.py`: `PicoHeuristic`, the rule-based agent, and its values for many rows
  at once (which the batched engine and the search's rollouts use).
- `batched.py`: `PicoVector`, thousands of games in lockstep as numpy arrays.

## Version history

- v0: initial release.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.pico.batched import PicoVector
from envs.pico.heuristic import PicoHeuristic
from envs.pico.rules import PicoGame

SPEC = GameSpec(
    game_class=PicoGame,
    name="pico",
    gym_name="Pico",
    configurations=(
        {"num_players": 2},
        {"num_players": 3},
        {"num_players": 2, "aside": "face_down"},
    ),
    engine=PicoVector,
    rule_agents={"heuristic": PicoHeuristic},
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
