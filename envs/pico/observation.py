"""Pico observations, from the observer's seat (own seat first, then going left).

Every hand is known to a careful player (two players: the aside card is face up;
three players: you saw the set you passed, the aside card is face up, and the
third set is the rest), so hands are shown for every seat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.pico.rules import PicoGame, PicoState

NUM_CARDS = 11
MAX_ROUNDS = 3
MAX_SCORE = 100


def layout(game: PicoGame) -> ObservationLayout:
    n = game.num_players
    return (
        ObservationLayout()
        .add("hand", (n, NUM_CARDS), "cards of each value in each seat's hand", high=2)
        .add("won", (n, NUM_CARDS), "cards of each value each seat has won this round", high=2)
        .add("aside", NUM_CARDS, "the face-up aside card", high=1)
        .add("last_played", (n, NUM_CARDS), "one-hot: the card each seat showed last reveal")
        .add("last_winners", n, "1 for each seat that won the last reveal")
        .add("scores", n, "game points so far (all rounds)", high=MAX_SCORE)
        .add("round", MAX_ROUNDS, "one-hot: the round being played")
    )


def seat_orders(num_players: int) -> list[np.ndarray]:
    """Per observer, the seats in observation order (own first, then going left)."""
    return [np.array(relative_seats(p, num_players)) for p in range(num_players)]


def encode(state: PicoState, player: int, views: dict[str, np.ndarray]) -> None:
    seats = state.game.seat_orders[player]
    views["hand"][:] = state.hands[seats]
    views["won"][:] = state.won[seats]
    views["aside"][:] = state.aside
    played = state.last_played[seats]
    if played[0] >= 0:  # everyone plays in every reveal
        views["last_played"][np.arange(len(seats)), played] = 1
    views["last_winners"][:] = state.last_winners[seats]
    views["scores"][:] = state.total_scores[seats]
    if state.round < state.game.num_rounds:
        views["round"][state.round] = 1
