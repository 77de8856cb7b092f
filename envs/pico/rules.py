"""Pico rules: pure, seeded, no RL imports. See the package docstring for the rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from envs.core.game import Config, Game, State, require_choice
from envs.pico import observation

#: The card values; action ``i`` plays a card of value ``VALUES[i]``.
VALUES: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16)
#: Point values (dots) of the cards [decision: the later edition's values].
DEFAULT_POINTS: dict[int, int] = {
    2: 1,
    3: 1,
    4: 1,
    5: 2,
    6: 2,
    7: 2,
    8: 3,
    9: 3,
    10: 3,
    13: 3,
    16: 4,
}
NUM_CARDS = len(VALUES)
#: Per player count: cards of each value in the deck, hand size, number of rounds.
DECK_COUNTS = {
    2: np.ones(NUM_CARDS, dtype=np.int64),
    # Two sets without both 2s and one 3: 19 cards.
    3: np.array([0, 1] + [2] * (NUM_CARDS - 2), dtype=np.int64),
}
HAND_SIZE = {2: 5, 3: 6}
NUM_ROUNDS = {2: 2, 3: 3}


def winners(cards: Sequence[int]) -> list[int]:
    """The seats whose played card values win a reveal.

    Two players: the higher wins unless it is more than twice the lower. Three
    players: a pair wins; otherwise the highest wins unless it is greater than the
    sum of the other two, in which case the lowest wins.
    """
    if len(cards) == 2:
        low, high = sorted(range(2), key=lambda seat: cards[seat])
        return [low] if cards[high] > 2 * cards[low] else [high]
    paired = [seat for seat, value in enumerate(cards) if list(cards).count(value) >= 2]
    if paired:
        return paired
    order = sorted(range(len(cards)), key=lambda seat: cards[seat])
    lowest, highest = order[0], order[-1]
    return [lowest] if cards[highest] > sum(cards) - cards[highest] else [highest]


@dataclass(frozen=True)
class PicoConfig(Config):
    """Options: ``num_players`` 2 or 3; ``points``, a mapping from card value to points."""

    num_players: int = 2
    points: Mapping[int, int] = field(default_factory=lambda: dict(DEFAULT_POINTS))

    def validate(self) -> None:
        require_choice("num_players", self.num_players, (2, 3))
        if not isinstance(self.points, Mapping) or set(self.points) != set(VALUES):
            raise ValueError(
                f"points must map every card value {list(VALUES)} to its points, got {self.points!r}"
            )
        if any(not isinstance(p, (int, np.integer)) or p < 0 for p in self.points.values()):
            raise ValueError(f"points must be non-negative integers, got {self.points!r}")


class PicoState(State):
    game: PicoGame

    def __init__(self, game: PicoGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        deck = np.repeat(np.arange(NUM_CARDS), DECK_COUNTS[n])
        rng.shuffle(deck)
        size = HAND_SIZE[n]
        #: The dealt sets of cards (counts per value); set ``d`` was dealt to seat ``d``.
        self.sets = np.stack(
            [np.bincount(deck[d * size : (d + 1) * size], minlength=NUM_CARDS) for d in range(n)]
        )
        self.aside = np.bincount(deck[n * size :], minlength=NUM_CARDS)
        self.round = 0
        self.total_scores = np.zeros(n, dtype=np.int64)
        #: Card index each seat played in the last reveal (-1 before any), and who won it.
        self.last_played = np.full(n, -1, dtype=np.int64)
        self.last_winners = np.zeros(n, dtype=bool)
        self._start_round()

    def set_held_by(self, player: int, round_: int | None = None) -> int:
        """The dealt set ``player`` holds in a round. Three players pass the dealt hands to the
        left before round 1, then to the right between rounds; two players swap."""
        round_ = self.round if round_ is None else round_
        n = self.game.num_players
        shift = 0 if n == 2 else -1
        return (player + shift + round_) % n

    def _start_round(self) -> None:
        n = self.game.num_players
        self.hands = np.stack([self.sets[self.set_held_by(p)] for p in range(n)])
        self.won = np.zeros_like(self.hands)

    def to_act(self) -> tuple[int, ...]:
        if self.round >= NUM_ROUNDS[self.game.num_players]:
            return ()
        return tuple(range(self.game.num_players))

    def legal_mask(self, player: int) -> np.ndarray:
        if self.is_terminal():
            return np.zeros(NUM_CARDS, dtype=bool)
        return self.hands[player] > 0

    def _apply(self, joint: Mapping[int, int]) -> None:
        played = [joint[p] for p in range(self.game.num_players)]
        won = winners([VALUES[card] for card in played])
        self.last_played[:] = played
        self.last_winners[:] = False
        for seat in won:
            card = played[seat]
            self.last_winners[seat] = True
            self.hands[seat, card] -= 1
            self.won[seat, card] += 1
            self.total_scores[seat] += self.game.card_points[card]
        if (self.hands.sum(axis=1) == 1).any():
            self.round += 1
            if not self.is_terminal():
                self._start_round()

    def scores(self) -> np.ndarray:
        return self.total_scores.astype(np.float64)

    def check_invariants(self) -> None:
        n = self.game.num_players
        assert (self.sets.sum(axis=0) + self.aside == DECK_COUNTS[n]).all(), "deck not conserved"
        if not self.is_terminal():
            for p in range(n):
                held = self.hands[p] + self.won[p]
                assert (held == self.sets[self.set_held_by(p)]).all(), f"seat {p} lost a card"
                assert self.hands[p].sum() >= 2, f"seat {p} plays on with one card"
        assert self.total_scores.sum() >= (self.won * self.game.card_points).sum()

    def __str__(self) -> str:
        def cards(count_row: np.ndarray) -> str:
            return (
                " ".join(str(VALUES[c]) for c in np.repeat(np.arange(NUM_CARDS), count_row)) or "-"
            )

        n = self.game.num_players
        rounds = NUM_ROUNDS[n]
        lines = [
            f"Pico, round {min(self.round + 1, rounds)} of {rounds}; aside: {cards(self.aside)}"
        ]
        for p in range(n):
            last = ""
            if self.last_played[p] >= 0:
                outcome = "won" if self.last_winners[p] else "lost"
                last = f"  last played {VALUES[self.last_played[p]]} ({outcome})"
            lines.append(
                f"player_{p}: score {self.total_scores[p]:>2}  hand [{cards(self.hands[p])}]"
                f"  won [{cards(self.won[p])}]{last}"
            )
        if self.is_terminal():
            lines.append("game over")
        return "\n".join(lines)


class PicoGame(Game):
    name = "pico"
    config_class = PicoConfig
    num_actions = NUM_CARDS
    has_hidden_state = False  # the aside card is face up: every hand is known

    def __init__(self, config: PicoConfig) -> None:
        super().__init__(config)
        self.card_points = np.array([config.points[v] for v in VALUES], dtype=np.int64)
        self.num_rounds = NUM_ROUNDS[config.num_players]
        n, hand = config.num_players, HAND_SIZE[config.num_players]
        # A reveal takes at least one card from a hand, and a round ends when a hand is
        # down to one card: at most n * (hand - 2) + 1 reveals of n decisions a round.
        self.max_decisions = self.num_rounds * (n * (hand - 2) + 1) * n
        self.observation_layout = observation.layout(self)
        self.seat_orders = observation.seat_orders(config.num_players)

    def new_initial_state(self, rng: np.random.Generator) -> PicoState:
        return PicoState(self, rng)

    def encode(self, state: PicoState, player: int, views: dict[str, np.ndarray]) -> None:
        observation.encode(state, player, views)

    def action_name(self, action: int) -> str:
        return f"play {VALUES[action]}"
