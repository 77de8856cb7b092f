"""# Easter collection

| | |
|---|---|
| Ids | `hiddenhand/easter_collection-v0` (PettingZoo aec + parallel), `hiddenhand/EasterCollection-v0` (Gymnasium) |
| Agents | `player_0` ... `player_{N-1}` |
| Players | 2-5 |
| Action space | standard: `Discrete(56)`; `variant="secret_positions"`: `Discrete(260)` (see below) |
| Observation space | `Dict(observation=Box(float32, (428 + 111N,)), action_mask=Box(int8, (num_actions,)))` |
| Hidden choice | every bid: all players choose a hand card face down at the same time |
| Reward | `reward_mode="win"` (default, ±1 at the end, ties shared) or `"score"` (dense margin) |

A standard 52-card deck. Each round, 4 cards are dealt face up to the table
(positions 1-4) and the hands are dealt up to 4 cards, one card at a time from the
start player. Then come two bids. In a bid every player secretly chooses a hand card;
then, from the start player going left, each places it face down beside a table
card of the same suit (choosing which when several match; placed without asking
when one matches), or, when no table card has its suit, discards it face up. The
bids are turned up: a lone bid takes the table card and the bid into its owner's
score pile; with several bids the highest takes the table card and all the bids on
it. Number cards bid their value, an Ace bids 1, and J/Q/K mirror the value of the
table card they bid on; between face cards of equal mirrored value K > Q > J. A
second bid follows if table cards remain (always with 2-3 players); then the
leftover table cards are discarded face up and the start player passes left.

The deck runs out: when it cannot bring every hand to 4, the round is the last one
and each player gets one more card if the deck has one for everybody, else none;
the rest of the deck is discarded unseen. A round that starts with fewer than 4
cards in the deck puts them all on the table, deals no hand cards and is the last.
A round in which the deck is used up exactly is also the last. So with bids in every
round the game has 6 rounds (2 players), 5 (3), 4 (4) or 3 (5); with 4-5 players a
first bid that takes all four table cards leaves the hands fuller and may add a round.
At the end, cards left in hand are discarded. Score pile: 2-10 are 1 point, J/Q/K 2,
Aces 3; the highest total wins (ties share the win).

**Secret positions** (`variant="secret_positions"`): each bid, every player chooses a
card and a position chip (1-4, or blank) together in one hidden choice; there is no
placing step. A chip must name a position whose table card has the card's suit when
there is one; the blank chip (discarding the card face up) only when there is none.

**Speed collection** is not provided: its start player is whoever puts a card down
last in real time, which a turn-based environment cannot express.

## Arguments

| option | default | meaning |
|---|---|---|
| `num_players` | 2 | 2, 3, 4 or 5 |
| `variant` | `"standard"` | `"standard"` or `"secret_positions"` |
| `table_face_value` | `"zero"` | what a J/Q/K table card is worth to a face card mirroring it: `"zero"` (0, so any number bid beats a face bid on it) or `"rank"` (11/12/13, so a face bid beats every number bid on it) |
| `reward_mode` | `"win"` | `"win"` or `"score"` (see the core docs) |
| `render_mode` | `None` | `"ansi"` (text), `"human"` (printed) or `"rgb_array"` (the text drawn as an image; needs Pillow, in the `train` extra): the spectator's view |

## Observation space

From the observer's seat: rows of per-seat fields are ordered own seat first, then the
others going left. Cards are indices 0-51, `suit * 13 + rank`, ranks A, 2-10, J, Q, K
and suits clubs, diamonds, hearts, spades. `N` is the number of players.

| indices | field | shape | range | meaning |
|---|---|---|---|---|
| 0-51 | `hand` | 52 | 0-1 | own hand |
| 52-103 | `chosen` | 52 | 0-1 | own face-down bid waiting to be placed (standard, placing phase) |
| 104-311 | `table` | 4 × 52 | 0-1 | one-hot: the card at each table position (zeros when empty) |
| 312-363 | `discards` | 52 | 0-1 | the face-up discard pile: unmatched bids, leftover table cards |
| 364-415 | `unseen` | 52 | 0-1 | cards the observer has never seen (in the deck, in other hands, face-down bids, discarded unseen) |
| 416 | `deck` | 1 | 0-52 | cards left in the deck |
| 417-418 | `bid` | 2 | 0-1 | one-hot: first or second bid of the round |
| 419-424 | `round` | 6 | 0-1 | one-hot: the round |
| 425 | `last_round` | 1 | 0-1 | 1 when this round is known to be the last |
| 426-427 | `phase` | 2 | 0-1 | one-hot: choosing a card, placing it (zeros at the end) |
| 428 - 427+N | `start` | N | 0-1 | one-hot: the round's start player |
| 428+N - 427+5N | `bids` | 4 × N | 0-1 | face-down bids: 1 where a seat has placed a bid beside a position (placing phase) |
| 428+5N - 427+6N | `placed` | N | 0-1 | seats that have placed or discarded this bid's card (placing phase) |
| 428+6N - 427+58N | `score_piles` | N × 52 | 0-1 | the cards in each seat's score pile |
| 428+58N - 427+110N | `played` | N × 52 | 0-1 | the cards each seat has played and shown (bids after the reveal, discards) |
| 428+110N - 427+111N | `scores` | N | 0-72 | points in each seat's score pile |

A face-down bid shows only where it lies and whose it is, never which card it is,
until the reveal. `state()` is every seat's observation concatenated (it holds every
hand, and the face-down bids of the placing phase).

## Action space

- Standard, `Discrete(56)`: action `c` (0-51) plays card `c` face down; action
  `52 + k` places it beside table position `k + 1`. Placing is asked only of a
  player whose card matches several table cards; a single match places the card
  and no match discards it without asking; a hand of one card is played without
  asking.
- Secret positions, `Discrete(260)`: action `chip * 52 + card`; chips 0-3 name
  positions 1-4, chip 4 is the blank chip.

`action_mask` marks the legal actions while it is the player's choice.

## Rules decisions

- As a table card an Ace is worth 1 and J/Q/K are worth 0 to a mirroring face card
  (option `table_face_value="rank"` makes them 11/12/13). Bids on one table card share
  its suit, so two bids can never tie: numbers differ, and face cards break ties K > Q > J.
- A round starting with fewer than 4 cards in the deck puts them on the table, deals
  no hand cards and is the last round.
- Cards left in the deck when the last round is dealt are discarded face down (nobody
  sees them); leftover table cards and unmatched bids are discarded face up. The cards
  left in hand at the end are discarded face down: still unseen by the others, and seen
  by their owner (its final observation does not count them as `unseen`).
- A bid needs a card in every hand and one on the table. A full deck always has both;
  a short scripted deck (`EasterCollectionState(..., deck=...)`) can reach a bid without
  (a first round that deals no hand cards, or one card each that the first bid uses
  up): the round, its last, ends there, and so does the game.
- Hands are dealt one card at a time starting with the start player. The first start
  player is drawn at random; both bids of a round are placed from the round's start
  player.
- Secret positions: a chip must name a position with the card's suit when one exists;
  blank means discard. Every player is asked even when their card and chip are forced,
  since skipping a player would reveal something about their hidden card.

## Game length

At most `max_decisions = k × N × ⌊48 / N⌋` decisions (each chooser's action counts one;
`k` = 2 in the standard game, 1 with secret positions): 96, 96, 96, 90 decisions for 2-5
players (48, 48, 48, 45 with secret positions). Every bid takes one card from each hand
and the hands get at most the 48 cards left after the first round's table, so a game
has at most ⌊48 / N⌋ bids; a bid asks every seat to choose a card and, in the standard
game, each seat at most once more to place it.

## Determinisation

`state.resample(player, rng)` deals again, at random, every card `player` has not seen:
the rest of the deck (in a new order), the other hands, the other seats' face-down
bids of the placing phase and the cards discarded unseen (the end of the deck in the
last round, the other hands at the end; its own stays its own). What is fixed: `player`'s hand and own bid, the
table, the score piles, the face-up discards, who has placed where, hand sizes, the
deck size, the round and the start player. Public constraints are kept: a bid lying
beside a table card has that card's suit, and the bid of the seat being asked to place
has a suit that matches several table cards (that is why it is asked). With secret
positions no bid is ever face down between decisions (cards and chips are revealed
together). The sample has its own RNG, so later chance events differ too.

## Modules

Dependencies run one way: `layout` ← `rules` ← `observation`; `batched` imports `layout`
and `rules`.

- `layout.py`: what the rules and the encoders share: the sizes both need (cards,
  positions, rounds shown, the highest score), the observation's fields
  (`observation_layout`), the layout of the buffer each state keeps (`source_layout`)
  with the flat offsets the rules write through (`SourceOffsets`), each observer's
  gather from it (`gather_indices`) and a new state's buffer (`initial_source`).
- `rules.py`: the game (`EasterCollectionGame`, `EasterCollectionState`): deals, bids,
  reveals, determinisation; the state keeps its buffer `source` up to date move by move,
  and `EasterCollectionGame.observation` gathers a player's observation from it (the
  fast observation).
- `observation.py`: `encode`, the plain reference encoder, field by field from the
  state (tested equal to the fast one).
- `heuristic.py`: the rule-based agents, `EasterCollectionHeuristic` and
  `EasterCollectionExpert`.
- `batched.py`: `EasterCollectionVector`, thousands of games in lockstep as numpy arrays.

## Version history

- v0: initial release.
"""

from envs.core.registration import factories
from envs.core.spec import GameSpec
from envs.easter_collection.batched import EasterCollectionVector
from envs.easter_collection.heuristic import EasterCollectionExpert, EasterCollectionHeuristic
from envs.easter_collection.rules import EasterCollectionGame

SPEC = GameSpec(
    game_class=EasterCollectionGame,
    name="easter_collection",
    gym_name="EasterCollection",
    configurations=tuple(
        {"num_players": n, "variant": variant}
        for n in (2, 3, 4, 5)
        for variant in ("standard", "secret_positions")
    ),
    engine=EasterCollectionVector,
    rule_agents={"heuristic": EasterCollectionHeuristic, "expert": EasterCollectionExpert},
)
raw_env, env, parallel_env = factories(SPEC)

__all__ = ["SPEC", "env", "parallel_env", "raw_env"]
