"""What the tests share, the pytest way.

- Every test that takes ``env_id`` and ``config`` arguments (and does not parametrize them
  itself) runs once for every registered id with every configuration it declares.
- ``random_play`` and ``assert_plays_only_legal_moves``: fixtures for any game.
- ``easter``, ``forslag``, ``pick_and_pack``, ``pickup``, ``pico``: each game's scripting
  helpers (building and playing positions), for the several test files of that game.
  A helper that one file needs lives in that file.
- ``tests/lockstep.py`` (imported, not a fixture): reference games and a batched engine
  played in lockstep, and make_vec against Gymnasium views of the same deals, for the
  engines' tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from envs.core.game import Game, State, counts
from envs.easter_collection.rules import (
    PLACE,
    EasterCollectionGame,
    EasterCollectionState,
    card_index,
    card_name,
)
from envs.forslag.rules import NUM_TYPES, ForslagGame, ForslagState, card_type
from envs.pick_and_pack.rules import (
    MALFUNCTION,
    MIXUP,
    MOVE,
    MOVING,
    PLACE_TRAY,
    PREMIUM,
    QUALITY,
    RED,
    RUSH,
    SIZE,
    UNPLAYED,
    USED,
    WHOLESALE,
    PickAndPackGame,
    PickAndPackState,
)
from envs.pickup.rules import NUM_RANKS, PickupGame, PickupState
from envs.pico.rules import NUM_CARDS, VALUES, PicoGame, PicoState

# One torch thread: the tests' networks are tiny, and on a shared 2-core machine torch's
# default threads spend more time waiting for each other than computing. Read by torch
# when it is first imported, so set here, before any test imports it.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# --- every registered id with every configuration it declares --------------------------

CASES = [
    pytest.param(env_id, config, id=f"{env_id}-{'-'.join(f'{k}={v}' for k, v in config.items())}")
    for env_id in envs.ids()
    for config in envs.get_spec(env_id).configurations
]


def _argnames(mark: pytest.Mark) -> list[str]:
    names = mark.args[0] if mark.args else mark.kwargs["argnames"]
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@pytest.hookimpl(trylast=True)  # after the parametrize marks: ids read "<marks>-<case>"
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``env_id, config`` with every case, unless the test does it itself."""
    if not {"env_id", "config"} <= set(metafunc.fixturenames):
        return
    marks = metafunc.definition.iter_markers(name="parametrize")
    if {"env_id", "config"} & {name for mark in marks for name in _argnames(mark)}:
        return
    metafunc.parametrize("env_id, config", CASES)


# --- any game ------------------------------------------------------------------------------


def _assert_plays_only_legal_moves(game: Game, agent, games: int = 2) -> None:
    """Play ``games`` games with ``agent`` in one seat (a different one each game) and
    random players in the others, checking every choice it makes against the mask."""
    random_agent = RandomAgent(game)
    rng = np.random.default_rng(0)
    for g in range(games):
        state = game.new_initial_state(np.random.default_rng(g))
        seat = g % game.num_players
        while not state.is_terminal():
            joint = {}
            for p in state.to_act():
                mask = state.legal_mask(p).astype(np.int8)
                player = agent if p == seat else random_agent
                joint[p] = player.act(game.observation(state, p), mask, rng)
                assert mask[joint[p]], game.action_name(joint[p])
            state.apply(joint)


def _random_play(game: Game, games: int) -> Iterator[tuple[State, int]]:
    """Every decision of ``games`` games of random players: yields ``(state, player)``
    before that player's choice (the live state: read it, do not change it)."""
    rng = np.random.default_rng(0)
    for g in range(games):
        state = game.new_initial_state(np.random.default_rng(g))
        while not state.is_terminal():
            joint = {}
            for p in state.to_act():
                yield state, p
                joint[p] = int(rng.choice(np.flatnonzero(state.legal_mask(p))))
            state.apply(joint)


@pytest.fixture(scope="session")
def assert_plays_only_legal_moves() -> Callable[..., None]:
    """``assert_plays_only_legal_moves(game, agent, games=2)``: ``agent`` in one seat (a
    different one each game), random players in the others; every choice it makes is legal."""
    return _assert_plays_only_legal_moves


@pytest.fixture(scope="session")
def random_play() -> Callable[[Game, int], Iterator[tuple[State, int]]]:
    """``random_play(game, games)``: every decision of random games, as ``(state, player)``
    before that player's choice (the live state: read it, do not change it)."""
    return _random_play


# --- Easter collection ---------------------------------------------------------------------


