"""Pico's rule-based agent, ``PicoHeuristic``: play the card with the best expected
points against the opponents' hands, assuming they choose uniformly. Every hand is
known, except with the two-player aside card face down (``aside="face_down"``) in round
1: there it reads only what the observation shows (the other hand's shown cards and the
``unseen`` cards) and takes the other hand to be its shown cards and all the unseen
cards but one (the aside card), each equally likely.

The values are computed for many rows at once (``heuristic_values``, exact in integers);
the agent values its one row with them, and the batched engine
(``envs.pico.batched.PicoVector.heuristic_actions``) and the search's heuristic rollouts
value thousands: the same choices from the same tie-break draws (``heuristic_actions``).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from envs.pico.layout import NUM_CARDS
from envs.pico.rules import VALUES, PicoGame, card_winners, winners

#: Scale of the random tie-break added to each card's value.
TIE_BREAK = 1e-3


@functools.cache
def heuristic_payoffs(num_players: int, points: tuple[int, ...]) -> np.ndarray:
    """The heuristic's payoff of seat 0's card against every choice of the others, times
    ``N - 1`` so that it is an integer: ``(N - 1) * (seat 0's points won) - (the others'
    points won)``; shape ``(11,) * N``, int64."""
    n = num_players
    payoff = np.zeros((NUM_CARDS,) * n, dtype=np.int64)
    for played in itertools.product(range(NUM_CARDS), repeat=n):
        winning = card_winners(played)
        won = [points[card] if seat in winning else 0 for seat, card in enumerate(played)]
        payoff[played] = (n - 1) * won[0] - sum(won[1:])
    return payoff


def heuristic_values(
    observations: np.ndarray, masks: np.ndarray, num_players: int, points: tuple[int, ...]
) -> np.ndarray:
    """Each legal card's expected points won minus the opponents' mean points won, against
    opponents choosing uniformly among the values in their hands (-inf for illegal
    cards), for every row of observations with every hand shown: ``(B, 11)`` float64.

    Computed exactly in integers and divided once (the values are multiples of 1/72)."""
    n = num_players
    hands = np.asarray(observations)[:, : n * NUM_CARDS].reshape(-1, n, NUM_CARDS) > 0
    present = hands[:, 1:].astype(np.int64)  # the opponents' distinct values, in seat order
    payoff = heuristic_payoffs(n, points)
    if n == 2:
        total = present[:, 0] @ payoff.T
    else:
        total = np.einsum("cij,bi,bj->bc", payoff, present[:, 0], present[:, 1], optimize=True)
    combos = present.sum(axis=2).prod(axis=1)
    values = (total / (n - 1)) / combos[:, None]
    return np.where(np.asarray(masks, dtype=bool), values, -np.inf)


def best_cards(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Per row, the card with the best value plus ``TIE_BREAK * noise`` (uniform draws),
    the first one on an exact tie."""
    return np.argmax(values + TIE_BREAK * noise, axis=-1)


def heuristic_actions(
    observations: np.ndarray,
    masks: np.ndarray,
    num_players: int,
    points: tuple[int, ...],
    noise: np.ndarray,
) -> np.ndarray:
    """``PicoHeuristic.act`` of many rows with every hand shown: ``best_cards`` of
    ``heuristic_values`` (``noise``: ``(B, 11)`` uniform draws; the agent draws one per
    legal card, in card order). ``(B,)`` int64."""
    return best_cards(heuristic_values(observations, masks, num_players, points), noise)


class PicoHeuristic:
    """``act`` takes the best ``card_values`` with a random tie-break (``TIE_BREAK`` times a
    uniform draw per legal card, in card order); ``action_probabilities`` is uniform over
    the cards within ``TIE_BREAK`` of the best, the only ones the tie-break can pick. That
    is exact: values are multiples of 1/72 (points over at most 36 opponent combinations,
    halved with three players), or of 1/30 with a hidden hand (``k + 1 <= 6`` unseen
    cards, a hand of at most 5), so such cards are tied exactly."""

    def __init__(self, game: PicoGame) -> None:
        self.game = game
        fields = game.observation_layout.fields
        self._hand = fields["hand"]
        #: Face down: the observation's unseen cards (None when every hand is shown).
        self._unseen = fields.get("unseen")

    def card_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each legal card's expected points won minus the opponents' mean points won
        (-inf for illegal actions)."""
        observation = np.asarray(observation)
        if self._unseen is not None:
            unseen = observation[self._unseen.start : self._unseen.stop]
            if unseen.any():
                return self._hidden_card_values(observation, unseen, action_mask)
        game = self.game
        return heuristic_values(
            observation[None], np.asarray(action_mask)[None], game.num_players, game.points
        )[0]

    def _hidden_card_values(
        self, observation: np.ndarray, unseen: np.ndarray, action_mask: np.ndarray
    ) -> np.ndarray:
        """``card_values`` of two players when the other hand is partly unknown: it holds
        its shown cards and ``k`` of the ``k + 1`` unseen cards, each unseen card with
        probability ``k / (k + 1)``, and plays each card it holds with probability
        ``1 / (shown + k)``."""
        points = self.game.card_points
        unknown = np.flatnonzero(unseen)
        k = len(unknown) - 1
        known = np.flatnonzero(observation[self._hand.start + NUM_CARDS : self._hand.stop])
        size = len(known) + k
        weights = [(int(c), 1.0 / size) for c in known]
        weights += [(int(c), k / (k + 1) / size) for c in unknown]
        values = np.full(len(action_mask), -np.inf)
        for card in np.flatnonzero(action_mask):
            value = 0.0
            for other, weight in weights:
                (won,) = winners([VALUES[card], VALUES[other]])
                value += weight * (points[card] if won == 0 else -points[other])
            values[card] = value
        return values

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = np.asarray(action_mask, dtype=bool)
        noise = np.zeros(len(legal))
        noise[legal] = rng.random(int(legal.sum()))
        return int(best_cards(self.card_values(observation, action_mask), noise))

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        values = self.card_values(observation, action_mask)
        near = values > values.max() - TIE_BREAK
        return near / near.sum()

    def action_probabilities_batch(
        self, observations: np.ndarray, action_masks: np.ndarray
    ) -> np.ndarray:
        """``action_probabilities`` of every row; the heuristic reads only the hands (and
        the unseen cards), so each distinct set of hands (and mask) is valued once."""
        observations = np.asarray(observations)
        hands = observations[:, self._hand.start : self._hand.stop]
        if self._unseen is not None:
            hands = np.hstack([hands, observations[:, self._unseen.start : self._unseen.stop]])
        keys = np.hstack([hands, np.asarray(action_masks, dtype=hands.dtype)])
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        table = np.array(
            [self.action_probabilities(observations[i], action_masks[i]) for i in first.tolist()]
        )
        return table[inverse.reshape(-1)]
