"""Easter collection observations, from the observer's seat (own seat first, then going left).

Only what the observer has seen: their own hand and their own face-down bid; for the
others, where their face-down bids lie (never which card they are) until the reveal.
Everything turned face up (collected bids, discards, leftover table cards) is public.

For speed the state keeps every field of every seat's observation, in absolute seats, in
one float32 buffer laid out by ``source_layout`` and updated as the rules change it (at the
flat indices of ``SourceOffsets``); an observation is then a single gather from that
buffer with the observer's index array (``gather_indices``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.easter_collection.rules import EasterCollectionGame, EasterCollectionState

NUM_CARDS = 52
NUM_POSITIONS = 4
MAX_ROUNDS = 6
MAX_SCORE = 72  # every card: 36 numbers × 1 + 12 faces × 2 + 4 aces × 3
PHASE_PLACE = 1
#: Source fields that only mirror the rules' Python fields (``hands``, ``discards``,
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


def layout(game: EasterCollectionGame) -> ObservationLayout:
    n = game.num_players
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
        # Padded to the standard game's 56 actions (the padding stays 0), so that the
        # legal mask of a card choice is one conversion of the row.
        .add("hands", (n, NUM_CARDS + NUM_POSITIONS), "each seat's hand, then 4 zeros")
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


def gather_indices(game: EasterCollectionGame) -> tuple[np.ndarray, ...]:
    """For each observer seat, the source index of every observation entry."""
    n = game.num_players
    source = game.source_layout.views(np.arange(game.source_layout.size))
    gathers = []
    for player in range(n):
        seats = relative_seats(player, n)
        parts = {
            "hand": source["hands"][player, :NUM_CARDS],
            "chosen": source["own_bid"][player],
            "unseen": source["unseen"][:, player],
            "start": source["start"][seats],
            "bids": source["bids"][:, seats],
            "placed": source["placed"][seats],
            "score_piles": source["piles"][seats],
            "played": source["played"][seats],
            "scores": source["points"][seats],
        }
        for name in ("table", "discards", "deck", "bid", "round", "last_round", "phase"):
            parts[name] = source[name]
        fields = game.observation_layout.fields.values()
        assert all(parts[f.name].shape == f.shape for f in fields), "source and layout differ"
        gathers.append(np.concatenate([parts[f.name].ravel() for f in fields]).astype(np.intp))
    return tuple(gathers)


@dataclass(frozen=True, slots=True)
class SourceOffsets:
    """Flat indices into a state's source buffer, for the rules' single-entry writes (one
    buffer and plain ints touch less memory than a numpy view per field). Per-row tuples
    give the start of each seat's or position's row; add the card (or seat)."""

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


def source_offsets(source: ObservationLayout, num_players: int) -> SourceOffsets:
    f = source.fields

    def rows(name: str, count: int, size: int) -> tuple[int, ...]:
        return tuple(f[name].start + row * size for row in range(count))

    n = num_players
    return SourceOffsets(
        hand=rows("hands", n, NUM_CARDS + NUM_POSITIONS),
        own_bid=rows("own_bid", n, NUM_CARDS),
        unseen=f["unseen"].start,
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
    )


def observation(state: EasterCollectionState, player: int) -> np.ndarray:
    """``player``'s flat observation (a new float32 array). The indices are all in range, so
    ``mode="wrap"`` gathers what the default would, without its bounds check."""
    return state.source.take(state.game.observation_gather[player], mode="wrap")
