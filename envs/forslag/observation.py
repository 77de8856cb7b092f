"""Förslag observations, from the observer's seat (own seat first, then going left).

Multisets (hands, pool, unseen cards) are counts per card type (25 = 5 colours × 5
shapes, type ``colour * 5 + shape``); single cards (boards, Game and Round Cards)
are 10 wide: a colour one-hot then a shape one-hot, all zeros for no card.

Of another seat's hand only the cards they drafted and still hold are shown: the two
dealt cards stay hidden until played.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.forslag.rules import ForslagGame, ForslagState

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


def encode(state: ForslagState, player: int, views: dict[str, np.ndarray]) -> None:
    game = state.game
    n = game.num_players
    # Rows from the observer's seat: the state keeps the boards and scores twice over, so
    # they are one slice; the drafted cards are two (no index arrays, no temporaries).
    hands = views["hands"]
    hands[: n - player] = state.known[player:]
    hands[n - player :] = state.known[:player]
    hands[0] = state.hands[player]
    views["boards"][:] = state.board_features[player : player + n]
    views["scores"][:] = state.totals[player : player + n]
    views["pool"][:] = state.pool
    # Unseen: not public and not among the observer's own dealt cards.
    unseen = views["unseen"]
    np.subtract(state.unrevealed, state.hands[player], out=unseen, casting="unsafe")
    np.add(unseen, state.known[player], out=unseen, casting="unsafe")
    views["game_card"][:] = ATTRIBUTE_ROWS[state.game_card]
    ATTRIBUTE_ROWS.take(state.round_cards, axis=0, out=views["round_cards"])
    if state.round >= game.num_rounds:
        return
    views["round"][state.round] = 1
    views["start_player"][(state.start_player - player) % n] = 1
    to_act = views["to_act"]
    for seat in state.to_act():
        to_act[(seat - player) % n] = 1
    views["phase"][state.phase] = 1
