"""The batched Pickup engine (envs/pickup/batched.py): what is its own beyond what every
engine does (``test_batched_every_game.py``: random play against the rules, loaded
positions, seeding, make_vec against the Gymnasium view).

Differential tests: from the same positions and the same actions, ``PickupVector``
gives the same observations, masks, choosers, rewards (both modes), terminations and
scores as ``envs.core.table.Table`` over ``envs/pickup/rules.py``, for every
configuration in ``SPEC.configurations`` and other targets, with the engine's one
source of chance, ``_shuffle``, replaced by the reference's outcome where the reference
has drawn it (the reshuffle between hands of the longer game), so that its new hands
are checked too; so in make_vec. Its batched heuristic makes the same choices as a
plain per-game reckoning of the heuristic (``ReferenceHeuristic``) and as
``envs.pickup.heuristic.PickupHeuristic``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from lockstep import compare_with_the_gymnasium_view, new_table, untrained_policy

from envs.core.batched import random_actions
from envs.core.game import IllegalActionError
from envs.core.table import Table
from envs.pickup import SPEC
from envs.pickup.batched import PickupVector
from envs.pickup.heuristic import (
    KEEP_WEIGHT,
    SAMPLES,
    TAKE_RATE,
    TIE_BREAK,
    PickupHeuristic,
    draw_picks,
    heuristic_actions,
    heuristic_values,
)
from envs.pickup.rules import (
    DECK,
    DECK_COUNTS,
    DECK_SIZE,
    NO_SEAT,
    NUM_RANKS,
    POOL_SIZE,
    RANK_INDEX,
    PickupGame,
    PickupState,
)

PICKUP = "hiddenhand/Pickup-v0"
CONFIGS = [dict(options) for options in SPEC.configurations]
LONGER = {"num_players": 3, "target_score": 100}
assert LONGER in CONFIGS


def config_id(options: dict) -> str:
    return "-".join(f"{key}={value}" for key, value in options.items())


def deck_of(state: PickupState) -> np.ndarray:
    """The deck order that deals ``state``'s hand as the engine deals: the hands seat by
    seat, the stock in its order, then the first pool (a state at the start of a hand)."""
    parts = [np.repeat(RANK_INDEX, hand) for hand in state.hands]
    parts += [np.array(state.stock, dtype=np.int64), np.repeat(RANK_INDEX, state.pool)]
    deck = np.concatenate(parts)
    assert len(deck) == DECK_SIZE
    return deck


def reference_shuffle(engine: PickupVector, state_of: Callable[[int], PickupState | None]):
    """Replace ``engine._shuffle``: the deck of row ``g`` is that of ``state_of(g)`` (a
    reference that has just dealt a new hand), or drawn by the engine where it gives None.
    Returns the list of the rows so dealt."""
    shuffle = engine._shuffle
    dealt: list[int] = []

    def replaced(games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        decks, dealers = shuffle(games)
        for i, game in enumerate(games.tolist()):
            state = state_of(game)
            if state is not None:
                decks[i] = deck_of(state)
                dealt.append(game)
        return decks, dealers

    engine._shuffle = replaced
    return dealt


class Lockstep:
    """Reference tables in rows of one engine, loaded from their states. Where a table's
    game ends, ``new_table()`` gives its successor (loaded into that row), or, without
    it, the row leaves the lockstep (the engine plays its own games there)."""

    def __init__(
        self,
        options: dict,
        reward_mode: str,
        tables: list[Table],
        rows: np.ndarray | None = None,
        num_envs: int | None = None,
        new_table: Callable[[], Table] | None = None,
        seed: int = 0,
    ) -> None:
        self.game = PickupGame.from_options(**options)
        rows = np.arange(len(tables)) if rows is None else np.asarray(rows)
        self.engine = PickupVector(
            num_envs or len(tables), reward_mode=reward_mode, seed=seed, **options
        )
        self.engine.load([t.state for t in tables], rows)
        self.tables = dict(zip(rows.tolist(), tables, strict=True))
        self.new_table = new_table
        self.finished = self.steps = 0
        self.reshuffled = reference_shuffle(self.engine, self._dealing)

    def _dealing(self, row: int) -> PickupState | None:
        table = self.tables.get(row)
        return None if table is None or table.terminal else table.state

    def check_views(self) -> None:
        engine, n = self.engine, self.game.num_players
        observations, masks = engine.observations(), engine.masks()
        choosers, scores = engine.choosers(), engine.scores()
        assert observations.dtype == np.float32 and masks.dtype == bool
        assert choosers.dtype == bool and scores.dtype == np.float64
        rows = list(self.tables)
        tables = list(self.tables.values())
        expected = np.array([[t.observation(p) for p in range(n)] for t in tables])
        np.testing.assert_array_equal(observations[rows], expected)
        expected = np.array([[t.legal_mask(p) for p in range(n)] for t in tables], dtype=bool)
        np.testing.assert_array_equal(masks[rows], expected)
        expected = np.array([[p in t.choosers for p in range(n)] for t in tables])
        np.testing.assert_array_equal(choosers[rows], expected)
        np.testing.assert_array_equal(scores[rows], [t.state.scores() for t in tables])
        for single, seat in ((rows[:1], 0), (rows[-1:], n - 1)):  # observe() as well
            np.testing.assert_array_equal(
                engine.observe(np.array(single), np.array([seat])), observations[single, seat]
            )

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform legal actions for the choosers, junk for the others (ignored)."""
        masks = self.engine.masks()
        junk = rng.integers(-5, 15, size=masks.shape[:2])
        return np.where(self.engine.choosers(), random_actions(masks, rng), junk)

    def step(self, actions: np.ndarray) -> None:
        """The references first (so that a new hand is dealt there before the engine
        asks for its deck), then the engine."""
        n = self.game.num_players
        expected = {}
        for row, table in self.tables.items():
            for p in table.waiting_for():
                expected[row] = table.commit(p, int(actions[row, p]))
        rewards, terminated, info = self.engine.step(actions)
        self.steps += 1
        done = info["done"].tolist()
        assert done == np.flatnonzero(terminated).tolist()
        assert info["terminal_observations"].shape == (len(done), n, self.engine.observation_size)
        for row, table in list(self.tables.items()):
            np.testing.assert_array_equal(rewards[row], expected[row])
            assert bool(terminated[row]) == table.terminal
            if not table.terminal:
                continue
            i = done.index(row)
            final = [table.observation(p) for p in range(n)]
            np.testing.assert_array_equal(info["terminal_observations"][i], final)
            np.testing.assert_array_equal(info["terminal_scores"][i], table.state.scores())
            self.finished += 1
            if self.new_table is None:
                del self.tables[row]
            else:
                self.tables[row] = table = self.new_table()
                self.engine.load([table.state], [row])

    def run(self, rng: np.random.Generator, games: int) -> None:
        while self.finished < games and self.tables:
            self.check_views()
            self.step(self.random_actions(rng))
        if self.tables:
            self.check_views()


