"""# Pickup

| | |
|---|---|
| Ids | `hiddenhand/pickup-v0` (PettingZoo aec + parallel), `hiddenhand/Pickup-v0` (Gymnasium) |
| Agents | `player_0` ... `player_{N-1}`, N = 2-6 |
| Players | 2-6 (default 4) |
| Action space | `Discrete(10)`: action `r` means rank `r + 1` — play a card of that rank, or, in a pickup choice, pick up that rank |
| Observation space | `Dict(observation=Box(float32, (30 + 25N + H,)), action_mask=Box(int8, (10,)))`, H = hand size |
| Hidden choice | every round: all players choose a hand card face down, then all are revealed |
| Reward | `reward_mode="win"` (default, ±1 at the end with 2 players, ties shared) or `"score"` (dense margin) |

A set-collecting game with the 55-card Pairs deck (one 1, two 2s, ... ten 10s).
Each player is dealt a hand: 7 cards with 2 players, 6 with 3-4, 5 with 5-6; a
hand has as many rounds as cards in hand. Each round five cards are dealt face up
to the pool and every player secretly plays one card; all are revealed at once.
The played cards then act from lowest to highest; ties go to the tied player
reached first going left from the player who acted most recently (at the start
of a round: the last actor of the previous round; in round 1: the dealer).

When a card acts and the pool holds cards of its rank or lower, its player must
pick one of them up (choosing the rank when more than one is eligible): the
played card is discarded, the pickup goes face up to the player's score pile, and
every card of that rank left in the pool or in the *other* players' score piles
is knocked out (discarded). With no eligible pool card the played card is
*stacked* on the player's own score pile: nothing is knocked out, and it can be
knocked out later. After all have acted the leftover pool is discarded. When the
hands are empty the hand ends; each card in a score pile scores its face value.

The longer game (`target_score`) repeats hands — the whole deck reshuffled, the
dealer passing left — until, at the end of a hand, someone's total reaches the
target; the highest total wins.

## Arguments

| option | default | meaning |
|---|---|---|
| `num_players` | 4 | 2-6 |
| `target_score` | `None` | `None`: a single hand; an integer >= 1: play hands until a total reaches it; `"book"`: the rulebook's target, 150 (2 players), 100 (3-4), 75 (5-6) |
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` (text), `"human"` (printed) or `"rgb_array"` (the text drawn as an image; needs Pillow, in the `train` extra): the spectator's view |

## Action space

`Discrete(10)`; action `r` (0-9) names rank `r + 1` in both kinds of decision:

- play phase (every player at once, hidden): play a card of rank `r + 1` from hand;
- pickup choice (one player, public, only when at least two ranks are eligible):
  pick up a card of rank `r + 1` from the pool. A single eligible rank is picked
  up, and no eligible rank stacks, without asking.

`observation["chooser"]` tells the two apart: all zeros while playing.

## Observation space

From the observer's seat: rows of per-seat fields are ordered own seat first, then
the others going left. `N` is the number of players, `H` the hand size (7, 6 or 5);
ranks 1-10 are indices 0-9 of each 10-wide field. Size `30 + 25N + H`.

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 0-9 | `hand` | 10 | 0-H | own hand: cards of each rank |
| 10-19 | `pool` | 10 | 0-5 | the pool: cards of each rank |
| 20-29 | `unseen` | 10 | 0-10 | cards of each rank the observer has not seen this hand (deck minus own hand, pools dealt and cards revealed) |
| 30 - 30+10N-1 | `piles` | N × 10 | 0-H | each seat's score pile: cards of each rank |
| 30+10N - 30+20N-1 | `revealed` | N × 10 | 0-1 | one-hot: each seat's card in the latest reveal — this round's once revealed (during pickup choices), else the previous round's (in the play phase); zeros before the hand's first reveal |
| 30+20N - 30+21N-1 | `order` | N | 0-N | the position (1 = first) in which each seat acted after that reveal; 0 = not yet |
| 30+21N - 30+22N-1 | `last_actor` | N | 0-1 | one-hot: the seat that acted most recently (ties go to the first tied seat to its left) |
| 30+22N - 30+23N-1 | `dealer` | N | 0-1 | one-hot: the dealer of this hand |
| 30+23N - 30+24N-1 | `chooser` | N | 0-1 | one-hot: the seat choosing which rank to pick up; zeros in the play phase |
| 30+24N - 30+25N-1 | `scores` | N | 0-S | game points: earlier hands plus the score pile; S = 10H, or target - 1 + 10H in the longer game |
| 30+25N - 30+25N+H-1 | `round` | H | 0-1 | one-hot: the round of this hand (zeros at the end) |

`action_mask` marks the ranks in the player's hand while playing, and the eligible
pool ranks for the player making a pickup choice. `state()` is every seat's
observation concatenated (so it holds every hand).

## Rewards

The core's: `"win"` pays at the end (tied winners share); `"score"` pays at every
reveal and pickup choice the change in own score minus the others' mean, so
knockouts are felt at once.

## Game length

`game.max_decisions` bounds the decisions in one game (every chooser's action counts
one). A round asks every seat for a card (N decisions) and then at most min(N, 4)
pickup choices: a choice needs two ranks in the 5-card pool and every pickup empties
the pool of a rank. A hand is H rounds: at most H·(N + min(N, 4)) decisions (28 with
2 players, 36 with 3, 48 with 4, 45 with 5, 50 with 6). In the longer game every hand
adds at least 1 point to the sum of the totals (the last card to act in a hand stays
in its pile) and another hand is dealt only while every total is below the target, so
there are at most N·(target − 1) + 1 hands: the bound is that many times the one-hand
bound (a loose worst case; real games take a few hands).

## Determinisation

`state.resample(player, rng)` keeps everything `player` has seen — its own hand, the
pool, every score pile, the reveals and the order of play, the dealer, the scores,
the hand sizes, and so the cards it has not seen this hand (`unseen`). The cards
hidden from it (the other players' hands and the stock) are shuffled together and
dealt back: each other hand keeps its size, the rest becomes the stock in a new
order, so future pools differ too. Nothing else is hidden in Pickup: every played
card is revealed before it acts, and cards never return to a hand. The copy gets its
own RNG. `state.check_invariants()` checks that every card is in exactly one place
(hands, pool, piles, discard, the revealed cards still waiting to act, stock), that
the cards shown this hand are exactly those face up or discarded, the hand, pool and
stock sizes for the round, that scores are the banked points plus the piles, and the
bookkeeping of the reveal (each seat acts once, in order; a pending choice has at
least two ranks) and of the longer game.

## Rules decisions

- Pickup is compulsory when the pool holds an eligible card (the older printing's
  "will"); stacking happens only when none is eligible.
- The first-round tie rule starts left of the dealer in every hand of the longer
  game (each hand has its own dealer).
- The longer game ends only at the end of a hand in which some total reaches the
  target; the highest total then wins (ties shared). The deck is reshuffled for
  every hand. The 5-6 player target, lost from the copy, is 75 (an assumption).
- Default `num_players` is 4 (the middle of the range and the 6-card hand).
- The dealer is drawn from the seeded RNG; the pickup choice is a public step of
  its own (the other players see the options and the choice).

## Modules

Dependencies run one way: `layout` ← `rules` ← `observation`.

- `layout.py`: the constants both sides need (`NUM_RANKS`, `POOL_SIZE`), the
  observation's fields (`observation_layout`), the table of every seat's fields each
  state keeps (`table_layout`) with the offsets the rules write through (`Cells`), and
  each observer's gather from it (`gather_index`).
- `rules.py`: the game (`PickupGame`, `PickupState`) and the deck; the state keeps its
  table up to date move by move (`build_table` writes it from scratch), and
  `PickupGame.observation` gathers a player's observation from it (the fast observation).
- `observation.py`: `encode`, the plain reference encoder, field by field from the
  state (tested equal to the fast one).
- `heuristic.py`: `PickupHeuristic`, the rule-based agent, and its values for many rows
  at once (which the batched engine and the search's rollouts use).
- `batched.py`: `PickupVector`, thousands of games in lockstep as numpy arrays.

## Version history

- v0: initial release. Later in v0, without changing any game (the same seed deals
  and plays out the same game, with the same observations): determinisation
  (`resample`), invariant checks, `max_decisions`, faster rules and encoder.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.pickup.batched import PickupVector
from envs.pickup.heuristic import PickupHeuristic
from envs.pickup.rules import PickupGame

SPEC = GameSpec(
    game_class=PickupGame,
    name="pickup",
    gym_name="Pickup",
    configurations=(
        {"num_players": 2},
        {"num_players": 3},
        {"num_players": 4},
        {"num_players": 5},
        {"num_players": 6},
        {"num_players": 3, "target_score": 100},
    ),
    engine=PickupVector,
    rule_agents={"heuristic": PickupHeuristic},
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
