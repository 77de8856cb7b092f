"""Pico rules: pure, seeded, no RL imports. See the package docstring for the rules.

The state keeps seat 0's observation as its public table (written through
``envs.pico.layout``'s indices); ``PicoState.observe`` gathers a player's observation
from it."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from envs.core.game import Config, Game, State, require_choice
from envs.pico.layout import (
    NUM_CARDS,
    NUM_ROUNDS,
    VALUES,
    HiddenIndex,
    PublicIndex,
    last_reveal,
    observation_layout,
    seat_permutations,
)

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
#: Per player count: cards of each value in the deck, and the hand size.
DECK_COUNTS = {
    2: np.ones(NUM_CARDS, dtype=np.int64),
    # Two sets without both 2s and one 3: 19 cards.
    3: np.array([0, 1] + [2] * (NUM_CARDS - 2), dtype=np.int64),
}
HAND_SIZE = {2: 5, 3: 6}
#: Readings of the aside card (``PicoConfig.aside``).
ASIDE_READINGS = ("face_up", "face_down")


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


def held_set(player: int, round_: int, num_players: int) -> int:
    """The dealt set ``player`` holds in a round. Three players pass the dealt hands to the
    left before round 1, then to the right between rounds; two players swap."""
    shift = 0 if num_players == 2 else -1
    return (player + shift + round_) % num_players


@functools.cache
def card_winners(played: tuple[int, ...]) -> tuple[int, ...]:
    """``winners`` of the played card indices (at most 11**3 of them: cached)."""
    return tuple(winners([VALUES[card] for card in played]))


@dataclass(frozen=True)
class PicoConfig(Config):
    """Options: ``num_players`` 2 or 3; ``points``, a mapping from card value to points;
    ``aside``, the aside card ``"face_up"`` (default) or ``"face_down"`` (two players only:
    the three-player rules put it face up)."""

    num_players: int = 2
    points: Mapping[int, int] = field(default_factory=lambda: dict(DEFAULT_POINTS))
    aside: str = "face_up"

    def validate(self) -> None:
        require_choice("num_players", self.num_players, (2, 3))
        require_choice("aside", self.aside, ASIDE_READINGS)
        if self.aside == "face_down" and self.num_players != 2:
            raise ValueError(
                "aside='face_down' is a reading of the two-player rules only (with 3 players "
                "the rulebook puts the aside card face up); allowed values with "
                f"num_players={self.num_players}: 'face_up'"
            )
        if not isinstance(self.points, Mapping) or set(self.points) != set(VALUES):
            raise ValueError(
                f"points must map every card value {list(VALUES)} to its points, got {self.points!r}"
            )
        if any(not isinstance(p, (int, np.integer)) or p < 0 for p in self.points.values()):
            raise ValueError(f"points must be non-negative integers, got {self.points!r}")


class PicoState(State):
    """A Pico position. The public table is kept as seat 0's observation (``public``),
    written in place at every reveal; ``hands``, ``won`` and the last reveal are read from
    it. ``total_scores``, ``hand_sizes`` and the legal masks (``legal``) are kept up to date
    beside it for the rules (``check_invariants`` checks them against it)."""

    game: PicoGame

    def __init__(self, game: PicoGame, rng: np.random.Generator) -> None:
        super().__init__(game, rng)
        n = game.num_players
        deck = np.repeat(np.arange(NUM_CARDS), DECK_COUNTS[n])
        rng.shuffle(deck)
        size = HAND_SIZE[n]
        sets = np.stack(
            [np.bincount(deck[d * size : (d + 1) * size], minlength=NUM_CARDS) for d in range(n)]
        )
        self._deal(sets, np.bincount(deck[n * size :], minlength=NUM_CARDS))

    def _deal(self, sets: np.ndarray, aside: np.ndarray) -> None:
        """Start the game from these dealt sets (set ``d`` dealt to seat ``d``) and aside card."""
        #: The dealt sets of cards (counts per value); set ``d`` was dealt to seat ``d``.
        self.sets = sets
        self.aside = aside
        self.set_sizes: list[int] = sets.sum(axis=1).tolist()  # cards in each set
        self.round = 0
        #: Seat 0's observation: the whole public table (see ``layout.PublicIndex``).
        self.public = self.game.observation_layout.zeros()
        self.public[self.game.public_index.aside] = aside
        self.total_scores = np.zeros(self.game.num_players, dtype=np.float64)
        self._start_round()

    def set_held_by(self, player: int, round_: int | None = None) -> int:
        """The dealt set ``player`` holds in a round (this one by default)."""
        round_ = self.round if round_ is None else round_
        return held_set(player, round_, self.game.num_players)

    def _start_round(self) -> None:
        game, public = self.game, self.public
        at = game.public_index
        hands = self.sets.take(game.hand_gathers[self.round])  # flat, in seat order
        public[at.hands] = hands
        public[at.won] = 0
        public[at.rounds] = 0
        public[at.round + self.round] = 1
        #: Cards in each seat's hand, and each seat's legal mask (the cards it holds).
        self.hand_sizes = [self.set_sizes[d] for d in game.held_sets[self.round]]
        self.legal = hands.astype(bool).reshape(game.num_players, NUM_CARDS)  # counts >= 0

    def _field(self, name: str) -> np.ndarray:
        """A field of the public table, as integers (a copy)."""
        return self.game.observation_layout.views(self.public)[name].astype(np.int64)

    @property
    def hands(self) -> np.ndarray:
        """Cards of each value in each seat's hand (a copy)."""
        return self._field("hand")

    @property
    def won(self) -> np.ndarray:
        """Cards of each value each seat has won this round (a copy)."""
        return self._field("won")

    @property
    def last_played(self) -> np.ndarray:
        """The card each seat played in the last reveal (-1 before any)."""
        shown = self._field("last_played")
        return np.where(shown.any(axis=1), shown.argmax(axis=1), -1)

    @property
    def last_winners(self) -> np.ndarray:
        """Which seats won the last reveal."""
        return self._field("last_winners").astype(bool)

    def observe(self, player: int) -> np.ndarray:
        """``player``'s observation (a new float32 array): one gather from seat 0's."""
        return self.public.take(self.game.seat_permutations[player])

    def is_terminal(self) -> bool:
        return self.round >= self.game.num_rounds

    def to_act(self) -> tuple[int, ...]:
        return () if self.round >= self.game.num_rounds else self.game.seats

    def legal_mask(self, player: int) -> np.ndarray:
        if self.round >= self.game.num_rounds:
            return np.zeros(NUM_CARDS, dtype=bool)
        return self.legal[player].copy()

    def _apply(self, joint: Mapping[int, int]) -> None:
        game, public = self.game, self.public
        at = game.public_index
        played: tuple[int, ...] = game.cards_played(joint)
        winning = card_winners(played)
        public[at.last_reveal] = last_reveal(played, winning)
        for seat in winning:  # the winning card leaves the hand for the seat's won pile
            card = played[seat]
            in_hand = at.hand_rows[seat] + card
            left = public.item(in_hand) - 1
            public[in_hand] = left
            if left == 0:
                self.legal[seat, card] = False
            self.hand_sizes[seat] -= 1
            in_pile = at.won_rows[seat] + card
            public[in_pile] = public.item(in_pile) + 1
            score = self.total_scores.item(seat) + game.points[card]
            self.total_scores[seat] = public[at.scores + seat] = score
        if 1 in self.hand_sizes:  # the round ends the moment a player holds one card
            self.round += 1
            if self.round < game.num_rounds:
                self._start_round()
            else:
                public[at.rounds] = 0

    def scores(self) -> np.ndarray:
        return self.total_scores.copy()

    def check_invariants(self) -> None:
        n = self.game.num_players
        assert (self.sets.sum(axis=0) + self.aside == DECK_COUNTS[n]).all(), "deck not conserved"
        hands, won = self.hands, self.won
        if not self.is_terminal():
            for p in range(n):
                held = hands[p] + won[p]
                assert (held == self.sets[self.set_held_by(p)]).all(), f"seat {p} lost a card"
                assert hands[p].sum() >= 2, f"seat {p} plays on with one card"
        assert self.hand_sizes == hands.sum(axis=1).tolist(), "hand sizes out of date"
        for p in range(n):
            assert (self.legal[p] == (hands[p] > 0)).all(), f"seat {p}'s mask out of date"
        assert (self.total_scores == self._field("scores")).all(), "scores out of date"
        assert self.total_scores.sum() >= (won * self.game.card_points).sum()

    def _hand_text(self, player: int, hand: np.ndarray) -> str:
        """A seat's hand as the spectator's view shows it."""
        return card_text(hand)

    def _aside_text(self) -> str:
        return card_text(self.aside)

    def __str__(self) -> str:
        n = self.game.num_players
        hands, won, last_played, last_winners = (
            self.hands,
            self.won,
            self.last_played,
            self.last_winners,
        )
        rounds = NUM_ROUNDS[n]
        lines = [
            f"Pico, round {min(self.round + 1, rounds)} of {rounds}; aside: {self._aside_text()}"
        ]
        for p in range(n):
            last = ""
            if last_played[p] >= 0:
                outcome = "won" if last_winners[p] else "lost"
                last = f"  last played {VALUES[last_played[p]]} ({outcome})"
            lines.append(
                f"player_{p}: score {int(self.total_scores[p]):>2}  "
                f"hand [{self._hand_text(p, hands[p])}]  won [{card_text(won[p])}]{last}"
            )
        if self.is_terminal():
            lines.append("game over")
        return "\n".join(lines)