def fresh_lockstep(options: dict, reward_mode: str, count: int, seed: int) -> Lockstep:
    game = PickupGame.from_options(**options)
    dealt = iter(range(seed * 100_003, seed * 100_003 + 10**6))

    def table() -> Table:
        return new_table(game, reward_mode, next(dealt))

    return Lockstep(options, reward_mode, [table() for _ in range(count)], new_table=table)


@pytest.mark.parametrize("options", CONFIGS, ids=config_id)
@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_games_match_the_rules(options: dict, reward_mode: str) -> None:
    """100 games per configuration and reward mode (200 per configuration)."""
    count = 30 if options == LONGER else 40
    lockstep = fresh_lockstep(options, reward_mode, count, seed=len(options) + 7)
    choices = 0
    rng = np.random.default_rng(options["num_players"])
    while lockstep.finished < 100:
        lockstep.check_views()
        choices += int((lockstep.engine.chooser >= 0).sum())
        lockstep.step(lockstep.random_actions(rng))
    lockstep.check_views()
    assert choices > 0  # pickup choices were made
    if options == LONGER:  # hands reshuffled mid-game, in lockstep with the rules
        assert len(lockstep.reshuffled) > 50


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 2, "target_score": 1},
        {"num_players": 5, "target_score": "book"},
        {"num_players": 6, "target_score": 40},
    ],
    ids=config_id,
)
def test_other_targets_match_the_rules(options: dict) -> None:
    """Options beyond SPEC's configurations: the engine plays every target."""
    lockstep = fresh_lockstep(options, "score", count=8, seed=3)
    lockstep.run(np.random.default_rng(4), games=12)
    assert lockstep.finished >= 12


