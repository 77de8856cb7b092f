"""Pick & Pack rules, observations and heuristic (scripted positions, the rulebook's examples)."""

from __future__ import annotations

import numpy as np
import pytest
from cases import assert_plays_only_legal_moves, random_play

from envs.core.game import Game
from envs.pick_and_pack import SPEC, observation, raw_env
from envs.pick_and_pack.rules import (
    BLUE,
    CHOOSE_END,
    END,
    FLIPPED,
    MALFUNCTION,
    MALFUNCTION_TARGET,
    MIXUP,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MOVE,
    MOVING,
    NUM_ACTIONS,
    OPEN,
    OPP_CRATE,
    OVER,
    OWN_CRATE,
    PLACE,
    PLACE_TRAY,
    PLACING,
    PREMIUM,
    PREMIUM_CLOSED,
    PREMIUM_TARGET,
    QUALITY,
    QUALITY_SOURCE,
    RED,
    RUSH,
    RUSH_CHOICE,
    RUSH_DECLINE,
    RUSH_USE,
    SIZE,
    TILE,
    TRAY,
    UNPLAYED,
    USED,
    WHOLESALE,
    WHOLESALE_CLOSED,
    WHOLESALE_TARGET,
    PickAndPackGame,
    PickAndPackState,
    crate_value,
)
from training.agents.pick_and_pack import (
    Board,
    PickAndPackExpert,
    PickAndPackHeuristic,
    PickAndPackTactician,
)
from training.tournament import seat_rotated

#: Line k of every player holds type k (mod 6) at both ends.
STANDARD_TILES = np.array([PREMIUM, WHOLESALE, RUSH, QUALITY, MIXUP, MALFUNCTION] * 2)


def make_game(**options) -> PickAndPackGame:
    return PickAndPackGame.from_options(**options)


def scripted(grabber=(2, 3), player=RED, apples=1, **options) -> PickAndPackState:
    """A position after placement: every cell holds a tray of ``apples``, both players hold
    ``STANDARD_TILES`` unplayed, all crates empty and open, ``player`` to move."""
    state = make_game(placement="random", **options).new_initial_state(np.random.default_rng(0))
    state.apples[:] = apples
    state.face_down[:] = False
    state.grabber = grabber
    state.apples[grabber] = 0
    state.tile_type[:] = STANDARD_TILES
    state.tile_status[:] = UNPLAYED
    state.player, state.phase, state.rushes_this_turn = player, MOVING, 0
    state.refresh()
    return state


def act(state: PickAndPackState, action: int) -> None:
    (player,) = state.to_act()
    state.apply({player: action})


def move(state: PickAndPackState, line: int) -> None:
    """Move the grabber; a grabbed tray goes to the first fewest crate if there is a tie."""
    act(state, MOVE + line)
    if state.phase == PLACE_TRAY:
        act(state, legal(state)[0])


def legal(state: PickAndPackState, player: int | None = None) -> list[int]:
    return state.legal_actions(state.player if player is None else player)


def moves(state: PickAndPackState) -> list[int]:
    return [a - MOVE for a in legal(state)]


def use_line(state: PickAndPackState, player: int, line: int) -> None:
    """Mark both of ``player``'s tiles on ``line`` as used."""
    state.tile_status[player, [line, SIZE + line]] = USED


def fill(state: PickAndPackState, player: int, stacks) -> None:
    """Set ``player``'s crates, tray by tray (so the apple counts and the observation's view
    kept with them follow), and redo what the rules keep (``refresh``)."""
    state.crates[player] = [[] for _ in stacks]
    state.crate_apples[player] = [0] * len(stacks)
    state.refresh()
    for crate, stack in enumerate(stacks):
        for apples in stack:
            state._add_tray(player, crate, apples)
    state.refresh()


def random_game(state: PickAndPackState, rng: np.random.Generator) -> tuple[int, int]:
    """Play to the end at random; return the number of moves (claimed trays and used tiles,
    one per move) and of decisions (one per chooser and step)."""
    decisions = 0
    while not state.is_terminal():
        decisions += len(state.to_act())
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    claimed = int((state.apples == 0).sum())
    return claimed + int((state.tile_status == USED).sum()), decisions


# --- options ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 3},
        {"num_players": 1},
        {"placement": "turns"},
        {"opponent_crates": "hidden"},
        {"targetless_actions": "skip"},
        {"chain_rush_orders": 1},
        {"tray_counts": (6, 6, 6, 6, 6, 6)},  # six 6s
        {"tray_counts": (8, 7, 7, 7, 7, 0)},  # no 6 for the grabber
        {"tray_counts": (7, 7, 7, 7, 7, 2)},  # 37 trays
        {"tray_counts": (7, 7, 7, 7, 8)},
        {"tray_counts": (7, 7, 7, 7, 7.0, 1)},
        {"tray_counts": (True, 7, 7, 7, 6, 1)},
        {"tray_counts": (-1, 8, 7, 7, 7, 1)},
        {"tray_counts": "777771"},
        {"no_such_option": 1},
    ],
)
def test_bad_options_raise_naming_what_is_allowed(options):
    with pytest.raises(ValueError, match="allowed"):
        make_game(**options)


