"""Pickup observations, from the observer's seat (own seat first, then going left).

Public: the pool, every score pile, the cards of the latest reveal (this round's
once revealed, else the previous round's) and the order they acted in, who acted
last, the dealer, whose pickup choice it is, scores and the round. Private: the
observer's own hand, and so the cards it has not seen. No other hand and no unrevealed
choice is ever shown.

``encode`` is the plain reference encoder: it reads the state's fields (hands, pool,
stock, piles, the reveal, the scores) into the named views of ``layout.observation_layout``,
one field after another. The observation the game hands out (``PickupGame.observation``)
is instead one gather from the table the rules keep up to date (``layout.py``); the
tests check that the two agree at every decision. ``build_table`` (the table written
plainly, defined in the rules since ``refresh`` uses it) is importable from here too.
"""

from __future__ import annotations

import numpy as np

from envs.core.game import counts, relative_seats
from envs.pickup.layout import NUM_RANKS
from envs.pickup.rules import NO_SEAT, RANK_VALUES, PickupState, build_table

__all__ = ["build_table", "encode"]


def encode(state: PickupState, player: int) -> np.ndarray:
    """``player``'s observation of ``state``, written plainly: a new float32 array."""
    layout = state.game.observation_layout
    flat = layout.zeros()
    views = layout.views(flat)
    n = state.game.num_players
    # Own hand and the pool.
    views["hand"][:] = state.hands[player]
    views["pool"][:] = state.pool
    # Unseen: the cards hidden from the player, the other hands and the stock.
    others = [seat for seat in range(n) if seat != player]
    views["unseen"][:] = np.sum([state.hands[seat] for seat in others], axis=0) + counts(
        state.stock, NUM_RANKS
    )
    # Every seat, from the player's seat going left.
    for row, seat in enumerate(relative_seats(player, n)):
        views["piles"][row] = state.piles[seat]
        if state.played[seat] != NO_SEAT:
            views["revealed"][row, state.played[seat]] = 1
        if seat in state.acted:
            views["order"][row] = state.acted.index(seat) + 1
        views["last_actor"][row] = seat == state.last_actor
        views["dealer"][row] = seat == state.dealer
        views["chooser"][row] = seat == state.chooser
        views["scores"][row] = state.banked[seat] + np.dot(state.piles[seat], RANK_VALUES)
    # The round of this hand, none at the end.
    if not state.finished:
        views["round"][state.round] = 1
    return flat
