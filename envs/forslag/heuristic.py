"""Förslag rule-based players: ``ForslagHeuristic``, a training opponent that plays the hand
card scoring most now and drafts the pool card making the best play, and ``ForslagExpert``, a
stronger teacher for behaviour cloning that also plans for the Largest Set and the next round.

Heuristic. A play is worth its Game Card, Round Card and right-hand neighbour matches (when
the neighbour's card at this position is already down), plus what it adds to the Largest
Set, plus a little for building towards a set. A draft is worth the best play it makes
possible this round, plus a little for a card that matches the Game Card (it scores in
any round). When the last drafter's choice leaves one card, the leftover is the next
Round Card, so the heuristic prefers to leave one its remaining hand matches.

Expert. It values a play by the same match lines, plus the expected final Largest Set:
for each colour and shape, the board's count plus ``E[min(rounds left, h + X)]``, where
``h`` counts the kept hand cards with it and ``X`` the later rounds whose pool, at this
seat's turn to draft (its size known from the turn order), holds such a card, each pool
card drawn from the unseen counts. It takes the best attribute (and a tenth of the second
best, for flexibility), so a set card is played now rather than held when later drafts
will likely bring more. Kept cards add part of their best next-round score (the Game
Card and the expected match with the next Round Card, which is one of the pool cards
left: exactly known to the last drafter) and a little for a Game Card match to play
later. A draft is worth the best play it leads to, evaluated the same way, with the
pool it leaves.

Both are training opponents or teachers, so they read the few observation entries they
need as Python lists and score cards with integer tables (tens of microseconds a
decision).
"""

from __future__ import annotations

import numpy as np

