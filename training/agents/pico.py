"""A Pico heuristic: play the card with the best expected points against the
opponents' hands (every hand is known), assuming they choose uniformly."""

from __future__ import annotations

import itertools

import numpy as np

from envs.pico.rules import VALUES, PicoGame, winners


class PicoHeuristic:
    def __init__(self, game: PicoGame) -> None:
        self.game = game
        self.points = game.card_points

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        views = self.game.observation_layout.views(observation)
        hands = views["hand"].astype(np.int64)
        opponent_cards = [np.flatnonzero(hand) for hand in hands[1:]]
        best, best_value = -1, -np.inf
        for card in np.flatnonzero(action_mask):
            value = 0.0
            combos = list(itertools.product(*opponent_cards))
            for combo in combos:
                played = [card, *combo]
                won = winners([VALUES[c] for c in played])
                gain = sum(self.points[played[s]] for s in won if s == 0)
                loss = sum(self.points[played[s]] for s in won if s != 0) / len(combo)
                value += gain - loss
            value = value / len(combos) + 1e-3 * rng.random()
            if value > best_value:
                best, best_value = int(card), value
        return best
