"""Pico observations the plain way: ``encode`` writes a player's observation field by
field from the state (as OpenSpiel's observers read a state), from the observer's seat:
rows of per-seat fields own seat first, then the others going left.

Every hand is known to a careful player (two players: the aside card is face up;
three players: you saw the set you passed, the aside card is face up, and the
third set is the rest), so hands are shown for every seat. With the two-player aside
card face down (``aside="face_down"``) round 1 hides the other hand: of its ``hand``
row only the cards it has shown, no ``aside``, and the extra field ``unseen`` (the other
hand's unshown cards and the aside card, which the observer cannot tell apart). From
round 2 the swap has shown both sets, and it is the face-up observation.

The game observes faster (``PicoState.observe``: one gather from the public table the
state keeps, see ``envs.pico.layout``); the tests check that both give the same vector
for every seat at every decision.
"""

from __future__ import annotations

import numpy as np

from envs.core.game import relative_seats
from envs.pico.rules import FaceDownPicoState, PicoState


def encode(state: PicoState, player: int) -> np.ndarray:
    """``player``'s observation of ``state`` (a new float32 array), written from the
    state's plain fields into the layout's named views."""
    game = state.game
    out = game.observation_layout.zeros()
    views = game.observation_layout.views(out)
    seats = relative_seats(player, game.num_players)
    hands, won = state.hands, state.won
    last_played, last_winners = state.last_played, state.last_winners
    scores = state.scores()

    for row, seat in enumerate(seats):
        views["hand"][row] = hands[seat]
        views["won"][row] = won[seat]
    views["aside"][:] = state.aside
    for row, seat in enumerate(seats):
        if last_played[seat] >= 0:  # -1 before the first reveal
            views["last_played"][row, last_played[seat]] = 1
        views["last_winners"][row] = last_winners[seat]
        views["scores"][row] = scores[seat]
    if not state.is_terminal():  # zeros at the end
        views["round"][state.round] = 1

    if isinstance(state, FaceDownPicoState) and state.round == 0:
        other = seats[1]
        views["hand"][1] = hands[other] * state.shown[other]  # its shown cards still held
        views["aside"][:] = 0  # face down
        views["unseen"][:] = state.unseen_by(player)
    return out