class EasterCollectionKit:
    """Scripted Easter collection positions: cards by name ("10H"), deals, bids."""

    def make(self, num_players: int = 2, **options) -> EasterCollectionGame:
        return EasterCollectionGame.from_options(num_players=num_players, **options)

    def cards(self, names: str) -> list[int]:
        return [card_index(name) for name in names.split()]

    def names(self, mask: np.ndarray) -> set[str]:
        return {card_name(c) for c in np.flatnonzero(mask)}

    def deal(
        self,
        game: EasterCollectionGame,
        table: str,
        hands: list[str],
        start: int = 0,
        rest: str | None = None,
    ) -> EasterCollectionState:
        """A state whose first round puts ``table`` on positions 1-4 and ``hands[seat]`` in
        each hand (dealt one at a time from ``start``); the deck then holds ``rest``
        (default: every other card, in index order)."""
        n = game.num_players
        held = [self.cards(hand) for hand in hands]
        order = self.cards(table)
        for i in range(4):
            order += [held[(start + k) % n][i] for k in range(n)]
        if rest is None:
            order += [c for c in range(52) if c not in order]
        else:
            order += self.cards(rest)
        return EasterCollectionState(game, np.random.default_rng(0), deck=order, start_player=start)

    def play(self, state: EasterCollectionState, *choices: str) -> None:
        """Every seat, in seat order, plays the named card (standard variant)."""
        state.apply({seat: card_index(name) for seat, name in enumerate(choices)})

    def play_out(self, state: EasterCollectionState, rng: np.random.Generator) -> list[tuple]:
        """Random legal play to the end; returns (round, start player) at every decision."""
        seen = []
        while not state.is_terminal():
            seen.append((state.round, state.start_player))
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        return seen

    def placing_state(
        self, seat0_bid: str, seat1_bid: str
    ) -> tuple[EasterCollectionGame, EasterCollectionState]:
        """Three players; seat 0's spade is placed by itself, seat 1 has placed a heart at
        position 1, seat 2 must place now."""
        game = self.make(3)
        state = self.deal(
            game,
            table="2H 3S 9H 4C",
            hands=[f"{seat0_bid} 7D AC 2D", f"{seat1_bid} 3D 4D 5D", "7H 6D 8D 9D"],
            start=0,
        )
        self.play(state, seat0_bid, seat1_bid, "7H")
        state.apply({1: PLACE + 0})
        assert state.to_act() == (2,)
        return game, state


@pytest.fixture(scope="session")
def easter() -> EasterCollectionKit:
    return EasterCollectionKit()


# --- Förslag -------------------------------------------------------------------------------


class ForslagKit:
    """Scripted Förslag positions: cards by name ("red circle"), hands, pools."""

    def card(self, name: str) -> int:
        colour, shape = name.split()
        return card_type(colour, shape)

    def type_counts(self, cards: list[int]) -> np.ndarray:
        return np.bincount(np.asarray(cards, dtype=np.int64), minlength=NUM_TYPES)

    def make_game(self, n: int = 3, mode: str = "in_turn") -> ForslagGame:
        return ForslagGame.from_options(num_players=n, board_play=mode)

    def new_state(self, n: int = 3, mode: str = "in_turn", seed: int = 0) -> ForslagState:
        return self.make_game(n, mode).new_initial_state(np.random.default_rng(seed))

    def scripted(
        self,
        n: int,
        game_card: str,
        hands: list[list[str]],
        start: int = 0,
        mode: str = "in_turn",
    ) -> ForslagState:
        """A fresh state with a chosen Game Card, hands and start player."""
        state = self.new_state(n, mode)
        state.game_card = self.card(game_card)
        state.round_cards[:] = -1
        state.round_cards[0] = state.game_card
        state.start_player = start
        state.hands[:] = 0
        state.known[:] = 0
        for seat, cards in enumerate(hands):
            state.hands[seat] = self.type_counts([self.card(c) for c in cards])
        state.rebuild()  # what the state keeps up to date from the fields just set
        return state

    def set_pool(self, state: ForslagState, pool: list[str]) -> None:
        """Replace the pool by hand (then ``rebuild``: the legal moves follow the pool)."""
        state.pool[:] = self.type_counts([self.card(c) for c in pool])
        state.rebuild()

    def random_step(self, state: ForslagState, rng: np.random.Generator) -> None:
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


@pytest.fixture(scope="session")
def forslag() -> ForslagKit:
    return ForslagKit()


# --- Pick & Pack ---------------------------------------------------------------------------


