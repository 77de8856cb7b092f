"""Pico rules, one test per rule in RULES.md, on scripted deals."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from envs.core.game import Game, IllegalActionError
from envs.pico.observation import last_reveal
from envs.pico.rules import (
    DEFAULT_POINTS,
    NUM_CARDS,
    VALUES,
    PicoGame,
    PicoState,
    card_winners,
    winners,
)
from training.agents.pico import PicoHeuristic
from training.tournament import seat_rotated


def card(value: int) -> int:
    return VALUES.index(value)


def hand(*values: int) -> np.ndarray:
    return np.bincount([card(v) for v in values], minlength=NUM_CARDS)


def scripted(*dealt: tuple[int, ...], aside: tuple[int, ...] = (), **options) -> PicoState:
    """A state whose dealt sets are ``dealt[d]`` for seat ``d``."""
    game = PicoGame.from_options(num_players=len(dealt), **options)
    state = game.new_initial_state(np.random.default_rng(0))
    state._deal(np.stack([hand(*d) for d in dealt]), hand(*aside))
    return state


def play(state: PicoState, *values: int) -> None:
    state.apply({p: card(v) for p, v in enumerate(values)})


@pytest.mark.parametrize(
    "cards, winner",
    [((10, 5), 0), ((4, 10), 0), ((16, 8), 0), ((7, 16), 0), ((5, 10), 1), ((10, 4), 1)],
)
def test_two_player_beats(cards, winner):
    """Higher wins unless more than twice the lower: 10 beats 5, 4 beats 10, 16 beats 8,
    7 beats 16 (and exactly twice still wins for the higher)."""
    assert winners(cards) == [winner]


def test_exactly_twice_goes_to_the_higher():
    assert winners((8, 4)) == [0]
    assert winners((4, 9)) == [0]


def test_three_player_pair_wins_together():
    assert winners((7, 13, 7)) == [0, 2]
    assert winners((16, 4, 4)) == [1, 2]


@pytest.mark.parametrize(
    "cards, expected",
    [
        ((16, 5, 6), [1]),  # 16 > 5 + 6: the lowest wins
        ((10, 4, 5), [1]),  # 10 > 9: the lowest wins
        ((9, 4, 5), [0]),  # 9 == 4 + 5: the highest wins [decision]
        ((8, 4, 5), [0]),  # 8 < 9: the highest wins
        ((3, 13, 10), [1]),  # 13 == 3 + 10: the highest wins
    ],
)
def test_three_player_sum_rule(cards, expected):
    assert winners(cards) == expected


def test_winning_card_scores_and_losing_card_returns_to_hand():
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    play(state, 10, 6)  # 10 beats 6
    assert state.hands[0].tolist() == hand(2, 5, 8, 16).tolist()
    assert state.won[0].tolist() == hand(10).tolist()
    assert state.hands[1].tolist() == hand(3, 4, 6, 7, 9).tolist()  # 6 came back
    assert state.scores().tolist() == [DEFAULT_POINTS[10], 0]
    assert not state.legal_mask(0)[card(10)]
    assert state.legal_mask(1)[card(6)]


def test_only_cards_in_hand_are_legal_and_illegal_play_changes_nothing():
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    assert state.legal_actions(0) == [card(v) for v in (2, 5, 8, 10, 16)]
    before = state.clone()
    with pytest.raises(IllegalActionError, match="legal actions"):
        play(state, 3, 4)
    assert np.array_equal(state.hands, before.hands) and state.round == before.round


def test_round_ends_when_a_player_has_one_card_then_hands_swap():
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    for a, b in [(10, 6), (8, 7), (16, 9), (5, 4)]:
        assert state.round == 0
        play(state, a, b)
    # 10>6, 8>7, 9 beats 16 (16 > 18? no: 16 < 18, so 16 wins), 5 beats 4: seat 0 holds one card.
    assert state.round == 1
    # Second round: the players swap their original five cards; won cards are back in them.
    assert state.hands[0].tolist() == hand(3, 4, 6, 7, 9).tolist()
    assert state.hands[1].tolist() == hand(2, 5, 8, 10, 16).tolist()
    assert state.won.sum() == 0
    assert state.scores().tolist() == [3 + 3 + 4 + 2, 0]


def test_game_ends_after_two_rounds_and_higher_total_wins():
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    for a, b in [(10, 6), (8, 7), (16, 9), (5, 4)]:
        play(state, a, b)
    # Round 2: seat 0 holds 3 4 6 7 9; seat 1 holds 2 5 8 10 16.
    # 3 beats 16 (16 > 6); 4 beats 10 (10 > 8); 2 beats 9 (9 > 4); 8 beats 7; 6 beats 5;
    # 10 beats 7; 16 beats 9, leaving seat 1 with one card.
    plays = [(3, 16), (4, 10), (9, 2), (7, 8), (6, 5), (7, 10), (9, 16)]
    for a, b in plays:
        assert not state.is_terminal()
        play(state, a, b)
    assert state.is_terminal() and state.to_act() == ()
    assert state.scores().tolist() == [12 + 1 + 1 + 2, 1 + 3 + 3 + 4]


def test_round_ends_the_moment_a_player_holds_one_card():
    state = scripted((2, 3, 4, 5, 6), (7, 8, 9, 10, 13), aside=(16,))
    # Seat 1 wins four times (the higher card, never more than twice the lower).
    for a, b in [(6, 7), (5, 8), (5, 9)]:
        play(state, a, b)
        assert state.round == 0
    assert state.hands.sum(axis=1).tolist() == [5, 2]
    play(state, 6, 10)
    assert state.round == 1  # seat 1 holds only the 13: the round is over at once
    assert state.scores().tolist() == [0, 2 + 3 + 3 + 3]


def test_three_players_deal_pass_left_then_right():
    game = PicoGame.from_options(num_players=3)
    state = game.new_initial_state(np.random.default_rng(7))
    deck = state.sets.sum(axis=0) + state.aside
    # Two sets without both 2s and one 3: 19 cards.
    assert deck[card(2)] == 0 and deck[card(3)] == 1 and deck.sum() == 19
    assert (deck[card(4) :] == 2).all()
    assert state.sets.sum(axis=1).tolist() == [6, 6, 6] and state.aside.sum() == 1
    # Round 1: each passed the dealt hand to the left, so seat p holds the set dealt to p-1.
    for p in range(3):
        assert state.hands[p].tolist() == state.sets[(p - 1) % 3].tolist()
    assert [state.set_held_by(p, 1) for p in range(3)] == [0, 1, 2]  # passed right
    assert [state.set_held_by(p, 2) for p in range(3)] == [1, 2, 0]  # right again


def test_three_players_play_three_rounds():
    state = PicoGame.from_options(num_players=3).new_initial_state(np.random.default_rng(1))
    rng = np.random.default_rng(1)
    rounds_seen = set()
    while not state.is_terminal():
        rounds_seen.add(state.round)
        held = [state.hands[p].tolist() for p in range(3)]
        expected = [state.sets[state.set_held_by(p)].tolist() for p in range(3)]
        if state.won.sum() == 0:
            assert held == expected
        state.apply({p: int(rng.choice(state.legal_actions(p))) for p in range(3)})
    assert rounds_seen == {0, 1, 2}


def test_three_player_pair_both_score():
    state = scripted((7, 4, 5, 6, 8, 9), (7, 10, 13, 16, 4, 5), (3, 6, 8, 9, 10, 13), aside=(16,))
    # Round 1: seat p holds the set dealt to p - 1.
    play(state, 13, 7, 7)  # seat 1 holds set 0 (has a 7), seat 2 holds set 1 (has a 7)
    assert state.last_winners.tolist() == [False, True, True]
    assert state.scores().tolist() == [0, 2, 2]


def test_points_option_changes_the_table_and_is_validated():
    points = dict(DEFAULT_POINTS) | {10: 9}
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,), points=points)
    play(state, 10, 6)
    assert state.scores().tolist() == [9, 0]
    with pytest.raises(ValueError, match="points"):
        PicoGame.from_options(points={2: 1})
    with pytest.raises(ValueError, match="allowed"):
        PicoGame.from_options(num_players=4)


def test_observation_shows_hands_won_cards_and_last_reveal_from_own_seat():
    state = scripted((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    play(state, 10, 6)
    game = state.game
    views = game.observation_layout.views(game.observation(state, 1))
    assert views["hand"][0].tolist() == hand(3, 4, 6, 7, 9).tolist()  # own seat first
    assert views["hand"][1].tolist() == hand(2, 5, 8, 16).tolist()
    assert views["won"][1].tolist() == hand(10).tolist()
    assert views["aside"].tolist() == hand(13).tolist()
    assert views["last_played"][0, card(6)] == 1 and views["last_played"][1, card(10)] == 1
    assert views["last_winners"].tolist() == [0, 1]
    assert views["scores"].tolist() == [0, 3]
    assert views["round"].tolist() == [1, 0, 0]


def test_heuristic_beats_random():
    for n in (2, 3):
        game = PicoGame.from_options(num_players=n)
        lineup = [("heuristic", PicoHeuristic(game))] + [("random", RandomAgent(game))] * (n - 1)
        records = seat_rotated(game, lineup, num_games=150, seed=0)
        assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores)


def test_registered_ids_and_make():
    assert "hiddenhand/pico-v0" in envs.ids()
    assert "hiddenhand/Pico-v0" in envs.gym_ids()
    env = envs.make("hiddenhand/pico-v0", num_players=3)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    gym_env = envs.make("hiddenhand/Pico-v0", opponent="heuristic")
    obs, info = gym_env.reset(seed=0)
    assert obs.shape == gym_env.observation_space.shape


# --- the fast bookkeeping against plain recomputations ---------------------------------


def recompute(game: PicoGame, sets: np.ndarray, history: list[dict[int, int]]) -> dict:
    """Everything public about a game, replayed plainly from the deal and the joint actions."""
    n = game.num_players
    rounds = {2: 2, 3: 3}[n]
    points = [game.config.points[v] for v in VALUES]

    def dealt_hands(round_: int) -> list[list[int]]:
        # Two players swap sets each round; three pass left before round 1, then right.
        shift = 0 if n == 2 else -1
        return [list(sets[(p + shift + round_) % n]) for p in range(n)]

    hands, won = dealt_hands(0), [[0] * NUM_CARDS for _ in range(n)]
    scores, last_played, last_winners, round_ = [0] * n, None, [0] * n, 0
    for joint in history:
        played = [joint[p] for p in range(n)]
        seats = winners([VALUES[c] for c in played])
        last_played, last_winners = played, [int(p in seats) for p in range(n)]
        for p in seats:
            hands[p][played[p]] -= 1
            won[p][played[p]] += 1
            scores[p] += points[played[p]]
        if any(sum(h) == 1 for h in hands):
            round_ += 1
            if round_ < rounds:
                hands, won = dealt_hands(round_), [[0] * NUM_CARDS for _ in range(n)]
    return {
        "hands": hands,
        "won": won,
        "scores": scores,
        "last_played": last_played,
        "last_winners": last_winners,
        "round": round_,
        "terminal": round_ >= rounds,
    }


def reference_observation(plain: dict, aside: list[int], player: int, n: int) -> np.ndarray:
    """The observation written field by field from the layout's descriptions, in the
    observer's seat order (own seat first, then going left)."""
    seats = [(player + k) % n for k in range(n)]
    obs: list[float] = []
    for s in seats:  # hand
        obs += plain["hands"][s]
    for s in seats:  # won
        obs += plain["won"][s]
    obs += aside  # aside
    for s in seats:  # last_played: one-hot, zeros before any reveal
        row = [0] * NUM_CARDS
        if plain["last_played"] is not None:
            row[plain["last_played"][s]] = 1
        obs += row
    obs += [plain["last_winners"][s] for s in seats]  # last_winners
    obs += [plain["scores"][s] for s in seats]  # scores
    obs += [int(r == plain["round"] and not plain["terminal"]) for r in range(3)]  # round
    return np.array(obs, dtype=np.float32)


