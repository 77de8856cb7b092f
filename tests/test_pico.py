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