def test_tray_counts_option_sets_the_grid_and_grabber_starts_on_the_6():
    for counts in [(7, 7, 7, 7, 7, 1), (0, 0, 0, 0, 35, 1)]:
        for seed in range(5):
            state = make_game(tray_counts=counts).new_initial_state(np.random.default_rng(seed))
            values = np.bincount(state.apples.ravel(), minlength=7)[1:]
            assert values.tolist() == list(counts)
            assert state.apples[state.grabber] == 6


def test_first_player_is_drawn_at_random_and_same_seed_same_deal():
    game = make_game(placement="random")
    deals = [game.new_initial_state(np.random.default_rng(s)) for s in range(20)]
    assert {d.first_player for d in deals} == {0, 1}
    again = game.new_initial_state(np.random.default_rng(7))
    assert np.array_equal(again.apples, deals[7].apples)
    assert np.array_equal(again.tile_type, deals[7].tile_type)
    assert again.first_player == deals[7].first_player
    assert not np.array_equal(deals[0].apples, deals[1].apples)


# --- moving the grabber -------------------------------------------------------------------
def test_red_moves_along_its_row_and_blue_along_its_column():
    state = scripted(grabber=(2, 3), player=RED)
    assert moves(state) == [0, 1, 2, 4, 5]
    act(state, MOVE + 0)
    assert state.grabber == (2, 0)
    state = scripted(grabber=(2, 3), player=BLUE)
    assert moves(state) == [0, 1, 3, 4, 5]
    act(state, MOVE + 5)
    assert state.grabber == (5, 3)


def test_empty_space_needs_an_unplayed_tile_at_an_end_of_that_line():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0  # empty: red needs a tile at the top or bottom of column 0
    use_line(state, RED, 0)
    state.refresh()
    assert 0 not in moves(state)
    state.tile_status[RED, SIZE + 0] = UNPLAYED  # the bottom end's tile
    state.refresh()
    assert 0 in moves(state)
    state.tile_status[RED, SIZE + 0] = FLIPPED  # malfunctioned by blue
    state.refresh()
    assert 0 not in moves(state)
    state.tile_status[BLUE, :] = UNPLAYED  # blue's tiles are no help to red
    state.refresh()
    assert 0 not in moves(state)
    # Blue: an empty space of its column needs blue's tile at the left or right of that row.
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[4, 3] = 0
    use_line(state, BLUE, 4)
    state.refresh()
    assert 4 not in moves(state)
    state.tile_status[BLUE, 4] = UNPLAYED  # left end of row 4
    state.refresh()
    assert 4 in moves(state)


def test_no_move_onto_a_face_down_tray_even_with_tiles():
    state = scripted(grabber=(2, 3), player=RED)
    state.face_down[2, 1] = True
    state.refresh()
    assert 1 not in moves(state)
    assert state.tile_status[RED, 1] == UNPLAYED  # tiles at column 1 do not help


def test_grab_goes_to_the_open_crate_with_fewest_trays_with_a_choice_on_ties():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 5
    fill(state, RED, [[1, 1], [2], [3, 3], [4]])
    act(state, MOVE + 0)
    assert state.grabber == (2, 0) and state.apples[2, 0] == 0  # pawn left on the empty space
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + 1, OWN_CRATE + 3]
    act(state, OWN_CRATE + 3)
    assert state.crates[RED] == [[1, 1], [2], [3, 3], [4, 5]]
    assert state.player == BLUE and state.phase == MOVING
    # A single fewest crate takes it without asking; a closed crate takes nothing.
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 4
    fill(state, RED, [[1], [], [2], [3]])
    state.closure[RED][1] = PREMIUM_CLOSED
    state.refresh()
    act(state, MOVE + 0)
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + k for k in (0, 2, 3)]
    state.closure[RED][2] = PREMIUM_CLOSED
    state.closure[RED][3] = WHOLESALE_CLOSED
    state.refresh()
    assert legal(state) == [OWN_CRATE + 0]


def test_grab_with_a_unique_fewest_crate_is_not_asked():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 5] = 6
    fill(state, RED, [[1], [1], [], [1]])
    act(state, MOVE + 5)
    assert state.crates[RED][2] == [6] and state.player == BLUE


# --- activating tiles ---------------------------------------------------------------------
def test_choice_of_end_only_when_the_two_tiles_differ():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = [RUSH, QUALITY]
    state.refresh()
    act(state, MOVE + 0)
    assert state.phase == CHOOSE_END and legal(state) == [END + 0, END + 1]
    act(state, END + 0)
    assert state.tile_status[RED, 0] == USED and state.tile_status[RED, SIZE] == UNPLAYED
    assert state.rush_ready[RED] == 1 and state.player == BLUE
    # Same type at both ends: activated without asking.
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 2] = 0  # column 2: Rush Order at both ends
    state.refresh()
    act(state, MOVE + 2)
    assert state.player == BLUE and state.rush_ready[RED] == 1
    assert sorted(state.tile_status[RED, [2, SIZE + 2]].tolist()) == [UNPLAYED, USED]


