"""Pick & Pack's invariants, determinisation and copies."""

from __future__ import annotations

import numpy as np
import pytest

from envs.pick_and_pack import layout
from envs.pick_and_pack.rules import (
    BLUE,
    CHOOSE_END,
    MALFUNCTION,
    MOVING,
    OVER,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM,
    PREMIUM_CLOSED,
    RED,
    RUSH,
    RUSH_CHOICE,
    PickAndPackState,
)

# --- invariants ---------------------------------------------------------------------------


def _claimed_cell(state: PickAndPackState) -> tuple[int, int]:
    cells = np.argwhere((state.apples == 0) & ~state.face_down)
    return next((int(r), int(c)) for r, c in cells if (r, c) != state.grabber)


def _hand_a_grid_tray(state: PickAndPackState) -> None:
    """Take a grid tray into hand outside PLACE_TRAY (trays stay conserved)."""
    r, c = np.argwhere(state.apples > 0)[0]
    state.holding, state.apples[r, c] = int(state.apples[r, c]), 0


def _unplace_a_tile(state: PickAndPackState) -> None:
    """Take a placed tile back (still two of each type) while the game is past placement."""
    kind = int(state.tile_type[RED, 0])
    state.tile_type[RED, 0] = -1
    state.to_place[RED, kind] += 1


def _close_all_blue_crates(state: PickAndPackState) -> None:
    state.closure[BLUE] = [PREMIUM_CLOSED] * 4
    state.refresh()  # scores and legal choices follow; the game should have ended


def _a_tray_under_the_grabber(state: PickAndPackState) -> None:
    r, c = np.argwhere(state.apples > 0)[0]
    state.grabber = (int(r), int(c))


BREAKERS = {
    "a duplicated tray": (lambda s: s._add_tray(RED, 0, 3), "trays by apples"),
    "a tray lost from the grid": (lambda s: s.apples.__setitem__(s.apples > 0, 0), "trays by"),
    "a grid tray of 9 apples": (lambda s: s.apples.__setitem__((0, 0), 9), "7\\+ apples"),
    "a tray of 0 apples in a crate": (lambda s: s.crates[BLUE][1].append(0), "holds"),
    "the apple count out of step": (
        lambda s: s.crate_apples[RED].__setitem__(0, s.crate_apples[RED][0] + 1),
        "apples counted",
    ),
    "the observation's view out of step": (
        lambda s: s.view.__setitem__(layout.CRATE_STACK + 35, 2),
        "view is out of step with the state in \\['crate_stack'\\]",
    ),
    "a wrong score": (lambda s: setattr(s, "score", lambda player: 99), "score of each"),
    "wrong scores": (lambda s: setattr(s, "scores", lambda: np.array([99.0, 0.0])), "scores"),
    "a tray in hand outside PLACE_TRAY": (_hand_a_grid_tray, "in hand"),
    "a face-down claimed cell": (
        lambda s: s.face_down.__setitem__(_claimed_cell(s), True),
        "face-down cell without a tray",
    ),
    "three tiles of a type": (
        lambda s: s.tile_type.__setitem__((RED, 0), (s.tile_type[RED, 0] + 1) % 6),
        "tiles",
    ),
    "an unknown tile status": (lambda s: s.tile_status.__setitem__((BLUE, 3), 7), "status"),
    "a Rush Order from nowhere": (
        lambda s: s.rush_ready.__setitem__(RED, s.rush_ready[RED] + 3),
        "Rush Orders of",
    ),
    "an empty tile space after placement": (_unplace_a_tile, "placement and phase"),
    "the grabber on a tray": (_a_tray_under_the_grabber, "grabber"),
    "a half-done Order Mix-up": (lambda s: setattr(s, "mixup_crate", 1), "Mix-up"),
    "four closed crates in play": (_close_all_blue_crates, "four closed crates"),
    "a score out of step with the crates": (
        lambda s: s.view.__setitem__(layout.POINTS + BLUE, 99),
        "scores",
    ),
    "Rush Orders out of step with the view": (
        lambda s: s.view.__setitem__(layout.RUSH_ORDERS + 2 * BLUE + 1, 1),
        "view is out of step with the state in \\['rush_orders'\\]",
    ),
    "the grabber out of step with the view": (
        lambda s: s.view.__setitem__(layout.GRABBER_CELL, 1 - s.view[layout.GRABBER_CELL]),
        "view is out of step with the state in \\['grabber'\\]",
    ),
    "stale legal choices": (lambda s: setattr(s, "legal_choices", []), "legal choices"),
    "a stale placement mask": (
        lambda s: s.placeable.__setitem__((RED, PLACE), True),
        "placement masks",
    ),
    "stale players to act": (lambda s: setattr(s, "choosers", (BLUE,)), "to_act"),
    "too many Rush Orders this turn": (lambda s: setattr(s, "rushes_this_turn", 3), "this turn"),
}


