"""An Easter collection heuristic: bid where the expected gain is best.

For a card bid on a table card it estimates the chance of holding the highest bid:
each unseen card of that suit that would beat it is a threat, and every other player
bids such a card there with probability (threats / unseen cards) / (table cards of the
suit). Face-down bids already lying beside the table card (placing phase) are unseen
cards of the suit, each a threat with probability threats / unseen cards of the suit.
Winning takes the table card, the bid and the bids beside it; losing hands the bid to
an opponent. A card with no suit on the table is discarded instead, at a small cost
for its points. The best value wins, with a tiny random tie-break.
"""

from __future__ import annotations

import numpy as np

from envs.easter_collection.rules import (
    BLANK,
    NUM_CARDS,
    PLACE,
    POINTS,
    SUIT_MASK,
    SUIT_OF,
    EasterCollectionGame,
)

DISCARD_COST = 0.2  # a discarded card is out of the game: lose a little of its worth
AVERAGE_POINTS = 72 / 52  # mean points of a card


class EasterCollectionHeuristic:
    def __init__(self, game: EasterCollectionGame) -> None:
        self.game = game
        self.num_players = game.num_players
        #: key[bid, table card]: the strength of a bid on a table card of its suit.
        self.key = np.array(
            [[game.bid_key(b, t) for t in range(NUM_CARDS)] for b in range(NUM_CARDS)]
        )
        self.points = np.array(POINTS, dtype=np.float64)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        views = self.game.observation_layout.views(observation)
        table = [int(row.argmax()) if row.any() else -1 for row in views["table"]]
        unseen = views["unseen"] > 0
        placing = views["phase"][1] > 0
        best, best_value = int(legal[0]), -np.inf
        for action in legal:
            if placing:
                card, target = int(views["chosen"].argmax()), int(action) - PLACE
                value = self._bid_value(card, target, table, unseen, views, placing=True)
            elif self.game.secret:
                chip, card = divmod(int(action), NUM_CARDS)
                if chip == BLANK:
                    value = -DISCARD_COST * self.points[card]
                else:
                    value = self._bid_value(card, chip, table, unseen, views, placing=False)
            else:
                card = int(action)
                targets = [k for k, t in enumerate(table) if t >= 0 and SUIT_OF[t] == SUIT_OF[card]]
                if targets:
                    value = max(
                        self._bid_value(card, k, table, unseen, views, placing=False)
                        for k in targets
                    )
                else:
                    value = -DISCARD_COST * self.points[card]
            value += 1e-6 * rng.random()
            if value > best_value:
                best, best_value = int(action), value
        return best

    def _bid_value(
        self,
        card: int,
        position: int,
        table: list[int],
        unseen: np.ndarray,
        views: dict[str, np.ndarray],
        placing: bool,
    ) -> float:
        target = table[position]
        suit = SUIT_OF[target]
        same_suit = sum(1 for t in table if t >= 0 and SUIT_OF[t] == suit)
        suit_unseen = unseen & SUIT_MASK[suit]
        threats = int((suit_unseen & (self.key[:, target] > self.key[card, target])).sum())
        total_unseen = max(int(unseen.sum()), 1)
        per_player = threats / total_unseen / same_suit
        if placing:
            beside = int(views["bids"][position, 1:].sum())
            pending = self.num_players - 1 - int(views["placed"][1:].sum())
            p_win = (1 - per_player) ** pending
            if beside:
                p_win *= (1 - threats / max(int(suit_unseen.sum()), 1)) ** beside
        else:
            beside = 0
            p_win = (1 - per_player) ** (self.num_players - 1)
        gain = self.points[target] + self.points[card] + beside * AVERAGE_POINTS
        return p_win * gain - (1 - p_win) * self.points[card]
