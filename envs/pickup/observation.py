"""Pickup observations, from the observer's seat (own seat first, then going left).

Public: the pool, every score pile, the cards of the latest reveal (this round's
once revealed, else the previous round's) and the order they acted in, who acted
last, the dealer, whose pickup choice it is, scores and the round. Private: the observer's own hand, and so the cards it has not seen.
No other hand and no unrevealed choice is ever shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.pickup.rules import PickupGame, PickupState

NUM_RANKS = 10
POOL_SIZE = 5
MAX_PER_RANK = 10


def max_score(game: PickupGame) -> int:
    """The highest total a player can show: below the target before the last hand, plus at
    most one card (<= 10 points) per round of that hand."""
    best_hand = MAX_PER_RANK * game.hand_size
    return best_hand if game.target is None else game.target - 1 + best_hand


def layout(game: PickupGame) -> ObservationLayout:
    n, size = game.num_players, game.hand_size
    return (
        ObservationLayout()
        .add("hand", NUM_RANKS, "own hand: cards of each rank 1-10", high=size)
        .add("pool", NUM_RANKS, "the pool: cards of each rank", high=POOL_SIZE)
        .add(
            "unseen",
            NUM_RANKS,
            "cards of each rank not seen this hand (not in own hand, a pool or a reveal)",
            high=MAX_PER_RANK,
        )
        .add("piles", (n, NUM_RANKS), "each seat's score pile: cards of each rank", high=size)
        .add(
            "revealed",
            (n, NUM_RANKS),
            "one-hot: each seat's card in the latest reveal (this round's, else the last round's)",
        )
        .add(
            "order",
            n,
            "position (1 = first) each seat acted in after that reveal; 0 = not yet",
            high=n,
        )
        .add("last_actor", n, "one-hot: the seat that acted most recently (ties start left of it)")
        .add("dealer", n, "one-hot: the dealer of this hand")
        .add("chooser", n, "one-hot: the seat choosing which rank to pick up (zeros while playing)")
        .add("scores", n, "game points: earlier hands plus the score pile", high=max_score(game))
        .add("round", size, "one-hot: the round of this hand (zeros at the end)")
    )


def encode(state: PickupState, player: int, views: dict[str, np.ndarray]) -> None:
    game = state.game
    n = game.num_players
    hand = state.hands[player]
    views["hand"][:] = hand
    views["pool"][:] = state.pool
    views["unseen"][:] = state.unshown - hand
    # Seat rows in observer order: seats player..n-1, then 0..player-1 (two slice copies
    # are cheaper than a fancy index).
    piles, rest = views["piles"], n - player
    piles[:rest] = state.piles[player:]
    piles[rest:] = state.piles[:player]
    played = state.played
    if played[0] >= 0:  # after the hand's first reveal every seat has a played card
        revealed = views["revealed"]
        for row, seat in enumerate(game.seat_orders[player]):
            revealed[row, played[seat]] = 1
    order = views["order"]
    for position, seat in enumerate(state.acted, start=1):
        order[(seat - player) % n] = position
    views["last_actor"][(state.last_actor - player) % n] = 1
    views["dealer"][(state.dealer - player) % n] = 1
    if state.chooser >= 0:
        views["chooser"][(state.chooser - player) % n] = 1
    views["scores"][:] = state.totals[game.seat_index[player]]
    if not state.finished:
        views["round"][state.round] = 1
