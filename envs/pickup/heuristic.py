"""Pickup's rule-based agent, ``PickupHeuristic``, as a careful human plays.

Play phase: imagine the round a few times (``SAMPLES``). In each imagined round the
other players play cards drawn from those not yet seen (the only cards they can hold),
every played card acts in the rules' order and takes the best pool card it can (face
value plus knockouts) or stacks. Each card in hand is scored by the points it wins us
against the others' mean over those imagined rounds, minus what keeping it for a later
round is worth (a share of its face value; nothing in the last round). Pickups of ranks
with many unseen cards are discounted: they are likely to be knocked out later.

Pickup choice: the eligible rank with the best face value plus knockouts.

The values are computed for many rows at once (``heuristic_values``: the imagined
rounds of every candidate card of every row resolved together); the agent values its
one row with them, and the batched engine (``envs.pickup.batched.PickupVector``) and the
search's heuristic rollouts value thousands. Given the same draws (the imagined deals
as indices into the unseen cards, and the tie-break numbers) the choices are the same
(``heuristic_actions``).
"""

from __future__ import annotations

import functools

import numpy as np

from envs.pickup.layout import NUM_RANKS, POOL_SIZE
from envs.pickup.rules import DECK_SIZE, RANK_INDEX, PickupGame

#: Imagined rounds per decision (the same deals are used for every candidate card).
SAMPLES = 6
#: Share of a card's face value that keeping it for a later round is worth.
KEEP_WEIGHT = 0.6
#: Chance, per other player, that a rank shown in a later pool is picked up by them.
TAKE_RATE = 0.3
#: Scale of the random tie-break added to each value.
TIE_BREAK = 1e-3
#: Runs of ``act`` that estimate the probabilities of the cards to play.
ESTIMATE_DRAWS = 32


