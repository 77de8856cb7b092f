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

It is a training opponent, so it is kept cheap (well under a millisecond a
decision): plain Python lists, the same few imagined deals for every candidate
card, and all deals drawn with one call to the RNG.
"""

from __future__ import annotations

import numpy as np

from envs.pickup.rules import NUM_RANKS, POOL_SIZE, PickupGame

#: Imagined rounds per decision (the same deals are used for every candidate card).
SAMPLES = 6
#: Share of a card's face value that keeping it for a later round is worth.
KEEP_WEIGHT = 0.6
#: Chance, per other player, that a rank shown in a later pool is picked up by them.
TAKE_RATE = 0.3
RANK_INDEX = np.arange(NUM_RANKS)
#: Scale of the random tie-break added to each value.
TIE_BREAK = 1e-3
#: Runs of ``act`` that estimate the probabilities of the cards to play.
ESTIMATE_DRAWS = 32


class PickupHeuristic:
    def __init__(self, game: PickupGame) -> None:
        self.game = game
        self.layout = game.observation_layout
        self.num_players = game.num_players
        self.take_rate = min(1.0, TAKE_RATE * (game.num_players - 1))

    def worth(self, unseen: list[int], rounds_after: int) -> list[float]:
        """Expected points at the end of the hand of a card of each rank in our pile now:
        its face value times the chance that no other player picks up that rank later."""
        total = max(1, sum(unseen))
        rate = self.take_rate
        return [
            (rank + 1) * (1.0 - rate * (1.0 - (1.0 - count / total) ** POOL_SIZE)) ** rounds_after
            for rank, count in enumerate(unseen)
        ]

    def _imagine(
        self,
        played: list[int],
        pool: list[int],
        piles: list[list[int]],
        in_piles: list[int],
        last: int,
        worth: list[float],
    ) -> float:
        """Resolve one imagined round (seats relative to us; ``in_piles`` counts each rank
        over all piles); our margin gained in it. Ties are ordered from the round's
        starting last actor (the rules update it after every action: close enough here)."""
        n = self.num_players
        pool = pool.copy()
        piles = [row.copy() for row in piles]
        in_piles = in_piles.copy()
        gains = [0.0] * n
        for seat in sorted(range(n), key=lambda s: played[s] * n + (s - last - 1) % n):
            card = played[seat]
            row = piles[seat]
            best, best_value = -1, -1.0
            for rank in range(card + 1):
                if pool[rank]:
                    value = worth[rank] * (1 + in_piles[rank] - row[rank])
                    if value > best_value:
                        best, best_value = rank, value
            if best < 0:  # nothing eligible: the card is stacked
                row[card] += 1
                in_piles[card] += 1
                gains[seat] += worth[card]
                continue
            pool[best] = 0
            if in_piles[best] > row[best]:  # knock the others' cards of that rank out
                for other in range(n):
                    count = piles[other][best]
                    if count and other != seat:
                        gains[other] -= worth[best] * count
                        piles[other][best] = 0
            row[best] += 1
            in_piles[best] = row[best]
            gains[seat] += worth[best]
        return gains[0] - (sum(gains) - gains[0]) / (n - 1)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        views = self.layout.views(observation)
        legal = np.flatnonzero(action_mask).tolist()
        if views["chooser"][0]:
            values = self.pickup_values(views, legal)
            return legal[int(np.argmax(np.add(values, TIE_BREAK * rng.random(len(legal)))))]
        if len(legal) == 1:
            return legal[0]
        return self._play(views, legal, rng)

    def pickup_values(self, views: dict[str, np.ndarray], legal: list[int]) -> list[float]:
        """Each eligible rank's face value plus the others' cards it knocks out (our own
        cards of it stay), for the pickup choice."""
        _, _, worth, piles, in_piles = self._context(views)
        return [worth[r] * (1 + in_piles[r] - piles[0][r]) for r in legal]

    def _context(self, views: dict[str, np.ndarray]) -> tuple:
        """The unseen counts, the rounds after this one, each rank's worth, the piles and
        each rank's count over all piles."""
        unseen = views["unseen"].astype(np.int64)
        round_onehot = views["round"].tolist()
        rounds_after = len(round_onehot) - 1 - round_onehot.index(1.0)
        worth = self.worth(unseen.tolist(), rounds_after)
        piles = views["piles"].astype(np.int64).tolist()
        in_piles = [sum(column) for column in zip(*piles, strict=True)]
        return unseen, rounds_after, worth, piles, in_piles

    def _play(
        self, views: dict[str, np.ndarray], legal: list[int], rng: np.random.Generator
    ) -> int:
        unseen, rounds_after, worth, piles, in_piles = self._context(views)
        n = self.num_players
        pool = views["pool"].astype(np.int64).tolist()
        last = int(np.argmax(views["last_actor"]))
        # SAMPLES deals of the others' cards from the unseen ones, without replacement.
        unseen_cards = np.repeat(RANK_INDEX, unseen)
        picks = rng.random((SAMPLES, len(unseen_cards))).argsort(axis=1)[:, : n - 1]
        deals = unseen_cards[picks].tolist()
        keep = KEEP_WEIGHT if rounds_after else 0.0
        best, best_value = legal[0], -1e9
        for card, noise in zip(legal, (TIE_BREAK * rng.random(len(legal))).tolist(), strict=True):
            total = sum(
                self._imagine([card, *others], pool, piles, in_piles, last, worth)
                for others in deals
            )
            value = total / SAMPLES - keep * (card + 1) + noise
            if value > best_value:
                best, best_value = card, value
        return best

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The pickup choice: uniform over the ranks within the tie-break of the best
        (exact when near-tied values are equal). A card to play: an estimate, the share of
        ``ESTIMATE_DRAWS`` runs of ``act`` (with a generator seeded from the observation,
        so repeatable) choosing each card, since its choice rests on imagined deals."""
        views = self.layout.views(observation)
        legal = np.flatnonzero(action_mask).tolist()
        probabilities = np.zeros(len(action_mask))
        if views["chooser"][0]:
            values = np.array(self.pickup_values(views, legal))
            near = values > values.max() - TIE_BREAK
            probabilities[legal] = near / near.sum()
            return probabilities
        if len(legal) == 1:
            probabilities[legal[0]] = 1.0
            return probabilities
        seed = np.frombuffer(np.ascontiguousarray(observation).tobytes(), dtype=np.uint32)
        rng = np.random.default_rng(seed.tolist())
        for _ in range(ESTIMATE_DRAWS):
            probabilities[self._play(views, legal, rng)] += 1.0 / ESTIMATE_DRAWS
        return probabilities
