"""Pickup's observation layout: what the rules and the encoders share.

- ``observation_layout``: the fields of one seat's observation, from its seat (own seat
  first, then the others going left), with their ranges: what the encoders write and
  agents read.
- ``table_layout``: the *table* every state keeps, one float32 vector holding every
  field of every seat's observation in absolute seat order; ``Cells``: where each of its
  fields starts (the rules write single cells through it).
- ``gather_index``: per observer, the table cells of its observation in order, so that
  an observation is one gather from the table.

Plain numbers in (player count, hand size, target), no state: ``rules.py`` builds its
game from these, and ``observation.py`` (the plain encoder) writes the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

#: Ranks 1-10; rank index ``r`` (0-9) is the card of face value ``r + 1``.
NUM_RANKS = 10
#: Cards dealt face up to the pool every round.
POOL_SIZE = 5
#: The most cards of one rank (ten 10s), which is also the highest face value.
MAX_PER_RANK = NUM_RANKS


def max_score(hand_size: int, target: int | None) -> int:
    """The highest total a player can show: below the target before the last hand, plus at
    most one card (<= 10 points) per round of that hand."""
    best_hand = MAX_PER_RANK * hand_size
    return best_hand if target is None else target - 1 + best_hand


def observation_layout(num_players: int, hand_size: int, target: int | None) -> ObservationLayout:
    """One seat's observation (``target``: the longer game's, None for a single hand)."""
    n, size = num_players, hand_size
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
        .add(
            "scores",
            n,
            "game points: earlier hands plus the score pile",
            high=max_score(size, target),
        )
        .add("round", size, "one-hot: the round of this hand (zeros at the end)")
    )


# --- the table every observation is gathered from ----------------------------------------
#: Observation fields showing only the observer's own row of a table field that holds every
#: seat's row (the table's name for each).
OWN_ROWS = {"hand": "hands", "unseen": "unseen"}
#: Observation fields with a row or cell per seat: every seat's, in observer order.
SEAT_FIELDS = ("piles", "revealed", "order", "last_actor", "dealer", "chooser", "scores")


def table_layout(num_players: int, hand_size: int) -> ObservationLayout:
    """Every seat's observation fields in absolute seat order (row or cell ``seat``, not
    observer order); ``hands`` and ``unseen`` hold every seat's row, and ``unshown`` (cards
    not shown this hand, not observed as such) is kept for computing ``unseen``."""
    n, rows = num_players, (num_players, NUM_RANKS)
    return (
        ObservationLayout()
        .add("hands", rows, "each seat's hand row")
        .add("unseen", rows, "each seat's unseen row: unshown minus its hand")
        .add("unshown", NUM_RANKS, "cards not shown this hand (not observed as such)")
        .add("pool", NUM_RANKS, "the pool")
        .add("piles", rows, "each seat's piles row")
        .add("revealed", rows, "each seat's revealed row")
        .add("order", n, "each seat's order cell")
        .add("last_actor", n, "each seat's last_actor cell")
        .add("dealer", n, "each seat's dealer cell")
        .add("chooser", n, "each seat's chooser cell")
        .add("scores", n, "each seat's scores cell")
        .add("round", hand_size, "one-hot round")
    )


@dataclass(frozen=True, slots=True)
class Cells:
    """Where each field of the table starts (the rules write ``start + seat * 10 + rank``
    for rows, ``start + seat`` for cells)."""

    hands: int
    unseen: int
    unshown: int
    pool: int
    piles: int
    revealed: int
    order: int
    last_actor: int
    dealer: int
    chooser: int
    scores: int
    round: int

    @classmethod
    def of(cls, table: ObservationLayout) -> Cells:
        return cls(**{name: field.start for name, field in table.fields.items()})


def gather_index(
    observation: ObservationLayout, table: ObservationLayout, player: int
) -> np.ndarray:
    """The ``table`` cells of ``player``'s ``observation``, in the observation's order: each
    observation field is the table field of its name (``hand``: ``hands``), its
    observer's own row (``OWN_ROWS``), every seat's rows or cells from the observer's seat
    (``SEAT_FIELDS``) or the whole field (the pool, the round)."""
    n = table.fields["order"].size
    seats = relative_seats(player, n)
    parts = []
    for name in observation.fields:
        source = table.fields[OWN_ROWS.get(name, name)]
        cells = np.arange(source.start, source.stop, dtype=np.intp)
        if name in OWN_ROWS:
            cells = cells.reshape(n, -1)[player]
        elif name in SEAT_FIELDS:
            cells = cells.reshape(n, -1)[seats].ravel()
        parts.append(cells)
    index = np.concatenate(parts)
    assert index.size == observation.size, "the table lacks cells of the observation"
    return index