def random_games(num_players: int, games: int, **options):
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


@pytest.mark.parametrize(
    "num_players, options",
    [(2, {}), (3, {}), (2, {"points": dict(DEFAULT_POINTS) | {13: 7, 2: 0}})],
)
def test_state_and_observation_match_a_plain_recomputation(num_players, options):
    """The in-place public vector, the seat-rotation gather, the cached masks, hand sizes,
    scores and reveal outcomes all equal a from-scratch replay, at every step."""
    for game, state, history in random_games(num_players, 150, **options):
        plain = recompute(game, state.sets, history)
        aside = state.aside.tolist()
        n = num_players
        assert state.is_terminal() == plain["terminal"]
        assert state.to_act() == (() if plain["terminal"] else tuple(range(n)))
        assert state.scores().dtype == np.float64
        assert state.scores().tolist() == plain["scores"]
        assert state.round == plain["round"]
        assert state.hands.tolist() == plain["hands"] and state.won.tolist() == plain["won"]
        assert state.last_winners.tolist() == [bool(w) for w in plain["last_winners"]]
        assert state.last_played.tolist() == (plain["last_played"] or [-1] * n)
        state.check_invariants()  # the counters against the public vector
        for p in range(n):
            expected = reference_observation(plain, aside, p, n)
            obs = game.observation(state, p)
            assert obs.dtype == np.float32 and obs.shape == expected.shape
            assert obs.tobytes() == expected.tobytes()
            # The core's path through ``encode`` gives the same vector.
            assert Game.observation(game, state, p).tobytes() == expected.tobytes()
            mask = state.legal_mask(p)
            assert mask.dtype == bool
            legal = [not plain["terminal"] and c > 0 for c in plain["hands"][p]]
            assert mask.tolist() == legal


