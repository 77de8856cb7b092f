"""Easter collection rule-based players: ``EasterCollectionHeuristic``, a training opponent
that bids where a crude expected gain is best, and ``EasterCollectionExpert``, a stronger
teacher for behaviour cloning that models its opponents as that heuristic.

Heuristic. For a card bid on a table card it estimates the chance of holding the highest
bid: each unseen card of that suit that would beat it is a threat, and every other player
bids such a card there with probability (threats / unseen cards) / (table cards of the
suit). Face-down bids already lying beside the table card (placing phase) are unseen
cards of the suit, each a threat with probability threats / unseen cards of the suit.
Winning takes the table card, the bid and the bids beside it; losing hands the bid to
an opponent. A card with no suit on the table is discarded instead, at a small cost
for its points. The best value wins, with a tiny random tie-break.

Expert. It predicts each opponent's bid by running the heuristic's rule on every card the
opponent may hold (from the opponent's side: what it has not seen), ranking them, and
taking the chance that each is the best card of a hand of the known size. The hand is
drawn from the unseen cards with a fitted prior (``HELD``): the heuristic plays Aces and
strong cards of the table's suits early, so in the second bid of a round those are rarely
still held. A bid is worth its expected score margin against that prediction: a lone bid
takes the table card and the bid, a contest takes or gives away every bid there, and
bidding where an opponent bids denies it. With two players it also plans the round: a
first bid adds the best second bid left by it and by the opponent's predicted first bid;
a card matching several table cards of its suit is valued knowing the placing order (the
second placer sees the first's bid; a first placer meets the heuristic's placing
reaction), and the placing step uses that reaction or the bid already lying there.

Both read the few fields they need straight from the flat observation and work on small
Python lists (tens of microseconds a decision for the heuristic, under 200 for the
expert).
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from envs.easter_collection.layout import MAX_SCORE
from envs.easter_collection.rules import (
    BLANK,
    NUM_CARDS,
    NUM_POSITIONS,
    PLACE,
    POINTS,
    RANK_OF,
    SUIT_OF,
    EasterCollectionGame,
)

DISCARD_COST = 0.2  # a discarded card is out of the game: lose a little of its worth
AVERAGE_POINTS = MAX_SCORE / NUM_CARDS  # mean points of a card (all cards score MAX_SCORE)
#: Scale of the random tie-break added to each action's value.
TIE_BREAK = 1e-6


def near_best(values: np.ndarray) -> np.ndarray:
    """Uniform over the actions within ``TIE_BREAK`` of the best value (-inf: illegal)."""
    near = values > values.max() - TIE_BREAK
    return near / near.sum()


def decode_table(one_hots: np.ndarray) -> list[int]:
    """The card at each table position (-1: none) from the observation's table field."""
    table = [-1] * NUM_POSITIONS
    for index in np.flatnonzero(one_hots).tolist():
        table[index // NUM_CARDS] = index % NUM_CARDS
    return table


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
        values = self._values(observation, action_mask)
        best, best_value = legal[0], -np.inf
        for action in legal:
            value = values[action] + TIE_BREAK * rng.random()
            if value > best_value:
                best, best_value = action, value
        return best

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Uniform over the actions within the tie-break (``TIE_BREAK``) of the best: the
        only ones ``act`` can take (exact when those are tied exactly)."""
        return near_best(self._values(observation, action_mask))

    def _values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each legal action's value before the tie-break (-inf elsewhere; 0 for a lone
        legal action)."""
        legal = np.flatnonzero(action_mask).tolist()
        values = np.full(len(action_mask), -np.inf)
        if len(legal) == 1:
            values[legal[0]] = 0.0
            return values
        table = decode_table(observation[self.table])
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
            values[action] = value
        return values

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


#: HELD[second bid][suit on the table][rank]: how much likelier than average an unseen card
#: is to be in a heuristic opponent's hand (measured over 6,000 two-player games).
HELD = (
    (
        (0.89, 1.09, 1.09, 1.05, 1.04, 1.04, 0.98, 0.97, 0.93, 0.92, 0.97, 0.91, 0.92),
        (0.95, 1.11, 1.12, 1.06, 1.04, 1.01, 1.0, 0.98, 0.94, 0.91, 1.0, 0.97, 0.98),
    ),
    (
        (0.94, 1.36, 1.36, 1.26, 1.25, 1.19, 1.14, 1.09, 1.01, 0.98, 1.07, 0.99, 0.98),
        (0.47, 1.15, 1.13, 1.07, 1.0, 0.97, 0.89, 0.86, 0.75, 0.69, 0.68, 0.6, 0.54),
    ),
)

#: Per table position, (probability, card) of an opponent's bid there.
Bids = list[list[tuple[float, int]]]


def suit_positions(table: list[int]) -> list[list[int]]:
    """For each suit, the positions of ``table`` (cards or -1) holding it."""
    positions: list[list[int]] = [[], [], [], []]
    for k, t in enumerate(table):
        if t >= 0:
            positions[SUIT_OF[t]].append(k)
    return positions


class EasterCollectionExpert:
    def __init__(self, game: EasterCollectionGame) -> None:
        self.game = game
        self.num_players = n = game.num_players
        self.strength = game.bid_strength
        fields = game.observation_layout.fields
        self.hand = slice(fields["hand"].start, fields["hand"].stop)
        self.table = slice(fields["table"].start, fields["table"].stop)
        self.unseen = slice(fields["unseen"].start, fields["unseen"].stop)
        self.chosen = slice(fields["chosen"].start, fields["chosen"].stop)
        self.second_bid_index = fields["bid"].start + 1
        self.placing_index = fields["phase"].start + 1
        self.start_index = fields["start"].start
        self.bids = slice(fields["bids"].start, fields["bids"].stop)
        self.placed = slice(fields["placed"].start + 1, fields["placed"].start + n)
        #: Two players, standard: bids are placed one after the other, seen by the next.
        self.sequential = n == 2 and not game.secret
        self.first = False  # this decision's: are we the round's start player?

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        values = self.action_values(observation, action_mask)[legal]
        return int(legal[np.argmax(values + TIE_BREAK * rng.random(len(legal)))])  # tie-break

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Uniform over the actions within the tie-break (``TIE_BREAK``) of the best: the
        only ones ``act`` can take (exact when those are tied exactly)."""
        return near_best(self.action_values(observation, action_mask))

    def action_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each action's value, its expected score margin (-inf where illegal); ``act``
        takes the best. Distillation (``--imitate-temperature``) learns from all of them."""
        legal = np.flatnonzero(action_mask).tolist()
        values = np.full(len(action_mask), -np.inf)
        if len(legal) == 1:
            values[legal[0]] = 0.0
            return values
        n = self.num_players
        table = decode_table(observation[self.table])
        hand = np.flatnonzero(observation[self.hand]).tolist()
        unseen = np.flatnonzero(observation[self.unseen]).tolist()
        placing = observation[self.placing_index] > 0
        second = int(observation[self.second_bid_index] > 0)
        mine = int(observation[self.chosen].argmax()) if placing else -1
        # What the opponents have not seen: our unseen cards (less their own), our hand, bid.
        size = len(hand) + int(placing)  # their hand when they chose
        theirs = unseen + hand + ([mine] if placing else [])
        their_suit: list[list[int]] = [[], [], [], []]
        for card in theirs:
            their_suit[SUIT_OF[card]].append(card)
        their_unseen = max(len(theirs) - size, 1)
        self.their_suit = their_suit
        self.first = observation[self.start_index] > 0
        dist = self._predict(table, unseen, their_unseen, size, second)
        if placing:
            values[legal] = self._place_values(observation, legal, table, mine, dist, hand)
            return values
        positions = suit_positions(table)
        plan = n == 2 and not second
        if plan:
            # Where the opponent's first bid goes (-1: discarded), and its second hand.
            where = [(sum(p for p, _ in dist[k]), k) for k in range(NUM_POSITIONS)]
            where = [(q, k) for q, k in where if q > 1e-4]
            where.append((1 - sum(q for q, _ in where), -1))
            later: dict[frozenset[int], Bids] = {}
        others = [dist] * (n - 1)
        for action in legal:
            if self.game.secret:
                chip, card = divmod(action, NUM_CARDS)
                ks = [] if chip == BLANK else [chip]
            else:
                card, ks = action, positions[SUIT_OF[action]]
            if not ks:
                value, bid_at = -DISCARD_COST * POINTS[card], -1
            elif self.sequential and len(ks) > 1:
                value, bid_at = self._card_value(card, ks, table, dist), -2
            else:
                value, bid_at = max(
                    (self._margin(card, table[k], [d[k] for d in others]), k) for k in ks
                )
            if plan:
                rest = [c for c in hand if c != card]
                for q, k in where:
                    at = bid_at
                    if at == -2:  # several positions: assume the best one the opponent left
                        at = max((POINTS[table[j]], j) for j in ks if j != k)[1]
                    gone = frozenset((at, k))
                    left = [-1 if j in gone else t for j, t in enumerate(table)]
                    if max(left) < 0:
                        continue
                    if gone not in later:
                        later[gone] = self._predict(left, unseen, their_unseen, size - 1, 1)
                    value += q * self._best_bid(rest, left, later[gone])
            values[action] = value
        return values

    def _predict(
        self, table: list[int], pool: list[int], their_unseen: int, size: int, second: int
    ) -> Bids:
        """An opponent's bid: the card of a ``size``-card hand from ``pool`` that the
        heuristic's rule values most, and where it goes; each pool card is held with a
        chance weighted by ``HELD``."""
        n = self.num_players
        positions = suit_positions(table)
        threats_of: list[list[int]] = [[], [], [], []]
        for k, t in enumerate(table):
            if t >= 0:
                strength = self.strength[t]
                threats_of[k] = sorted(strength[c] for c in self.their_suit[SUIT_OF[t]])
        scored = []
        for card in pool:
            targets = positions[SUIT_OF[card]]
            if not targets:
                scored.append((-DISCARD_COST * POINTS[card], card, -1))
                continue
            value, target = -np.inf, -1
            for k in targets:
                t = table[k]
                strength = threats_of[k]
                threats = len(strength) - bisect_right(strength, self.strength[t][card])
                p_win = (1 - threats / their_unseen / len(targets)) ** (n - 1)
                v = p_win * (POINTS[t] + POINTS[card]) - (1 - p_win) * POINTS[card]
                if v > value:
                    value, target = v, k
            scored.append((value, card, target))
        dist: Bids = [[], [], [], []]
        if not scored:
            return dist
        scored.sort(reverse=True)
        held = HELD[second]
        weights = [held[bool(positions[SUIT_OF[c]])][RANK_OF[c]] for _, c, _ in scored]
        scale = min(size, len(scored)) / sum(weights)
        chance = [min(w * scale, 0.98) for w in weights]
        # The best card held is in the first group of equal values holding any.
        m, i, none_yet = len(scored), 0, 1.0
        while i < m and none_yet > 1e-4:
            g = i + 1
            while g < m and scored[g][0] > scored[i][0] - 1e-9:
                g += 1
            miss = 1.0
            for j in range(i, g):
                miss *= 1 - chance[j]
            share = none_yet * (1 - miss) / sum(chance[i:g])
            for j in range(i, g):
                if scored[j][2] >= 0:
                    dist[scored[j][2]].append((share * chance[j], scored[j][1]))
            none_yet *= miss
            i = g
        return dist

    def _margin(self, card: int, target: int, dists: list[list[tuple[float, int]]]) -> float:
        """Expected score margin of bidding ``card`` on ``target`` against each opponent's
        (probability, card) bids there (relative to their bids elsewhere)."""
        strength = self.strength[target]
        mine = strength[card]
        table_points = POINTS[target]
        gain = table_points + POINTS[card]
        p_win = 1.0
        won = lost = denied = 0.0
        for dist in dists:
            beaten = 0.0
            for p, c in dist:
                denied += p * (table_points + POINTS[c])
                if strength[c] > mine:
                    beaten += p
                    lost += p * POINTS[c]
                else:
                    won += p * POINTS[c]
            p_win *= 1 - beaten
        return p_win * gain + won - ((1 - p_win) * gain + lost - denied) / (self.num_players - 1)

    def _card_value(self, card: int, ks: list[int], table: list[int], dist: Bids) -> float:
        """Two players, standard: a card matching the table cards at ``ks``. Placing first,
        the best position given the heuristic's reaction; placing second, the best answer
        to where the opponent's bid lies."""
        if self.first:
            suited = [bid for k in ks for bid in dist[k]]
            return max(
                self._margin(
                    card,
                    table[k],
                    [[(p, c) for p, c in suited if self._react(c, table, ks, k) == k]],
                )
                for k in ks
            )
        free = [POINTS[table[k]] + POINTS[card] for k in ks]
        value, alone = 0.0, 1.0
        for i, k in enumerate(ks):
            q = sum(p for p, _ in dist[k])
            if q <= 0:
                continue
            alone -= q
            contest = self._margin(card, table[k], [[(p / q, c) for p, c in dist[k]]])
            value += q * max(contest, max(f for j, f in enumerate(free) if j != i))
        return value + alone * max(free)

    def _best_bid(self, hand: list[int], table: list[int], dist: Bids) -> float:
        """Two players: the value of the best bid from ``hand`` on ``table``."""
        positions = suit_positions(table)
        best = -np.inf
        for card in hand:
            ks = positions[SUIT_OF[card]]
            if not ks:
                value = -DISCARD_COST * POINTS[card]
            elif self.sequential and len(ks) > 1:
                value = self._card_value(card, ks, table, dist)
            else:
                value = max(self._margin(card, table[k], [dist[k]]) for k in ks)
            best = max(best, value)
        return best

    def _place_values(
        self,
        observation: np.ndarray,
        legal: list[int],
        table: list[int],
        mine: int,
        dist: Bids,
        hand: list[int],
    ) -> list[float]:
        """Place ``mine``: against a bid already lying beside a position of its suit (its
        card one of the predicted ones there), or the heuristic's reaction when the
        opponent places after us (two players), or else its predicted bids."""
        n = self.num_players
        bids = observation[self.bids]
        placed = observation[self.placed]
        ks = [action - PLACE for action in legal]
        values = []
        for k in ks:
            dists = []
            for row in range(1, n):
                if placed[row - 1] > 0:
                    if bids[k * n + row] == 0:
                        continue  # its bid lies elsewhere or was discarded
                    d = [(p, c) for p, c in dist[k] if p > 0] or [
                        (1.0, c)
                        for c in self.their_suit[SUIT_OF[mine]]
                        if c != mine and c not in hand
                    ]
                    total = sum(p for p, _ in d)
                    dists.append([(p / total, c) for p, c in d])
                elif n == 2:
                    suited = [bid for j in ks for bid in dist[j]]
                    dists.append([(p, c) for p, c in suited if self._react(c, table, ks, k) == k])
                else:
                    dists.append(dist[k])
            values.append(self._margin(mine, table[k], dists))
        return values

    def _react(self, card: int, table: list[int], ks: list[int], k: int) -> int:
        """Where the heuristic, placing last, puts ``card`` (matching the positions ``ks``)
        with our bid lying beside ``k``."""
        suit_unseen = [c for c in self.their_suit[SUIT_OF[card]] if c != card]
        best, best_value = -1, -np.inf
        for j in ks:
            t = table[j]
            gain = POINTS[t] + POINTS[card]
            if j == k:
                strength = self.strength[t]
                threats = sum(1 for c in suit_unseen if strength[c] > strength[card])
                p_win = 1 - threats / max(len(suit_unseen), 1)
                value = p_win * (gain + AVERAGE_POINTS) - (1 - p_win) * POINTS[card]
            else:
                value = gain
            if value > best_value:
                best, best_value = j, value
        return best