def test_premium_closes_a_chosen_own_crate_and_doubles_it():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0  # column 0: Premium
    fill(state, RED, [[5, 4], [3], [2], [1]])
    act(state, MOVE + 0)
    assert state.phase == PREMIUM_TARGET and legal(state) == [OWN_CRATE + k for k in range(4)]
    act(state, OWN_CRATE + 0)
    assert state.closure[RED][0] == PREMIUM_CLOSED and state.closure[BLUE] == [OPEN] * 4
    assert state.scores()[RED] == 2 * 9 + 3 + 2 + 1
    # A closed crate is no Premium target.
    state.player, state.phase = RED, MOVING
    state.grabber, state.apples[2, 1] = (2, 3), 0
    state.tile_type[RED, [1, SIZE + 1]] = PREMIUM
    state.refresh()
    act(state, MOVE + 1)
    assert legal(state) == [OWN_CRATE + k for k in (1, 2, 3)]


def test_wholesale_closes_a_chosen_opponent_crate_and_halves_it_rounded_down():
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[1, 3] = 0  # row 1: Wholesale for blue
    fill(state, RED, [[5, 6], [3], [2], [1]])
    state.closure[RED][3] = PREMIUM_CLOSED
    state.refresh()
    act(state, MOVE + 1)
    assert state.phase == WHOLESALE_TARGET and legal(state) == [OPP_CRATE + k for k in (0, 1, 2)]
    act(state, OPP_CRATE + 0)
    assert state.closure[RED][0] == WHOLESALE_CLOSED
    assert state.scores()[RED] == 11 // 2 + 3 + 2 + 2 * 1


def test_rush_order_gives_exactly_one_extra_move_per_tile_from_the_next_turn():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 2] = 0  # column 2: Rush Orders
    state.refresh()
    move(state, 2)
    # Kept, not usable in the turn it was taken: the turn passes.
    assert state.player == BLUE and state.rush_ready[RED] == 1
    move(state, 0)  # blue grabs (0, 2)
    move(state, 5)  # red grabs (0, 5)
    assert state.phase == RUSH_CHOICE and legal(state) == [RUSH_USE, RUSH_DECLINE]
    act(state, RUSH_USE)
    assert state.player == RED and state.phase == MOVING and state.rush_ready[RED] == 0
    move(state, 4)  # the extra move; no Rush Order left, so the turn passes
    assert state.player == BLUE and state.phase == MOVING
    assert sum(len(c) for c in state.crates[RED]) == 2


def test_rush_orders_chain_and_decline_keeps_them():
    state = scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 2
    state.refresh()
    move(state, 0)
    act(state, RUSH_DECLINE)
    assert state.player == BLUE and state.rush_ready[RED] == 2
    state = scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 2
    state.refresh()
    move(state, 0)
    act(state, RUSH_USE)
    move(state, 1)
    assert state.phase == RUSH_CHOICE  # the second one may follow
    act(state, RUSH_USE)
    move(state, 2)
    assert state.player == BLUE and sum(len(c) for c in state.crates[RED]) == 3
    # chain_rush_orders=False: one per turn.
    state = scripted(grabber=(2, 3), player=RED, chain_rush_orders=False)
    state.rush_ready[RED] = 2
    state.refresh()
    move(state, 0)
    act(state, RUSH_USE)
    move(state, 1)
    assert state.player == BLUE and state.rush_ready[RED] == 1


def test_rush_order_not_offered_without_a_possible_extra_move():
    state = scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 1
    state.apples[2, :] = 0
    state.apples[2, 0] = 3
    for line in range(SIZE):
        use_line(state, RED, line)
    state.refresh()
    move(state, 0)
    assert state.player == BLUE and state.rush_ready[RED] == 1


def test_quality_control_steals_a_top_tray_into_the_fewest_crate():
    state = scripted(grabber=(2, 0), player=RED)
    state.apples[2, 3] = 0  # column 3: Quality Control
    fill(state, BLUE, [[1, 6], [], [4], [2]])
    state.closure[BLUE][3] = WHOLESALE_CLOSED
    fill(state, RED, [[1], [], [], [1]])
    act(state, MOVE + 3)
    assert state.phase == QUALITY_SOURCE and legal(state) == [OPP_CRATE + 0, OPP_CRATE + 2]
    act(state, OPP_CRATE + 0)
    assert state.crates[BLUE][0] == [1]
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + 1, OWN_CRATE + 2]
    act(state, OWN_CRATE + 2)
    assert state.crates[RED] == [[1], [], [6], [1]] and state.player == BLUE


def test_order_mix_up_swaps_two_top_trays():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 4] = 0  # column 4: Order Mix-up
    fill(state, BLUE, [[1, 6], [], [4], [5]])
    state.closure[BLUE][3] = PREMIUM_CLOSED
    fill(state, RED, [[2, 1], [3], [], [1]])
    act(state, MOVE + 4)
    assert state.phase == MIXUP_OPPONENT and legal(state) == [OPP_CRATE + 0, OPP_CRATE + 2]
    act(state, OPP_CRATE + 0)
    assert state.phase == MIXUP_OWN and legal(state) == [OWN_CRATE + k for k in (0, 1, 3)]
    act(state, OWN_CRATE + 0)
    assert state.crates[BLUE][0] == [1, 1] and state.crates[RED][0] == [2, 6]
    assert state.player == BLUE


