"""Easter collection observations, from the observer's seat (own seat first, then going left).

Only what the observer has seen: their own hand and their own face-down bid; for the
others, where their face-down bids lie (never which card they are) until the reveal.
Everything turned face up (collected bids, discards, leftover table cards) is public.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.easter_collection.rules import EasterCollectionGame, EasterCollectionState

NUM_CARDS = 52
NUM_POSITIONS = 4
MAX_ROUNDS = 6
MAX_SCORE = 72  # every card: 36 numbers × 1 + 12 faces × 2 + 4 aces × 3
PHASE_PLACE = 1


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


def encode(state: EasterCollectionState, player: int, views: dict[str, np.ndarray]) -> None:
    n = state.game.num_players
    hand = state.hands[player]
    views["hand"][:] = hand
    # Unseen: never turned face up (kept by the state) and not in the observer's hand.
    unseen = views["unseen"]
    unseen[:] = state.never_shown > hand
    placing = state.phase == PHASE_PLACE
    if placing:
        chosen = state.chosen[player]
        views["chosen"][chosen] = 1
        unseen[chosen] = 0
    table = views["table"]
    for position, card in enumerate(state.table):
        if card >= 0:
            table[position, card] = 1
    views["discards"][:] = state.discards
    views["deck"][0] = len(state.deck) - state.next_card
    views["round"][min(state.round, MAX_ROUNDS - 1)] = 1
    if state.last_round:
        views["last_round"][0] = 1
    if state.phase <= PHASE_PLACE:
        views["bid"][state.bid] = 1
        views["phase"][state.phase] = 1
    views["start"][(state.start_player - player) % n] = 1
    if placing:
        bids, placed = views["bids"], views["placed"]
        for seat, target in enumerate(state.target):
            if target >= 0:
                row = (seat - player) % n
                placed[row] = 1
                if target < NUM_POSITIONS:
                    bids[target, row] = 1
    # Per-seat rows from the observer's seat on: the state keeps them twice over.
    views["score_piles"][:] = state.piles_twice[player : player + n]
    views["played"][:] = state.played_twice[player : player + n]
    views["scores"][:] = state.points_twice[player : player + n]
