"""# Förslag

| | |
|---|---|
| Ids | `hiddenhand/forslag-v0` (PettingZoo aec + parallel), `hiddenhand/Forslag-v0` (Gymnasium) |
| Agents | `player_0` ... `player_{N-1}` |
| Players | 3-6 |
| Action space | `Discrete(50)`: `t` drafts a pool card of type `t`, `25 + t` plays a hand card of type `t` |
| Observation space | `Dict(observation=Box(float32, (10N² + 39N + 62,)), action_mask=Box(int8, (50,)))` |
| Hidden choice | with `board_play="simultaneous"`: every round all board cards are chosen face down, then shown |
| Reward | `reward_mode="win"` (default, at the end, ties shared) or `"score"` (dense margin) |

Fifty cards: five colours (red, yellow, green, blue, purple) × five shapes (circle,
square, triangle, star, heart), two of each. Everyone is dealt two hidden hand cards;
one card goes to the Match Board (the Game Card, which is also round 1's Round Card)
and players + 1 cards make the face-up pool. The game lasts as many rounds as there
are players. In a round, from the start player in seat order, each player drafts one
pool card into hand (everyone sees which), then plays one hand card face up to the
next position of their Board. The leftover pool card becomes the next Round Card, the
pool is refilled and the start player passes left.

Scoring, for each board card at position `r`: 1 point for matching the Game Card,
2 for matching round `r`'s Round Card, 1 for matching the right-hand neighbour's
(seat `i - 1`) card at position `r`; a match is a shared colour or shape, and each
line doubles when both match. Then the Largest Set, the most common single colour
or shape on the board, scores 3 points per card. Cards left in hand score 0.

Card type `t` is `colour * 5 + shape` in the orders above (0 = red circle, 24 =
purple heart).

## Arguments

| option | default | meaning |
|---|---|---|
| `num_players` | 4 | 3, 4, 5 or 6 |
| `board_play` | `"in_turn"` | `"in_turn"`: each player drafts then plays before the next; `"simultaneous"`: all draft in seat order, then all choose their board card face down and reveal together |
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` (text), `"human"` (printed) or `"rgb_array"` (the text drawn as an image; needs Pillow, in the `train` extra): the spectator's view |

## Observation space

From the observer's seat: per-seat rows are ordered own seat first, then the others
going left (row `N - 1` is the right-hand neighbour). Multisets are counts per card
type (25); single cards are 10 wide, a colour one-hot then a shape one-hot (zeros:
no card). Another seat's dealt cards are never shown: of their hand, only the cards
they drafted and still hold. `N` is the number of players.

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 0 - 25N-1 | `hands` | N × 25 | 0-2 | cards known in each hand: row 0 the observer's whole hand; other rows the cards that seat drafted and still holds |
| 25N - 25N+24 | `pool` | 25 | 0-2 | face-up pool cards of each type |
| 25N+25 - 25N+49 | `unseen` | 25 | 0-2 | copies of each type the observer has not seen (deck, others' dealt cards) |
| 25N+50 - 25N+59 | `game_card` | 10 | 0-1 | the Game Card |
| 25N+60 - 35N+59 | `round_cards` | N × 10 | 0-1 | the Round Card of each round so far (row 0 is the Game Card; zeros: none) |
| 35N+60 - 10N²+35N+59 | `boards` | N × N × 10 | 0-1 | each seat's board card at each position (zeros: empty) |
| 10N²+35N+60 - 10N²+36N+59 | `round` | N | 0-1 | one-hot: the round being played (zeros at the end) |
| 10N²+36N+60 - 10N²+37N+59 | `start_player` | N | 0-1 | one-hot: this round's start player (zeros at the end) |
| 10N²+37N+60 - 10N²+38N+59 | `to_act` | N | 0-1 | seats that must choose now |
| 10N²+38N+60 - 10N²+38N+61 | `phase` | 2 | 0-1 | one-hot: drafting, playing a board card (zeros at the end) |
| 10N²+38N+62 - 10N²+39N+61 | `scores` | N | 0-11N | every seat's score as it stands |

Sizes: 269 (3 players), 378 (4), 507 (5), 656 (6).

`action_mask` marks the pool's card types (actions 0-24) while drafting and the hand's
(25-49) while playing. `state()` is every seat's observation concatenated, so it shows
every hand.

## Rewards

The score "as it stands" scores the boards as if the game ended now (match points of
the cards played so far plus 3 per card of the current Largest Set), so with
`reward_mode="score"` points arrive as cards are played, including the neighbour
points a seat earns when its left-hand neighbour plays a matching card; at the end it
is the full score.

## Game length

At most `2N²` decisions (`max_decisions`): each of the `N` rounds asks every seat for
at most one draft and one board card (forced drafts are not asked).

## Determinisation

`state.resample(player, rng)` keeps everything `player` has seen: their own hand, the
pool, the boards, the Match Board and the cards each seat drafted and still holds.
The cards they have not seen, the deck and the other seats' dealt cards still in
hand, are shuffled together and dealt back: each seat keeps its number of hidden
cards and the rest is the new deck order. The copy gets its own RNG.

## Rules decisions

- Deck (RULES.md): 5 colours × 5 shapes × 2 copies; the colour and shape names are
  this package's own.
- The first start player is drawn from the seeded RNG; it passes left every round.
- `board_play` (RULES.md): `"in_turn"` (default) or `"simultaneous"`.
- Short deck (RULES.md, only 6 players): the deck cannot refill the round-6 pool, so
  it holds the last 2 cards: the first two players draft, the other four only play
  from hand. A round without a leftover pool card gives the next round no Round Card
  (its Round Card line scores 0); with the standard deck that never happens before
  the last round. The last round's leftover card is unused.
- Round 1: the Game Card is also the Round Card, so a card can score both lines.
- The neighbour line compares with seat `i - 1`'s card at the same position, whenever
  it is played (scoring is at the end; the running score counts it once both exist).
- Largest Set: the single most common colour or shape; ties do not matter.
- Decisions with one choice are not asked: a draft from an empty pool is skipped, a
  draft from a pool of one card type is made for the player. A board play is always
  asked, even from a hand of two identical cards (possible only in the 6-player last
  round), since skipping it would tell the table that the hidden hand is a pair. In
  simultaneous mode every seat is asked.
- Hands are hidden except the drafted cards (everyone saw them taken); when a player
  plays a type they drafted, it is taken to be the drafted copy (for the table the
  two copies are the same).

## Modules

Imports go one way: `layout` ← `rules` ← `observation`; `batched` imports `layout` and
`rules`.

- `layout.py`: what the rules and the encoders share: the card constants (colours,
  shapes, types, their one-hots), the observation's fields and the state buffer's
  (`observation_layout`, `state_layout`), the gather index of each seat's observation
  and the flat offsets the moves write through.
- `rules.py`: the game (`ForslagGame`, `ForslagState`): moves, scoring, determinisation;
  the state keeps its buffer up to date, so `ForslagGame.observation` is one gather.
- `observation.py`: `encode(state, player)`, the plain reference encoder the fast
  observation is tested against.
- `heuristic.py`: the rule-based agents, `ForslagHeuristic` and `ForslagExpert`.
- `batched.py`: `ForslagVector`, the batched engine.

## Version history

- v0: initial release.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.forslag.batched import ForslagVector
from envs.forslag.heuristic import ForslagExpert, ForslagHeuristic
from envs.forslag.rules import ForslagGame

SPEC = GameSpec(
    game_class=ForslagGame,
    name="forslag",
    gym_name="Forslag",
    configurations=tuple(
        {"num_players": n, "board_play": mode}
        for n in (3, 4, 5, 6)
        for mode in ("in_turn", "simultaneous")
    ),
    engine=ForslagVector,
    rule_agents={"heuristic": ForslagHeuristic, "expert": ForslagExpert},
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