def test_malfunction_flips_a_grid_tray_or_an_opponent_tile():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 5] = 0  # column 5: Malfunction
    state.refresh()
    act(state, MOVE + 5)
    assert state.phase == MALFUNCTION_TARGET
    choices = legal(state)
    assert len(choices) == 34 + 12  # face-up trays (36 less the two empty cells) and tiles
    act(state, TRAY + 4 * SIZE + 1)
    assert state.face_down[4, 1] and state.tile_status[RED, 5] == USED
    assert state.player == BLUE
    act(state, MOVE + 4)  # blue moves along column 5 to row 4 (a tray)
    state.player, state.phase = BLUE, MOVING
    state.grabber = (0, 1)
    state.refresh()
    assert 4 not in moves(state)  # the face-down tray (4, 1) is no target
    # Blue's Malfunction on one of red's tiles (blue's frame is transposed: action names
    # a tray by (column, row)).
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[5, 3] = 0  # row 5: Malfunction for blue
    state.refresh()
    act(state, MOVE + 5)
    act(state, TILE + SIZE + 0)  # red's bottom tile of column 0 (a Premium)
    assert state.tile_status[RED, SIZE] == FLIPPED
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[5, 3] = 0
    state.refresh()
    act(state, MOVE + 5)
    act(state, TRAY + 1 * SIZE + 4)  # blue's frame (col 1, row 4) = grid (4, 1)
    assert state.face_down[4, 1]


def test_an_action_with_no_valid_target_is_spent():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = QUALITY  # opponent crates are all empty
    state.refresh()
    before = [list(c) for p in (0, 1) for c in state.crates[p]]
    act(state, MOVE + 0)
    assert state.player == BLUE
    assert sorted(state.tile_status[RED, [0, SIZE]].tolist()) == [UNPLAYED, USED]
    assert [list(c) for p in (0, 1) for c in state.crates[p]] == before
    # Order Mix-up needs a top tray on both sides.
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 4] = 0
    fill(state, BLUE, [[3], [], [], []])
    act(state, MOVE + 4)
    assert state.player == BLUE and state.crates[BLUE][0] == [3]
    # targetless_actions="unplayable": the tile cannot be activated, so no target there.
    state = scripted(grabber=(2, 3), player=RED, targetless_actions="unplayable")
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = QUALITY
    state.refresh()
    assert 0 not in moves(state)
    fill(state, BLUE, [[3], [], [], []])
    assert 0 in moves(state)


# --- end and scoring ----------------------------------------------------------------------
def test_game_ends_at_once_when_a_player_has_all_four_crates_closed():
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[1, 3] = 0  # blue's row 1: Wholesale
    state.closure[RED][:3] = [PREMIUM_CLOSED] * 3
    state.rush_ready[BLUE] = 1  # no extra move follows the end
    fill(state, RED, [[1], [2], [3], [5]])
    act(state, MOVE + 1)  # red's last open crate is the only target: not asked
    assert state.closure[RED][3] == WHOLESALE_CLOSED
    assert state.is_terminal() and state.phase == OVER and state.to_act() == ()
    assert state.scores()[RED] == 2 * (1 + 2 + 3) + 5 // 2
    # Closing one's own last crate with a Premium ends it too.
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.closure[RED][1:] = [WHOLESALE_CLOSED] * 3
    state.refresh()
    act(state, MOVE + 0)
    assert state.is_terminal()


def test_game_ends_when_the_player_to_move_has_no_legal_move():
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[:, 0] = 0  # blue's column after red's move holds nothing blue can reach
    state.apples[2, :] = 0
    state.apples[2, 0] = 2
    for line in range(SIZE):
        use_line(state, BLUE, line)
    state.refresh()
    move(state, 0)
    assert state.is_terminal() and state.scores()[RED] == 2
    # Face-down trays do not save the player either.
    state = scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 2
    state.face_down[:, 0] = True
    state.face_down[2, 0] = False
    for line in range(SIZE):
        use_line(state, BLUE, line)
    state.refresh()
    move(state, 0)
    assert state.is_terminal()


@pytest.mark.parametrize(
    "apples, closure, points",
    [(9, OPEN, 9), (9, PREMIUM_CLOSED, 18), (11, WHOLESALE_CLOSED, 5), (10, WHOLESALE_CLOSED, 5)],
)
def test_crate_scoring(apples, closure, points):
    assert crate_value(apples, closure) == points
    state = scripted()
    fill(state, BLUE, [[apples - 3, 3], [], [], []])
    state.closure[BLUE][0] = closure
    state.refresh()
    assert state.scores().tolist() == [0, points]


