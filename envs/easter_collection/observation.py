"""Easter collection observations, the plain way: ``encode(state, player)`` reads the
state's rules fields into the named views of the observation layout
(``layout.observation_layout``), as OpenSpiel's observers read a state.

From the observer's seat: rows of per-seat fields are the observer's own first, then the
others going left. Only what the observer has seen: their own hand and their own
face-down bid; of the others, where their face-down bids lie (never which card they
are) until the reveal. Everything turned face up (collected bids, discards, leftover
table cards) is public.

The game's own ``EasterCollectionGame.observation`` returns the same, faster: one gather
from the buffer the state keeps up to date (``layout.gather_indices``). This encoder is
the reference it is tested against (``tests/test_easter_collection_observation.py``): it
reads the hands from ``hand_cards``, the table, bids, deck and stage from the rules'
Python fields, the face-up cards from the rules' arrays (``discards``, ``piles``,
``played``), and recomputes the scores from the piles; never the buffer's fields that
only mirror the rules (``layout.DERIVED``), nor its index tables.
"""

from __future__ import annotations

import numpy as np

from envs.core.game import relative_seats
from envs.easter_collection.layout import MAX_ROUNDS, NUM_CARDS
from envs.easter_collection.rules import (
    DISCARD,
    PHASE_DONE,
    PHASE_PLACE,
    POINTS,
    EasterCollectionState,
)


def encode(state: EasterCollectionState, player: int) -> np.ndarray:
    """``player``'s flat observation of ``state`` (a new float32 array)."""
    game = state.game
    n = game.num_players
    flat = game.observation_layout.zeros()
    views = game.observation_layout.views(flat)
    seats = relative_seats(player, n)  # row k is seat seats[k]
    placing = state.phase == PHASE_PLACE
    seen = np.zeros(NUM_CARDS, dtype=bool)  # the cards the observer has seen

    # What the observer holds: the hand, the hand discarded at the end (buried, but seen
    # by its owner) and, while bids are placed, their own face-down bid.
    for card in state.hand_cards[player]:
        views["hand"][card] = 1.0
        seen[card] = True
    seen |= state.final_hands[player]
    if placing:
        views["chosen"][state.chosen[player]] = 1.0
        seen[state.chosen[player]] = True

    # Face up: the table, the discards and the score piles. Every other card is unseen.
    for position, card in enumerate(state.table):
        if card >= 0:
            views["table"][position, card] = 1.0
            seen[card] = True
    views["discards"][:] = state.discards
    seen |= state.discards > 0
    seen |= state.piles.any(axis=0)
    views["unseen"][:] = ~seen

    # The deck and where the game stands (no bid and no phase at the end).
    views["deck"][0] = len(state.deck) - state.next_card
    views["round"][min(state.round, MAX_ROUNDS - 1)] = 1.0
    views["last_round"][0] = state.last_round
    if state.phase != PHASE_DONE:
        views["bid"][state.bid] = 1.0
        views["phase"][state.phase] = 1.0
    views["start"][seats.index(state.start_player)] = 1.0

    # Each seat, own seat first: where its face-down bid lies, its pile, its played cards
    # and its points (recomputed from the pile).
    for row, seat in enumerate(seats):
        target = state.target[seat]
        if placing and target >= 0:
            views["placed"][row] = 1.0
            if target != DISCARD:
                views["bids"][target, row] = 1.0
        views["score_piles"][row] = state.piles[seat]
        views["played"][row] = state.played[seat]
        views["scores"][row] = sum(POINTS[card] for card in np.flatnonzero(state.piles[seat]))
    return flat