@pytest.mark.parametrize("name", list(BREAKERS))
def test_check_invariants_catches_each_broken_invariant(pick_and_pack, name):
    state = pick_and_pack.mid_game()
    state.check_invariants()
    assert state.phase == CHOOSE_END and state.crates[RED][0] and state.tile_status.any()
    breaker, message = BREAKERS[name]
    breaker(state)
    with pytest.raises(AssertionError, match=message):
        state.check_invariants()


def test_invariants_hold_in_every_phase_of_random_games(pick_and_pack):
    for options in ({}, {"placement": "alternate", "chain_rush_orders": False}):
        game = pick_and_pack.make_game(**options)
        seen = set()
        for seed in range(15):
            rng = np.random.default_rng(seed)
            state = game.new_initial_state(rng)
            state.check_invariants()
            while not state.is_terminal():
                state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
                state.check_invariants()
                seen.add(state.phase)
        assert seen >= {PLACING, MOVING, PLACE_TRAY, RUSH_CHOICE, OVER}


# --- determinisation and copies -----------------------------------------------------------


def test_only_secret_placement_is_hidden_state(pick_and_pack):
    make_game = pick_and_pack.make_game
    assert make_game().has_hidden_state
    assert not make_game(placement="alternate").has_hidden_state
    assert not make_game(placement="random", opponent_crates="visible").has_hidden_state


def test_resample_redraws_the_secret_arrangement_and_keeps_everything_known(pick_and_pack):
    game = pick_and_pack.make_game()
    state = game.new_initial_state(np.random.default_rng(3))
    rng = np.random.default_rng(3)
    state.apply({RED: PLACE + 0 * 6 + PREMIUM, BLUE: PLACE + 4 * 6 + RUSH})
    state.apply({RED: PLACE + 7 * 6 + MALFUNCTION, BLUE: PLACE + 5 * 6 + RUSH})
    pick_and_pack.place_steps(state, rng, 3)  # five tiles each
    before = state.position()
    blue_arrangements, first_players = set(), set()
    for _ in range(30):
        sample = state.resample(RED, rng)
        sample.check_invariants()
        # Fixed: red's own tiles, the grid, the crates, the phase; red's every view.
        assert np.array_equal(sample.tile_type[RED], state.tile_type[RED])
        assert np.array_equal(sample.to_place[RED], state.to_place[RED])
        assert np.array_equal(sample.apples, state.apples) and sample.grabber == state.grabber
        assert sample.phase == PLACING and sample.crates == state.crates
        assert np.array_equal(game.observation(sample, RED), game.observation(state, RED))
        assert str(sample) == str(state)
        # Drawn again: blue's five tiles (types and spaces) and the first player.
        blue = sample.tile_type[BLUE]
        assert int((blue >= 0).sum()) == 5
        assert (np.bincount(blue[blue >= 0], minlength=6) + sample.to_place[BLUE] == 2).all()
        blue_arrangements.add(blue.tobytes())
        first_players.add(sample.first_player)
        assert sample.player == sample.first_player
        assert sample.game is state.game and sample.rng is not state.rng
    assert len(blue_arrangements) > 20 and first_players == {RED, BLUE}
    assert state.position() == before  # the real state is untouched
    # Blue's sample keeps blue's tiles and redraws red's.
    sample = state.resample(BLUE, rng)
    assert np.array_equal(sample.tile_type[BLUE], state.tile_type[BLUE])
    assert np.array_equal(game.observation(sample, BLUE), game.observation(state, BLUE))


@pytest.mark.parametrize("options", [{}, {"placement": "alternate"}, {"placement": "random"}])
def test_resample_after_placement_changes_nothing_but_the_future(pick_and_pack, options):
    """Every grab, flip and activation is public (buried trays too: a careful player
    remembers each grab), so the sample is the same position with its own RNG."""
    state = pick_and_pack.mid_game(seed=4, decisions=30, **options)
    sample = state.resample(BLUE, np.random.default_rng(0))
    assert sample.position() == state.position()
    assert sample.rng is not state.rng
    assert sample.rng.integers(2**62) != state.clone().rng.integers(2**62)
    if options:  # alternate placement in the open: nothing is hidden even during placement
        start = pick_and_pack.make_game(**options).new_initial_state(np.random.default_rng(1))
        assert start.resample(RED, np.random.default_rng(2)).position() == start.position()


@pytest.mark.parametrize("steps", [5, 25])  # during the secret placement, and after it
def test_clone_is_independent_and_plays_on_identically(pick_and_pack, steps):
    state = pick_and_pack.mid_game(seed=5, decisions=steps)
    twin = state.clone()
    assert twin.position() == state.position() and twin.game is state.game
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    pick_and_pack.random_game(twin, rng_a)
    assert twin.position() != state.position()  # playing the copy left the original alone
    state.check_invariants()  # including what the rules keep in step with the position
    assert state.position() == pick_and_pack.mid_game(seed=5, decisions=steps).position()
    pick_and_pack.random_game(state, rng_b)
    assert twin.position() == state.position()