def test_rulebook_example_blues_score():
    """Two Premium crates doubled, a Wholesale crate of 11 apples worth just 5, one open."""
    state = scripted()
    fill(state, BLUE, [[6, 4, 3], [5, 2], [4, 4, 3], [2, 1, 1]])
    state.closure[BLUE] = [PREMIUM_CLOSED, PREMIUM_CLOSED, WHOLESALE_CLOSED, OPEN]
    state.refresh()
    assert state.scores()[BLUE] == 2 * 13 + 2 * 7 + 5 + 4


def test_rulebook_example_blue_may_reach_two_trays_and_one_empty_space():
    """Blue's column holds a 3, a 1, one empty space whose row ends hold Quality Control
    and Malfunction, and two empty spaces whose rows have no playable tiles (the X's)."""
    state = scripted(grabber=(0, 2), player=BLUE)
    state.apples[:, 2] = [0, 3, 0, 1, 0, 0]
    state.tile_type[BLUE, [2, SIZE + 2]] = [QUALITY, MALFUNCTION]
    use_line(state, BLUE, 4)
    state.tile_status[BLUE, 5] = USED
    state.tile_status[BLUE, SIZE + 5] = FLIPPED
    state.refresh()
    assert moves(state) == [1, 2, 3]
    fill(state, RED, [[4], [], [], []])
    act(state, MOVE + 2)
    assert state.phase == CHOOSE_END and legal(state) == [END + 0, END + 1]


def test_rulebook_example_red_grabs_the_5_then_malfunctions_a_wholesale():
    state = scripted(grabber=(2, 3), player=RED)
    assert len(moves(state)) == 5  # any of the five other spaces of its row
    state.apples[2, 1] = 5
    fill(state, RED, [[2], [], [3], [1]])
    act(state, MOVE + 1)
    assert state.grabber == (2, 1) and state.apples[2, 1] == 0 and state.crates[RED][1] == [5]
    state.player, state.phase = RED, MOVING
    state.apples[2, 5] = 0  # column 5: Malfunction
    state.refresh()
    act(state, MOVE + 5)
    act(state, TILE + SIZE + 1)  # blue's right-end Wholesale on row 1
    assert state.tile_status[BLUE, SIZE + 1] == FLIPPED and state.tile_status[RED, 5] == USED


def test_every_game_ends_within_sixty_moves_and_max_decisions():
    for placement, bound in (("simultaneous", 250), ("alternate", 250), ("random", 228)):
        game = make_game(placement=placement)
        assert game.max_decisions == bound  # 22 placement decisions, 36 * 3 + 24 * 5 after
        for seed in range(30):
            rng = np.random.default_rng(seed)
            moves_made, decisions = random_game(game.new_initial_state(rng), rng)
            assert 0 < moves_made <= 60 and decisions <= game.max_decisions


# --- placement ----------------------------------------------------------------------------
def _place_steps(state: PickAndPackState, rng: np.random.Generator, steps: int) -> None:
    for _ in range(steps):
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


def test_simultaneous_placement_takes_eleven_joint_steps_and_places_all_tiles():
    state = make_game().new_initial_state(np.random.default_rng(0))
    assert state.phase == PLACING and state.to_act() == (RED, BLUE)
    mask = state.legal_mask(RED)
    assert mask[PLACE : PLACE + 72].all() and not mask[72:].any()
    state.apply({RED: PLACE + 0 * 6 + PREMIUM, BLUE: PLACE + 0 * 6 + PREMIUM})
    state.apply({RED: PLACE + 1 * 6 + PREMIUM, BLUE: PLACE + 3 * 6 + RUSH})
    mask = state.legal_mask(RED)
    assert not mask[PLACE + 2 * 6 + PREMIUM]  # both Premiums placed
    assert not mask[PLACE + 0 * 6 + RUSH]  # space 0 taken
    assert mask[PLACE + 2 * 6 + RUSH]
    _place_steps(state, np.random.default_rng(1), 9)
    assert state.phase == MOVING and state.player == state.first_player
    for p in (RED, BLUE):
        assert sorted(state.tile_type[p].tolist()) == sorted(STANDARD_TILES.tolist())
    assert state.tile_type[RED, :2].tolist() == [PREMIUM, PREMIUM]


def test_simultaneous_placement_is_hidden_until_both_are_done():
    game = make_game()
    state = game.new_initial_state(np.random.default_rng(3))
    _place_steps(state, np.random.default_rng(3), 6)
    other = state.clone()
    other.tile_type[BLUE] = np.roll(other.tile_type[BLUE], 1)  # blue arranged differently
    other.refresh()
    assert not np.array_equal(other.tile_type[BLUE], state.tile_type[BLUE])
    assert np.array_equal(game.observation(state, RED), game.observation(other, RED))
    assert str(state) == str(other)
    assert not np.array_equal(game.observation(state, BLUE), game.observation(other, BLUE))
    assert "P" not in str(state).split("\n", 1)[1].split("red crates")[0]
    # Once both are done, the arrangements are revealed.
    _place_steps(state, np.random.default_rng(4), 5)
    views = game.observation_layout.views(game.observation(state, RED))
    assert views["tile_type"][1].sum() == 12
    assert views["tile_type"][1].argmax(axis=1).tolist() == state.tile_type[BLUE].tolist()


