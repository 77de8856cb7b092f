"""# Pico

| | |
|---|---|
| Ids | `hiddenhand/pico-v0` (PettingZoo aec + parallel), `hiddenhand/Pico-v0` (Gymnasium) |
| Agents | `player_0`, `player_1` (and `player_2` with 3 players) |
| Players | 2, or 3 with two sets |
| Action space | `Discrete(11)`: action `i` plays a card of value `(2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16)[i]` |
| Observation space | `Dict(observation=Box(float32, (35N + 14,)), action_mask=Box(int8, (11,)))` |
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
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` or `"human"` |

## Observation space

From the observer's seat: rows of per-seat fields are ordered own seat first, then
the others going left. Every hand is public knowledge to a careful player (the
aside card is face up, and with three players you saw the set you passed), so all
hands are shown. `N` is the number of players; 11 card values.

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

## Rules decisions

- Point values (missing from the rulebook's copy) are the later edition's for the
  shared cards; the `points` option changes them.
- The aside card is face up in both player counts.
- Three players: a highest card exactly equal to the sum of the other two wins.

## Version history

- v0: initial release.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.pico.rules import PicoGame

SPEC = GameSpec(
    game_class=PicoGame,
    name="pico",
    gym_name="Pico",
    agents={
        "heuristic": "training.agents.pico:PicoHeuristic",
        "nash": "training.agents.nash:PicoNash",
    },
    configurations=({"num_players": 2}, {"num_players": 3}),
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
