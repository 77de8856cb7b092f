"""Förslag observations, the plain way: ``encode(state, player)`` reads the state's rules
fields into the named views of the observation layout (``layout.observation_layout``), as
OpenSpiel's observers read a state.

From the observer's seat: per-seat rows are the observer's own first, then the others
going left. Multisets (hands, pool, unseen cards) are counts per card type; single cards
(boards, Game and Round Cards) are 10 wide, a colour one-hot then a shape one-hot, all
zeros for no card. Of another seat's hand only the cards they drafted and still hold are
shown: the two dealt cards stay hidden until played.

The game's own ``ForslagGame.observation`` returns the same, faster: one gather from the
buffer the state keeps up to date (``layout.gather_index``). This encoder is the
reference it is tested against (``tests/test_forslag_observation.py``): it reads neither
the buffer's running values nor its index tables, and recomputes the scores.
"""

from __future__ import annotations

import numpy as np

from envs.core.game import counts, relative_seats
from envs.forslag.layout import COLOUR_OF, COLOURS, NUM_TYPES, SHAPE_OF
from envs.forslag.rules import ForslagState, score_boards


def write_card(view: np.ndarray, card: int) -> None:
    """A single card's 10 attributes: its colour, then its shape (-1, no card: left zeros)."""
    if card >= 0:
        view[COLOUR_OF[card]] = 1.0
        view[len(COLOURS) + SHAPE_OF[card]] = 1.0


def encode(state: ForslagState, player: int) -> np.ndarray:
    """``player``'s flat observation of ``state`` (a new float32 array)."""
    game = state.game
    n = game.num_players
    flat = game.observation_layout.zeros()
    views = game.observation_layout.views(flat)
    seats = relative_seats(player, n)  # row k is seat seats[k]

    # Hands: the observer's whole hand; of the others, the drafted cards still held.
    for row, seat in enumerate(seats):
        views["hands"][row] = state.hands[seat] if seat == player else state.known[seat]
    views["pool"][:] = state.pool
    # Not seen by the observer: the deck and the other seats' dealt cards still in hand.
    unseen = counts(state.deck, NUM_TYPES)
    for seat in range(n):
        if seat != player:
            unseen = unseen + state.hands[seat] - state.known[seat]
    views["unseen"][:] = unseen

    # The Match Board and the boards, one card at a time.
    write_card(views["game_card"], state.game_card)
    for r, card in enumerate(state.round_cards):
        write_card(views["round_cards"][r], card)
    for row, seat in enumerate(seats):
        for position, card in enumerate(state.boards[seat]):
            write_card(views["boards"][row, position], card)

    # Whose turn, in what round and phase (all zeros at the end).
    if not state.is_terminal():
        views["round"][state.round] = 1.0
        views["start_player"][seats.index(state.start_player)] = 1.0
        for seat in state.to_act():
            views["to_act"][seats.index(seat)] = 1.0
        views["phase"][state.phase] = 1.0

    # The scores as they stand, recomputed from the boards.
    scores = score_boards(state.boards, state.game_card, state.round_cards)
    views["scores"][:] = scores[seats]
    return flat
