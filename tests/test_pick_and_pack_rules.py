"""Pick & Pack's rules on scripted positions and the rulebook's examples: options, moving
the grabber, the tiles, the end and scoring, placement."""

from __future__ import annotations

import numpy as np
import pytest

from envs.pick_and_pack.rules import (
    BLUE,
    CHOOSE_END,
    END,
    FLIPPED,
    MALFUNCTION,
    MALFUNCTION_TARGET,
    MIXUP_OPPONENT,
    MIXUP_OWN,
    MOVE,
    MOVING,
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
    WHOLESALE_CLOSED,
    WHOLESALE_TARGET,
    PickAndPackState,
    crate_value,
)


def legal(state: PickAndPackState, player: int | None = None) -> list[int]:
    return state.legal_actions(state.player if player is None else player)


def moves(state: PickAndPackState) -> list[int]:
    return [a - MOVE for a in legal(state)]


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
def test_bad_options_raise_naming_what_is_allowed(pick_and_pack, options):
    with pytest.raises(ValueError, match="allowed"):
        pick_and_pack.make_game(**options)


def test_tray_counts_option_sets_the_grid_and_grabber_starts_on_the_6(pick_and_pack):
    for counts in [(7, 7, 7, 7, 7, 1), (0, 0, 0, 0, 35, 1)]:
        for seed in range(5):
            game = pick_and_pack.make_game(tray_counts=counts)
            state = game.new_initial_state(np.random.default_rng(seed))
            values = np.bincount(state.apples.ravel(), minlength=7)[1:]
            assert values.tolist() == list(counts)
            assert state.apples[state.grabber] == 6


def test_first_player_is_drawn_at_random_and_same_seed_same_deal(pick_and_pack):
    game = pick_and_pack.make_game(placement="random")
    deals = [game.new_initial_state(np.random.default_rng(s)) for s in range(20)]
    assert {d.first_player for d in deals} == {0, 1}
    again = game.new_initial_state(np.random.default_rng(7))
    assert np.array_equal(again.apples, deals[7].apples)
    assert np.array_equal(again.tile_type, deals[7].tile_type)
    assert again.first_player == deals[7].first_player
    assert not np.array_equal(deals[0].apples, deals[1].apples)


# --- moving the grabber -------------------------------------------------------------------


