"""What Pico's rules and its observation share: the card values, the observation's fields
(``observation_layout``), and the flat indices the rules write through.

Nothing is hidden with the aside card face up, so every observation is a seat rotation
of seat 0's: the state keeps seat 0's observation up to date at every reveal
(``PicoState.public``, written through the flat indices of ``PublicIndex`` and the
cached ``last_reveal`` fields), and a player's observation is one gather from it
(``seat_permutations``). With the two-player aside card face down, round 1 then hides
what the observer does not know (``HiddenIndex.hide``).

``envs.pico.observation.encode`` writes the same observation the plain way, field by
field from the state; the tests check the two against each other.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

#: The card values; action ``i`` plays a card of value ``VALUES[i]``.
VALUES: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16)
NUM_CARDS = len(VALUES)
#: Per player count, the number of rounds.
NUM_ROUNDS = {2: 2, 3: 3}
#: Upper bound of the ``scores`` field.
MAX_SCORE = 100
#: The fields with one row per seat (rotated to the observer's seat); the others are shared.
PER_SEAT_FIELDS = ("hand", "won", "last_played", "last_winners", "scores")


def observation_layout(num_players: int, face_down: bool) -> ObservationLayout:
    """The observation's fields with ``num_players`` seats; ``face_down``: the two-player
    aside card face down (``aside="face_down"``), which adds the field ``unseen``."""
    n = num_players
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
        .add("round", max(NUM_ROUNDS.values()), "one-hot: the round being played")
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

    def hide(self, observed: np.ndarray, shown: np.ndarray) -> None:
        """Round 1 of a gathered observation, in place: of the other hand keep only the
        cards it has ``shown`` (0/1 per value), and move its unshown cards and the aside
        card to ``unseen``."""
        other = observed[self.other_hand]  # a view: written in place
        observed[self.unseen] = other * (1.0 - shown) + observed[self.aside]
        other *= shown
        observed[self.aside] = 0.0
