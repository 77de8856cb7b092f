"""A Förslag heuristic: play the hand card that scores most now, draft the pool card that
makes the best play.

A play is worth its Game Card, Round Card and right-hand neighbour matches (when the
neighbour's card at this position is already down), plus what it adds to the Largest
Set, plus a little for building towards a set. A draft is worth the best play it makes
possible this round, plus a little for a card that matches the Game Card (it scores in
any round). When the last drafter's choice leaves one card, the leftover is the next
Round Card, so the heuristic prefers to leave one its remaining hand matches.

It is a training opponent, so it reads the few observation entries it needs as Python
lists and scores cards with integer tables (tens of microseconds a decision).
"""

from __future__ import annotations

import numpy as np

from envs.forslag.rules import (
    ATTRIBUTES_OF,
    GAME_CARD_POINTS,
    LARGEST_SET_POINTS,
    MATCH_ROWS,
    NEIGHBOUR_POINTS,
    NUM_ATTRIBUTES,
    NUM_TYPES,
    PLAY,
    ROUND_CARD_POINTS,
    ForslagGame,
)

SET_BUILDING = 0.3
GAME_CARD_KEEP = 0.5
LEFTOVER_WEIGHT = 0.5


def decode_card(attributes: list[float]) -> int:
    """The card type of a 10-wide colour + shape one-hot, or -1 for no card."""
    if 1.0 not in attributes:
        return -1
    return attributes.index(1.0, 0, 5) * 5 + attributes.index(1.0, 5) - 5


class ForslagHeuristic:
    def __init__(self, game: ForslagGame) -> None:
        self.game = game
        fields = game.observation_layout.fields
        n = game.num_players
        # Offsets of what the heuristic reads: the own hand (row 0 of "hands"), the pool,
        # the round one-hot, the Match Board, the own board (row 0) and the right-hand
        # neighbour's (row n - 1).
        self.hand = fields["hands"].start
        self.pool = fields["pool"].start
        self.round = fields["round"].start
        self.game_card = fields["game_card"].start
        self.round_cards = fields["round_cards"].start
        self.own_board = fields["boards"].start
        self.right_board = fields["boards"].start + (n - 1) * n * NUM_ATTRIBUTES
        self.num_rounds = n

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        n = self.num_rounds
        round_onehot = observation[self.round : self.round + n].tolist()
        r = round_onehot.index(1.0) if 1.0 in round_onehot else 0
        game_card = decode_card(observation[self.game_card : self.game_card + 10].tolist())
        at = self.round_cards + r * NUM_ATTRIBUTES
        round_card = decode_card(observation[at : at + NUM_ATTRIBUTES].tolist())
        at = self.right_board + r * NUM_ATTRIBUTES
        right_card = decode_card(observation[at : at + NUM_ATTRIBUTES].tolist())
        board = observation[self.own_board : self.own_board + n * NUM_ATTRIBUTES]
        attributes = board.reshape(n, NUM_ATTRIBUTES).sum(axis=0).tolist()
        most = max(attributes)

        def play_value(card: int) -> float:
            match = MATCH_ROWS[card]
            value = (
                GAME_CARD_POINTS * match[game_card]
                + ROUND_CARD_POINTS * match[round_card]
                + NEIGHBOUR_POINTS * match[right_card]
            )
            colour, shape = ATTRIBUTES_OF[card]
            colours, shapes = attributes[colour] + 1, attributes[shape] + 1
            value += LARGEST_SET_POINTS * (max(most, colours, shapes) - most)
            return value + SET_BUILDING * max(colours, shapes)

        noise = (1e-3 * rng.random(NUM_TYPES)).tolist()
        mask = action_mask.tolist()
        if 1 in mask[PLAY:]:
            best, best_value = -1, -np.inf
            for card in range(NUM_TYPES):
                if mask[PLAY + card]:
                    value = play_value(card) + noise[card]
                    if value > best_value:
                        best, best_value = card, value
            return PLAY + best

        hand = [int(c) for c in observation[self.hand : self.hand + NUM_TYPES].tolist()]
        pool = [int(c) for c in observation[self.pool : self.pool + NUM_TYPES].tolist()]
        last_drafter = sum(pool) == 2
        best, best_value = -1, -np.inf
        for card in range(NUM_TYPES):
            if not mask[card]:
                continue
            hand[card] += 1
            played, top = -1, -np.inf
            for option in range(NUM_TYPES):
                if hand[option]:
                    value = play_value(option)
                    if value > top:
                        played, top = option, value
            value = top + GAME_CARD_KEEP * MATCH_ROWS[card][game_card] + noise[card]
            if last_drafter:
                # The card left in the pool becomes the next Round Card.
                pool[card] -= 1
                leftover = next(c for c in range(NUM_TYPES) if pool[c])
                pool[card] += 1
                hand[played] -= 1
                keep = max(MATCH_ROWS[c][leftover] for c in range(NUM_TYPES) if hand[c])
                hand[played] += 1
                value += LEFTOVER_WEIGHT * ROUND_CARD_POINTS * keep
            hand[card] -= 1
            if value > best_value:
                best, best_value = card, value
        return best