def played_part_way(
    game: PickupGame, reward_mode: str, rng: np.random.Generator, seed: int
) -> Table | None:
    table = new_table(game, reward_mode, seed)
    for _ in range(int(rng.integers(0, 40))):
        for p in table.waiting_for():
            table.commit(p, int(rng.choice(np.flatnonzero(table.legal_mask(p)))))
        if table.terminal:
            return None
    return table


@pytest.mark.parametrize("options", CONFIGS, ids=config_id)
def test_load_puts_mid_game_positions_into_rows(options: dict) -> None:
    """Reference games played part way (some in a pickup choice, some in later hands of
    the longer game) and positions resampled for a seat (``State.resample``, through
    ``Table.determinise``), loaded into any rows, then played on in lockstep."""
    game = PickupGame.from_options(**options)
    rng = np.random.default_rng(options["num_players"] + 31)
    reward_mode = "score" if options["num_players"] % 2 else "win"
    tables: list[Table] = []
    seed = 0
    while len(tables) < 24:
        seed += 1
        table = played_part_way(game, reward_mode, rng, seed)
        if table is None:
            continue
        tables.append(table)
        seat = int(rng.integers(game.num_players))
        tables.append(table.determinise(seat, np.random.default_rng(seed)))
    choosing = sum(t.state.chooser != NO_SEAT for t in tables)
    assert choosing > 0 and sum(t.state.round > 0 for t in tables) > 0
    if options == LONGER:
        assert sum(t.state.hand_number > 0 for t in tables) > 0
    # The resampled hands and stock differ from the originals' somewhere.
    assert any(
        a.state.stock != b.state.stock for a, b in zip(tables[::2], tables[1::2], strict=True)
    )
    rows = np.arange(len(tables))[::-1] + 3  # any rows, in any order; rows 0-2 play alone
    lockstep = Lockstep(options, reward_mode, tables, rows, num_envs=len(tables) + 3)
    lockstep.run(rng, games=len(tables))
    assert lockstep.finished == len(tables)
    with pytest.raises(ValueError, match="one state per distinct row"):
        lockstep.engine.load([tables[0].state], [0, 1])
    with pytest.raises(ValueError, match="not over"):
        lockstep.engine.load([tables[0].state], [0])  # it is over now


