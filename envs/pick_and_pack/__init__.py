"""# Pick & Pack

| | |
|---|---|
| Ids | `hiddenhand/pick_and_pack-v0` (PettingZoo aec + parallel), `hiddenhand/PickAndPack-v0` (Gymnasium) |
| Agents | `player_0` (red), `player_1` (blue) |
| Players | 2 |
| Action space | `Discrete(138)`: one id per choice, in ranges (see below) |
| Observation space | `Dict(observation=Box(float32, (672,)), action_mask=Box(int8, (138,)))` |
| Hidden choice | tile placement: both arrange their 12 action tiles secretly, revealed together |
| Reward | `reward_mode="win"` (default, ±1 at the end, ties shared) or `"score"` (dense margin) |
| Length | at most 60 moves (each uses up a grid tray or a tile); at most 250 decisions (see Game length) |

36 apple trays (1-6 apples, exactly one 6) lie face up at random on a 6×6 grid, with
the grabber pawn on the 6. Red (`player_0`) moves the grabber along its current row,
blue (`player_1`) along its current column; each has 12 action tiles (two each of
Premium, Wholesale, Rush Order, Quality Control, Order Mix-up and Malfunction) on the
two ends of their lines: red's at the top and bottom of the 6 columns, blue's at the
left and right of the 6 rows. Each player has four packing crates.

On a turn the player moves the grabber to another space of their line. A face-up
tray there is grabbed into their open crate with the fewest trays (they choose on a
tie). An empty space may be the target only if one of their unplayed tiles sits at
either end of that line; they activate it (choosing the end if both hold different
tiles):

- Premium: close one of your open crates; it scores double.
- Wholesale: close one of the opponent's open crates; it scores half, rounded down.
- Rush Order: keep it; on a later turn, flip it right after a move for one extra move.
- Quality Control: take the top tray of an opponent's open crate into your open
  crate with the fewest trays.
- Order Mix-up: swap the top tray of one of the opponent's open crates with the top
  tray of one of your open crates.
- Malfunction: flip face down an unclaimed grid tray (it can never be grabbed or
  moved onto) or one of the opponent's unplayed tiles.

The game ends at once when a player has all four crates closed, or when the player
to move has no legal move. Open crates score 1 per apple, Premium 2, Wholesale half
(rounded down); the higher total wins, a tie is shared.

## Arguments

| option | default | meaning |
|---|---|---|
| `num_players` | 2 | 2 only |
| `tray_counts` | `(7, 7, 7, 7, 7, 1)` | trays with 1, 2, ..., 6 apples: six integers summing to 36, exactly one 6 |
| `placement` | `"simultaneous"` | `"simultaneous"` (secret, revealed together), `"alternate"` (one tile at a time, in turn, open), `"random"` (dealt at random) |
| `opponent_crates` | `"visible"` | `"visible"`: the opponent's top trays, tray counts and closures; `"full"`: their whole stacks |
| `chain_rush_orders` | `True` | several Rush Orders may be flipped one after another in one turn; `False`: at most one per turn |
| `targetless_actions` | `"spent"` | `"spent"`: a tile with no valid target may be activated and does nothing; `"unplayable"`: such a tile cannot be activated (its empty space is no target for it) |
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` (text), `"human"` (printed) or `"rgb_array"` (the text drawn as an image; needs Pillow, in the `train` extra): the board as a spectator sees it |

## Action space

`Discrete(138)`, one id per choice; the mask allows only the choices of the current
sub-step. A player's *line* is what they choose when moving: red a column, blue a
row. A tile space is `end * 6 + line` (end 0: top for red, left for blue; end 1:
bottom, right). The player's *frame* is the grid with their lines as columns (red:
`(row, col)`, blue: `(col, row)`), the frame of the observation.

| ids | choice | asked when |
|---|---|---|
| 0-71 | place a tile: `space * 6 + type` (types: Premium, Wholesale, Rush Order, Quality Control, Order Mix-up, Malfunction) | tile placement (the 12th tile places itself) |
| 72-77 | move the grabber to `line` | a move |
| 78-81 | one of your crates | the tray's crate on a fewest-trays tie (grab, Quality Control); Premium; Order Mix-up (your side) |
| 82-85 | one of the opponent's crates | Wholesale; Quality Control; Order Mix-up (their side) |
| 86-87 | activate the tile at `end` of the line | both ends hold different unplayed tiles |
| 88-123 | Malfunction the grid tray at `i * 6 + j` of your frame | Malfunction |
| 124-135 | Malfunction the opponent's tile at their space `end * 6 + line` | Malfunction |
| 136, 137 | use a Rush Order for an extra move / keep them and end the turn | after a move, holding a usable Rush Order |

Sub-decisions with one legal choice are resolved by the rules and not asked.

## Observation space

From the observer's seat: rows of per-seat fields are own seat first, then the
opponent. The grid is in the observer's frame (their lines are its columns, so they
always move along a row: blue sees the board transposed); an opponent's tile line is
a row of that frame. During simultaneous placement the opponent's tiles are zeros
until both arrangements are complete. The opponent's buried trays (and so their
score) are shown only with `opponent_crates="full"`.

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 0-35 | `trays` | 6 × 6 | 0-6 | apples on each face-up grid tray (observer's frame) |
| 36-71 | `face_down` | 6 × 6 | 0-1 | 1 for a face-down (unplayable) tray |
| 72-107 | `grabber` | 6 × 6 | 0-1 | one-hot: the grabber's cell |
| 108-251 | `tile_type` | 2 × 12 × 6 | 0-1 | one-hot type of each seat's tile spaces |
| 252-323 | `tile_state` | 2 × 12 × 3 | 0-1 | one-hot: unplayed, used by owner, malfunctioned |
| 324-331 | `crate_count` | 2 × 4 | 0-36 | trays in each crate |
| 332-339 | `crate_top` | 2 × 4 | 0-6 | apples on each crate's top tray (0: empty) |
| 340-627 | `crate_stack` | 2 × 4 × 36 | 0-6 | apples of each tray, bottom first (opponent: only if full) |
| 628-643 | `crate_closure` | 2 × 4 × 2 | 0-1 | one-hot: closed by Premium, by Wholesale |
| 644-647 | `rush_orders` | 2 × 2 | 0-2 | Rush Orders held: usable now, taken this turn |
| 648-649 | `tiles_placed` | 2 | 0-12 | tiles each seat has placed |
| 650-651 | `to_act` | 2 | 0-1 | one-hot: the seat to act (zeros while both place) |
| 652-662 | `phase` | 11 | 0-1 | one-hot: the sub-step being decided (zeros at the end) |
| 663-663 | `holding` | 1 | 0-6 | apples of the tray waiting for a crate |
| 664-667 | `mixup_crate` | 4 | 0-1 | one-hot: opponent crate chosen for an Order Mix-up |
| 668-669 | `scores` | 2 | 0-432 | points so far (opponent: only if full) |
| 670-671 | `color` | 2 | 0-1 | one-hot: the observer is red, blue |

`action_mask` marks the legal choices of the player to act. `state()` is both seats'
observations concatenated.

## Rewards

`"win"`: +1 / -1 at the end, 0 / 0 on a tie. `"score"`: the change in own points
minus the opponent's, every step; it adds up to the final margin. Note that dense
rewards follow the true crate values, including the opponent's buried trays.

## Game length

`game.max_decisions` bounds the decisions in one game (every chooser's action counts
one): 11 placement steps for each player (22; none with `placement="random"`), then
at most 36 + 24 = 60 moves, since each move takes a face-up tray from the grid or uses
an unplayed tile. A grab asks at most 3 decisions (the move, the crate on a tie, a Rush
Order), a tile at most 5 (the move, the end, two targets for Quality Control or Order
Mix-up, a Rush Order): 22 + 36 × 3 + 24 × 5 = 250 (228 with random placement).

## Determinisation

Every grab, flip and activation happens in the open, and the grid starts face up, so a
careful player knows every crate's stack (buried trays included, even when
`opponent_crates="visible"` leaves them out of the observation), every face-down tray
and every tile. The only hidden state is a secret placement under way:
`state.resample(player, rng)` then draws the opponent's arrangement so far again (as
many tiles as they have placed, types from their 12 tiles, on random spaces) and the
first player (drawn at the start, announced only when placement ends); everything else
is copied, with a fresh RNG. `has_hidden_state` is therefore true only with
`placement="simultaneous"`.

## Rules decisions

- Trays: seven each of 1-5 apples and one 6 (the `tray_counts` option).
- Axes: red moves along rows and owns the column ends; blue moves along columns and
  owns the row ends. The first player is drawn at random.
- Placement: simultaneous and secret by default (`placement`); in alternating
  placement the first player places first. Each step places one tile on a chosen
  space; the 12th tile goes to the last space by itself.
- Rush Orders: one taken this turn is usable from the next turn on; after any move
  (an extra move too) the player may flip a usable one to move again, several in a
  row (`chain_rush_orders`). The offer is made only if an extra move is possible.
- An action with no valid target is spent with no effect (`targetless_actions`).
  Order Mix-up needs a top tray on both sides.
- When both ends of the line hold the same type, the choice of end is not asked (it
  changes nothing).
- The game ends at once when a player's four crates are all closed, even in the
  middle of a turn (no extra move follows), or when the player to move has no legal
  move (an extra move is simply not offered).
- Visibility: each player sees the opponent's top trays, tray counts and closures
  (also the top tray of a closed crate, seen before it was covered), not buried
  trays (`opponent_crates="full"` shows them, as every grab was public). The render
  shows the same public view and all crates at the end.
- No turn cap is needed: every move removes a face-up tray from the grid or uses an
  unplayed tile, so a game has at most 36 + 24 = 60 moves.

## Modules

Dependencies run one way: `layout` ← `rules` ← `observation`.

- `layout.py`: the board's sizes, the observation's fields (`observation_layout`), the
  layout of the buffer each state keeps (`SOURCE`) with the offsets the rules write
  through, and each observer's gather from it (`gather_index`).
- `rules.py`: the game (`PickAndPackGame`, `PickAndPackState`); the state keeps its
  buffer `view` up to date move by move, and `PickAndPackGame.observation` gathers a
  player's observation from it (the fast observation).
- `observation.py`: `encode`, the plain reference encoder, field by field from the
  state (tested equal to the fast one).
- `heuristic.py`: the rule-based agents, `PickAndPackHeuristic`, `PickAndPackExpert` and
  `PickAndPackTactician`.
- `batched.py`: `PickAndPackVector`, thousands of games in lockstep as numpy arrays.

## Version history

- v0: initial release.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.pick_and_pack.batched import PickAndPackVector
from envs.pick_and_pack.heuristic import (
    PickAndPackExpert,
    PickAndPackHeuristic,
    PickAndPackTactician,
)
from envs.pick_and_pack.rules import PickAndPackGame

SPEC = GameSpec(
    game_class=PickAndPackGame,
    name="pick_and_pack",
    gym_name="PickAndPack",
    configurations=tuple(
        {"placement": placement, "opponent_crates": crates}
        for placement in ("simultaneous", "alternate", "random")
        for crates in ("visible", "full")
    ),
    engine=PickAndPackVector,
    rule_agents={
        "heuristic": PickAndPackHeuristic,
        "expert": PickAndPackExpert,
        "tactician": PickAndPackTactician,
    },
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
