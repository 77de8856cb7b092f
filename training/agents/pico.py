"""A Pico heuristic: play the card with the best expected points against the
opponents' hands (every hand is known), assuming they choose uniformly."""

from __future__ import annotations

import itertools

import numpy as np

from envs.pico.rules import VALUES, PicoGame, winners

#: Scale of the random tie-break added to each card's value in ``act``.
TIE_BREAK = 1e-3


class PicoHeuristic:
    """``act`` takes the best ``card_values`` with a random tie-break (``TIE_BREAK`` times a
    uniform draw per card); ``action_probabilities`` is uniform over the cards within
    ``TIE_BREAK`` of the best, the only ones the tie-break can pick. That is exact: values
    are multiples of 1/72 (points over at most 36 opponent combinations, halved with three
    players), so such cards are tied exactly."""

    def __init__(self, game: PicoGame) -> None:
        self.game = game
        self.points = game.card_points
        self._hand = game.observation_layout.fields["hand"]

    def card_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each legal card's expected points won minus the opponents' mean points won
        (-inf for illegal actions)."""
        views = self.game.observation_layout.views(observation)
        hands = views["hand"].astype(np.int64)
        opponent_cards = [np.flatnonzero(hand) for hand in hands[1:]]
        values = np.full(len(action_mask), -np.inf)
        for card in np.flatnonzero(action_mask):
            value = 0.0
            combos = list(itertools.product(*opponent_cards))
            for combo in combos:
                played = [card, *combo]
                won = winners([VALUES[c] for c in played])
                gain = sum(self.points[played[s]] for s in won if s == 0)
                loss = sum(self.points[played[s]] for s in won if s != 0) / len(combo)
                value += gain - loss
            values[card] = value / len(combos)
        return values

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        values = self.card_values(observation, action_mask)
        best, best_value = -1, -np.inf
        for card in np.flatnonzero(action_mask):
            value = values[card] + TIE_BREAK * rng.random()
            if value > best_value:
                best, best_value = int(card), value
        return best

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        values = self.card_values(observation, action_mask)
        near = values > values.max() - TIE_BREAK
        return near / near.sum()

    def action_probabilities_batch(
        self, observations: np.ndarray, action_masks: np.ndarray
    ) -> np.ndarray:
        """``action_probabilities`` of every row; the heuristic reads only the hands, so
        each distinct set of hands (and mask) is valued once."""
        hands = np.asarray(observations)[:, self._hand.start : self._hand.stop]
        keys = np.hstack([hands, np.asarray(action_masks, dtype=hands.dtype)])
        unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        table = np.array(
            [self.action_probabilities(observations[i], action_masks[i]) for i in first.tolist()]
        )
        return table[inverse.reshape(-1)]