from envs.forslag.rules import (
    ATTRIBUTES_OF,
    GAME_CARD_POINTS,
    HAND_SIZE,
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
#: Scale of the heuristic's random tie-break.
TIE_BREAK = 1e-3
GAME_CARD_KEEP = 0.5
LEFTOVER_WEIGHT = 0.5
# The expert's weights (a small search against the heuristic, 4 players).
SECOND_SET = 0.1
NEXT_ROUND_WEIGHT = 0.75
GAME_CARD_HOLD = 0.25


def decode_card(attributes: list[float]) -> int:
    """The card type of a 10-wide colour + shape one-hot, or -1 for no card."""
    if 1.0 not in attributes:
        return -1
    return attributes.index(1.0, 0, 5) * 5 + attributes.index(1.0, 5) - 5


class ForslagReader:
    """The observation offsets both players read (the own hand, row 0 of "hands"; the pool;
    the round one-hot; the Match Board; the own board, row 0, and the right-hand
    neighbour's, row n - 1) and the cards every play is matched against."""

    def __init__(self, game: ForslagGame) -> None:
        self.game = game
        fields = game.observation_layout.fields
        n = game.num_players
        self.num_rounds = n
        self.hand = fields["hands"].start
        self.pool = fields["pool"].start
        self.round = fields["round"].start
        self.game_card = fields["game_card"].start
        self.round_cards = fields["round_cards"].start
        self.own_board = fields["boards"].start
        self.right_board = fields["boards"].start + (n - 1) * n * NUM_ATTRIBUTES

    def match_cards(self, observation: np.ndarray) -> tuple[int, int, int, int]:
        """The round, the Game Card, this round's Round Card and the right-hand neighbour's
        card at this round's position (-1 where there is none yet)."""
        round_onehot = observation[self.round : self.round + self.num_rounds].tolist()
        r = round_onehot.index(1.0) if 1.0 in round_onehot else 0
        at = self.game_card
        game_card = decode_card(observation[at : at + NUM_ATTRIBUTES].tolist())
        at = self.round_cards + r * NUM_ATTRIBUTES
        round_card = decode_card(observation[at : at + NUM_ATTRIBUTES].tolist())
        at = self.right_board + r * NUM_ATTRIBUTES
        right_card = decode_card(observation[at : at + NUM_ATTRIBUTES].tolist())
        return r, game_card, round_card, right_card


class ForslagHeuristic(ForslagReader):
    """``act`` takes the best of its action values with a random tie-break (``TIE_BREAK``
    times a uniform draw per card); ``action_probabilities`` is uniform over the actions
    within ``TIE_BREAK`` of the best, the only ones the tie-break can pick (exact when
    those are tied exactly, as the integer match tables make usual)."""

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        values = self._values(observation, action_mask)
        noise = (TIE_BREAK * rng.random(NUM_TYPES)).tolist()
        offset = PLAY if 1 in action_mask.tolist()[PLAY:] else 0
        best, best_value = -1, -np.inf
        for card in range(NUM_TYPES):
            if action_mask[offset + card]:
                value = values[offset + card] + noise[card]
                if value > best_value:
                    best, best_value = card, value
        return offset + best

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        values = self._values(observation, action_mask)
        near = values > values.max() - TIE_BREAK
        return near / near.sum()

    def _values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Each legal action's value before the tie-break (-inf elsewhere): a play's, or
        else a draft's (see the module docstring)."""
        n = self.num_rounds
        r, game_card, round_card, right_card = self.match_cards(observation)
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

        values = np.full(len(action_mask), -np.inf)
        mask = action_mask.tolist()
        if 1 in mask[PLAY:]:
            for card in range(NUM_TYPES):
                if mask[PLAY + card]:
                    values[PLAY + card] = play_value(card)
            return values

        hand = [int(c) for c in observation[self.hand : self.hand + NUM_TYPES].tolist()]
        pool = [int(c) for c in observation[self.pool : self.pool + NUM_TYPES].tolist()]
        last_drafter = sum(pool) == 2
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
            value = top + GAME_CARD_KEEP * MATCH_ROWS[card][game_card]
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
            values[card] = value
        return values


def future_sets(
    unseen: list[float], draft_sizes: list[int], rounds_left: int
) -> list[tuple[float, ...]]:
    """``table[a][h]``: the expected number of future board cards with attribute ``a`` when
    ``h`` hand cards have it, ``E[min(rounds_left, h + X_a)]``. ``X_a`` counts the future
    rounds whose pool, at this seat's draft (``draft_sizes`` cards), holds a card with
    ``a``; each card is drawn from the unseen ones."""
    share = [0.0] * NUM_ATTRIBUTES
    for t, u in enumerate(unseen):
        if u:
            colour, shape = ATTRIBUTES_OF[t]
            share[colour] += u
            share[shape] += u
    total = sum(share) / 2
    table = []
    for a in range(NUM_ATTRIBUTES):
        miss = 1.0 - share[a] / total if total else 1.0
        dist = [1.0]  # distribution of X_a, a sum of independent draws
        for size in draft_sizes:
            p = 1.0 - miss**size
            dist = [
                (dist[x] if x < len(dist) else 0.0) * (1.0 - p) + (dist[x - 1] * p if x else 0.0)
                for x in range(len(dist) + 1)
            ]
        table.append(
            tuple(
                sum(w * min(rounds_left, h + x) for x, w in enumerate(dist))
                for h in range(HAND_SIZE + 2)
            )
        )
    return table


class ForslagExpert(ForslagReader):
    """A stronger rule-based player (a teacher for behaviour cloning); see the module
    docstring for the strategy. Deterministic: ``rng`` is not used, and
    ``action_probabilities`` is the one-hot of the action ``act`` takes."""

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        probabilities = np.zeros(len(action_mask))
        probabilities[self.act(observation, action_mask, np.random.default_rng(0))] = 1.0
        return probabilities

    def __init__(self, game: ForslagGame) -> None:
        super().__init__(game)
        n = game.num_players
        fields = game.observation_layout.fields
        self.unseen = fields["unseen"].start
        self.start_player = fields["start_player"].start
        # Cards in the pool at the start of each round (the short deck ends the 6-player game).
        deck = 2 * NUM_TYPES - n * HAND_SIZE - 1
        self.pool_sizes = [max(0, min(n + 1, deck - (n + 1) * r)) for r in range(n)]

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        n = self.num_rounds
        obs = observation.tolist()
        r, game_card, round_card, right_card = self.match_cards(observation)
        starts = obs[self.start_player : self.start_player + n]
        order = (-starts.index(1.0)) % n if 1.0 in starts else 0  # this seat's turn in round r
        board = [0] * NUM_ATTRIBUTES
        for at in range(self.own_board, self.own_board + r * NUM_ATTRIBUTES, NUM_ATTRIBUTES):
            for a in range(NUM_ATTRIBUTES):
                board[a] += int(obs[at + a])
        hand = [int(c) for c in obs[self.hand : self.hand + NUM_TYPES]]
        pool = [int(c) for c in obs[self.pool : self.pool + NUM_TYPES]]

        # The pool this seat drafts from in each later round (the start player passes left).
        rounds_left = n - 1 - r
        draft_sizes = [
            size
            for j in range(r + 1, n)
            if (size := self.pool_sizes[j] - (order - (j - r)) % n) > 0
        ]
        sets = future_sets(obs[self.unseen : self.unseen + NUM_TYPES], draft_sizes, rounds_left)

        def value(card: int, kept: list[int], leftover: list[int]) -> float:
            """Points of playing ``card`` now, keeping ``kept``, with ``leftover`` in the pool
            (the next Round Card is one of them)."""
            match = MATCH_ROWS[card]
            v = (
                GAME_CARD_POINTS * match[game_card]
                + ROUND_CARD_POINTS * match[round_card]
                + NEIGHBOUR_POINTS * match[right_card]
            )
            counts = board.copy()
            for a in ATTRIBUTES_OF[card]:
                counts[a] += 1
            held = [0] * NUM_ATTRIBUTES
            for c in kept:
                for a in ATTRIBUTES_OF[c]:
                    held[a] += 1
            best = second = 0.0
            for a in range(NUM_ATTRIBUTES):
                size = counts[a] + sets[a][held[a]]
                if size > best:
                    best, second = size, best
                elif size > second:
                    second = size
            v += LARGEST_SET_POINTS * (best + SECOND_SET * second)
            if rounds_left and kept:
                next_round = game_card_line = 0.0
                for c in kept:
                    row = MATCH_ROWS[c]
                    hit = sum(row[t] for t in leftover) / len(leftover) if leftover else 0.0
                    next_round = max(
                        next_round, GAME_CARD_POINTS * row[game_card] + ROUND_CARD_POINTS * hit
                    )
                    game_card_line = max(game_card_line, row[game_card])
                v += NEXT_ROUND_WEIGHT * next_round
                if rounds_left > 1:
                    v += GAME_CARD_HOLD * game_card_line
            return v

        def best_play(cards: list[int], leftover: list[int]) -> tuple[int, float]:
            best, best_value = -1, -np.inf
            for i, card in enumerate(cards):
                if i and cards[i - 1] == card:
                    continue
                v = value(card, cards[:i] + cards[i + 1 :], leftover)
                if v > best_value:
                    best, best_value = card, v
            return best, best_value

        mask = action_mask.tolist()
        cards = [t for t in range(NUM_TYPES) for _ in range(hand[t])]
        in_pool = [t for t in range(NUM_TYPES) for _ in range(pool[t])]
        if 1 in mask[PLAY:]:
            return PLAY + best_play(cards, in_pool)[0]
        best, best_value = -1, -np.inf
        for card in range(NUM_TYPES):
            if mask[card]:
                leftover = in_pool.copy()
                leftover.remove(card)
                v = best_play(sorted([*cards, card]), leftover)[1]
                if v > best_value:
                    best, best_value = card, v
        return best