class PickAndPackKit:
    """Scripted Pick & Pack positions: a standard board after placement, moves, crates."""

    #: Line k of every player holds type k (mod 6) at both ends.
    STANDARD_TILES = np.array([PREMIUM, WHOLESALE, RUSH, QUALITY, MIXUP, MALFUNCTION] * 2)

    def make_game(self, **options) -> PickAndPackGame:
        return PickAndPackGame.from_options(**options)

    def scripted(self, grabber=(2, 3), player=RED, apples=1, **options) -> PickAndPackState:
        """A position after placement: every cell holds a tray of ``apples``, both players
        hold ``STANDARD_TILES`` unplayed, all crates empty and open, ``player`` to move."""
        game = self.make_game(placement="random", **options)
        state = game.new_initial_state(np.random.default_rng(0))
        state.apples[:] = apples
        state.face_down[:] = False
        state.grabber = grabber
        state.apples[grabber] = 0
        state.tile_type[:] = self.STANDARD_TILES
        state.tile_status[:] = UNPLAYED
        state.player, state.phase, state.rushes_this_turn = player, MOVING, 0
        state.refresh()
        return state

    def act(self, state: PickAndPackState, action: int) -> None:
        (player,) = state.to_act()
        state.apply({player: action})

    def move(self, state: PickAndPackState, line: int) -> None:
        """Move the grabber; a grabbed tray goes to the first fewest crate if there is a tie."""
        self.act(state, MOVE + line)
        if state.phase == PLACE_TRAY:
            self.act(state, state.legal_actions(state.player)[0])

    def use_line(self, state: PickAndPackState, player: int, line: int) -> None:
        """Mark both of ``player``'s tiles on ``line`` as used."""
        state.tile_status[player, [line, SIZE + line]] = USED

    def fill(self, state: PickAndPackState, player: int, stacks) -> None:
        """Set ``player``'s crates, tray by tray (so the apple counts and the observation's
        view kept with them follow), and redo what the rules keep (``refresh``)."""
        state.crates[player] = [[] for _ in stacks]
        state.crate_apples[player] = [0] * len(stacks)
        state.refresh()
        for crate, stack in enumerate(stacks):
            for apples in stack:
                state._add_tray(player, crate, apples)
        state.refresh()

    def place_steps(self, state: PickAndPackState, rng: np.random.Generator, steps: int) -> None:
        for _ in range(steps):
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})

    def random_game(self, state: PickAndPackState, rng: np.random.Generator) -> tuple[int, int]:
        """Play to the end at random; return the number of moves (claimed trays and used
        tiles, one per move) and of decisions (one per chooser and step)."""
        decisions = 0
        while not state.is_terminal():
            decisions += len(state.to_act())
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        claimed = int((state.apples == 0).sum())
        return claimed + int((state.tile_status == USED).sum()), decisions

    def mid_game(self, seed: int = 2, decisions: int = 40, **options) -> PickAndPackState:
        """A real position some way into a random game (trays in crates, tiles used)."""
        state = self.make_game(**options).new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        for _ in range(decisions):
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
        assert not state.is_terminal()
        return state


@pytest.fixture(scope="session")
def pick_and_pack() -> PickAndPackKit:
    return PickAndPackKit()


# --- Pickup --------------------------------------------------------------------------------


class PickupKit:
    """Scripted Pickup positions: cards by face value (1-10), tables, reveals."""

    def cards(self, *values: int) -> np.ndarray:
        """Counts per rank index of the cards with these face values."""
        return counts([v - 1 for v in values], NUM_RANKS)

    def new_state(self, num_players: int = 3, seed: int = 0, **options) -> PickupState:
        game = PickupGame.from_options(num_players=num_players, **options)
        return game.new_initial_state(np.random.default_rng(seed))

    def set_table(
        self,
        state: PickupState,
        *,
        hands: list[tuple[int, ...]],
        pool: tuple[int, ...],
        piles: list[tuple[int, ...]] | None = None,
    ) -> None:
        """Script a deal: the hands, the pool and the score piles (face values). Fields set
        by hand before the call (round, dealer ...) are taken in too."""
        for seat, hand in enumerate(hands):
            state.hands[seat] = self.cards(*hand).tolist()
        state.pool = self.cards(*pool).tolist()
        for seat, pile in enumerate(piles or [()] * len(hands)):
            state.piles[seat] = self.cards(*pile).tolist()
        state.refresh()  # the totals, bit sets and observation table follow the scripted fields

    def play(self, state: PickupState, **played: int) -> None:
        """Reveal one card per seat, given by face value: ``play(state, p0=8, p1=3, ...)``."""
        state.apply({int(key[1:]): value - 1 for key, value in played.items()})

    def random_game(self, game: PickupGame, seed: int) -> Iterator[PickupState]:
        """Every state of one random game (the same state object, advanced)."""
        rng = np.random.default_rng(seed + 100)
        state = game.new_initial_state(np.random.default_rng(seed))
        yield state
        while not state.is_terminal():
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            yield state


@pytest.fixture(scope="session")
def pickup() -> PickupKit:
    return PickupKit()


# --- Pico ----------------------------------------------------------------------------------


class PicoKit:
    """Scripted Pico positions: cards by value (2-16), hands, reveals."""

    def card(self, value: int) -> int:
        return VALUES.index(value)

    def hand(self, *values: int) -> np.ndarray:
        return np.bincount([self.card(v) for v in values], minlength=NUM_CARDS)

    def play(self, state: PicoState, *values: int) -> None:
        state.apply({p: self.card(v) for p, v in enumerate(values)})

    def random_games(
        self, num_players: int, games: int, **options
    ) -> Iterator[tuple[PicoGame, PicoState, list[dict[int, int]]]]:
        """Random games, yielding (game, state, joint actions so far) at every position."""
        game = PicoGame.from_options(num_players=num_players, **options)
        rng = np.random.default_rng(num_players)
        for seed in range(games):
            state = game.new_initial_state(np.random.default_rng(seed))
            history: list[dict[int, int]] = []
            while True:
                yield game, state, history
                if state.is_terminal():
                    break
                joint = {p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()}
                history.append(joint)
                state.apply(joint)


@pytest.fixture(scope="session")
def pico() -> PicoKit:
    return PicoKit()
