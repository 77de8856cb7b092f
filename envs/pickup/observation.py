"""Pickup observations, from the observer's seat (own seat first, then going left).

Public: the pool, every score pile, the cards of the latest reveal (this round's
once revealed, else the previous round's) and the order they acted in, who acted
last, the dealer, whose pickup choice it is, scores and the round. Private: the observer's own hand, and so the cards it has not seen.
No other hand and no unrevealed choice is ever shown.

Speed: every state keeps a *table*, one float32 vector holding every field of every
seat's observation in absolute seat order (``table_layout``). The rules update it as
they go; an observation is then one gather of the observer's cells (``gather_index``).
``build_table`` writes the table plainly from the rules' fields: ``refresh()`` uses it
after a state is edited by hand, and ``check_invariants`` compares the kept table with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from envs.core.game import relative_seats
from envs.core.observation import ObservationLayout

if TYPE_CHECKING:
    from envs.pickup.rules import PickupGame, PickupState

NUM_RANKS = 10
POOL_SIZE = 5
MAX_PER_RANK = 10


def max_score(game: PickupGame) -> int:
    """The highest total a player can show: below the target before the last hand, plus at
    most one card (<= 10 points) per round of that hand."""
    best_hand = MAX_PER_RANK * game.hand_size
    return best_hand if game.target is None else game.target - 1 + best_hand


def layout(game: PickupGame) -> ObservationLayout:
    n, size = game.num_players, game.hand_size
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
        .add("scores", n, "game points: earlier hands plus the score pile", high=max_score(game))
        .add("round", size, "one-hot: the round of this hand (zeros at the end)")
    )


# --- the table every observation is gathered from ----------------------------------------
#: Fields of the table whose rows or cells are per seat, in absolute seat order.
SEAT_ROWS = ("hands", "unseen", "piles", "revealed")
SEAT_CELLS = ("order", "last_actor", "dealer", "chooser", "scores")


def table_layout(game: PickupGame) -> ObservationLayout:
    """Every seat's observation fields in absolute seat order (rows ``seat``, not observer
    order); ``hands`` and ``unseen`` hold every seat's row, and ``unshown`` is kept for
    computing ``unseen``."""
    n = game.num_players
    table = ObservationLayout()
    for name in SEAT_ROWS[:2]:
        table.add(name, (n, NUM_RANKS), f"each seat's {name} row")
    table.add("unshown", NUM_RANKS, "cards not shown this hand (not observed as such)")
    table.add("pool", NUM_RANKS, "the pool")
    for name in SEAT_ROWS[2:]:
        table.add(name, (n, NUM_RANKS), f"each seat's {name} row")
    for name in SEAT_CELLS:
        table.add(name, n, f"each seat's {name} cell")
    return table.add("round", game.hand_size, "one-hot round")


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


def gather_index(game: PickupGame, player: int) -> np.ndarray:
    """The table cells of ``player``'s observation, in the observation's order."""
    start = {name: field.start for name, field in game.table_layout.fields.items()}
    seats = relative_seats(player, game.num_players)

    def row(name: str, seat: int) -> list[int]:
        first = start[name] + seat * NUM_RANKS
        return list(range(first, first + NUM_RANKS))

    index = row("hands", player)
    index += range(start["pool"], start["pool"] + NUM_RANKS)
    index += row("unseen", player)
    for name in ("piles", "revealed"):
        for seat in seats:
            index += row(name, seat)
    for name in SEAT_CELLS:
        index += [start[name] + seat for seat in seats]
    index += range(start["round"], start["round"] + game.hand_size)
    assert len(index) == game.observation_layout.size
    return np.array(index, dtype=np.intp)


def build_table(state: PickupState) -> np.ndarray:
    """The table of ``state``, written plainly from the rules' fields."""
    table_layout = state.game.table_layout
    table = np.zeros(table_layout.size, dtype=np.float32)
    views = table_layout.views(table)
    views["hands"][:] = state.hands
    views["unseen"][:] = np.subtract(state.unshown, state.hands)
    views["unshown"][:] = state.unshown
    views["pool"][:] = state.pool
    views["piles"][:] = state.piles
    for seat, card in enumerate(state.played):
        if card >= 0:
            views["revealed"][seat, card] = 1
    for position, seat in enumerate(state.acted, start=1):
        views["order"][seat] = position
    views["last_actor"][state.last_actor] = 1
    views["dealer"][state.dealer] = 1
    if state.chooser >= 0:
        views["chooser"][state.chooser] = 1
    views["scores"][:] = state.totals
    if not state.finished:
        views["round"][state.round] = 1
    return table


def observe(state: PickupState, player: int) -> np.ndarray:
    """``player``'s observation: a new float32 array gathered from the state's table."""
    return state.table[state.game.gathers[player]]