# --- the engine's own deals ------------------------------------------------------------
def check_rows(engine: PickupVector, rows: np.ndarray) -> None:
    """The rows hold valid positions: every card in one place, hands, pool and stock of
    the round's sizes, scores the banked points plus the piles, the tables' fields."""
    n, size = engine.num_players, engine.hand_size
    rows = rows[~engine.finished[rows]]
    hands = engine.hands[rows].astype(np.int64)
    assert (np.sort(engine.deck[rows], axis=1) == DECK).all()  # each deck a whole deck
    rounds = engine.round[rows]
    choosing = engine.chooser[rows] != NO_SEAT
    assert (hands.sum(axis=2) == (size - rounds - choosing)[:, None]).all()
    assert ((engine.pool[rows].sum(axis=1) == POOL_SIZE) | choosing).all()
    # The stock: the deck between the hands and the pools dealt so far.
    stock = np.zeros((len(rows), NUM_RANKS), dtype=np.int64)
    for i, row in enumerate(rows.tolist()):
        left = engine.deck[row, n * size : DECK_SIZE - POOL_SIZE * (rounds[i] + 1)]
        stock[i] = np.bincount(left, minlength=NUM_RANKS)
    # Not shown this hand: the hands and the stock.
    np.testing.assert_array_equal(engine.unshown[rows], hands.sum(axis=1) + stock)
    np.testing.assert_array_equal(engine.unseen[rows], engine.unshown[rows][:, None] - hands)
    placed = hands.sum(axis=1) + engine.pool[rows] + engine.piles[rows].sum(axis=1) + stock
    assert (placed <= DECK_COUNTS).all()
    totals = engine.banked[rows] + engine.piles[rows] @ (RANK_INDEX + 1.0)
    np.testing.assert_array_equal(engine.scores()[rows], totals)
    np.testing.assert_array_equal(engine.dealer_onehot[rows], np.eye(n)[engine.dealer[rows]])
    np.testing.assert_array_equal(engine.last_onehot[rows], np.eye(n)[engine.last_actor[rows]])
    chooser = np.eye(n + 1)[engine.chooser[rows]][:, :n]  # NO_SEAT (-1): zeros
    np.testing.assert_array_equal(engine.chooser_onehot[rows], chooser)
    np.testing.assert_array_equal(engine.round_onehot[rows], np.eye(size)[rounds])


def check_new_deals(engine: PickupVector, rows: np.ndarray) -> None:
    n, size = engine.num_players, engine.hand_size
    check_rows(engine, rows)
    assert (engine.round[rows] == 0).all() and (engine.chooser[rows] == NO_SEAT).all()
    assert (engine.hands[rows].sum(axis=2) == size).all()
    assert (engine.piles[rows] == 0).all() and (engine.revealed[rows] == 0).all()
    assert (engine.order[rows] == 0).all() and (engine.played[rows] == NO_SEAT).all()
    np.testing.assert_array_equal(engine.last_actor[rows], engine.dealer[rows])
    assert engine.choosers()[rows].all() and engine.masks()[rows].any(axis=2).all()
    # The hands and first pool are the deck's first N*H and last 5 cards.
    for row in rows.tolist():
        deck = engine.deck[row]
        hands = [
            np.bincount(deck[p * size : (p + 1) * size], minlength=NUM_RANKS) for p in range(n)
        ]
        np.testing.assert_array_equal(engine.hands[row], hands)
        np.testing.assert_array_equal(
            engine.pool[row], np.bincount(deck[-POOL_SIZE:], minlength=10)
        )


@pytest.mark.parametrize("options", CONFIGS, ids=config_id)
def test_own_deals_are_valid_and_distinct(options: dict) -> None:
    """Valid new games and new hands (banked points kept, the deal passed left), dealt
    apart, every seat a dealer; the automatic reset's deals too (their seeding:
    ``test_batched_every_game``)."""
    engine = PickupVector(300, seed=3, **options)
    assert (engine.scores() == 0).all()
    check_new_deals(engine, engine._all)
    assert len({deck.tobytes() for deck in engine.deck}) == 300  # the games are dealt apart
    assert len({hands.tobytes() for hands in engine.hands}) == 300
    assert set(engine.dealer.tolist()) == set(range(engine.num_players))
    rng = np.random.default_rng(0)
    dealt = reshuffled = 0
    for _ in range(150 if options == LONGER else 30):  # automatic reset deals valid games
        banked, dealer = engine.banked.copy(), engine.dealer.copy()
        _, terminated, info = engine.step(random_actions(engine.masks(), rng))
        check_rows(engine, engine._all)
        check_new_deals(engine, info["done"])
        dealt += len(info["done"])
        # A new hand of the longer game: banked points kept, the dealer moved left.
        new_hand = np.flatnonzero((engine.banked != banked).any(axis=1) & ~terminated)
        reshuffled += len(new_hand)
        assert (engine.round[new_hand] == 0).all() and (engine.piles[new_hand] == 0).all()
        assert (engine.hands[new_hand].sum(axis=2) == engine.hand_size).all()
        np.testing.assert_array_equal(engine.scores()[new_hand], engine.banked[new_hand])
        np.testing.assert_array_equal(
            engine.dealer[new_hand], (dealer[new_hand] + 1) % engine.num_players
        )
    assert dealt > 100
    if options == LONGER:
        assert reshuffled > 100
        assert (engine.banked < LONGER["target_score"]).all()


