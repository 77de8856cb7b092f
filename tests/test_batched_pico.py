"""The batched Pico engine (envs/pico/batched.py), and make_vec on it: what is its own
beyond what every engine does (``test_batched_every_game.py``: random play against the
rules, loaded positions, seeding, make_vec against the Gymnasium view).

Games dealt with ``reset_from`` (the dealt cards given) play as the rules' games; its own
deals are whole decks, dealt apart; its batched heuristic makes the same choices as
``envs.pico.heuristic.PicoHeuristic`` and values the cards as a plain per-game
reckoning does. make_vec, on Pico: its refusals, opponents, seats and mixes, the
trainer on it, and the face-down game's heuristic played game by game.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from lockstep import Dealer, Lockstep

import envs
from envs.pico.batched import PicoVector
from envs.pico.heuristic import PicoHeuristic, heuristic_actions, heuristic_values
from envs.pico.rules import DECK_COUNTS, VALUES, PicoGame, winners

PICO = "hiddenhand/Pico-v0"


@pytest.mark.parametrize("num_players", [2, 3])
@pytest.mark.parametrize("reward_mode", ["win", "score"])
def test_games_dealt_with_reset_from_are_the_rules_games(num_players: int, reward_mode: str):
    """200 games, 50 at a time, each row dealt the reference's cards by ``reset_from``
    (the other way into a row, beside ``load``)."""
    game = PicoGame.from_options(num_players=num_players)
    engine = PicoVector(50, num_players=num_players, reward_mode=reward_mode, seed=1)

    def reset_from(states: list, rows: list[int]) -> None:
        engine.reset_from(
            np.stack([s.sets for s in states]), np.stack([s.aside for s in states]), rows
        )

    dealer = Dealer(game, reward_mode, seed=num_players)
    lockstep = Lockstep(engine, {b: dealer() for b in range(50)}, dealer, loader=reset_from)
    lockstep.play(np.random.default_rng(7), games=200)
    lockstep.check_views(np.random.default_rng(8))


@pytest.mark.parametrize("num_players", [2, 3])
def test_own_deals_are_whole_decks_and_distinct(num_players: int) -> None:
    """Whole decks dealt apart, and so by the automatic reset (their seeding:
    ``test_batched_every_game``)."""
    engine = PicoVector(500, num_players=num_players, seed=3)
    deck = engine.sets.sum(axis=1) + engine.aside
    assert (deck == DECK_COUNTS[num_players]).all()
    assert len({s.tobytes() for s in engine.sets}) > 400  # the games are dealt apart
    rng = np.random.default_rng(0)
    for _ in range(60):  # auto-reset deals too
        masks = engine.masks()
        _, terminated, info = engine.step(np.argmax(rng.random(masks.shape) * masks, axis=2))
        assert (engine.sets.sum(axis=1) + engine.aside == DECK_COUNTS[num_players]).all()
        assert (engine.round[info["done"]] == 0).all()
        assert engine.hand_sizes.min() >= 2 and engine.masks().any(axis=2).all()


def test_an_engine_that_does_not_name_its_state_cannot_copy_or_save_games() -> None:
    class Unnamed(PicoVector):
        state_arrays = ()

    engine = Unnamed(3, seed=0)
    with pytest.raises(NotImplementedError, match="Unnamed does not name its state"):
        engine.copy_games(engine, [0], [1])
    with pytest.raises(NotImplementedError, match="Unnamed does not name its state"):
        engine.state_dict()


def reference_card_values(game: PicoGame, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The heuristic's values, reckoned game by game: every combination of the opponents'
    distinct values, each seat's points won in it."""
    hands = game.observation_layout.views(observation)["hand"]
    opponent_cards = [np.flatnonzero(hand) for hand in hands[1:]]
    combos = list(itertools.product(*opponent_cards))
    values = np.full(len(mask), -np.inf)
    for card in np.flatnonzero(mask):
        value = 0.0
        for combo in combos:
            played = [card, *combo]
            won = winners([VALUES[c] for c in played])
            gain = sum(game.card_points[played[s]] for s in won if s == 0)
            loss = sum(game.card_points[played[s]] for s in won if s != 0) / len(combo)
            value += gain - loss
        values[card] = value / len(combos)
    return values


@pytest.mark.parametrize("num_players", [2, 3])
def test_batched_heuristic_makes_the_heuristics_choices(num_players: int) -> None:
    engine = PicoVector(40, num_players=num_players, seed=5)
    heuristic = PicoHeuristic(engine.game)
    rng = np.random.default_rng(11)
    checked = ties = 0
    for step in range(30):
        observations = engine.observations().reshape(-1, engine.observation_size)
        masks = engine.masks().reshape(-1, 11)
        values = heuristic_values(observations, masks, num_players, engine.points)
        noise = np.zeros(masks.shape)
        single = []
        for i in range(len(masks)):
            np.testing.assert_array_equal(
                values[i], reference_card_values(engine.game, observations[i], masks[i])
            )
            seed = step * 1000 + i
            # The per-game heuristic draws one number per legal card, in card order.
            noise[i, masks[i]] = np.random.default_rng(seed).random(int(masks[i].sum()))
            single.append(
                heuristic.act(
                    observations[i], masks[i].astype(np.int8), np.random.default_rng(seed)
                )
            )
            best = values[i][masks[i]]
            ties += int((best == best.max()).sum() > 1)
        batched = heuristic_actions(observations, masks, num_players, engine.points, noise)
        np.testing.assert_array_equal(batched, single)
        checked += len(masks)
        engine.step(np.argmax(rng.random(engine.masks().shape) * engine.masks(), axis=2))
    assert checked >= 2000 and ties > 0  # exact ties occur, and are broken alike