class PickupHeuristic:
    """The agent: ``act`` draws, in a play choice with two cards or more, its imagined
    deals (``imagined_deals``) and then one tie-break number per legal action in rank
    order (only those in a pickup choice), and plays ``heuristic_actions`` of its row."""

    def __init__(self, game: PickupGame) -> None:
        self.game = game
        fields = game.observation_layout.fields
        self._chooser = fields["chooser"].start  # the observer's own chooser flag
        self._unseen = fields["unseen"]
        self._no_deals = np.zeros((SAMPLES, game.num_players - 1), dtype=np.int64)

    def imagined_deals(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The other seats' cards in each imagined round (``(SAMPLES, N - 1)``): distinct
        indices into the unseen cards listed in rank order, the first places of an argsort
        of uniform keys, one key per unseen card."""
        unseen = int(observation[self._unseen.start : self._unseen.stop].sum())
        return rng.random((SAMPLES, unseen)).argsort(axis=1)[:, : self.game.num_players - 1]

    def _draws(
        self, observation: np.ndarray, legal: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """One decision's draws, in order: the imagined deals (a play choice only), then
        the tie-break numbers (``(10,)``, a draw per legal action)."""
        choosing = observation[self._chooser] > 0
        deals = self._no_deals if choosing else self.imagined_deals(observation, rng)
        noise = np.zeros(NUM_RANKS)
        noise[legal] = rng.random(int(legal.sum()))
        return deals, noise

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        observation, legal = np.asarray(observation), np.asarray(action_mask, dtype=bool)
        if legal.sum() == 1 and not observation[self._chooser]:
            return int(np.argmax(legal))  # a single card to play: no draw
        deals, noise = self._draws(observation, legal, rng)
        (action,) = heuristic_actions(
            observation[None], legal[None], self.game, deals[None], noise[None]
        )
        return int(action)

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The pickup choice: uniform over the ranks within the tie-break of the best
        (exact when near-tied values are equal). A card to play: an estimate, the share of
        ``ESTIMATE_DRAWS`` runs of ``act`` (with a generator seeded from the observation,
        so repeatable) choosing each card, since its choice rests on imagined deals."""
        observation, legal = np.asarray(observation), np.asarray(action_mask, dtype=bool)
        if observation[self._chooser]:
            values = heuristic_values(
                observation[None], legal[None], self.game, self._no_deals[None]
            )[0]
            near = values > values.max() - TIE_BREAK
            return near / near.sum()
        if legal.sum() == 1:
            return legal.astype(np.float64)
        seed = np.frombuffer(np.ascontiguousarray(observation).tobytes(), dtype=np.uint32)
        rng = np.random.default_rng(seed.tolist())
        deals, noise = zip(
            *(self._draws(observation, legal, rng) for _ in range(ESTIMATE_DRAWS)), strict=True
        )
        rows = np.broadcast_to(observation, (ESTIMATE_DRAWS, len(observation)))
        masks = np.broadcast_to(legal, (ESTIMATE_DRAWS, NUM_RANKS))
        chosen = heuristic_actions(rows, masks, self.game, np.stack(deals), np.stack(noise))
        return np.bincount(chosen, minlength=NUM_RANKS) / ESTIMATE_DRAWS


def draw_picks(sizes: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """For each row, 6 uniform ordered draws of ``count`` distinct indices below
    ``sizes[i]`` (``(k, 6, count)`` int64): the law of ``PickupHeuristic.imagined_deals``
    (the first ``count`` places of a uniform permutation), drawn with ``count`` numbers
    instead of ``size``. Each pick is
    drawn among the indices left and moved past the earlier picks, lowest first."""
    draws = rng.random((len(sizes), SAMPLES, count))
    sizes = np.maximum(sizes, count)[:, None]  # a row without enough cards is not played
    picks = np.empty(draws.shape, dtype=np.int64)
    for j in range(count):
        pick = (draws[:, :, j] * (sizes - j)).astype(np.int64)
        for earlier in np.sort(picks[:, :, :j], axis=2).transpose(2, 0, 1):
            pick += pick >= earlier
        picks[:, :, j] = pick
    return picks


@functools.cache
def worth_factors(num_players: int, hand_size: int) -> np.ndarray:
    """What a card in our pile now is worth at the end of the hand, per point of face
    value: the chance that no other player picks up its rank later, for every unseen
    count of the rank (0-10), total unseen (0-55) and rounds after this one:
    ``(11, 56, H)``."""
    rate = min(1.0, TAKE_RATE * (num_players - 1))
    factors = np.zeros((NUM_RANKS + 1, DECK_SIZE + 1, hand_size))
    for count in range(NUM_RANKS + 1):
        for seen_total in range(DECK_SIZE + 1):
            total = max(1, seen_total)
            for rounds_after in range(hand_size):
                factors[count, seen_total, rounds_after] = (
                    1.0 - rate * (1.0 - (1.0 - count / total) ** POOL_SIZE)
                ) ** rounds_after
    return factors


def heuristic_values(
    observations: np.ndarray, masks: np.ndarray, game: PickupGame, picks: np.ndarray
) -> np.ndarray:
    """The heuristic's value of every legal action of every row (``(k, 10)``
    float64, before the tie-break; -inf for illegal actions): in a pickup choice each
    eligible rank's worth plus the others' cards it knocks out, in
    a play choice each card's mean margin over the 6 imagined rounds dealt by ``picks``
    minus its keep value, and 0 for a single legal card (chosen without a draw).

    ``picks[i, s]`` (``(k, 6, N - 1)``; read in play choices of two cards or more) are
    the cards the other seats play in imagined round ``s``: indices into row ``i``'s
    unseen cards listed in rank order (``PickupHeuristic.imagined_deals``)."""
    observations = np.asarray(observations)
    masks = np.asarray(masks, dtype=bool)
    k = len(masks)
    fields = game.observation_layout.fields

    def field(name: str) -> np.ndarray:
        f = fields[name]
        return observations[:, f.start : f.stop].reshape((k, *f.shape))

    unseen = field("unseen").astype(np.int64)
    rounds_after = game.hand_size - 1 - np.argmax(field("round"), axis=1)
    factors = worth_factors(game.num_players, game.hand_size)
    worth = (RANK_INDEX + 1.0) * factors[unseen, unseen.sum(axis=1)[:, None], rounds_after[:, None]]
    piles = field("piles").astype(np.int64)  # (k, N, 10), own seat first
    in_piles = piles.sum(axis=1)
    values = np.zeros((k, NUM_RANKS))
    choosing = field("chooser")[:, 0] > 0
    if choosing.any():
        values[choosing] = worth[choosing] * (1 + in_piles[choosing] - piles[choosing, 0])
    playing = np.flatnonzero(~choosing & (masks.sum(axis=1) >= 2))
    if len(playing):
        values[playing] = _play_values(
            game,
            masks[playing],
            unseen[playing],
            rounds_after[playing],
            worth[playing],
            piles[playing],
            in_piles[playing],
            field("pool")[playing].astype(np.int64),
            np.argmax(field("last_actor")[playing], axis=1),
            picks[playing],
        )
    return np.where(masks, values, -np.inf)


def heuristic_actions(
    observations: np.ndarray,
    masks: np.ndarray,
    game: PickupGame,
    picks: np.ndarray,
    noise: np.ndarray,
) -> np.ndarray:
    """``PickupHeuristic.act`` of many rows: ``(k,)`` int64 actions for rows of
    observations and masks (``(k, 10)``) of any seats: the legal action with the best
    ``heuristic_values`` (imagined deals ``picks``) plus ``TIE_BREAK * noise``
    (``(k, 10)`` uniform draws), the first on an exact tie (0 for a row without legal
    actions)."""
    values = heuristic_values(observations, masks, game, picks)
    return np.argmax(values + TIE_BREAK * noise, axis=1)


def _play_values(
    game: PickupGame,
    masks: np.ndarray,
    unseen: np.ndarray,
    rounds_after: np.ndarray,
    worth: np.ndarray,
    piles: np.ndarray,
    in_piles: np.ndarray,
    pool: np.ndarray,
    last: np.ndarray,
    picks: np.ndarray,
) -> np.ndarray:
    """The value of every legal card to play (before the tie-break; -inf
    elsewhere): the mean margin won over 6 imagined rounds minus the keep value."""
    k, n = len(masks), game.num_players
    # The imagined deals: the j-th unseen card (in rank order) is the rank whose
    # cumulative count exceeds j.
    ends = np.cumsum(unseen, axis=1)  # (k, 10)
    deals = (picks[:, :, :, None] >= ends[:, None, None, :]).sum(axis=3)  # (k, 6, n-1)
    # One imagined round per (row, legal card, sample).
    row, card = np.nonzero(masks)
    scenario_row = np.repeat(row, SAMPLES)
    m = len(scenario_row)
    played = np.empty((m, n), dtype=np.int64)
    played[:, 0] = np.repeat(card, SAMPLES)
    played[:, 1:] = deals[row].reshape(m, n - 1)
    seats = np.arange(n)
    tie = (seats - last[scenario_row, None] - 1) % n
    acting = np.argsort(played * n + tie, axis=1)
    # The piles and their sums change in an imagined round only at ranks that have left
    # the pool: a pickup empties the pool of its rank, and a card is stacked only when no
    # pool rank is at or below it. So what each seat's pickup of a rank still in the pool
    # is worth (``worth * (1 + in_piles - own)``) and what it knocks out of each other
    # pile (``worth * count``) are those of the round's start, computed once per row with
    # the heuristic's own operations (the same floats).
    choice = worth[:, None, :] * (1 + in_piles[:, None, :] - piles)  # (k, n, 10)
    knock = (worth[:, None, :] * piles).reshape(-1)  # (k * n * 10)
    flat_worth = worth.reshape(-1)
    # The pool's ranks (at most 5) in ascending order, in slots: the eligible ranks are
    # looked at 5 wide instead of 10, in the same order (the first best is the lowest).
    present = pool > 0
    slot_ranks = np.argsort(~present, axis=1, kind="stable")[:, :POOL_SIZE]  # (k, 5)
    choice_rows = np.take_along_axis(choice, slot_ranks[:, None, :], axis=2)
    choice_rows = choice_rows.reshape(-1, POOL_SIZE)  # (k * n, 5)
    pool_left = np.take_along_axis(present, slot_ranks, axis=1)[scenario_row]  # (m, 5)
    slot_ranks = slot_ranks[scenario_row]
    gains = np.zeros((m, n))
    flat_pool, flat_gains = pool_left.reshape(-1), gains.reshape(-1)
    flat_played, flat_slots = played.reshape(-1), slot_ranks.reshape(-1)
    everyone = np.arange(m)
    by_seat, by_slot = everyone * n, everyone * POOL_SIZE
    row_seats, row_ranks = scenario_row * n, scenario_row * NUM_RANKS
    knock_cells = (row_seats * NUM_RANKS)[:, None] + seats * NUM_RANKS  # (m, n): rank 0
    for turn in range(n):
        seat = acting[:, turn]
        cards = np.take(flat_played, by_seat + seat)
        # The best eligible pool rank (the first of equal values), or none: a stack.
        eligible = pool_left & (cards[:, None] >= slot_ranks)
        options = np.where(eligible, np.take(choice_rows, row_seats + seat, axis=0), -np.inf)
        best = by_slot + np.argmax(options, axis=1)
        takes = np.take(options.reshape(-1), best) >= 0.0
        rank = np.where(takes, np.take(flat_slots, best), cards)
        knocked = (seats != seat[:, None]) & takes[:, None]
        gains -= np.where(knocked, np.take(knock, knock_cells + rank[:, None]), 0.0)
        flat_gains[by_seat + seat] += np.take(flat_worth, row_ranks + rank)
        flat_pool[best[takes]] = False
    everyone_gains = gains[:, 0]
    for seat in range(1, n):
        everyone_gains = everyone_gains + gains[:, seat]
    margins = (gains[:, 0] - (everyone_gains - gains[:, 0]) / (n - 1)).reshape(-1, SAMPLES)
    total = margins[:, 0]
    for sample in range(1, SAMPLES):
        total = total + margins[:, sample]
    keep = np.where(rounds_after[row] > 0, KEEP_WEIGHT, 0.0)
    values = np.full((k, NUM_RANKS), -np.inf)
    values[row, card] = total / SAMPLES - keep * (card + 1)
    return values
