"""What Förslag's rules and observation encoders share: the cards, the fields, the offsets.

Cards: 25 types, 5 colours × 5 shapes (type ``colour * 5 + shape``), two copies of each.
Multisets are counts per type; a single card is 10 attributes, a colour one-hot then a
shape one-hot (``ATTRIBUTE_ROWS``; all zeros for no card).

Two layouts of named fields, for ``num_players`` seats:

- ``observation_layout``: one seat's observation, rows from the observer's seat (own seat
  first, then going left); the package docstring's table.
- ``state_layout``: the state's float32 buffer, by absolute seat: its card counts and
  everything an observation shows, which the rules keep up to date as the game goes.

And the tables that join them, made once per game: ``gather_index`` (any seat's
observation is one ``take`` of the buffer, which also turns the rows to the observer's
seat), ``buffer_offsets`` and ``others_unseen`` (the flat offsets the moves write
through), ``status_span`` and ``status_one_hots`` (the round, start player, to act and
phase one-hots, one span in both layouts).

This module imports neither the rules nor the encoders; both import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue", "purple")
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "heart")
#: A card type is ``colour * 5 + shape``; the deck holds ``COPIES`` copies of each type.
NUM_TYPES = len(COLOURS) * len(SHAPES)
NUM_ATTRIBUTES = len(COLOURS) + len(SHAPES)
COPIES = 2
COLOUR_OF = np.arange(NUM_TYPES) // len(SHAPES)
SHAPE_OF = np.arange(NUM_TYPES) % len(SHAPES)
#: The two attribute indices (colour, then 5 + shape) of each card type.
ATTRIBUTES_OF: tuple[tuple[int, int], ...] = tuple(
    zip(COLOUR_OF.tolist(), (len(COLOURS) + SHAPE_OF).tolist(), strict=True)
)
#: Row ``t`` is the colour + shape one-hot of card type ``t``; row -1 (no card) is zeros.
ATTRIBUTE_ROWS = np.zeros((NUM_TYPES + 1, NUM_ATTRIBUTES), dtype=np.float32)
ATTRIBUTE_ROWS[np.arange(NUM_TYPES), COLOUR_OF] = 1.0
ATTRIBUTE_ROWS[np.arange(NUM_TYPES), len(COLOURS) + SHAPE_OF] = 1.0


def observation_layout(num_players: int, max_score: int) -> ObservationLayout:
    """One seat's observation: per-seat rows from the observer's seat."""
    n = num_players
    return (
        ObservationLayout()
        .add(
            "hands",
            (n, NUM_TYPES),
            "cards known to be in each seat's hand: all of the observer's own; for the "
            "others, the cards they drafted and still hold",
            high=COPIES,
        )
        .add("pool", NUM_TYPES, "face-up pool cards of each type", high=COPIES)
        .add(
            "unseen",
            NUM_TYPES,
            "copies of each type the observer has not seen (deck and others' dealt cards)",
            high=COPIES,
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
        .add("scores", n, "each seat's score as it stands", high=max_score)
    )


def state_layout(num_players: int, max_score: int) -> ObservationLayout:
    """The state's float32 buffer: its card counts and everything an observation shows, by
    absolute seat, so that any seat's observation is one gather (``gather_index``)."""
    n = num_players
    return (
        ObservationLayout()
        .add("hands", (n, NUM_TYPES), "each seat's whole hand", high=COPIES)
        .add("known", (n, NUM_TYPES), "the cards each seat drafted and still holds", high=COPIES)
        .add("pool", NUM_TYPES, "face-up pool cards of each type", high=COPIES)
        .add("unrevealed", NUM_TYPES, "copies of each type not public (deck, dealt)", high=COPIES)
        .add("unseen", (n, NUM_TYPES), "per seat: copies of each type it has not seen", high=COPIES)
        .add("round_cards", (n, NUM_ATTRIBUTES), "Round Card one-hots (row 0: the Game Card)")
        .add("boards", (n, n, NUM_ATTRIBUTES), "each seat's board card one-hots")
        .add("round", n, "one-hot: the round being played (zeros at the end)")
        .add("start_player", n, "one-hot: this round's start player (zeros at the end)")
        .add("to_act", n, "1 for each seat that must choose now")
        .add("phase", 2, "one-hot: drafting, playing a board card (zeros at the end)")
        .add("scores", n, "each seat's score as it stands", high=max_score)
    )


def gather_index(
    state: ObservationLayout, observation: ObservationLayout, player: int
) -> np.ndarray:
    """Where each entry of ``player``'s observation is in the state's buffer: the observation
    is ``buffer.take(gather_index(state, observation, player))``. Rows from the observer's
    seat. ``state`` and ``observation`` are the two layouts above, for the same players."""
    # The buffer's positions, shaped as its fields; the index, shaped as the observation's.
    source = state.views(np.arange(state.size))
    index = np.full(observation.size, -1, dtype=np.intp)
    target = observation.views(index)
    seats = relative_seats(player, len(source["scores"]))
    target["hands"][:] = source["known"][seats]
    target["hands"][0] = source["hands"][player]
    target["pool"][:] = source["pool"]
    target["unseen"][:] = source["unseen"][player]
    target["game_card"][:] = source["round_cards"][0]
    target["round_cards"][:] = source["round_cards"]
    target["boards"][:] = source["boards"][seats]
    target["round"][:] = source["round"]
    target["start_player"][:] = source["start_player"][seats]
    target["to_act"][:] = source["to_act"][seats]
    target["phase"][:] = source["phase"]
    target["scores"][:] = source["scores"][seats]
    assert (index >= 0).all(), "an observation entry has no source"
    return index


def buffer_offsets(state: ObservationLayout) -> dict[str, Any]:
    """Flat offsets in the buffer (``state``, the state layout) for the moves: each field's
    start; per seat, its row of ``hands``, ``known`` and ``unseen`` (+ card type); per seat
    and position, its board card's one-hots in ``boards`` (+ attribute)."""
    fields = state.fields
    n = fields["scores"].size
    start = {name: field.start for name, field in fields.items()}
    offsets: dict[str, Any] = start | {
        name: tuple(start[name] + NUM_TYPES * p for p in range(n))
        for name in ("hands", "known", "unseen")
    }
    offsets["boards"] = tuple(
        tuple(start["boards"] + (p * n + r) * NUM_ATTRIBUTES for r in range(n)) for p in range(n)
    )
    return offsets


def others_unseen(offsets: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
    """Per seat: the offsets (``buffer_offsets``) of the other seats' unseen rows."""
    unseen = offsets["unseen"]
    return tuple(tuple(at for q, at in enumerate(unseen) if q != p) for p in range(len(unseen)))


def status_span(layout: ObservationLayout) -> slice:
    """The status one-hots (``round``, ``start_player``, ``to_act``, each ``n`` wide, then
    ``phase``, 2): one span, in either layout."""
    return slice(layout.fields["round"].start, layout.fields["phase"].stop)


def status_one_hots(
    num_players: int, phase: int, r: int, start_player: int, choosers: Iterable[int]
) -> np.ndarray:
    """The status span (``status_span``) of a position before the end: round ``r``,
    ``start_player`` and ``phase`` one-hot, 1 for each of the ``choosers``. Read-only."""
    n = num_players
    status = np.zeros(3 * n + 2, dtype=np.float32)
    status[r] = 1.0
    status[n + start_player] = 1.0
    for seat in choosers:
        status[2 * n + seat] = 1.0
    status[3 * n + phase] = 1.0
    status.flags.writeable = False
    return status
