"""Förslag observations, from the observer's seat (own seat first, then going left).

Multisets (hands, pool, unseen cards) are counts per card type (25 = 5 colours × 5
shapes, type ``colour * 5 + shape``); single cards (boards, Game and Round Cards)
are 10 wide: a colour one-hot then a shape one-hot, all zeros for no card.

Of another seat's hand only the cards they drafted and still hold are shown: the two
dealt cards stay hidden until played.

Speed: the state keeps every observed value up to date in one float32 buffer, by absolute
seat (``state_layout``), and an observation is one ``take`` of it with a per-observer index
array made once per game (``gather_index``), which also turns the rows to the observer's seat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.forslag.rules import ForslagGame

NUM_TYPES = 25
NUM_ATTRIBUTES = 10
#: Row ``t`` is the colour + shape one-hot of card type ``t``; row -1 (no card) is zeros.
ATTRIBUTE_ROWS = np.zeros((NUM_TYPES + 1, NUM_ATTRIBUTES), dtype=np.float32)
ATTRIBUTE_ROWS[np.arange(NUM_TYPES), np.arange(NUM_TYPES) // 5] = 1
ATTRIBUTE_ROWS[np.arange(NUM_TYPES), 5 + np.arange(NUM_TYPES) % 5] = 1


def max_score(num_players: int) -> int:
    """The most one board can score: 8 match points per card and 3 per card in the set."""
    return 11 * num_players


def layout(game: ForslagGame) -> ObservationLayout:
    n = game.num_players
    return (
        ObservationLayout()
        .add(
            "hands",
            (n, NUM_TYPES),
            "cards known to be in each seat's hand: all of the observer's own; for the "
            "others, the cards they drafted and still hold",
            high=2,
        )
        .add("pool", NUM_TYPES, "face-up pool cards of each type", high=2)
        .add(
            "unseen",
            NUM_TYPES,
            "copies of each type the observer has not seen (deck and others' dealt cards)",
            high=2,
        )
        .add("game_card", NUM_ATTRIBUTES, "the Game Card: colour one-hot, shape one-hot")
        .add(
            "round_cards",
            (n, NUM_ATTRIBUTES),
            "the Round Card of each round so far (row 0 is the Game Card; zeros: none yet)",
        )
        .add(
            "boards",
            (n, n, NUM_ATTRIBUTES),
            "each seat's board card at each position (zeros: not played yet)",
        )
        .add("round", n, "one-hot: the round being played (zeros at the end)")
        .add("start_player", n, "one-hot: this round's start player")
        .add("to_act", n, "1 for each seat that must choose now")
        .add("phase", 2, "one-hot: drafting, playing a board card")
        .add("scores", n, "each seat's score as it stands", high=max_score(n))
    )


def state_layout(game: ForslagGame) -> ObservationLayout:
    """The state's float32 buffer: its card counts and everything an observation shows, by
    absolute seat, so that any seat's observation is one gather (``gather_index``)."""
    n = game.num_players
    return (
        ObservationLayout()
        .add("hands", (n, NUM_TYPES), "each seat's whole hand", high=2)
        .add("known", (n, NUM_TYPES), "the cards each seat drafted and still holds", high=2)
        .add("pool", NUM_TYPES, "face-up pool cards of each type", high=2)
        .add("unrevealed", NUM_TYPES, "copies of each type not public (deck, dealt)", high=2)
        .add("unseen", (n, NUM_TYPES), "per seat: copies of each type it has not seen", high=2)
        .add("round_cards", (n, NUM_ATTRIBUTES), "Round Card one-hots (row 0: the Game Card)")
        .add("boards", (n, n, NUM_ATTRIBUTES), "each seat's board card one-hots")
        .add("round", n, "one-hot: the round being played (zeros at the end)")
        .add("start_player", n, "one-hot: this round's start player (zeros at the end)")
        .add("to_act", n, "1 for each seat that must choose now")
        .add("phase", 2, "one-hot: drafting, playing a board card (zeros at the end)")
        .add("scores", n, "each seat's score as it stands", high=max_score(n))
    )


def gather_index(game: ForslagGame, player: int) -> np.ndarray:
    """Where each entry of ``player``'s observation is in the state's buffer: the observation
    is ``buffer.take(gather_index(game, player))``. Rows from the observer's seat."""
    n = game.num_players
    # The buffer's positions, shaped as its fields; the index, shaped as the observation's.
    source = game.state_layout.views(np.arange(game.state_layout.size))
    index = np.full(game.observation_layout.size, -1, dtype=np.intp)
    target = game.observation_layout.views(index)
    seats = [(player + k) % n for k in range(n)]
    target["hands"][:] = source["known"][seats]
    target["hands"][0] = source["hands"][player]
    target["pool"][:] = source["pool"]
    target["unseen"][:] = source["unseen"][player]
    target["game_card"][:] = source["round_cards"][0]
    target["round_cards"][:] = source["round_cards"]
    target["boards"][:] = source["boards"][seats]
    target["round"][:] = source["round"]
    target["start_player"][:] = source["start_player"][seats]
    target["to_act"][:] = source["to_act"][seats]
    target["phase"][:] = source["phase"]
    target["scores"][:] = source["scores"][seats]
    assert (index >= 0).all(), "an observation entry has no source"
    return index