def test_alternate_placement_takes_turns_in_the_open():
    game = make_game(placement="alternate")
    state = game.new_initial_state(np.random.default_rng(5))
    first = state.first_player
    order = []
    while state.phase == PLACING:
        (player,) = state.to_act()
        order.append(player)
        state.apply({player: state.legal_actions(player)[0]})
        views = game.observation_layout.views(game.observation(state, 1 - player))
        placed = int((state.tile_type[player] >= 0).sum())
        assert views["tile_type"][1].sum() == placed  # the opponent sees it at once
    assert order == [first, 1 - first] * 11
    assert state.phase == MOVING and state.player == first


def test_random_placement_deals_both_rows():
    state = make_game(placement="random").new_initial_state(np.random.default_rng(0))
    assert state.phase == MOVING
    for p in (RED, BLUE):
        assert sorted(state.tile_type[p].tolist()) == sorted(STANDARD_TILES.tolist())


# --- observations and render --------------------------------------------------------------
def test_opponent_buried_trays_are_hidden_unless_full():
    for crates, hidden in (("visible", True), ("full", False)):
        state = scripted(opponent_crates=crates)
        fill(state, BLUE, [[1, 2, 6], [4], [], []])
        other = state.clone()
        fill(other, BLUE, [[5, 5, 6], [4], [], []])
        game = state.game
        same = np.array_equal(game.observation(state, RED), game.observation(other, RED))
        assert same == hidden
        assert (str(state) == str(other)) == hidden
        views = game.observation_layout.views(game.observation(state, RED))
        assert views["crate_top"][1].tolist() == [6, 4, 0, 0]
        assert views["crate_count"][1].tolist() == [3, 1, 0, 0]
        # Own crates are always shown in full.
        own = game.observation_layout.views(game.observation(state, BLUE))
        assert own["crate_stack"][0, 0, :4].tolist() == [1, 2, 6, 0]


def test_observation_is_in_the_observers_frame():
    state = scripted(grabber=(2, 3), player=BLUE)
    state.apples[4, 3] = 5  # on blue's column, row 4
    state.refresh()
    game = state.game
    red = game.observation_layout.views(game.observation(state, RED))
    blue = game.observation_layout.views(game.observation(state, BLUE))
    assert red["trays"][4, 3] == 5 and blue["trays"][3, 4] == 5
    assert red["grabber"][2, 3] == 1 and blue["grabber"][3, 2] == 1
    assert blue["to_act"].tolist() == [1, 0] and red["to_act"].tolist() == [0, 1]
    assert blue["color"].tolist() == [0, 1]
    assert blue["phase"][MOVING] == 1
    # Blue moves along its row of its frame: line 4 reaches the 5.
    act(state, MOVE + 4)
    assert state.grabber == (4, 3) and state.holding == 5 and state.phase == PLACE_TRAY


def test_a_single_legal_move_is_made_without_asking():
    state = scripted(grabber=(0, 3), player=BLUE)
    state.apples[2, :] = 0
    state.apples[2, 3] = 3  # blue grabs it, leaving the grabber on row 2
    state.apples[2, 5] = 4  # then red's only target
    for line in range(SIZE):
        use_line(state, RED, line)
    fill(state, RED, [[1], [1], [], [1]])
    move(state, 2)
    assert state.grabber == (2, 5) and state.crates[RED][2] == [4]
    assert state.player == BLUE and state.phase == MOVING


@pytest.mark.parametrize("options", [{}, {"placement": "random"}])
def test_legal_masks_are_fresh_copies(options):
    """The masks built from what the state keeps (placement masks, legal choices) are new
    arrays: changing one changes neither the state nor the next mask."""
    state = make_game(**options).new_initial_state(np.random.default_rng(0))
    player = state.to_act()[0]
    mask = state.legal_mask(player)
    expected = mask.copy()
    mask[:] = ~mask
    assert mask.dtype == bool and np.array_equal(state.legal_mask(player), expected)
    state.check_invariants()


def test_action_mask_is_empty_for_the_waiting_player_and_sized():
    state = scripted(player=RED)
    assert state.legal_mask(BLUE).shape == (NUM_ACTIONS,) and not state.legal_mask(BLUE).any()


def test_env_render_is_the_board():
    env = raw_env(render_mode="ansi", placement="random")
    env.reset(seed=0)
    text = env.render()
    assert "[6]" in text and "red crates" in text and "to act" in text


# --- heuristic ----------------------------------------------------------------------------
@pytest.mark.parametrize("config", SPEC.configurations[::2])
def test_heuristic_beats_random(config):
    game = SPEC.make_game(**config)
    lineup = [
        ("heuristic", PickAndPackHeuristic(game)),
        ("random", SPEC.agent_factory("random")(game)),
    ]
    records = seat_rotated(game, lineup, 100, seed=1)
    assert np.mean(records["heuristic"].wins) > 0.8
    assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores) + 10


def test_expert_plays_only_legal_moves_under_the_other_rule_options():
    # The conformance suite covers SPEC.configurations; these options change the expert's
    # search (one Rush Order a turn; tiles with no target cannot be activated).
    game = SPEC.make_game(chain_rush_orders=False, targetless_actions="unplayable")
    assert_plays_only_legal_moves(game, PickAndPackExpert(game), games=4)


