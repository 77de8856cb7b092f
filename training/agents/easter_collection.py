"""An Easter collection heuristic: bid where the expected gain is best.

For a card bid on a table card it estimates the chance of holding the highest bid:
each unseen card of that suit that would beat it is a threat, and every other player
bids such a card there with probability (threats / unseen cards) / (table cards of the
suit). Face-down bids already lying beside the table card (placing phase) are unseen
cards of the suit, each a threat with probability threats / unseen cards of the suit.
Winning takes the table card, the bid and the bids beside it; losing hands the bid to
an opponent. A card with no suit on the table is discarded instead, at a small cost
for its points. The best value wins, with a tiny random tie-break.

It reads the few fields it needs straight from the flat observation and works on small
Python lists (a decision costs tens of microseconds).
"""

from __future__ import annotations

import numpy as np

from envs.easter_collection.rules import (
    BLANK,
    NUM_CARDS,
    NUM_POSITIONS,
    PLACE,
    POINTS,
    SUIT_OF,
    EasterCollectionGame,
)

DISCARD_COST = 0.2  # a discarded card is out of the game: lose a little of its worth
AVERAGE_POINTS = 72 / 52  # mean points of a card


class EasterCollectionHeuristic:
    def __init__(self, game: EasterCollectionGame) -> None:
        self.game = game
        self.num_players = game.num_players
        #: strength[table card][bid]: the strength of a bid on a table card of its suit.
        self.strength = game.bid_strength
        fields = game.observation_layout.fields
        self.table = slice(fields["table"].start, fields["table"].stop)
        self.unseen = slice(fields["unseen"].start, fields["unseen"].stop)
        self.chosen = slice(fields["chosen"].start, fields["chosen"].stop)
        self.placing_index = fields["phase"].start + 1
        n = self.num_players
        # Other seats' entries (rows 1..n-1 of the observer-relative seat fields).
        self.bids_start = fields["bids"].start
        self.placed = slice(fields["placed"].start + 1, fields["placed"].start + n)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = np.flatnonzero(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        table = [-1] * NUM_POSITIONS
        for index in np.flatnonzero(observation[self.table]).tolist():
            table[index // NUM_CARDS] = index % NUM_CARDS
        unseen = np.flatnonzero(observation[self.unseen]).tolist()
        unseen_by_suit: list[list[int]] = [[], [], [], []]
        for card in unseen:
            unseen_by_suit[SUIT_OF[card]].append(card)
        context = (table, unseen_by_suit, max(len(unseen), 1))
        placing = observation[self.placing_index] > 0
        pending = beside = None
        if placing:
            n = self.num_players
            pending = n - 1 - int(observation[self.placed].sum())
            beside = [
                int(observation[self.bids_start + k * n + 1 : self.bids_start + (k + 1) * n].sum())
                for k in range(NUM_POSITIONS)
            ]
        best, best_value = legal[0], -np.inf
        for action in legal:
            if placing:
                card = int(observation[self.chosen].argmax())
                value = self._bid_value(card, action - PLACE, context, pending, beside)
            elif self.game.secret:
                chip, card = divmod(action, NUM_CARDS)
                if chip == BLANK:
                    value = -DISCARD_COST * POINTS[card]
                else:
                    value = self._bid_value(card, chip, context, None, None)
            else:
                card = action
                targets = [k for k, t in enumerate(table) if t >= 0 and SUIT_OF[t] == SUIT_OF[card]]
                if targets:
                    value = max(self._bid_value(card, k, context, None, None) for k in targets)
                else:
                    value = -DISCARD_COST * POINTS[card]
            value += 1e-6 * rng.random()
            if value > best_value:
                best, best_value = action, value
        return best

    def _bid_value(
        self,
        card: int,
        position: int,
        context: tuple[list[int], list[list[int]], int],
        pending: int | None,
        beside: list[int] | None,
    ) -> float:
        """Expected points of bidding ``card`` beside ``position``; ``pending`` (seats still
        to place) and ``beside`` (face-down bids per position) only in the placing phase."""
        table, unseen_by_suit, total_unseen = context
        target = table[position]
        suit = SUIT_OF[target]
        same_suit = sum(1 for t in table if t >= 0 and SUIT_OF[t] == suit)
        strength = self.strength[target]
        mine = strength[card]
        suit_unseen = unseen_by_suit[suit]
        threats = sum(1 for c in suit_unseen if strength[c] > mine)
        per_player = threats / total_unseen / same_suit
        if pending is not None:
            lying = beside[position]
            p_win = (1 - per_player) ** pending
            if lying:
                p_win *= (1 - threats / max(len(suit_unseen), 1)) ** lying
        else:
            lying = 0
            p_win = (1 - per_player) ** (self.num_players - 1)
        gain = POINTS[target] + POINTS[card] + lying * AVERAGE_POINTS
        return p_win * gain - (1 - p_win) * POINTS[card]
