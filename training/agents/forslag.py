"""A Förslag heuristic: play the hand card that scores most now, draft the pool card that
makes the best play.

A play is worth its Game Card, Round Card and right-hand neighbour matches (when the
neighbour's card at this position is already down), plus what it adds to the Largest
Set, plus a little for building towards a set. A draft is worth the best play it makes
possible this round, plus a little for a card that matches the Game Card (it scores in
any round). When the last drafter's choice leaves one card, the leftover is the next
Round Card, so the heuristic prefers to leave one its remaining hand matches.
"""

from __future__ import annotations

import numpy as np

from envs.forslag.rules import (
    COLOUR_OF,
    GAME_CARD_POINTS,
    LARGEST_SET_POINTS,
    MATCH,
    NEIGHBOUR_POINTS,
    NUM_TYPES,
    PLAY,
    ROUND_CARD_POINTS,
    SHAPE_OF,
    ForslagGame,
)

SET_BUILDING = 0.3
GAME_CARD_KEEP = 0.5
LEFTOVER_WEIGHT = 0.5


def decode_card(attributes: np.ndarray) -> int:
    """The card type of a 10-wide colour + shape one-hot, or -1 for no card."""
    if attributes.sum() == 0:
        return -1
    return int(np.argmax(attributes[:5])) * 5 + int(np.argmax(attributes[5:]))


class ForslagHeuristic:
    def __init__(self, game: ForslagGame) -> None:
        self.game = game
        self.layout = game.observation_layout

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        views = self.layout.views(observation)
        hand = views["hands"][0].astype(np.int64)
        r = int(np.argmax(views["round"]))
        game_card = decode_card(views["game_card"])
        round_card = decode_card(views["round_cards"][r])
        right_card = decode_card(views["boards"][-1, r])
        attributes = views["boards"][0].sum(axis=0)

        def play_value(card: int) -> float:
            value = GAME_CARD_POINTS * MATCH[card, game_card]
            value += ROUND_CARD_POINTS * MATCH[card, round_card]
            value += NEIGHBOUR_POINTS * MATCH[card, right_card]
            colour, shape = COLOUR_OF[card], 5 + SHAPE_OF[card]
            after = attributes.copy()
            after[colour] += 1
            after[shape] += 1
            value += LARGEST_SET_POINTS * (after.max() - attributes.max())
            return value + SET_BUILDING * max(after[colour], after[shape])

        noise = 1e-3 * rng.random(NUM_TYPES)
        if action_mask[PLAY:].any():
            values = [
                play_value(c) + noise[c] if action_mask[PLAY + c] else -np.inf
                for c in range(NUM_TYPES)
            ]
            return PLAY + int(np.argmax(values))

        pool = views["pool"].astype(np.int64)
        last_drafter = pool.sum() == 2
        best, best_value = -1, -np.inf
        for card in np.flatnonzero(action_mask[:PLAY]):
            hand[card] += 1
            options = np.flatnonzero(hand)
            plays = [play_value(c) for c in options]
            played = options[int(np.argmax(plays))]
            value = max(plays) + GAME_CARD_KEEP * MATCH[card, game_card] + noise[card]
            if last_drafter:
                # The card left in the pool becomes the next Round Card.
                pool[card] -= 1
                leftover = int(np.flatnonzero(pool)[0])
                pool[card] += 1
                hand[played] -= 1
                keep = max(MATCH[c, leftover] for c in np.flatnonzero(hand))
                hand[played] += 1
                value += LEFTOVER_WEIGHT * ROUND_CARD_POINTS * keep
            hand[card] -= 1
            if value > best_value:
                best, best_value = int(card), value
        return best