def test_red_moves_along_its_row_and_blue_along_its_column(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    assert moves(state) == [0, 1, 2, 4, 5]
    pick_and_pack.act(state, MOVE + 0)
    assert state.grabber == (2, 0)
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    assert moves(state) == [0, 1, 3, 4, 5]
    pick_and_pack.act(state, MOVE + 5)
    assert state.grabber == (5, 3)


def test_empty_space_needs_an_unplayed_tile_at_an_end_of_that_line(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0  # empty: red needs a tile at the top or bottom of column 0
    pick_and_pack.use_line(state, RED, 0)
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
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[4, 3] = 0
    pick_and_pack.use_line(state, BLUE, 4)
    state.refresh()
    assert 4 not in moves(state)
    state.tile_status[BLUE, 4] = UNPLAYED  # left end of row 4
    state.refresh()
    assert 4 in moves(state)


def test_no_move_onto_a_face_down_tray_even_with_tiles(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.face_down[2, 1] = True
    state.refresh()
    assert 1 not in moves(state)
    assert state.tile_status[RED, 1] == UNPLAYED  # tiles at column 1 do not help


def test_grab_goes_to_the_open_crate_with_fewest_trays_with_a_choice_on_ties(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 5
    pick_and_pack.fill(state, RED, [[1, 1], [2], [3, 3], [4]])
    pick_and_pack.act(state, MOVE + 0)
    assert state.grabber == (2, 0) and state.apples[2, 0] == 0  # pawn left on the empty space
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + 1, OWN_CRATE + 3]
    pick_and_pack.act(state, OWN_CRATE + 3)
    assert state.crates[RED] == [[1, 1], [2], [3, 3], [4, 5]]
    assert state.player == BLUE and state.phase == MOVING
    # A single fewest crate takes it without asking; a closed crate takes nothing.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 4
    pick_and_pack.fill(state, RED, [[1], [], [2], [3]])
    state.closure[RED][1] = PREMIUM_CLOSED
    state.refresh()
    pick_and_pack.act(state, MOVE + 0)
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + k for k in (0, 2, 3)]
    state.closure[RED][2] = PREMIUM_CLOSED
    state.closure[RED][3] = WHOLESALE_CLOSED
    state.refresh()
    assert legal(state) == [OWN_CRATE + 0]


def test_grab_with_a_unique_fewest_crate_is_not_asked(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 5] = 6
    pick_and_pack.fill(state, RED, [[1], [1], [], [1]])
    pick_and_pack.act(state, MOVE + 5)
    assert state.crates[RED][2] == [6] and state.player == BLUE


# --- activating tiles ---------------------------------------------------------------------


def test_choice_of_end_only_when_the_two_tiles_differ(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = [RUSH, QUALITY]
    state.refresh()
    pick_and_pack.act(state, MOVE + 0)
    assert state.phase == CHOOSE_END and legal(state) == [END + 0, END + 1]
    pick_and_pack.act(state, END + 0)
    assert state.tile_status[RED, 0] == USED and state.tile_status[RED, SIZE] == UNPLAYED
    assert state.rush_ready[RED] == 1 and state.player == BLUE
    # Same type at both ends: activated without asking.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 2] = 0  # column 2: Rush Order at both ends
    state.refresh()
    pick_and_pack.act(state, MOVE + 2)
    assert state.player == BLUE and state.rush_ready[RED] == 1
    assert sorted(state.tile_status[RED, [2, SIZE + 2]].tolist()) == [UNPLAYED, USED]


def test_premium_closes_a_chosen_own_crate_and_doubles_it(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0  # column 0: Premium
    pick_and_pack.fill(state, RED, [[5, 4], [3], [2], [1]])
    pick_and_pack.act(state, MOVE + 0)
    assert state.phase == PREMIUM_TARGET and legal(state) == [OWN_CRATE + k for k in range(4)]
    pick_and_pack.act(state, OWN_CRATE + 0)
    assert state.closure[RED][0] == PREMIUM_CLOSED and state.closure[BLUE] == [OPEN] * 4
    assert state.scores()[RED] == 2 * 9 + 3 + 2 + 1
    # A closed crate is no Premium target.
    state.player, state.phase = RED, MOVING
    state.grabber, state.apples[2, 1] = (2, 3), 0
    state.tile_type[RED, [1, SIZE + 1]] = PREMIUM
    state.refresh()
    pick_and_pack.act(state, MOVE + 1)
    assert legal(state) == [OWN_CRATE + k for k in (1, 2, 3)]


def test_wholesale_closes_a_chosen_opponent_crate_and_halves_it_rounded_down(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[1, 3] = 0  # row 1: Wholesale for blue
    pick_and_pack.fill(state, RED, [[5, 6], [3], [2], [1]])
    state.closure[RED][3] = PREMIUM_CLOSED
    state.refresh()
    pick_and_pack.act(state, MOVE + 1)
    assert state.phase == WHOLESALE_TARGET and legal(state) == [OPP_CRATE + k for k in (0, 1, 2)]
    pick_and_pack.act(state, OPP_CRATE + 0)
    assert state.closure[RED][0] == WHOLESALE_CLOSED
    assert state.scores()[RED] == 11 // 2 + 3 + 2 + 2 * 1


def test_rush_order_gives_exactly_one_extra_move_per_tile_from_the_next_turn(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 2] = 0  # column 2: Rush Orders
    state.refresh()
    pick_and_pack.move(state, 2)
    # Kept, not usable in the turn it was taken: the turn passes.
    assert state.player == BLUE and state.rush_ready[RED] == 1
    pick_and_pack.move(state, 0)  # blue grabs (0, 2)
    pick_and_pack.move(state, 5)  # red grabs (0, 5)
    assert state.phase == RUSH_CHOICE and legal(state) == [RUSH_USE, RUSH_DECLINE]
    pick_and_pack.act(state, RUSH_USE)
    assert state.player == RED and state.phase == MOVING and state.rush_ready[RED] == 0
    pick_and_pack.move(state, 4)  # the extra move; no Rush Order left, so the turn passes
    assert state.player == BLUE and state.phase == MOVING
    assert sum(len(c) for c in state.crates[RED]) == 2


def test_rush_orders_chain_and_decline_keeps_them(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 2
    state.refresh()
    pick_and_pack.move(state, 0)
    pick_and_pack.act(state, RUSH_DECLINE)
    assert state.player == BLUE and state.rush_ready[RED] == 2
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 2
    state.refresh()
    pick_and_pack.move(state, 0)
    pick_and_pack.act(state, RUSH_USE)
    pick_and_pack.move(state, 1)
    assert state.phase == RUSH_CHOICE  # the second one may follow
    pick_and_pack.act(state, RUSH_USE)
    pick_and_pack.move(state, 2)
    assert state.player == BLUE and sum(len(c) for c in state.crates[RED]) == 3
    # chain_rush_orders=False: one per turn.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED, chain_rush_orders=False)
    state.rush_ready[RED] = 2
    state.refresh()
    pick_and_pack.move(state, 0)
    pick_and_pack.act(state, RUSH_USE)
    pick_and_pack.move(state, 1)
    assert state.player == BLUE and state.rush_ready[RED] == 1


def test_rush_order_not_offered_without_a_possible_extra_move(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.rush_ready[RED] = 1
    state.apples[2, :] = 0
    state.apples[2, 0] = 3
    for line in range(SIZE):
        pick_and_pack.use_line(state, RED, line)
    state.refresh()
    pick_and_pack.move(state, 0)
    assert state.player == BLUE and state.rush_ready[RED] == 1


def test_quality_control_steals_a_top_tray_into_the_fewest_crate(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 0), player=RED)
    state.apples[2, 3] = 0  # column 3: Quality Control
    pick_and_pack.fill(state, BLUE, [[1, 6], [], [4], [2]])
    state.closure[BLUE][3] = WHOLESALE_CLOSED
    pick_and_pack.fill(state, RED, [[1], [], [], [1]])
    pick_and_pack.act(state, MOVE + 3)
    assert state.phase == QUALITY_SOURCE and legal(state) == [OPP_CRATE + 0, OPP_CRATE + 2]
    pick_and_pack.act(state, OPP_CRATE + 0)
    assert state.crates[BLUE][0] == [1]
    assert state.phase == PLACE_TRAY and legal(state) == [OWN_CRATE + 1, OWN_CRATE + 2]
    pick_and_pack.act(state, OWN_CRATE + 2)
    assert state.crates[RED] == [[1], [], [6], [1]] and state.player == BLUE


def test_order_mix_up_swaps_two_top_trays(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 4] = 0  # column 4: Order Mix-up
    pick_and_pack.fill(state, BLUE, [[1, 6], [], [4], [5]])
    state.closure[BLUE][3] = PREMIUM_CLOSED
    pick_and_pack.fill(state, RED, [[2, 1], [3], [], [1]])
    pick_and_pack.act(state, MOVE + 4)
    assert state.phase == MIXUP_OPPONENT and legal(state) == [OPP_CRATE + 0, OPP_CRATE + 2]
    pick_and_pack.act(state, OPP_CRATE + 0)
    assert state.phase == MIXUP_OWN and legal(state) == [OWN_CRATE + k for k in (0, 1, 3)]
    pick_and_pack.act(state, OWN_CRATE + 0)
    assert state.crates[BLUE][0] == [1, 1] and state.crates[RED][0] == [2, 6]
    assert state.player == BLUE


def test_malfunction_flips_a_grid_tray_or_an_opponent_tile(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 5] = 0  # column 5: Malfunction
    state.refresh()
    pick_and_pack.act(state, MOVE + 5)
    assert state.phase == MALFUNCTION_TARGET
    choices = legal(state)
    assert len(choices) == 34 + 12  # face-up trays (36 less the two empty cells) and tiles
    pick_and_pack.act(state, TRAY + 4 * SIZE + 1)
    assert state.face_down[4, 1] and state.tile_status[RED, 5] == USED
    assert state.player == BLUE
    pick_and_pack.act(state, MOVE + 4)  # blue moves along column 5 to row 4 (a tray)
    state.player, state.phase = BLUE, MOVING
    state.grabber = (0, 1)
    state.refresh()
    assert 4 not in moves(state)  # the face-down tray (4, 1) is no target
    # Blue's Malfunction on one of red's tiles (blue's frame is transposed: action names
    # a tray by (column, row)).
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[5, 3] = 0  # row 5: Malfunction for blue
    state.refresh()
    pick_and_pack.act(state, MOVE + 5)
    pick_and_pack.act(state, TILE + SIZE + 0)  # red's bottom tile of column 0 (a Premium)
    assert state.tile_status[RED, SIZE] == FLIPPED
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[5, 3] = 0
    state.refresh()
    pick_and_pack.act(state, MOVE + 5)
    pick_and_pack.act(state, TRAY + 1 * SIZE + 4)  # blue's frame (col 1, row 4) = grid (4, 1)
    assert state.face_down[4, 1]


def test_an_action_with_no_valid_target_is_spent(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = QUALITY  # opponent crates are all empty
    state.refresh()
    before = [list(c) for p in (0, 1) for c in state.crates[p]]
    pick_and_pack.act(state, MOVE + 0)
    assert state.player == BLUE
    assert sorted(state.tile_status[RED, [0, SIZE]].tolist()) == [UNPLAYED, USED]
    assert [list(c) for p in (0, 1) for c in state.crates[p]] == before
    # Order Mix-up needs a top tray on both sides.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 4] = 0
    pick_and_pack.fill(state, BLUE, [[3], [], [], []])
    pick_and_pack.act(state, MOVE + 4)
    assert state.player == BLUE and state.crates[BLUE][0] == [3]
    # targetless_actions="unplayable": the tile cannot be activated, so no target there.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED, targetless_actions="unplayable")
    state.apples[2, 0] = 0
    state.tile_type[RED, [0, SIZE]] = QUALITY
    state.refresh()
    assert 0 not in moves(state)
    pick_and_pack.fill(state, BLUE, [[3], [], [], []])
    assert 0 in moves(state)


# --- end and scoring ----------------------------------------------------------------------


def test_game_ends_at_once_when_a_player_has_all_four_crates_closed(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=BLUE)
    state.apples[1, 3] = 0  # blue's row 1: Wholesale
    state.closure[RED][:3] = [PREMIUM_CLOSED] * 3
    state.rush_ready[BLUE] = 1  # no extra move follows the end
    pick_and_pack.fill(state, RED, [[1], [2], [3], [5]])
    pick_and_pack.act(state, MOVE + 1)  # red's last open crate is the only target: not asked
    assert state.closure[RED][3] == WHOLESALE_CLOSED
    assert state.is_terminal() and state.phase == OVER and state.to_act() == ()
    assert state.scores()[RED] == 2 * (1 + 2 + 3) + 5 // 2
    # Closing one's own last crate with a Premium ends it too.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 0
    state.closure[RED][1:] = [WHOLESALE_CLOSED] * 3
    state.refresh()
    pick_and_pack.act(state, MOVE + 0)
    assert state.is_terminal()


def test_game_ends_when_the_player_to_move_has_no_legal_move(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[:, 0] = 0  # blue's column after red's move holds nothing blue can reach
    state.apples[2, :] = 0
    state.apples[2, 0] = 2
    for line in range(SIZE):
        pick_and_pack.use_line(state, BLUE, line)
    state.refresh()
    pick_and_pack.move(state, 0)
    assert state.is_terminal() and state.scores()[RED] == 2
    # Face-down trays do not save the player either.
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    state.apples[2, 0] = 2
    state.face_down[:, 0] = True
    state.face_down[2, 0] = False
    for line in range(SIZE):
        pick_and_pack.use_line(state, BLUE, line)
    state.refresh()
    pick_and_pack.move(state, 0)
    assert state.is_terminal()


@pytest.mark.parametrize(
    "apples, closure, points",
    [(9, OPEN, 9), (9, PREMIUM_CLOSED, 18), (11, WHOLESALE_CLOSED, 5), (10, WHOLESALE_CLOSED, 5)],
)
def test_crate_scoring(pick_and_pack, apples, closure, points):
    assert crate_value(apples, closure) == points
    state = pick_and_pack.scripted()
    pick_and_pack.fill(state, BLUE, [[apples - 3, 3], [], [], []])
    state.closure[BLUE][0] = closure
    state.refresh()
    assert state.scores().tolist() == [0, points]


def test_rulebook_example_blues_score(pick_and_pack):
    """Two Premium crates doubled, a Wholesale crate of 11 apples worth just 5, one open."""
    state = pick_and_pack.scripted()
    pick_and_pack.fill(state, BLUE, [[6, 4, 3], [5, 2], [4, 4, 3], [2, 1, 1]])
    state.closure[BLUE] = [PREMIUM_CLOSED, PREMIUM_CLOSED, WHOLESALE_CLOSED, OPEN]
    state.refresh()
    assert state.scores()[BLUE] == 2 * 13 + 2 * 7 + 5 + 4


def test_rulebook_example_blue_may_reach_two_trays_and_one_empty_space(pick_and_pack):
    """Blue's column holds a 3, a 1, one empty space whose row ends hold Quality Control
    and Malfunction, and two empty spaces whose rows have no playable tiles (the X's)."""
    state = pick_and_pack.scripted(grabber=(0, 2), player=BLUE)
    state.apples[:, 2] = [0, 3, 0, 1, 0, 0]
    state.tile_type[BLUE, [2, SIZE + 2]] = [QUALITY, MALFUNCTION]
    pick_and_pack.use_line(state, BLUE, 4)
    state.tile_status[BLUE, 5] = USED
    state.tile_status[BLUE, SIZE + 5] = FLIPPED
    state.refresh()
    assert moves(state) == [1, 2, 3]
    pick_and_pack.fill(state, RED, [[4], [], [], []])
    pick_and_pack.act(state, MOVE + 2)
    assert state.phase == CHOOSE_END and legal(state) == [END + 0, END + 1]


def test_rulebook_example_red_grabs_the_5_then_malfunctions_a_wholesale(pick_and_pack):
    state = pick_and_pack.scripted(grabber=(2, 3), player=RED)
    assert len(moves(state)) == 5  # any of the five other spaces of its row
    state.apples[2, 1] = 5
    pick_and_pack.fill(state, RED, [[2], [], [3], [1]])
    pick_and_pack.act(state, MOVE + 1)
    assert state.grabber == (2, 1) and state.apples[2, 1] == 0 and state.crates[RED][1] == [5]
    state.player, state.phase = RED, MOVING
    state.apples[2, 5] = 0  # column 5: Malfunction
    state.refresh()
    pick_and_pack.act(state, MOVE + 5)
    pick_and_pack.act(state, TILE + SIZE + 1)  # blue's right-end Wholesale on row 1
    assert state.tile_status[BLUE, SIZE + 1] == FLIPPED and state.tile_status[RED, 5] == USED


def test_every_game_ends_within_sixty_moves_and_max_decisions(pick_and_pack):
    for placement, bound in (("simultaneous", 250), ("alternate", 250), ("random", 228)):
        game = pick_and_pack.make_game(placement=placement)
        assert game.max_decisions == bound  # 22 placement decisions, 36 * 3 + 24 * 5 after
        for seed in range(30):
            rng = np.random.default_rng(seed)
            moves_made, decisions = pick_and_pack.random_game(game.new_initial_state(rng), rng)
            assert 0 < moves_made <= 60 and decisions <= game.max_decisions


# --- placement ----------------------------------------------------------------------------


def test_simultaneous_placement_takes_eleven_joint_steps_and_places_all_tiles(pick_and_pack):
    state = pick_and_pack.make_game().new_initial_state(np.random.default_rng(0))
    assert state.phase == PLACING and state.to_act() == (RED, BLUE)
    mask = state.legal_mask(RED)
    assert mask[PLACE : PLACE + 72].all() and not mask[72:].any()
    state.apply({RED: PLACE + 0 * 6 + PREMIUM, BLUE: PLACE + 0 * 6 + PREMIUM})
    state.apply({RED: PLACE + 1 * 6 + PREMIUM, BLUE: PLACE + 3 * 6 + RUSH})
    mask = state.legal_mask(RED)
    assert not mask[PLACE + 2 * 6 + PREMIUM]  # both Premiums placed
    assert not mask[PLACE + 0 * 6 + RUSH]  # space 0 taken
    assert mask[PLACE + 2 * 6 + RUSH]
    pick_and_pack.place_steps(state, np.random.default_rng(1), 9)
    assert state.phase == MOVING and state.player == state.first_player
    for p in (RED, BLUE):
        assert sorted(state.tile_type[p].tolist()) == sorted(pick_and_pack.STANDARD_TILES.tolist())
    assert state.tile_type[RED, :2].tolist() == [PREMIUM, PREMIUM]


def test_simultaneous_placement_is_hidden_until_both_are_done(pick_and_pack):
    game = pick_and_pack.make_game()
    state = game.new_initial_state(np.random.default_rng(3))
    pick_and_pack.place_steps(state, np.random.default_rng(3), 6)
    other = state.clone()
    other.tile_type[BLUE] = np.roll(other.tile_type[BLUE], 1)  # blue arranged differently
    other.refresh()
    assert not np.array_equal(other.tile_type[BLUE], state.tile_type[BLUE])
    assert np.array_equal(game.observation(state, RED), game.observation(other, RED))
    assert str(state) == str(other)
    assert not np.array_equal(game.observation(state, BLUE), game.observation(other, BLUE))
    assert "P" not in str(state).split("\n", 1)[1].split("red crates")[0]
    # Once both are done, the arrangements are revealed.
    pick_and_pack.place_steps(state, np.random.default_rng(4), 5)
    views = game.observation_layout.views(game.observation(state, RED))
    assert views["tile_type"][1].sum() == 12
    assert views["tile_type"][1].argmax(axis=1).tolist() == state.tile_type[BLUE].tolist()


def test_alternate_placement_takes_turns_in_the_open(pick_and_pack):
    game = pick_and_pack.make_game(placement="alternate")
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


def test_random_placement_deals_both_rows(pick_and_pack):
    state = pick_and_pack.make_game(placement="random").new_initial_state(np.random.default_rng(0))
    assert state.phase == MOVING
    for p in (RED, BLUE):
        assert sorted(state.tile_type[p].tolist()) == sorted(pick_and_pack.STANDARD_TILES.tolist())