def card_text(count_row: np.ndarray) -> str:
    """Cards given as counts per value, as text (``-`` for none)."""
    return " ".join(str(VALUES[c]) for c in np.repeat(np.arange(NUM_CARDS), count_row)) or "-"


class FaceDownPicoState(PicoState):
    """A Pico position with the two-player aside card face down (``aside="face_down"``).

    In round 1 a player knows their own five cards and, of the other hand, only the cards
    it has shown (``shown``: the cards each seat has revealed this round, won or not); the
    other hand's remaining cards and the aside card are unknown to them. The swap of round 2
    makes everything known. ``public`` still holds the whole table; the observation hides
    what the observer does not know (``observe``)."""

    def _deal(self, sets: np.ndarray, aside: np.ndarray) -> None:
        #: Cards each seat has revealed in round 1 (0/1 per value).
        self.shown = np.zeros((self.game.num_players, NUM_CARDS), dtype=np.float32)
        super()._deal(sets, aside)

    def _apply(self, joint: Mapping[int, int]) -> None:
        super()._apply(joint)
        if self.round == 0:
            for seat, card in joint.items():
                self.shown[seat, card] = 1.0

    def observe(self, player: int) -> np.ndarray:
        """The gather, then in round 1 the other hand's unshown cards and the aside card
        moved to ``unseen`` (``HiddenIndex.hide``)."""
        observed = self.public.take(self.game.seat_permutations[player])
        if self.round == 0:
            self.game.hidden_index.hide(observed, self.shown[1 - player])
        return observed

    def unseen_by(self, player: int) -> np.ndarray:
        """Cards ``player`` cannot place in round 1 (counts per value): the other hand's
        cards it has not shown, and the aside card. Zeros from round 2 on."""
        if self.round != 0:
            return np.zeros(NUM_CARDS, dtype=np.int64)
        other = 1 - player
        unshown = self.sets[held_set(other, 0, 2)] - self.shown[other].astype(np.int64)
        return unshown + self.aside

    def resample(self, player: int, rng: np.random.Generator) -> FaceDownPicoState:
        """Round 1: deal the cards ``player`` has not seen (``unseen_by``) again between the
        other hand and the aside card; the other hand keeps the cards it has shown, its
        size and its won pile. From round 2 on nothing is hidden: a copy with a new RNG."""
        sample = self.clone()
        sample.rng = np.random.default_rng(rng.integers(2**63))
        if self.round != 0:
            return sample
        other = 1 - player
        pool = np.repeat(np.arange(NUM_CARDS), self.unseen_by(player))  # sorted: the same
        pool = pool[rng.permutation(len(pool))]  # draw in states the player cannot tell apart
        aside = np.bincount(pool[:1], minlength=NUM_CARDS)  # one aside card
        dealt = self.shown[other].astype(np.int64) + np.bincount(pool[1:], minlength=NUM_CARDS)
        hand = dealt - self.won[other]
        at = self.game.public_index
        sample.sets[held_set(other, 0, 2)] = dealt
        sample.aside = aside
        sample.public[at.hand_rows[other] : at.hand_rows[other] + NUM_CARDS] = hand
        sample.public[at.aside] = aside
        sample.legal[other] = hand > 0
        return sample

    def check_invariants(self) -> None:
        super().check_invariants()
        if self.round == 0:
            for p in range(self.game.num_players):
                shown = self.shown[p].astype(np.int64)
                assert (shown <= self.sets[held_set(p, 0, 2)]).all(), f"seat {p} showed a card"
                assert (self.won[p] <= shown).all(), f"seat {p} won a card it never showed"

    def _hand_text(self, player: int, hand: np.ndarray) -> str:
        """Round 1: only the cards the seat has shown, and a ``?`` for each other card."""
        if self.round != 0:
            return card_text(hand)
        known = hand * self.shown[player].astype(np.int64)
        return " ".join([*card_text(known).strip("-").split(), *["?"] * int((hand - known).sum())])

    def _aside_text(self) -> str:
        return "? (face down)" if self.round == 0 else card_text(self.aside)

    def private_view(self, player: int) -> str:
        """Round 1: ``player``'s hand, and the cards it has not seen."""
        if self.round != 0:
            return ""
        return (
            f"your hand (player_{player}): {card_text(self.hands[player])}\n"
            f"unseen by you (the other hand's ? cards and the aside card): "
            f"{card_text(self.unseen_by(player))}"
        )