def test_a_longer_games_next_hand_passes_the_deal_left() -> None:
    """The reference's new hand and the engine's agree on everything but the deck (the
    engine draws its own): dealer, banked scores, round, reveal cleared."""
    options = LONGER
    game = PickupGame.from_options(**options)
    rng = np.random.default_rng(5)
    table = new_table(game, "win", 5)
    engine = PickupVector(1, **options)
    engine.load([table.state])
    while table.state.hand_number == 0:
        actions = random_actions(engine.masks(), rng)
        for p in table.waiting_for():
            table.commit(p, int(actions[0, p]))
        engine.step(actions)
    layout = game.observation_layout
    for p in range(game.num_players):
        ours = layout.views(engine.observations()[0, p])
        theirs = layout.views(table.observation(p))
        for name in ("piles", "revealed", "order", "last_actor", "dealer", "chooser", "round"):
            np.testing.assert_array_equal(ours[name], theirs[name])
        np.testing.assert_array_equal(ours["scores"], theirs["scores"])
    assert ours["hand"].sum() == game.hand_size and ours["pool"].sum() == POOL_SIZE


def test_an_illegal_pickup_choice_raises_and_changes_nothing() -> None:
    """In a pickup choice (one seat choosing a pool rank) an illegal rank is refused as an
    illegal card is in play (``test_batched_every_game``), the engine's own arrays kept."""
    engine = PickupVector(64, num_players=4, seed=0)
    rng = np.random.default_rng(1)
    while not (engine.chooser >= 0).any():
        engine.step(random_actions(engine.masks(), rng))
    before = (engine.observations(), engine.masks().copy(), engine.choosers().copy())
    state = [engine.table.copy(), engine.played.copy(), engine.chooser.copy()]
    scores = engine.scores()
    row = int(np.flatnonzero(engine.chooser >= 0)[0])
    seat = int(engine.chooser[row])
    actions = random_actions(engine.masks(), rng)
    bad = actions.copy()
    bad[row, seat] = int(np.flatnonzero(~engine.masks()[row, seat])[0])
    message = f"game {row}: action {bad[row, seat]} is illegal for player {seat}"
    with pytest.raises(IllegalActionError, match=message):
        engine.step(bad)
    bad[row, seat] = 10
    with pytest.raises(IllegalActionError, match=f"game {row}: action 10 is illegal"):
        engine.step(bad)
    np.testing.assert_array_equal(engine.observations(), before[0])
    np.testing.assert_array_equal(engine.masks(), before[1])
    np.testing.assert_array_equal(engine.choosers(), before[2])
    np.testing.assert_array_equal(engine.scores(), scores)
    for kept, now in zip(state, (engine.table, engine.played, engine.chooser), strict=True):
        np.testing.assert_array_equal(kept, now)
    # The chooser's seat alone is read in a pickup choice: the others' junk is ignored.
    actions[row, (seat + 1) % 4] = 99
    engine.step(actions)
    with pytest.raises(ValueError, match="num_players"):
        PickupVector(2, num_players=7)
    with pytest.raises(ValueError, match="target_score"):
        PickupVector(2, num_players=3, target_score=0)