def test_reveal_outcomes_cover_every_play():
    """The cached outcomes equal ``winners`` for every possible reveal."""
    for n in (2, 3):
        for played in itertools.product(range(NUM_CARDS), repeat=n):
            won = card_winners(played)
            assert list(won) == winners([VALUES[c] for c in played])
            shown = last_reveal(played, won)
            assert not shown.flags.writeable
            expected = np.zeros((n + 1, NUM_CARDS))
            expected[range(n), played] = 1
            expected[n, list(won)] = 1
            assert shown.tolist() == expected.ravel()[: n * NUM_CARDS + n].tolist()


def test_returned_arrays_and_clones_are_independent():
    for n in (2, 3):
        game = PicoGame.from_options(num_players=n)
        state = game.new_initial_state(np.random.default_rng(5))
        rng = np.random.default_rng(5)
        while not state.is_terminal():
            before = [game.observation(state, p).tobytes() for p in range(n)]
            masks = [state.legal_mask(p).tolist() for p in range(n)]
            scores = state.scores().tolist()
            game.observation(state, 0)[:] = 9  # writing to what was returned ...
            state.legal_mask(0)[:] = False
            state.scores()[:] = 9
            clone = state.clone()  # ... or playing on a clone changes nothing here
            clone.apply({p: int(rng.choice(clone.legal_actions(p))) for p in range(n)})
            assert [game.observation(state, p).tobytes() for p in range(n)] == before
            assert [state.legal_mask(p).tolist() for p in range(n)] == masks
            assert state.scores().tolist() == scores
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in range(n)})


