"""Pico observations, from the observer's seat (own seat first, then going left).

Every hand is known to a careful player (two players: the aside card is face up;
three players: you saw the set you passed, the aside card is face up, and the
third set is the rest), so hands are shown for every seat.

Nothing is hidden, so every observation is a seat rotation of seat 0's: the state
keeps seat 0's observation up to date at every reveal (``PicoState.public``, written
through the flat indices of ``PublicIndex``), and a player's observation is one
gather from it (``seat_permutations``).

With the two-player aside card face down (``aside="face_down"``) round 1 hides the
other hand: ``face_down_observation`` gathers as above, then keeps of the other seat's
``hand`` row only the cards it has shown, clears ``aside`` and fills the extra field
``unseen`` (the other hand's unshown cards and the aside card, which the observer cannot
tell apart). From round 2 the swap has shown both sets, and it is the plain gather.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.pico.rules import PicoGame, PicoState

NUM_CARDS = 11
MAX_ROUNDS = 3
MAX_SCORE = 100
#: The fields with one row per seat (rotated to the observer's seat); the others are shared.
PER_SEAT_FIELDS = ("hand", "won", "last_played", "last_winners", "scores")


def layout(game: PicoGame) -> ObservationLayout:
    n = game.num_players
    face_down = game.config.aside == "face_down"
    hand = "cards of each value in each seat's hand"
    aside = "the face-up aside card"
    if face_down:
        hand += " (round 1: of the other seat's, only the cards it has shown)"
        aside = "the aside card (zeros in round 1, when it lies face down)"
    built = (
        ObservationLayout()
        .add("hand", (n, NUM_CARDS), hand, high=2)
        .add("won", (n, NUM_CARDS), "cards of each value each seat has won this round", high=2)
        .add("aside", NUM_CARDS, aside, high=1)
        .add("last_played", (n, NUM_CARDS), "one-hot: the card each seat showed last reveal")
        .add("last_winners", n, "1 for each seat that won the last reveal")
        .add("scores", n, "game points so far (all rounds)", high=MAX_SCORE)
        .add("round", MAX_ROUNDS, "one-hot: the round being played")
    )
    if face_down:
        built.add(
            "unseen",
            NUM_CARDS,
            "round 1: cards the observer has not seen (the other hand's unshown cards and "
            "the aside card)",
        )
    return built


@dataclass(frozen=True)
class PublicIndex:
    """Flat indices into seat 0's observation, where the rules write each reveal."""

    hand_rows: tuple[int, ...]  # per seat, the index of its hand's first card value
    won_rows: tuple[int, ...]
    scores: int  # + seat
    round: int  # + round
    hands: slice  # every seat's hand
    won: slice
    aside: slice
    last_reveal: slice  # last_played and last_winners, side by side (see ``last_reveal``)
    rounds: slice

    @classmethod
    def of(cls, layout: ObservationLayout, num_players: int) -> PublicIndex:
        f = layout.fields
        assert f["last_played"].stop == f["last_winners"].start

        def rows(name: str) -> tuple[int, ...]:
            return tuple(f[name].start + NUM_CARDS * seat for seat in range(num_players))

        def span(first: str, last: str) -> slice:
            return slice(f[first].start, f[last].stop)

        return cls(
            hand_rows=rows("hand"),
            won_rows=rows("won"),
            scores=f["scores"].start,
            round=f["round"].start,
            hands=span("hand", "hand"),
            won=span("won", "won"),
            aside=span("aside", "aside"),
            last_reveal=span("last_played", "last_winners"),
            rounds=span("round", "round"),
        )


def seat_permutations(layout: ObservationLayout, num_players: int) -> list[np.ndarray]:
    """Per observer, the indices that gather their observation from seat 0's: the rows of
    per-seat fields in the observer's seat order (own first, then going left)."""
    seat0 = layout.views(np.arange(layout.size))
    permutations = []
    for player in range(num_players):
        seats = relative_seats(player, num_players)
        flat = np.arange(layout.size)
        for name, view in layout.views(flat).items():
            if name in PER_SEAT_FIELDS:
                view[:] = seat0[name][seats]
        permutations.append(flat)
    return permutations


@functools.cache
def last_reveal(played: tuple[int, ...], won: tuple[int, ...]) -> np.ndarray:
    """The fields ``last_played`` and ``last_winners`` (side by side) after a reveal of the
    card indices ``played`` won by the seats ``won``, in seat order (read-only; cached: at
    most 11**3 reveals)."""
    n = len(played)
    shown = np.zeros(n * NUM_CARDS + n, dtype=np.float32)
    for seat, card in enumerate(played):
        shown[seat * NUM_CARDS + card] = 1
    for seat in won:
        shown[n * NUM_CARDS + seat] = 1
    shown.flags.writeable = False
    return shown


def observation(state: PicoState, player: int) -> np.ndarray:
    """``player``'s observation (a new float32 array), gathered from seat 0's."""
    return state.public.take(state.game.seat_permutations[player])


@dataclass(frozen=True)
class HiddenIndex:
    """Face down, two players: the spans of an observation that round 1 hides."""

    other_hand: slice  # the other seat's ``hand`` row (second in the observer's order)
    aside: slice
    unseen: slice

    @classmethod
    def of(cls, layout: ObservationLayout) -> HiddenIndex:
        f = layout.fields
        other = f["hand"].start + NUM_CARDS
        return cls(
            other_hand=slice(other, other + NUM_CARDS),
            aside=slice(f["aside"].start, f["aside"].stop),
            unseen=slice(f["unseen"].start, f["unseen"].stop),
        )


def face_down_observation(state: PicoState, player: int) -> np.ndarray:
    """``player``'s observation with the aside card face down (two players): the gather,
    then in round 1 the other hand's unshown cards and the aside card moved to ``unseen``."""
    observed = state.public.take(state.game.seat_permutations[player])
    if state.round == 0:
        at = state.game.hidden_index
        other = observed[at.other_hand]  # a view: written in place
        shown = state.shown[1 - player]
        observed[at.unseen] = other * (1.0 - shown) + observed[at.aside]
        other *= shown
        observed[at.aside] = 0.0
    return observed