# --- the batched heuristic -----------------------------------------------------------
class ReferenceHeuristic:
    """The heuristic reckoned game by game with plain lists (its first form): the oracle
    of the batched values and choices."""

    def __init__(self, game: PickupGame) -> None:
        self.layout = game.observation_layout
        self.num_players = n = game.num_players
        self.take_rate = min(1.0, TAKE_RATE * (n - 1))

    def worth(self, unseen: list[int], rounds_after: int) -> list[float]:
        total, rate = max(1, sum(unseen)), self.take_rate
        return [
            (rank + 1) * (1.0 - rate * (1.0 - (1.0 - count / total) ** POOL_SIZE)) ** rounds_after
            for rank, count in enumerate(unseen)
        ]

    def imagine(self, played, pool, piles, in_piles, last, worth) -> float:
        """One imagined round (seats relative to us): our margin gained in it."""
        n = self.num_players
        pool, piles, in_piles = pool.copy(), [row.copy() for row in piles], in_piles.copy()
        gains = [0.0] * n
        for seat in sorted(range(n), key=lambda s: played[s] * n + (s - last - 1) % n):
            card, row = played[seat], piles[seat]
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

    def context(self, views: dict[str, np.ndarray]) -> tuple:
        """The unseen counts, the rounds after this one, each rank's worth, the piles and
        each rank's count over all piles."""
        unseen = views["unseen"].astype(np.int64)
        round_onehot = views["round"].tolist()
        rounds_after = len(round_onehot) - 1 - round_onehot.index(1.0)
        worth = self.worth(unseen.tolist(), rounds_after)
        piles = views["piles"].astype(np.int64).tolist()
        in_piles = [sum(column) for column in zip(*piles, strict=True)]
        return unseen, rounds_after, worth, piles, in_piles

    def pickup_values(self, views: dict[str, np.ndarray], legal: list[int]) -> list[float]:
        _, _, worth, piles, in_piles = self.context(views)
        return [worth[r] * (1 + in_piles[r] - piles[0][r]) for r in legal]

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        views = self.layout.views(observation)
        legal = np.flatnonzero(mask).tolist()
        if views["chooser"][0]:
            values = self.pickup_values(views, legal)
            return legal[int(np.argmax(np.add(values, TIE_BREAK * rng.random(len(legal)))))]
        unseen, rounds_after, worth, piles, in_piles = self.context(views)
        if len(legal) == 1:
            return legal[0]
        pool = views["pool"].astype(np.int64).tolist()
        last = int(np.argmax(views["last_actor"]))
        unseen_cards = np.repeat(RANK_INDEX, unseen)
        picks = rng.random((SAMPLES, len(unseen_cards))).argsort(axis=1)[:, : self.num_players - 1]
        keep = KEEP_WEIGHT if rounds_after else 0.0
        best, best_value = legal[0], -1e9
        for card, noise in zip(legal, (TIE_BREAK * rng.random(len(legal))).tolist(), strict=True):
            total = sum(
                self.imagine([card, *others], pool, piles, in_piles, last, worth)
                for others in unseen_cards[picks].tolist()
            )
            value = total / SAMPLES - keep * (card + 1) + noise
            if value > best_value:
                best, best_value = card, value
        return best


