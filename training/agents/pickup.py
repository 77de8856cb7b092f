"""A Pickup heuristic, as a careful human plays it.

Play phase: imagine the round a few times. In each imagined round the other
players play cards drawn from those not yet seen (the only cards they can hold),
every played card acts in the rules' order and takes the best pool card it can
(face value plus knockouts) or stacks. Each card in hand is scored by the points
it wins us against the others' mean over those imagined rounds, minus what
keeping it for a later round is worth (a share of its face value; nothing in the
last round). Pickups of ranks with many unseen cards are discounted: they are
likely to be knocked out later.

Pickup choice: the eligible rank with the best face value plus knockouts.
"""

from __future__ import annotations

import numpy as np

from envs.pickup.rules import NUM_RANKS, PickupGame

#: Imagined rounds per decision (the same deals are used for every candidate card).
SAMPLES = 12
#: Share of a card's face value that keeping it for a later round is worth.
KEEP_WEIGHT = 0.6
#: Chance, per other player, that a rank shown in a later pool is picked up by them.
TAKE_RATE = 0.3
VALUES = tuple(range(1, NUM_RANKS + 1))


class PickupHeuristic:
    def __init__(self, game: PickupGame) -> None:
        self.game = game
        self.layout = game.observation_layout
        self.num_players = game.num_players

    def worth(self, unseen: np.ndarray, rounds_after: int) -> list[float]:
        """Expected points at the end of the hand of a card of each rank in our pile now:
        its face value times the chance that no other player picks up that rank later."""
        total = max(1, int(unseen.sum()))
        in_pool = 1.0 - (1.0 - unseen / total) ** 5
        taken = np.minimum(1.0, TAKE_RATE * (self.num_players - 1)) * in_pool
        survival = (1.0 - taken) ** rounds_after
        return (np.arange(1, NUM_RANKS + 1) * survival).tolist()

    def _pick(self, pool: list[int], card: int, worth: list[float], others_have: list[int]) -> int:
        """The eligible rank (index) with the best worth plus knockouts; -1 to stack."""
        best, best_value = -1, -1e9
        for rank in range(card + 1):
            if pool[rank]:
                value = worth[rank] * (1 + others_have[rank])
                if value > best_value:
                    best, best_value = rank, value
        return best

    def _imagine(
        self,
        played: list[int],
        pool: list[int],
        piles: list[list[int]],
        last: int,
        worth: list[float],
    ) -> float:
        """Resolve one imagined round (seats relative to us); our margin gained in it."""
        n = self.num_players
        pool = list(pool)
        piles = [list(row) for row in piles]
        gains = [0.0] * n
        waiting = list(range(n))
        while waiting:
            seat = min(waiting, key=lambda s: (played[s], (s - last - 1) % n))
            waiting.remove(seat)
            card = played[seat]
            others_have = [
                sum(piles[s][r] for s in range(n) if s != seat) for r in range(NUM_RANKS)
            ]
            rank = self._pick(pool, card, worth, others_have)
            if rank < 0:
                piles[seat][card] += 1
                gains[seat] += worth[card]
            else:
                pool[rank] = 0
                for other in range(n):
                    if other != seat and piles[other][rank]:
                        gains[other] -= worth[rank] * piles[other][rank]
                        piles[other][rank] = 0
                piles[seat][rank] += 1
                gains[seat] += worth[rank]
            last = seat
        return gains[0] - sum(gains[1:]) / (n - 1)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        views = self.layout.views(observation)
        unseen = views["unseen"].astype(np.int64)
        last_round = views["round"][-1] > 0
        rounds_after = len(views["round"]) - 1 - int(np.argmax(views["round"]))
        worth = self.worth(unseen, rounds_after)
        piles = views["piles"].astype(np.int64).tolist()
        pool = views["pool"].astype(np.int64).tolist()
        legal = np.flatnonzero(action_mask).tolist()
        if views["chooser"][0]:
            others_have = [sum(row[r] for row in piles[1:]) for r in range(NUM_RANKS)]
            values = {r: worth[r] * (1 + others_have[r]) + 1e-3 * rng.random() for r in legal}
            return max(values, key=values.get)
        if len(legal) == 1:
            return legal[0]
        last = int(np.argmax(views["last_actor"]))
        unseen_cards = np.repeat(np.arange(NUM_RANKS), unseen)
        scores = dict.fromkeys(legal, 0.0)
        for _ in range(SAMPLES):
            others = rng.choice(unseen_cards, self.num_players - 1, replace=False).tolist()
            for card in legal:
                scores[card] += self._imagine([card, *others], pool, piles, last, worth)
        keep = 0.0 if last_round else KEEP_WEIGHT
        values = {
            card: scores[card] / SAMPLES - keep * VALUES[card] + 1e-3 * rng.random()
            for card in legal
        }
        return max(values, key=values.get)
