"""What Easter collection's rules and observation encoders share: the fields, the offsets.

- The sizes both sides need (cards, table positions, rounds shown, the highest score),
  each declared here once.
- ``observation_layout``: one seat's observation, rows of per-seat fields from the
  observer's seat (own seat first, then going left); the package docstring's table.
- ``source_layout``: the float32 buffer each state keeps (``state.source``): every field
  of every seat's observation, rows in absolute seats, and the private fields (hand, own
  bid, unseen) of every seat. The rules keep it up to date move by move, writing single
  entries at the flat offsets of ``SourceOffsets`` (``source_offsets``); the fields of
  ``DERIVED`` only mirror the rules' Python fields, the others are the rules' own arrays.
- ``gather_indices``: per observer, the buffer index of every observation entry, so that
  an observation is one gather from the buffer (``EasterCollectionGame.observation``).
- ``initial_source``: a new state's buffer (nothing seen, round 1).

This module imports neither the rules nor the encoder (``observation.py``); both import
it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

NUM_CARDS = 52
#: Table positions (1-4 in the rules' words, 0-3 here).
NUM_POSITIONS = 4
#: Rounds the observation tells apart (later rounds show as the last of them).
MAX_ROUNDS = 6
MAX_SCORE = 72  # every card: 36 numbers × 1 + 12 faces × 2 + 4 aces × 3
#: A hand's row in the buffer: its 52 cards padded with zeros to the standard game's 56
#: actions, so that the legal mask of a card choice is one conversion of the row.
HAND_ROW = NUM_CARDS + NUM_POSITIONS
#: Buffer fields that only mirror the rules' Python fields (``hands``, ``discards``,
#: ``piles``, ``played`` and ``points`` are the rules' own arrays).
DERIVED = (
    "own_bid",
    "unseen",
    "table",
    "deck",
    "bid",
    "round",
    "last_round",
    "phase",
    "start",
    "bids",
    "placed",
)


def observation_layout(num_players: int) -> ObservationLayout:
    """One seat's observation, rows of per-seat fields from the observer's seat."""
    n = num_players
    return (
        ObservationLayout()
        .add("hand", NUM_CARDS, "own hand")
        .add("chosen", NUM_CARDS, "own face-down bid waiting to be placed")
        .add("table", (NUM_POSITIONS, NUM_CARDS), "one-hot: the card at each table position")
        .add("discards", NUM_CARDS, "the face-up discard pile")
        .add("unseen", NUM_CARDS, "cards the observer has not seen (deck, other hands, bids)")
        .add("deck", 1, "cards left in the deck", high=NUM_CARDS)
        .add("bid", 2, "one-hot: first or second bid")
        .add("round", MAX_ROUNDS, "one-hot: the round")
        .add("last_round", 1, "1 when this round is the last")
        .add("phase", 2, "one-hot: choosing a card, placing it (zeros at the end)")
        .add("start", n, "one-hot: the round's start player")
        .add("bids", (NUM_POSITIONS, n), "face-down bids: position × seat who placed one there")
        .add("placed", n, "seats that have placed or discarded this bid's card")
        .add("score_piles", (n, NUM_CARDS), "cards in each seat's score pile")
        .add("played", (n, NUM_CARDS), "cards each seat has played face up (bids, discards)")
        .add("scores", n, "points in each seat's score pile", high=MAX_SCORE)
    )


def source_layout(num_players: int) -> ObservationLayout:
    """The state's buffer: every observation field with rows in absolute seats, and the
    private fields (hand, own bid, unseen) of every seat."""
    n = num_players
    return (
        ObservationLayout()
        .add("hands", (n, HAND_ROW), "each seat's hand, then 4 zeros")
        .add("own_bid", (n, NUM_CARDS), "each seat's face-down bid (placing phase)")
        # Card by seat, so that turning a card face up clears one short run.
        .add("unseen", (NUM_CARDS, n), "the seats that have never seen each card")
        .add("table", (NUM_POSITIONS, NUM_CARDS), "one-hot: the card at each table position")
        .add("discards", NUM_CARDS, "the face-up discard pile")
        .add("deck", 1, "cards left in the deck", high=NUM_CARDS)
        .add("bid", 2, "one-hot: first or second bid")
        .add("round", MAX_ROUNDS, "one-hot: the round")
        .add("last_round", 1, "1 when this round is the last")
        .add("phase", 2, "one-hot: choosing, placing (zeros at the end)")
        .add("start", n, "one-hot: the round's start player")
        .add("bids", (NUM_POSITIONS, n), "face-down bids: position × seat (placing phase)")
        .add("placed", n, "seats that have placed or discarded (placing phase)")
        .add("piles", (n, NUM_CARDS), "each seat's score pile")
        .add("played", (n, NUM_CARDS), "cards each seat has played face up")
        .add("points", n, "points in each seat's score pile", high=MAX_SCORE)
    )


def gather_indices(
    source: ObservationLayout, observation: ObservationLayout, num_players: int
) -> tuple[np.ndarray, ...]:
    """For each observer seat, the buffer index of every observation entry: the
    observation is ``buffer.take(gather_indices(...)[player])``. ``source`` and
    ``observation`` are the two layouts above, for ``num_players`` seats."""
    n = num_players
    buffer = source.views(np.arange(source.size))
    gathers = []
    for player in range(n):
        seats = relative_seats(player, n)
        parts = {
            "hand": buffer["hands"][player, :NUM_CARDS],
            "chosen": buffer["own_bid"][player],
            "unseen": buffer["unseen"][:, player],
            "start": buffer["start"][seats],
            "bids": buffer["bids"][:, seats],
            "placed": buffer["placed"][seats],
            "score_piles": buffer["piles"][seats],
            "played": buffer["played"][seats],
            "scores": buffer["points"][seats],
        }
        for name in ("table", "discards", "deck", "bid", "round", "last_round", "phase"):
            parts[name] = buffer[name]
        fields = observation.fields.values()
        assert all(parts[f.name].shape == f.shape for f in fields), "source and layout differ"
        gathers.append(np.concatenate([parts[f.name].ravel() for f in fields]).astype(np.intp))
    return tuple(gathers)


@dataclass(frozen=True, slots=True)
class SourceOffsets:
    """Flat indices into a state's buffer, for the rules' single-entry writes (one buffer
    and plain ints touch less memory than a numpy view per field). Per-row tuples give the
    start of each seat's or position's row; add the card (or seat). Then the spans the
    rules read or clear at once."""

    hand: tuple[int, ...]  # hand[seat] + card
    own_bid: tuple[int, ...]  # own_bid[seat] + card
    unseen: int  # unseen + card * num_players + seat
    table: tuple[int, ...]  # table[position] + card
    discards: int  # discards + card
    deck: int
    bid: int  # bid + 0 or 1
    round: int  # round + round number
    last_round: int
    phase: int  # phase + 0 (choosing) or 1 (placing)
    start: int  # start + seat
    bids: tuple[int, ...]  # bids[position] + seat
    placed: int  # placed + seat
    pile: tuple[int, ...]  # pile[seat] + card
    played: tuple[int, ...]  # played[seat] + card
    points: int  # points + seat
    #: unseen_cells[card]: the card's ``unseen`` entries, every seat's (shown to everyone).
    unseen_cells: tuple[range, ...]
    #: hand_rows[seat]: the seat's whole padded hand row (``HAND_ROW`` entries).
    hand_rows: tuple[slice, ...]
    #: Every seat's points.
    points_span: slice


def source_offsets(source: ObservationLayout, num_players: int) -> SourceOffsets:
    """The offsets of ``source`` (``source_layout(num_players)``)."""
    f = source.fields

    def rows(name: str, count: int, size: int) -> tuple[int, ...]:
        return tuple(f[name].start + row * size for row in range(count))

    n = num_players
    hand = rows("hands", n, HAND_ROW)
    unseen = f["unseen"].start
    return SourceOffsets(
        hand=hand,
        own_bid=rows("own_bid", n, NUM_CARDS),
        unseen=unseen,
        table=rows("table", NUM_POSITIONS, NUM_CARDS),
        discards=f["discards"].start,
        deck=f["deck"].start,
        bid=f["bid"].start,
        round=f["round"].start,
        last_round=f["last_round"].start,
        phase=f["phase"].start,
        start=f["start"].start,
        bids=rows("bids", NUM_POSITIONS, n),
        placed=f["placed"].start,
        pile=rows("piles", n, NUM_CARDS),
        played=rows("played", n, NUM_CARDS),
        points=f["points"].start,
        unseen_cells=tuple(
            range(unseen + card * n, unseen + (card + 1) * n) for card in range(NUM_CARDS)
        ),
        hand_rows=tuple(slice(start, start + HAND_ROW) for start in hand),
        points_span=slice(f["points"].start, f["points"].stop),
    )


def initial_source(source: ObservationLayout) -> np.ndarray:
    """A new state's buffer (``source``, a ``source_layout``) before any card is dealt:
    every card unseen by every seat, round 1. Read-only (a state copies it)."""
    flat = source.zeros()
    views = source.views(flat)
    views["unseen"][:] = 1.0
    views["round"][0] = 1.0
    flat.flags.writeable = False
    return flat