def test_expert_beats_the_heuristic():
    game = SPEC.make_game()
    lineup = [("expert", PickAndPackExpert(game)), ("heuristic", PickAndPackHeuristic(game))]
    records = seat_rotated(game, lineup, 100, seed=1)
    assert np.mean(records["expert"].wins) > 0.75  # about 0.95 over many games


def test_expert_action_values_are_what_it_chooses_by():
    """-inf where illegal; ``act`` takes a best one; every line with a tray is valued in a
    move, the plan's one tile in a placement (or every tile, the plan out of reach after
    random placements), both answers to a Rush Order."""
    game = SPEC.make_game()
    expert = PickAndPackExpert(game)
    rng = np.random.default_rng(0)
    seen = set()
    for state, player in random_play(game, 3):
        observation, mask = game.observation(state, player), state.legal_mask(player)
        values = expert.action_values(observation, mask)
        assert not np.isfinite(values[mask == 0]).any()
        assert values[expert.act(observation, mask, rng)] == values.max() > -np.inf
        seen.add(state.phase)
        if state.phase == MOVING:
            frame = game.observation_layout.views(observation)
            row = int(np.argmax(frame["grabber"])) // SIZE
            for line in np.flatnonzero(mask[MOVE : MOVE + SIZE]).tolist():
                assert np.isfinite(values[MOVE + line]) or frame["trays"][row, line] == 0
        elif state.phase == PLACING and mask.sum() > 1:
            assert np.isfinite(values).sum() in (1, mask.sum())  # all: the plan is out of reach
        elif state.phase == RUSH_CHOICE:
            assert np.isfinite(values[[RUSH_USE, RUSH_DECLINE]]).all()
    assert {PLACING, MOVING, MALFUNCTION_TARGET} <= seen


def test_tactician_moves_as_the_heuristic_and_decides_the_rest_as_the_expert():
    game = SPEC.make_game()
    tactician, expert = PickAndPackTactician(game), PickAndPackExpert(game)
    heuristic = PickAndPackHeuristic(game)
    phases = set()
    for state, player in random_play(game, 2):
        observation, mask = game.observation(state, player), state.legal_mask(player)
        teacher = heuristic if state.phase == MOVING else expert
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        assert tactician.act(observation, mask, rng_a) == teacher.act(observation, mask, rng_b)
        values = tactician.action_values(observation, mask)
        if state.phase == MOVING:
            board = Board(game.observation_layout.views(observation))
            for line in np.flatnonzero(mask[MOVE : MOVE + SIZE]).tolist():
                assert values[MOVE + line] == board.move_value(line)
        else:
            assert np.array_equal(values, expert.action_values(observation, mask))
        phases.add(state.phase)
    assert {MOVING, MALFUNCTION_TARGET, PLACE_TRAY} <= phases