class PicoGame(Game):
    name = "pico"
    config_class = PicoConfig
    num_actions = NUM_CARDS
    has_hidden_state = False  # the aside card face up: every hand is known (per instance)
    every_seat_chooses = True

    def __init__(self, config: PicoConfig) -> None:
        super().__init__(config)
        #: Whether the two-player aside card is face down (round 1's other hand hidden).
        self.face_down = config.aside == "face_down"
        self.has_hidden_state = self.face_down
        self.card_points = np.array([config.points[v] for v in VALUES], dtype=np.int64)
        self.num_rounds = NUM_ROUNDS[config.num_players]
        n, hand = config.num_players, HAND_SIZE[config.num_players]
        # A reveal takes at least one card from a hand, and a round ends when a hand is
        # down to one card: at most n * (hand - 2) + 1 reveals of n decisions a round.
        self.max_decisions = self.num_rounds * (n * (hand - 2) + 1) * n
        self.observation_layout = observation_layout(n, self.face_down)
        self.seats = tuple(range(n))
        #: The joint action's cards in seat order, as a tuple.
        self.cards_played = operator.itemgetter(*self.seats)
        #: Per round, the dealt set each seat holds, and the flat indices into
        #: ``PicoState.sets`` that gather those sets in seat order.
        self.held_sets = [[held_set(p, r, n) for p in self.seats] for r in range(self.num_rounds)]
        self.hand_gathers = [
            np.concatenate([d * NUM_CARDS + np.arange(NUM_CARDS) for d in held])
            for held in self.held_sets
        ]
        #: Points per card index, as Python ints for the reveal's scalar arithmetic.
        self.points = tuple(int(p) for p in self.card_points)
        self.public_index = PublicIndex.of(self.observation_layout, n)
        #: Per observer, the gather of its observation from seat 0's (``PicoState.observe``).
        self.seat_permutations = seat_permutations(self.observation_layout, n)
        self._state_class = FaceDownPicoState if self.face_down else PicoState
        #: Face down: flat indices of the fields round 1 hides (``HiddenIndex.hide``).
        self.hidden_index = HiddenIndex.of(self.observation_layout) if self.face_down else None

    def new_initial_state(self, rng: np.random.Generator) -> PicoState:
        return self._state_class(self, rng)

    def observation(self, state: PicoState, player: int) -> np.ndarray:
        return state.observe(player)

    def action_name(self, action: int) -> str:
        return f"play {VALUES[action]}"