#: ``trace_digest(n, 100)`` of the implementation before the speed-ups.
DIGESTS = {
    2: "633787a895010776f923f8a8b4f243411112fd9427c869fd1d7a6d484136821d",
    3: "66ae145227ed62a0b70dc87202dd3073e738c7f0dece70979304c0f6ecd95f6f",
}


def trace_digest(num_players: int, games: int) -> str:
    """A digest of every observation, mask, score and rendering of seeded random games."""
    digest = hashlib.sha256()
    game = PicoGame.from_options(num_players=num_players)
    rng = np.random.default_rng(0)
    for seed in range(games):
        state = game.new_initial_state(np.random.default_rng(seed))
        while True:
            digest.update(str(state).encode() + state.scores().tobytes())
            for p in range(num_players):
                digest.update(game.observation(state, p).tobytes())
                digest.update(state.legal_mask(p).tobytes())
            if state.is_terminal():
                break
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()})
    return digest.hexdigest()


def test_seeded_games_are_bit_for_bit_as_before():
    """Shipped models depend on the observations: seeded games (deal, observations, masks,
    scores and text) are identical to the ones recorded before the speed-ups."""
    assert trace_digest(2, 100) == DIGESTS[2]
    assert trace_digest(3, 100) == DIGESTS[3]


# --- the aside card face down (option aside="face_down", two players) ------------------


def face_down(*dealt: tuple[int, ...], aside: tuple[int, ...]) -> PicoState:
    """A two-player state with the aside card face down, whose dealt sets are ``dealt``."""
    game = PicoGame.from_options(aside="face_down")
    state = game.new_initial_state(np.random.default_rng(0))
    state._deal(np.stack([hand(*d) for d in dealt]), hand(*aside))
    return state


