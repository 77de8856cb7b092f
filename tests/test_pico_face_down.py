"""Pico with the aside card face down (option aside="face_down", two players): what each
player sees, determinisation and the agents that read it."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from envs.core.game import Game
from envs.pico.heuristic import PicoHeuristic
from envs.pico.observation import encode
from envs.pico.rules import NUM_CARDS, VALUES, PicoGame, PicoState
from training.evaluation.tournament import seat_rotated


@pytest.fixture
def face_down(pico):
    def face_down(*dealt: tuple[int, ...], aside: tuple[int, ...]) -> PicoState:
        """A two-player state with the aside card face down, whose dealt sets are ``dealt``."""
        game = PicoGame.from_options(aside="face_down")
        state = game.new_initial_state(np.random.default_rng(0))
        state._deal(np.stack([pico.hand(*d) for d in dealt]), pico.hand(*aside))
        return state

    return face_down


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


def test_face_down_round_1_observation_matches_a_plain_recomputation(pico):
    for game, state, history in pico.random_games(2, 150, aside="face_down"):
        state.check_invariants()
        if state.round != 0:
            continue
        for p in range(2):
            expected = reference_face_down(state, p, history)
            assert game.observation(state, p).tobytes() == expected.tobytes()
            assert encode(state, p).tobytes() == expected.tobytes()
            assert Game.observation(game, state, p).tobytes() == expected.tobytes()
            views = game.observation_layout.views(expected)
            # One more unseen card than the other hand holds unknown: the aside card.
            unknown = state.hands[1 - p].sum() - views["hand"][1].sum()
            assert views["unseen"].sum() == unknown + 1


def test_face_down_hides_the_other_hand_and_the_aside_card_until_round_2(pico, face_down):
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
    assert view["unseen"].tolist() == pico.hand(3, 4, 6, 7, 9, 13).tolist()
    assert "unseen by you (the other hand's ? cards and the aside card): 3 4 6 7 9 13" in (
        tables[0].render_for(0)
    )
    # Reveals the two deals share: player_1's 6 loses to 8 and goes back to its hand.
    for table in tables:
        table.commit(0, pico.card(8))
        table.commit(1, pico.card(6))
    assert views_of(tables[0], 0) == views_of(tables[1], 0)
    view = game.observation_layout.views(game.observation(a, 0))
    assert view["hand"][1].tolist() == pico.hand(6).tolist()  # shown, lost, remembered
    assert view["unseen"].tolist() == pico.hand(3, 4, 7, 9, 13).tolist()
    assert "hand [6 ? ? ? ?]" in str(a)
    # Player_1 plays its 9 (or 13): now player_0 can tell.
    for table, other in zip(tables, (9, 13), strict=True):
        table.commit(0, pico.card(10))
        table.commit(1, pico.card(other))
    assert views_of(tables[0], 0) != views_of(tables[1], 0)
    # To round 2: everything is known, the aside card too.
    while a.round == 0:
        pico.play(a, *[VALUES[int(np.flatnonzero(a.legal_mask(p))[0])] for p in range(2)])
    view = game.observation_layout.views(game.observation(a, 0))
    assert view["hand"][0].tolist() == pico.hand(3, 4, 6, 7, 9).tolist()
    assert view["hand"][1].tolist() == pico.hand(2, 5, 8, 10, 16).tolist()
    assert view["aside"].tolist() == pico.hand(13).tolist() and not view["unseen"].any()
    assert "aside: 13" in str(a) and a.private_view(0) == ""


def test_face_down_envs_infos_and_state_hold_nothing_hidden(pico):
    """Through the PettingZoo env: player_0's observation, infos and ``render_for`` are the
    same in two round-1 worlds it cannot tell apart."""
    from envs.core.aec import HiddenHandAEC

    views = []
    for dealt, aside in (((3, 4, 6, 7, 9), 13), ((3, 4, 6, 7, 13), 9)):
        env = HiddenHandAEC(envs.get_spec("hiddenhand/pico-v0"), aside="face_down")
        env.reset(seed=0)
        env.table.state._deal(
            np.stack([pico.hand(2, 5, 8, 10, 16), pico.hand(*dealt)]), pico.hand(aside)
        )
        env.table._state_changed()
        env.step(pico.card(8))  # player_0 commits
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


def test_face_down_resample_keeps_what_the_player_knows_and_redraws_the_rest(pico, face_down):
    state = face_down((2, 5, 8, 10, 16), (3, 4, 6, 7, 9), aside=(13,))
    game = state.game
    pico.play(state, 8, 6)  # player_1 shows a 6, which loses and returns
    pico.play(state, 16, 9)  # player_1 shows a 9, which loses to 16 and returns
    asides, hands1 = set(), set()
    for seed in range(40):
        sample = state.resample(0, np.random.default_rng(seed))
        sample.check_invariants()
        assert game.observation(sample, 0).tobytes() == game.observation(state, 0).tobytes()
        assert str(sample) == str(state) and sample.private_view(0) == state.private_view(0)
        assert np.array_equal(sample.hands[0], state.hands[0])
        assert np.array_equal(sample.won, state.won) and sample.hand_sizes == state.hand_sizes
        assert sample.hands[1][pico.card(6)] == 1 and sample.hands[1][pico.card(9)] == 1  # shown
        assert np.array_equal(sample.scores(), state.scores())
        assert sample.aside.sum() == 1
        assert (sample.hands[1] + sample.aside).tolist() == (
            state.hands[1] + state.aside
        ).tolist()  # the same unseen cards, shared out again
        asides.add(int(np.argmax(sample.aside)))
        hands1.add(tuple(sample.hands[1].tolist()))
        assert sample.legal_mask(1).tolist() == (sample.hands[1] > 0).tolist()
    assert asides == {pico.card(v) for v in (3, 4, 7, 13)}
    assert len(hands1) == 4
    # From round 2 on nothing is hidden: a copy with its own RNG.
    while state.round == 0:
        pico.play(state, *[VALUES[int(np.flatnonzero(state.legal_mask(p))[0])] for p in range(2)])
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
