"""Pickup rules: pure, seeded, no RL imports. See the package docstring for the rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from envs.core.game import Config, Game, State, relative_seats, require_choice
from envs.pickup import observation

#: Ranks 1-10; rank index ``r`` (0-9) is the card of face value ``r + 1``.
NUM_RANKS = 10
#: Face value (points) of each rank index.
RANK_VALUES = np.arange(1, NUM_RANKS + 1, dtype=np.int64)
#: The Pairs deck: one 1, two 2s, ... ten 10s (55 cards).
DECK_COUNTS = RANK_VALUES.copy()
DECK_SIZE = int(DECK_COUNTS.sum())
POOL_SIZE = 5
PLAYER_COUNTS = (2, 3, 4, 5, 6)
#: Cards dealt to each player (and rounds per hand), by player count [book].
HAND_SIZE = {2: 7, 3: 6, 4: 6, 5: 5, 6: 5}
#: The longer game's target by player count [book; 75 for 5-6 is a decision: lost in the copy].
BOOK_TARGET = {2: 150, 3: 100, 4: 100, 5: 75, 6: 75}
NO_SEAT = -1


@dataclass(frozen=True)
class PickupConfig(Config):
    """Options: ``num_players`` 2-6 (default 4); ``target_score`` None (one hand, default),
    ``"book"`` (150 / 100 / 75 by player count) or an integer >= 1 (play hands until a
    total reaches it)."""

    num_players: int = 4
    target_score: int | str | None = None

    def validate(self) -> None:
        if not isinstance(self.num_players, (int, np.integer)):
            raise ValueError(
                f"num_players={self.num_players!r} is not allowed; allowed values: "
                + ", ".join(map(str, PLAYER_COUNTS))
            )
        require_choice("num_players", self.num_players, PLAYER_COUNTS)
        target = self.target_score
        if target is None or (isinstance(target, str) and target == "book"):
            return
        if isinstance(target, (bool, np.bool_)) or not isinstance(target, (int, np.integer)):
            raise ValueError(
                f"target_score={target!r} is not allowed; allowed values: None (a single hand), "
                "'book' (150 for 2 players, 100 for 3-4, 75 for 5-6) or an integer >= 1"
            )
        if target < 1:
            raise ValueError(
                f"target_score={target!r} is not allowed; allowed values: None, 'book' "
                "or an integer >= 1"
            )

    @property
    def target(self) -> int | None:
        """The target total, or None for a single hand."""
        if self.target_score == "book":
            return BOOK_TARGET[self.num_players]
        return None if self.target_score is None else int(self.target_score)


class PickupState(State):
    game: PickupGame

    def __init__(self, game: PickupGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        self.hands = np.zeros((n, NUM_RANKS), dtype=np.int64)
        self.pool = np.zeros(NUM_RANKS, dtype=np.int64)
        #: Score piles of this hand, counts per rank.
        self.piles = np.zeros((n, NUM_RANKS), dtype=np.int64)
        #: Points from earlier hands (the longer game).
        self.banked = np.zeros(n, dtype=np.int64)
        #: Cards of each rank shown face up this hand: pools dealt and cards revealed.
        self.public_seen = np.zeros(NUM_RANKS, dtype=np.int64)
        # The latest reveal (this round's once revealed, else the previous round's):
        #: the rank index each seat played (-1: none yet this hand),
        self.played = np.full(n, NO_SEAT, dtype=np.int64)
        #: the seats that have acted, in order,
        self.acted: list[int] = []
        #: the rank each seat added to its pile (-1: not yet) and whether it was stacked,
        self.took = np.full(n, NO_SEAT, dtype=np.int64)
        self.stacked = np.zeros(n, dtype=bool)
        #: the round it belongs to, and the pool left over and discarded at its end.
        self.reveal_round = NO_SEAT
        self.leftover = np.zeros(NUM_RANKS, dtype=np.int64)
        #: The seat choosing which rank to pick up, or NO_SEAT.
        self.chooser = NO_SEAT
        self.stock: list[int] = []
        self.hand_number = 0
        self.round = 0
        self.finished = False
        self.dealer = int(rng.integers(n))
        self.last_actor = self.dealer
        self._start_hand()

    # --- dealing ---------------------------------------------------------------------
    def _start_hand(self) -> None:
        n, size = self.game.num_players, self.game.hand_size
        deck = np.repeat(np.arange(NUM_RANKS), DECK_COUNTS)
        self.rng.shuffle(deck)
        for p in range(n):
            self.hands[p] = np.bincount(deck[p * size : (p + 1) * size], minlength=NUM_RANKS)
        self.stock = deck[n * size :].tolist()
        self.piles[:] = 0
        self.public_seen[:] = 0
        self.played[:] = NO_SEAT
        self.acted = []
        self.took[:] = NO_SEAT
        self.stacked[:] = False
        self.reveal_round = NO_SEAT
        self.leftover[:] = 0
        self.round = 0
        # Round 1 ties start to the left of the dealer.
        self.last_actor = self.dealer
        self._start_round()

    def _start_round(self) -> None:
        self.pool[:] = 0
        for _ in range(POOL_SIZE):
            self.pool[self.stock.pop()] += 1
        self.public_seen += self.pool

    # --- the State interface ---------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        if self.finished:
            return ()
        if self.chooser != NO_SEAT:
            return (self.chooser,)
        return self.game.all_seats

    def eligible(self, card: int) -> np.ndarray:
        """Rank indices in the pool that a played ``card`` (rank index) may pick up."""
        return np.flatnonzero(self.pool[: card + 1])

    def legal_mask(self, player: int) -> np.ndarray:
        mask = np.zeros(NUM_RANKS, dtype=bool)
        if self.finished:
            return mask
        if self.chooser != NO_SEAT:
            if player == self.chooser:
                card = self.played[player]
                mask[: card + 1] = self.pool[: card + 1] > 0
        elif 0 <= player < self.game.num_players:
            mask[:] = self.hands[player] > 0
        return mask

    def _apply(self, joint: Mapping[int, int]) -> None:
        if self.chooser != NO_SEAT:
            seat, self.chooser = self.chooser, NO_SEAT
            self._pick_up(seat, joint[seat])
        else:
            self.acted = []
            self.took[:] = NO_SEAT
            self.stacked[:] = False
            self.leftover[:] = 0
            self.reveal_round = self.round
            for seat, card in joint.items():
                self.hands[seat, card] -= 1
                self.played[seat] = card
                self.public_seen[card] += 1
        self._resolve()

    def scores(self) -> np.ndarray:
        return (self.banked + self.piles @ RANK_VALUES).astype(np.float64)

    # --- resolution ------------------------------------------------------------------
    def next_actor(self) -> int:
        """The seat that acts next this round: the lowest card; ties go to the tied seat
        reached first going left from the most recent actor. NO_SEAT when all have acted."""
        n, last = self.game.num_players, self.last_actor
        best, best_key = NO_SEAT, None
        for seat in range(n):
            if self.took[seat] != NO_SEAT:
                continue
            key = (self.played[seat], (seat - last - 1) % n)
            if best_key is None or key < best_key:
                best, best_key = seat, key
        return best

    def _resolve(self) -> None:
        """Let the played cards act in order until a pickup choice is needed or the round ends."""
        while (seat := self.next_actor()) != NO_SEAT:
            card = int(self.played[seat])
            eligible = self.eligible(card)
            if len(eligible) > 1:
                self.chooser = seat
                return
            if len(eligible) == 1:
                self._pick_up(seat, int(eligible[0]))
            else:
                self._stack(seat, card)
        self._end_round()

    def _pick_up(self, seat: int, rank: int) -> None:
        """Take one ``rank`` from the pool; knock out the rest of that rank in the pool and in
        the other players' score piles. The played card is discarded."""
        own = self.piles[seat, rank]
        self.pool[rank] = 0
        self.piles[:, rank] = 0
        self.piles[seat, rank] = own + 1
        self._acted(seat, rank)

    def _stack(self, seat: int, card: int) -> None:
        """No eligible pool card: the played card goes to the player's own pile."""
        self.piles[seat, card] += 1
        self.stacked[seat] = True
        self._acted(seat, card)

    def _acted(self, seat: int, rank: int) -> None:
        self.took[seat] = rank
        self.acted.append(seat)
        self.last_actor = seat

    def _end_round(self) -> None:
        self.leftover[:] = self.pool
        self.pool[:] = 0  # the leftover pool is discarded
        self.round += 1
        if self.round < self.game.hand_size:
            self._start_round()
            return
        target = self.game.target
        totals = self.banked + self.piles @ RANK_VALUES
        if target is None or totals.max() >= target:
            self.finished = True
            return
        self.banked = totals
        self.hand_number += 1
        self.dealer = (self.dealer + 1) % self.game.num_players
        self._start_hand()

    # --- the spectator's view --------------------------------------------------------
    def __str__(self) -> str:
        def cards(count_row: np.ndarray) -> str:
            ranks = np.repeat(np.arange(NUM_RANKS), count_row)[::-1]
            return " ".join(str(r + 1) for r in ranks) or "-"

        game = self.game
        n, size = game.num_players, game.hand_size
        round_text = "game over" if self.finished else f"round {self.round + 1} of {size}"
        target = f" (playing to {game.target})" if game.target is not None else ""
        lines = [
            f"Pickup, hand {self.hand_number + 1}{target}, {round_text}; "
            f"dealer player_{self.dealer}; last to act player_{self.last_actor}",
            f"pool: {cards(self.pool)}",
        ]
        totals = self.scores()
        for p in range(n):
            line = (
                f"player_{p}: score {int(totals[p]):>3}  {self.hands[p].sum()} in hand"
                f"  pile [{cards(self.piles[p])}]"
            )
            if self.played[p] != NO_SEAT:
                line += f"  round {self.reveal_round + 1}: played {self.played[p] + 1}"
                if self.stacked[p]:
                    line += f", stacked ({self.acted.index(p) + 1})"
                elif self.took[p] != NO_SEAT:
                    line += f", took {self.took[p] + 1} ({self.acted.index(p) + 1})"
            lines.append(line)
        if self.chooser != NO_SEAT:
            options = " ".join(str(r + 1) for r in self.eligible(int(self.played[self.chooser])))
            lines.append(f"player_{self.chooser} chooses a pickup: {options}")
        elif self.reveal_round != NO_SEAT:
            lines.append(
                f"round {self.reveal_round + 1}: pool left over and discarded: "
                f"{cards(self.leftover)}"
            )
        return "\n".join(lines)


class PickupGame(Game):
    name = "pickup"
    config_class = PickupConfig
    num_actions = NUM_RANKS

    def __init__(self, config: PickupConfig) -> None:
        super().__init__(config)
        self.hand_size = HAND_SIZE[config.num_players]
        self.target = config.target
        self.all_seats = tuple(range(config.num_players))
        #: Seats in observer order (own seat first, then going left), per observer.
        self.seat_orders = [relative_seats(p, config.num_players) for p in self.all_seats]
        self.deck_counts = DECK_COUNTS
        self.observation_layout = observation.layout(self)

    def new_initial_state(self, rng: np.random.Generator) -> PickupState:
        return PickupState(self, rng)

    def encode(self, state: PickupState, player: int, views: dict[str, np.ndarray]) -> None:
        observation.encode(state, player, views)

    def action_name(self, action: int) -> str:
        return f"rank {action + 1}"
