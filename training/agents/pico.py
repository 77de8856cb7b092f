"""A Pico heuristic: play the card with the best expected points against the
opponents' hands, assuming they choose uniformly. Every hand is known, except with the
two-player aside card face down (``aside="face_down"``) in round 1: there it reads only
what the observation shows (the other hand's shown cards and the ``unseen`` cards) and
takes the other hand to be its shown cards and all the unseen cards but one (the aside
card), each equally likely."""

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
    players), or of 1/30 with a hidden hand (``k + 1 <= 6`` unseen cards, a hand of at most
    5), so such cards are tied exactly."""

    def __init__(self, game: PicoGame) -> None:
        self.game = game
        self.points = game.card_points
        fields = game.observation_layout.fields
        self._hand = fields["hand"]
        #: Face down: the observation's unseen cards (None when every hand is shown).
        self._unseen = fields.get("unseen")

    def card_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each legal card's expected points won minus the opponents' mean points won
        (-inf for illegal actions)."""
        views = self.game.observation_layout.views(observation)
        hands = views["hand"].astype(np.int64)
        if self._unseen is not None and views["unseen"].any():
            return self._hidden_card_values(hands, views["unseen"], action_mask)
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

    def _hidden_card_values(
        self, hands: np.ndarray, unseen: np.ndarray, action_mask: np.ndarray
    ) -> np.ndarray:
        """``card_values`` of two players when the other hand is partly unknown: it holds
        its shown cards (``hands[1]``) and ``k`` of the ``k + 1`` unseen cards, each unseen
        card with probability ``k / (k + 1)``, and plays each card it holds with
        probability ``1 / (shown + k)``."""
        unknown = np.flatnonzero(unseen)
        k = len(unknown) - 1
        known = np.flatnonzero(hands[1])
        size = len(known) + k
        weights = [(int(c), 1.0 / size) for c in known]
        weights += [(int(c), k / (k + 1) / size) for c in unknown]
        values = np.full(len(action_mask), -np.inf)
        for card in np.flatnonzero(action_mask):
            value = 0.0
            for other, weight in weights:
                (won,) = winners([VALUES[card], VALUES[other]])
                value += weight * (self.points[card] if won == 0 else -self.points[other])
            values[card] = value
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
        """``action_probabilities`` of every row; the heuristic reads only the hands (and
        the unseen cards), so each distinct set of hands (and mask) is valued once."""
        observations = np.asarray(observations)
        hands = observations[:, self._hand.start : self._hand.stop]
        if self._unseen is not None:
            hands = np.hstack([hands, observations[:, self._unseen.start : self._unseen.stop]])
        keys = np.hstack([hands, np.asarray(action_masks, dtype=hands.dtype)])
        unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        table = np.array(
            [self.action_probabilities(observations[i], action_masks[i]) for i in first.tolist()]
        )
        return table[inverse.reshape(-1)]