def test_aside_option_is_validated_and_sets_hidden_state():
    assert PicoGame.from_options().config.aside == "face_up"
    assert not PicoGame.from_options(aside="face_up").has_hidden_state
    assert PicoGame.from_options(aside="face_down").has_hidden_state
    assert not PicoGame.from_options(num_players=3).has_hidden_state
    with pytest.raises(ValueError, match="allowed values: 'face_up', 'face_down'"):
        PicoGame.from_options(aside="hidden")
    with pytest.raises(ValueError, match="two-player.*allowed values with num_players=3"):
        PicoGame.from_options(num_players=3, aside="face_down")
    assert {"num_players": 2, "aside": "face_down"} in envs.pico.SPEC.configurations


def test_face_up_observations_are_unchanged_by_the_option():
    """``aside="face_up"`` (the default) has the layout and observations of before; face
    down has the same ones from round 2 on (with ``unseen`` zeros at the end)."""
    default, up = PicoGame.from_options(), PicoGame.from_options(aside="face_up")
    down = PicoGame.from_options(aside="face_down")
    assert up.observation_layout.fields == default.observation_layout.fields
    assert down.observation_layout.size == default.observation_layout.size + NUM_CARDS
    assert list(down.observation_layout.fields)[-1] == "unseen"
    rng = np.random.default_rng(0)
    for seed in range(60):
        a = default.new_initial_state(np.random.default_rng(seed))
        b = up.new_initial_state(np.random.default_rng(seed))
        c = down.new_initial_state(np.random.default_rng(seed))  # the same deal
        while True:
            for p in range(2):
                obs = default.observation(a, p)
                assert up.observation(b, p).tobytes() == obs.tobytes()
                hidden = down.observation(c, p)
                assert hidden.dtype == np.float32
                if c.round > 0:
                    assert (
                        hidden.tobytes()
                        == np.append(obs, np.zeros(NUM_CARDS, np.float32)).tobytes()
                    )
            assert str(a) == str(b)
            if a.is_terminal():
                break
            joint = {p: int(rng.choice(a.legal_actions(p))) for p in a.to_act()}
            for state in (a, b, c):
                state.apply(joint)


def reference_face_down(state: PicoState, player: int, history: list[dict[int, int]]):
    """Round 1 of the face-down observation, written from the deal and the plays: the
    face-up one, with the other hand reduced to the cards it has shown and still holds,
    no aside card, and ``unseen`` the cards not dealt to ``player`` that the other has
    not shown."""
    game = state.game
    up = PicoGame.from_options(aside="face_up")
    twin = up.new_initial_state(np.random.default_rng(0))
    twin._deal(state.sets.copy(), state.aside.copy())
    for joint in history:
        twin.apply(joint)
    views = up.observation_layout.views(up.observation(twin, player))
    other = 1 - player
    shown = np.zeros(NUM_CARDS, dtype=np.int64)
    for joint in history:
        shown[joint[other]] = 1
    out = game.observation_layout.zeros()
    out_views = game.observation_layout.views(out)
    for name, view in views.items():
        out_views[name][...] = view
    out_views["hand"][1] = twin.hands[other] * shown
    out_views["aside"][:] = 0
    out_views["unseen"][:] = 1 - state.sets[player] - shown
    return out


def test_face_down_round_1_observation_matches_a_plain_recomputation():
    for game, state, history in random_games(2, 150, aside="face_down"):
        state.check_invariants()
        if state.round != 0:
            continue
        for p in range(2):
            expected = reference_face_down(state, p, history)
            assert game.observation(state, p).tobytes() == expected.tobytes()
            assert Game.observation(game, state, p).tobytes() == expected.tobytes()
            views = game.observation_layout.views(expected)
            # One more unseen card than the other hand holds unknown: the aside card.
            unknown = state.hands[1 - p].sum() - views["hand"][1].sum()
            assert views["unseen"].sum() == unknown + 1