# --- trust: invariants, determinisation, copies -----------------------------------------
def mid_game(seed: int = 2, decisions: int = 40, **options) -> PickAndPackState:
    """A real position some way into a random game (trays in crates, tiles used)."""
    state = make_game(**options).new_initial_state(np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    assert not state.is_terminal()
    return state


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
        lambda s: s.view.__setitem__(observation.CRATE_STACK + 35, 2),
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
        lambda s: s.view.__setitem__(observation.POINTS + BLUE, 99),
        "scores",
    ),
    "Rush Orders out of step with the view": (
        lambda s: s.view.__setitem__(observation.RUSH_ORDERS + 2 * BLUE + 1, 1),
        "view is out of step with the state in \\['rush_orders'\\]",
    ),
    "the grabber out of step with the view": (
        lambda s: s.view.__setitem__(
            observation.GRABBER_CELL, 1 - s.view[observation.GRABBER_CELL]
        ),
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
def test_check_invariants_catches_each_broken_invariant(name):
    state = mid_game()
    state.check_invariants()
    assert state.phase == CHOOSE_END and state.crates[RED][0] and state.tile_status.any()
    breaker, message = BREAKERS[name]
    breaker(state)
    with pytest.raises(AssertionError, match=message):
        state.check_invariants()


def test_invariants_hold_in_every_phase_of_random_games():
    for options in ({}, {"placement": "alternate", "chain_rush_orders": False}):
        game = make_game(**options)
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


def test_only_secret_placement_is_hidden_state():
    assert make_game().has_hidden_state
    assert not make_game(placement="alternate").has_hidden_state
    assert not make_game(placement="random", opponent_crates="visible").has_hidden_state


def test_resample_redraws_the_secret_arrangement_and_keeps_everything_known():
    game = make_game()
    state = game.new_initial_state(np.random.default_rng(3))
    rng = np.random.default_rng(3)
    state.apply({RED: PLACE + 0 * 6 + PREMIUM, BLUE: PLACE + 4 * 6 + RUSH})
    state.apply({RED: PLACE + 7 * 6 + MALFUNCTION, BLUE: PLACE + 5 * 6 + RUSH})
    _place_steps(state, rng, 3)  # five tiles each
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
def test_resample_after_placement_changes_nothing_but_the_future(options):
    """Every grab, flip and activation is public (buried trays too: a careful player
    remembers each grab), so the sample is the same position with its own RNG."""
    state = mid_game(seed=4, decisions=30, **options)
    sample = state.resample(BLUE, np.random.default_rng(0))
    assert sample.position() == state.position()
    assert sample.rng is not state.rng
    assert sample.rng.integers(2**62) != state.clone().rng.integers(2**62)
    if options:  # alternate placement in the open: nothing is hidden even during placement
        start = make_game(**options).new_initial_state(np.random.default_rng(1))
        assert start.resample(RED, np.random.default_rng(2)).position() == start.position()


@pytest.mark.parametrize("steps", [5, 25])  # during the secret placement, and after it
def test_clone_is_independent_and_plays_on_identically(steps):
    state = mid_game(seed=5, decisions=steps)
    twin = state.clone()
    assert twin.position() == state.position() and twin.game is state.game
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    random_game(twin, rng_a)
    assert twin.position() != state.position()  # playing the copy left the original alone
    state.check_invariants()  # including what the rules keep in step with the position
    assert state.position() == mid_game(seed=5, decisions=steps).position()
    random_game(state, rng_b)
    assert twin.position() == state.position()


# --- the fast encoder agrees with the plain one -------------------------------------------
def plain_observation(state: PickAndPackState, player: int) -> np.ndarray:
    """The observation written field by field from the docstring's table, the slow way."""
    game = state.game
    flat = game.observation_layout.zeros()
    v = game.observation_layout.views(flat)
    for r in range(SIZE):
        for c in range(SIZE):
            i, j = (r, c) if player == RED else (c, r)
            v["face_down"][i, j] = state.face_down[r, c]
            v["trays"][i, j] = 0 if state.face_down[r, c] else state.apples[r, c]
            v["grabber"][i, j] = (r, c) == state.grabber
    hidden = state.phase == PLACING and game.simultaneous
    for row, seat in enumerate((player, 1 - player)):
        placed = 0
        for space in range(12):
            kind = state.tile_type[seat, space]
            placed += kind >= 0
            if kind >= 0 and not (hidden and seat != player):
                v["tile_type"][row, space, kind] = 1
                v["tile_state"][row, space, state.tile_status[seat, space]] = 1
        v["tiles_placed"][row] = placed
        shown = seat == player or game.full_crates
        for k, stack in enumerate(state.crates[seat]):
            v["crate_count"][row, k] = len(stack)
            v["crate_top"][row, k] = stack[-1] if stack else 0
            if shown:
                v["crate_stack"][row, k, : len(stack)] = stack
            if state.closure[seat][k]:
                v["crate_closure"][row, k, state.closure[seat][k] - 1] = 1
        v["rush_orders"][row] = state.rush_ready[seat], state.rush_new[seat]
        if shown:
            v["scores"][row] = sum(
                crate_value(sum(s), c)
                for s, c in zip(state.crates[seat], state.closure[seat], strict=True)
            )
    if len(state.to_act()) == 1:
        v["to_act"][0 if state.to_act()[0] == player else 1] = 1
    if state.phase != OVER:
        v["phase"][state.phase] = 1
    v["holding"][0] = state.holding
    if state.mixup_crate >= 0:
        v["mixup_crate"][state.mixup_crate] = 1
    v["color"][player] = 1
    return flat


@pytest.mark.parametrize(
    "config",
    [*SPEC.configurations, {"targetless_actions": "unplayable", "chain_rush_orders": False}],
)
def test_fast_encoding_matches_the_plain_one_through_whole_games(config):
    """The gather from the state's view, and the fields written after it, against the plain
    encoder, at every state of whole random games (clones and determinisations too), for
    both observers; the core's ``encode`` path gives the same vector."""
    game = SPEC.make_game(**config)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(rng)
        while True:
            others = (state.clone(), state.resample(RED, rng), state.resample(BLUE, rng))
            for player in (RED, BLUE):
                fast = game.observation(state, player)
                assert fast.dtype == np.float32
                assert np.array_equal(fast, plain_observation(state, player))
                assert np.array_equal(Game.observation(game, state, player), fast)
                for other in others:
                    assert np.array_equal(
                        game.observation(other, player), plain_observation(other, player)
                    )
            if state.is_terminal():
                break
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})


@pytest.mark.parametrize("options", [{}, {"placement": "random", "opponent_crates": "full"}])
def test_view_kept_move_by_move_is_the_one_computed_afresh(options):
    """The rules write each change into ``view``: it equals a recomputation from scratch
    after every step, and a clone's view is its own."""
    game = make_game(**options)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(rng)
        while not state.is_terminal():
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
            assert np.array_equal(state.view, observation.fresh_view(state))
        twin = state.clone()
        twin.view[:] = 7
        assert np.array_equal(state.view, observation.fresh_view(state))


def test_observation_is_a_new_array_each_time():
    state = mid_game()
    first = state.game.observation(state, RED)
    first[:] = -1
    assert np.array_equal(state.game.observation(state, RED), plain_observation(state, RED))