# --- make_vec -------------------------------------------------------------------------
def without_an_engine(patch: pytest.MonkeyPatch, name: str = "pickup") -> None:
    """Take a game's batched engine away for a test (its spec, under both ids)."""
    from envs.core import spec as specs

    spec = envs.get_spec(f"hiddenhand/{name}-v0")
    for env_id in (spec.aec_id, spec.gym_id):
        patch.setitem(specs._SPECS, env_id, dataclasses.replace(spec, engine=None))


def test_make_vec_refuses_games_without_an_engine(monkeypatch) -> None:
    without_an_engine(monkeypatch)
    with pytest.raises(ValueError, match="hiddenhand/Pico-v0"):
        envs.make_vec("hiddenhand/Pickup-v0", num_envs=2)
    with pytest.raises(ValueError, match="seat"):
        envs.make_vec(PICO, num_envs=2, seat=2)
    with pytest.raises(ValueError, match="num_players"):
        envs.make_vec(PICO, num_envs=2, num_players=4)


def test_make_vec_opponents_and_seats() -> None:
    vec_env = envs.make_vec(PICO, num_envs=64, opponent="heuristic", seed=4, num_players=3)
    vec_env.reset()
    assert set(vec_env.seats.tolist()) == {0, 1, 2}
    fixed = envs.make_vec(PICO, num_envs=8, opponent=["random", "heuristic"], seat=1, num_players=3)
    fixed.reset()
    for _ in range(20):
        _, _, dones, _ = fixed.step(np.argmax(fixed.action_masks(), axis=1))
        assert (fixed.seats == 1).all()
    masks = fixed.env_method("action_masks")
    assert len(masks) == 8 and masks[0].shape == (11,)


def test_the_trainer_runs_on_the_batched_engine(tmp_path):
    """Any opponent mix, self-play snapshots included, on the batched engine."""
    from training import train

    common = ["--env", "hiddenhand/Pico-v0", "--total-timesteps", "1024", "--n-envs", "32"]
    common += ["--n-steps", "16", "--batch-size", "256", "--eval-every", "0", "--run-dir"]
    common += [str(tmp_path), "--final-eval-games", "4", "--no-progress-bar", "--vec", "batched"]
    run = train.train(train.parse_args([*common, "--opponents", "heuristic:1"]))
    assert (run / "model.zip").is_file()
    mix = ["--opponents", "heuristic:1,self:1,latest:1", "--snapshot-every", "512"]
    run = train.train(train.parse_args([*common, *mix, "--run-name", "mix"]))
    assert len(list((run / "snapshots").glob("*.zip"))) == 2
    with pytest.raises(ValueError, match="subproc"):
        train.check(train.parse_args([*common, "--subproc", "--run-name", "x"]))
    with pytest.MonkeyPatch.context() as patch:
        without_an_engine(patch)
        with pytest.raises(ValueError, match="batched engine|Pico"):
            train.check(train.parse_args(["--env", "hiddenhand/pickup-v0", "--vec", "batched"]))


def test_snapshot_opponents_play_random_then_the_snapshots(tmp_path):
    from sb3_contrib import MaskablePPO

    from training.agents.policy import policy_metadata, save_policy
    from training.train import SnapshotOpponent

    game = envs.get_spec(PICO).make_game()
    opponent = SnapshotOpponent("latest", tmp_path, game, "hiddenhand/pico-v0", seed=0)
    observations = np.zeros((3, game.observation_layout.size), dtype=np.float32)
    assert not opponent.deterministic and not opponent.logits_batch(observations).any()
    opponent.refresh()  # nothing saved yet: still random
    assert opponent.policy is None
    model = MaskablePPO("MlpPolicy", envs.make_vec(PICO, num_envs=2), seed=0, device="cpu")
    for step in (1, 2):
        save_policy(model, tmp_path / f"step_{step:09d}", policy_metadata(PICO, game, {}))
    opponent.refresh()
    assert opponent.deterministic and opponent.logits_batch(observations).shape == (3, 11)


def test_make_vec_draws_each_seat_from_a_mix_at_every_deal() -> None:
    vec_env = envs.make_vec(
        PICO, num_envs=400, opponent={"random": 1, "heuristic": 3}, num_players=3, seed=2
    )
    vec_env.reset()
    share = (vec_env.assignment == 1).mean()  # the heuristic's index in the mix
    assert 0.7 < share < 0.8
    first = vec_env.assignment.copy()
    for _ in range(40):  # games end and are dealt again, with new draws
        vec_env.step(np.argmax(vec_env.action_masks(), axis=1))
    assert (vec_env.assignment != first).any()
    with pytest.raises(ValueError, match="weights"):
        envs.make_vec(PICO, num_envs=2, opponent={"random": 0})


def test_face_down_make_vec_plays_the_heuristic_game_by_game() -> None:
    vec_env = envs.make_vec(PICO, num_envs=8, opponent="heuristic", aside="face_down", seed=0)
    assert type(vec_env.opponents[0]).__name__ == "_PerGameOpponent"
    observation = vec_env.reset()
    unseen = vec_env.engine.observation_layout.fields["unseen"]
    assert (observation[:, unseen.start : unseen.stop].sum(axis=1) == 6).all()  # 5 + aside
    for _ in range(40):
        vec_env.step(np.argmax(vec_env.action_masks(), axis=1))