def test_face_down_hides_the_other_hand_and_the_aside_card_until_round_2():
    """Two deals player_0 cannot tell apart (player_1's 9 and the aside 13 swapped): the
    same observation, render, private view and infos for player_0 until a reveal shows
    the difference; player_1 sees it. Shown cards are remembered; round 2 shows all."""
    from envs.core.table import Table

    a = face_down((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    b = face_down((2, 5, 8, 10, 16), (3, 4, 6, 7, 13), aside=(9,))
    game = a.game
    tables = []
    for state in (a, b):
        table = Table(game)
        table.state = state
        table._state_changed()
        tables.append(table)

    def views_of(table: Table, p: int) -> tuple:
        return (
            table.observation(p).tobytes(),
            table.legal_mask(p).tobytes(),
            table.render_for(p),
            table.render(),
        )

    assert views_of(tables[0], 0) == views_of(tables[1], 0)
    assert views_of(tables[0], 1) != views_of(tables[1], 1)
    text = tables[0].render()
    assert "13" not in text and "9" not in text and "? (face down)" in text
    view = game.observation_layout.views(game.observation(a, 0))
    assert not view["hand"][1].any() and not view["aside"].any()
    assert view["unseen"].tolist() == hand(3, 4, 6, 7, 9, 13).tolist()
    assert "unseen by you (the other hand's ? cards and the aside card): 3 4 6 7 9 13" in (
        tables[0].render_for(0)
    )
    # Reveals the two deals share: player_1's 6 loses to 8 and goes back to its hand.
    for table in tables:
        table.commit(0, card(8))
        table.commit(1, card(6))
    assert views_of(tables[0], 0) == views_of(tables[1], 0)
    view = game.observation_layout.views(game.observation(a, 0))
    assert view["hand"][1].tolist() == hand(6).tolist()  # shown, lost, remembered
    assert view["unseen"].tolist() == hand(3, 4, 7, 9, 13).tolist()
    assert "hand [6 ? ? ? ?]" in str(a)
    # Player_1 plays its 9 (or 13): now player_0 can tell.
    for table, other in zip(tables, (9, 13), strict=True):
        table.commit(0, card(10))
        table.commit(1, card(other))
    assert views_of(tables[0], 0) != views_of(tables[1], 0)
    # To round 2: everything is known, the aside card too.
    while a.round == 0:
        play(a, *[VALUES[int(np.flatnonzero(a.legal_mask(p))[0])] for p in range(2)])
    view = game.observation_layout.views(game.observation(a, 0))
    assert view["hand"][0].tolist() == hand(3, 4, 6, 7, 9).tolist()
    assert view["hand"][1].tolist() == hand(2, 5, 8, 10, 16).tolist()
    assert view["aside"].tolist() == hand(13).tolist() and not view["unseen"].any()
    assert "aside: 13" in str(a) and a.private_view(0) == ""


def test_face_down_envs_infos_and_state_hold_nothing_hidden():
    """Through the PettingZoo env: player_0's observation, infos and ``render_for`` are the
    same in two round-1 worlds it cannot tell apart."""
    from envs.core.aec import HiddenHandAEC

    views = []
    for dealt, aside in (((3, 4, 6, 7, 9), 13), ((3, 4, 6, 7, 13), 9)):
        env = HiddenHandAEC(envs.get_spec("hiddenhand/pico-v0"), aside="face_down")
        env.reset(seed=0)
        env.table.state._deal(np.stack([hand(2, 5, 8, 10, 16), hand(*dealt)]), hand(aside))
        env.table._state_changed()
        env.step(card(8))  # player_0 commits
        views.append(
            (
                env.observe("player_0")["observation"].tobytes(),
                repr(env.infos["player_0"]),
                env.render_for("player_0"),
                env.observe("player_1")["observation"].tobytes(),
            )
        )
    assert views[0][:3] == views[1][:3]
    assert views[0][3] != views[1][3]


def test_face_down_resample_keeps_what_the_player_knows_and_redraws_the_rest():
    state = face_down((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    game = state.game
    play(state, 8, 6)  # player_1 shows a 6, which loses and returns
    play(state, 16, 9)  # player_1 shows a 9, which loses to 16 and returns
    asides, hands1 = set(), set()
    for seed in range(40):
        sample = state.resample(0, np.random.default_rng(seed))
        sample.check_invariants()
        assert game.observation(sample, 0).tobytes() == game.observation(state, 0).tobytes()
        assert str(sample) == str(state) and sample.private_view(0) == state.private_view(0)
        assert np.array_equal(sample.hands[0], state.hands[0])
        assert np.array_equal(sample.won, state.won) and sample.hand_sizes == state.hand_sizes
        assert sample.hands[1][card(6)] == 1 and sample.hands[1][card(9)] == 1  # shown
        assert np.array_equal(sample.scores(), state.scores())
        assert sample.aside.sum() == 1
        assert (sample.hands[1] + sample.aside).tolist() == (
            state.hands[1] + state.aside
        ).tolist()  # the same unseen cards, shared out again
        asides.add(int(np.argmax(sample.aside)))
        hands1.add(tuple(sample.hands[1].tolist()))
        assert sample.legal_mask(1).tolist() == (sample.hands[1] > 0).tolist()
    assert asides == {card(v) for v in (3, 4, 7, 13)}
    assert len(hands1) == 4
    # From round 2 on nothing is hidden: a copy with its own RNG.
    while state.round == 0:
        play(state, *[VALUES[int(np.flatnonzero(state.legal_mask(p))[0])] for p in range(2)])
    sample = state.resample(0, np.random.default_rng(0))
    assert np.array_equal(sample.sets, state.sets) and np.array_equal(sample.aside, state.aside)
    assert sample.rng is not state.rng


def test_face_down_heuristic_reads_only_the_observation():
    """Its decision is the same in two states the player cannot tell apart (with the same
    rng), and its values are the face-up heuristic's averaged over the possible aside
    cards (each equally likely)."""
    game = PicoGame.from_options(aside="face_down")
    up = PicoGame.from_options(aside="face_up")
    heuristic, face_up = PicoHeuristic(game), PicoHeuristic(up)
    differ = 0
    for seed in range(40):
        state = game.new_initial_state(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while state.round == 0:
            for p in range(2):
                other = state.resample(p, np.random.default_rng(seed + 1))
                differ += not np.array_equal(other.hands[1 - p], state.hands[1 - p])
                mask = state.legal_mask(p).astype(np.int8)
                assert np.array_equal(other.legal_mask(p), state.legal_mask(p))
                obs, obs_other = game.observation(state, p), game.observation(other, p)
                assert heuristic.act(obs, mask, np.random.default_rng(3)) == heuristic.act(
                    obs_other, mask, np.random.default_rng(3)
                )
                # The values: the face-up heuristic's, averaged over the possible asides.
                views = game.observation_layout.views(obs)
                expected = np.zeros(NUM_CARDS)
                unseen = np.flatnonzero(views["unseen"])
                for aside in unseen:
                    world = obs[: up.observation_layout.size].copy()
                    world_views = up.observation_layout.views(world)
                    world_views["hand"][1] += views["unseen"]
                    world_views["hand"][1, aside] = 0
                    world_views["aside"][aside] = 1
                    expected += face_up.card_values(world, mask) / len(unseen)
                np.testing.assert_allclose(heuristic.card_values(obs, mask), expected, atol=1e-12)
                batch = heuristic.action_probabilities_batch(obs[None], mask[None])
                np.testing.assert_array_equal(batch[0], heuristic.action_probabilities(obs, mask))
            state.apply({p: int(rng.choice(state.legal_actions(p))) for p in range(2)})
    assert differ > 20


def test_face_down_heuristic_beats_random():
    game = PicoGame.from_options(aside="face_down")
    lineup = [("heuristic", PicoHeuristic(game)), ("random", RandomAgent(game))]
    records = seat_rotated(game, lineup, num_games=150, seed=0)
    assert np.mean(records["heuristic"].scores) > np.mean(records["random"].scores)


def test_nash_and_the_solver_refuse_face_down():
    from training.agents.nash import PicoNash
    from training.solvers.pico import PicoSolver, Position, best_responses

    game = PicoGame.from_options(aside="face_down")
    state = game.new_initial_state(np.random.default_rng(0))
    for make in (
        lambda: PicoNash(game),
        lambda: PicoSolver.for_game(game),
        lambda: Position.from_state(state),
        lambda: best_responses(game, None, Position.deal(0b11111, 0b1111100000)),
        lambda: envs.pico.SPEC.agent_factory("nash")(game),
    ):
        with pytest.raises(ValueError, match="aside='face_down'.*allowed values: aside='face_up'"):
            make()
    # The shipped PPO baseline was trained face up: it refuses too.
    with pytest.raises(ValueError, match="another env"):
        envs.pico.SPEC.make_agent("ppo", game)
