"""Pico's fast bookkeeping against plain recomputations, and seeded games bit for bit as
before the speed-ups."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from envs.core.game import Game
from envs.pico.layout import last_reveal
from envs.pico.observation import encode
from envs.pico.rules import DEFAULT_POINTS, NUM_CARDS, VALUES, PicoGame, card_winners, winners


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


@pytest.mark.parametrize(
    "num_players, options",
    [(2, {}), (3, {}), (2, {"points": dict(DEFAULT_POINTS) | {13: 7, 2: 0}})],
)
def test_state_and_observation_match_a_plain_recomputation(pico, num_players, options):
    """The in-place public vector, the seat-rotation gather, the cached masks, hand sizes,
    scores and reveal outcomes all equal a from-scratch replay, at every step (the
    observation: ``encode`` of the state whose fields equal the replay's)."""
    for game, state, history in pico.random_games(num_players, 150, **options):
        plain = recompute(game, state.sets, history)
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
            expected = encode(state, p)  # the plain encoder, from the fields checked above
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