def test_batched_heuristic_makes_the_heuristics_choices() -> None:
    """Positions of real games (every configuration; card and rank choices) with the same
    draws per row as the plain reckoning and the agent make: the same choices, exact ties
    included."""
    checked = rank_choices = ties = 0
    for options in CONFIGS:
        engine = PickupVector(24, seed=5, **options)
        game = engine.game
        heuristic, reference = PickupHeuristic(game), ReferenceHeuristic(game)
        fields = game.observation_layout.fields
        chooser, unseen = fields["chooser"].start, fields["unseen"]
        rng = np.random.default_rng(11)
        for step in range(16):
            observations = engine.observations().reshape(-1, engine.observation_size)
            masks = engine.masks().reshape(-1, NUM_RANKS)
            rows = np.flatnonzero(masks.any(axis=1))
            observations, masks = observations[rows], masks[rows]
            sizes = observations[:, unseen.start : unseen.stop].sum(axis=1).astype(int)
            n = game.num_players
            picks = draw_picks(sizes, n - 1, rng)  # replaced where the heuristic draws
            noise = np.zeros(masks.shape)
            single, plain = [], []
            for i in range(len(rows)):
                seed = step * 100_000 + i
                draws = np.random.default_rng(seed)
                legal = int(masks[i].sum())
                if observations[i, chooser]:  # a rank choice: the tie-break only
                    noise[i, masks[i]] = draws.random(legal)
                elif legal > 1:  # a card: the imagined deals, then the tie-break
                    keys = draws.random((SAMPLES, sizes[i]))
                    picks[i] = keys.argsort(axis=1)[:, : n - 1]
                    noise[i, masks[i]] = draws.random(legal)
                mask8 = masks[i].astype(np.int8)
                single.append(heuristic.act(observations[i], mask8, np.random.default_rng(seed)))
                plain.append(reference.act(observations[i], mask8, np.random.default_rng(seed)))
            values = heuristic_values(observations, masks, game, picks)
            batched = heuristic_actions(observations, masks, game, picks, noise)
            np.testing.assert_array_equal(batched, plain)
            np.testing.assert_array_equal(single, plain)
            for i in np.flatnonzero(observations[:, chooser]).tolist():
                views = game.observation_layout.views(observations[i])
                legal = np.flatnonzero(masks[i]).tolist()
                np.testing.assert_array_equal(
                    values[i, legal], reference.pickup_values(views, legal)
                )
                rank_choices += 1
            best = np.where(masks, values, -np.inf)
            ties += int(((best == best.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
            checked += len(rows)
            engine.step(random_actions(engine.masks(), rng))
    assert checked >= 2000 and rank_choices >= 300 and ties > 0  # exact ties are broken alike


def test_the_engines_imagined_deals_have_the_heuristics_law() -> None:
    """``draw_picks`` (the engine's draws) and the per-game heuristic's first places of
    an argsort of uniform keys: uniform ordered samples without replacement."""
    rng = np.random.default_rng(2)
    size, count = 6, 3
    picks = draw_picks(np.full(20_000, size), count, rng)  # (20000, 6, 3)
    assert picks.shape == (20_000, SAMPLES, count) and picks.min() >= 0
    assert (
        picks.max() < size
        and (np.sort(picks, axis=2)[..., 1:] > np.sort(picks, axis=2)[..., :-1]).all()
    )
    codes = (picks[..., 0] * size + picks[..., 1]) * size + picks[..., 2]
    frequencies = np.bincount(codes.ravel(), minlength=size**3)
    seen = frequencies[frequencies > 0]
    assert len(seen) == size * (size - 1) * (size - 2)  # every ordered triple, nothing else
    expected = codes.size / len(seen)
    chi2 = ((seen - expected) ** 2 / expected).sum()
    assert chi2 < len(seen) + 6 * np.sqrt(2 * len(seen))  # 119 degrees of freedom
    # A size of exactly ``count`` gives permutations; the per-game law for comparison.
    keys = rng.random((20_000, size)).argsort(axis=1)[:, :count]
    reference = np.bincount(
        ((keys[:, 0] * size + keys[:, 1]) * size + keys[:, 2]), minlength=size**3
    )
    assert (reference > 0).sum() == len(seen)
    perms = draw_picks(np.full(1000, count), count, rng)
    assert (np.sort(perms, axis=2) == np.arange(count)).all()


# --- make_vec -------------------------------------------------------------------------
@pytest.mark.parametrize("reward_mode", ["score", "win"])
def test_make_vec_plays_the_views_new_hands(reward_mode: str) -> None:
    """The longer game through make_vec against the Gymnasium view (every other
    configuration: ``test_batched_every_game``), the engine given the views' decks for
    its new hands (``reference_shuffle``): the hands reshuffled mid-game are checked as
    the rest, and the opponents' pickup choices are played inside ``step``, some ending
    the game."""
    reshuffled: list[list[int]] = []
    paths = compare_with_the_gymnasium_view(
        PICKUP,
        LONGER,
        reward_mode,
        untrained_policy(PICKUP, tuple(sorted(LONGER.items()))),
        games=8,
        chance=lambda engine, state_of: reshuffled.append(reference_shuffle(engine, state_of)),
    )
    assert paths.alone > 20 and paths.ended_alone > 0
    assert len(reshuffled[0]) > 5
