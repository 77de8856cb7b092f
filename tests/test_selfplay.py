"""The self-play learner (``training.selfplay``): its rollouts are the rules' game, its
returns follow each seat's own trajectory, it learns, and what it saves loads everywhere."""

from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from lockstep import Dealer, Lockstep, new_table
from stopping import stopped_after_saves

import envs
from training import selfplay
from training.agents.network import NetworkAgent
from training.cli import parse_mixture
from training.evaluation.tournament import head_to_head, make_agent
from training.selfplay import Args, SelfPlay, returns
from training.solvers.pico import matrix_game


class FollowTheRules:
    """The engine, kept on the rules' game by ``Lockstep``: every row a ``Table`` deal,
    loaded again where the rules draw chance or a game ends, and each step's rewards,
    ends and final views checked against the rules. Records, for every step, what the
    rules showed before it (choosers, observations, masks), the actions sent, and the
    rewards and ends."""

    def __init__(self, engine) -> None:
        game = engine.game
        self.engine = engine
        tables = {b: new_table(game, "win", b) for b in range(engine.num_envs)}
        self.lockstep = Lockstep(engine, tables, refill=Dealer(game, "win", 1))
        self.rng = np.random.default_rng(0)  # the junk the lockstep sends for non-choosers
        self.learning: np.ndarray | None = None  # the learner's seats, where a test shows them
        self.member: np.ndarray | None = None  # each game's --opponent member, likewise
        self.seen: list[dict] = []

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def step(self, actions):
        n, tables = self.engine.num_players, self.lockstep.tables
        rows = [tables[b] for b in range(self.engine.num_envs)]
        seen = {
            "choosers": np.array([[p in t.choosers for p in range(n)] for t in rows]),
            "observations": np.array([[t.observation(p) for p in range(n)] for t in rows]),
            "masks": np.array([[t.legal_mask(p).astype(bool) for p in range(n)] for t in rows]),
            "actions": np.array(actions),
            "learning": None if self.learning is None else self.learning.copy(),
            "member": None if self.member is None else self.member.copy(),
        }
        rewards, terminated, info = self.lockstep.step(self.rng, seen["actions"], every_row=True)
        self.seen.append(seen | {"rewards": rewards, "terminated": terminated})
        return rewards, terminated, info


def plain_returns(rollout, lam: float) -> np.ndarray:
    """``returns`` with gamma 1, written per seat over its own decisions."""
    targets = np.zeros_like(rollout.rewards)
    steps, games, seats = rollout.rewards.shape
    for b in range(games):
        for p in range(seats):
            decisions = [t for t in range(steps) if rollout.deciding[t, b, p]]
            for i in reversed(range(len(decisions))):
                t = decisions[i]
                later = decisions[i + 1] if i + 1 < len(decisions) else steps
                reward, ended = 0.0, False
                for u in range(t, later):
                    reward += rollout.rewards[u, b, p]
                    if rollout.terminated[u, b]:
                        ended = True
                        break
                if ended:
                    targets[t, b, p] = reward
                elif later < steps:
                    value, following = rollout.values[later, b, p], targets[later, b, p]
                    targets[t, b, p] = reward + (1 - lam) * value + lam * following
                else:
                    targets[t, b, p] = reward + rollout.last_values[b, p]
    return targets


def tiny(**overrides) -> Args:
    values = {
        "num_games": 3,
        "num_steps": 60,
        "hidden": "16",
        "eval_every": 0,
        "eval_games": 0,
        "eval_pimc_games": 0,
        "eval_deals": 0,
        "progress_bar": False,
    }
    return Args(**(values | overrides))


def test_rollouts_see_what_the_rules_give_and_returns_follow_each_seat(env_id, config):
    """A differential test against ``Table`` over 60 engine steps of 3 games, turn-based
    phases and new deals included: each decision's observation, mask and seat, every
    reward and every end are the rules'; the lambda-returns (0, 0.5, 1) match a plain
    per-seat computation over each seat's own decisions."""
    spec = envs.get_spec(env_id)
    args = tiny(env=env_id, num_players=config.get("num_players"))
    options = dict(config)
    run = SelfPlay(args, spec.make_game(**options), options)
    run.engine = follow = FollowTheRules(run.engine)
    rollout = run.collect()
    seen = follow.seen
    observations = np.concatenate(rollout.observations)
    masks = np.concatenate(rollout.masks)
    actions = np.concatenate(rollout.actions)
    row = 0
    for t, step in enumerate(seen):
        np.testing.assert_array_equal(rollout.deciding[t], step["choosers"])
        np.testing.assert_array_equal(rollout.rewards[t], step["rewards"])
        np.testing.assert_array_equal(rollout.terminated[t], step["terminated"])
        for b, p in zip(*np.nonzero(step["choosers"]), strict=True):
            np.testing.assert_array_equal(observations[row], step["observations"][b, p])
            np.testing.assert_array_equal(masks[row], step["masks"][b, p])
            assert actions[row] == step["actions"][b, p] and masks[row, actions[row]]
            row += 1
    assert row == len(observations) > 0
    for lam in (0.0, 0.5, 1.0):
        np.testing.assert_allclose(
            returns(rollout, 1.0, lam)[rollout.deciding],
            plain_returns(rollout, lam)[rollout.deciding],
            atol=1e-6,
        )


@pytest.mark.parametrize(
    ("env_id", "config"),
    [("hiddenhand/pickup-v0", {"num_players": 4}), ("hiddenhand/forslag-v0", {"num_players": 4})],
)
def test_with_an_opponent_pool_one_seat_a_game_learns_and_only_its_decisions_are_kept(
    env_id, config
):
    """The other seats play a snapshot; the rollout keeps the learning seat's decisions,
    each with the action it played, and the rewards that reach it."""
    spec = envs.get_spec(env_id)
    args = tiny(env=env_id, num_players=4, opponent_pool=2)
    run = SelfPlay(args, spec.make_game(**config), config)
    run.engine = follow = FollowTheRules(run.engine)
    follow.learning = run.learning  # the array the learner redraws in place
    rollout = run.collect()
    actions = np.concatenate(rollout.actions)
    row = 0
    for t, step in enumerate(follow.seen):
        assert (step["learning"].sum(axis=1) == 1).all()
        kept = step["choosers"] & step["learning"]
        np.testing.assert_array_equal(rollout.deciding[t], kept)
        np.testing.assert_array_equal(rollout.rewards[t], step["rewards"])
        for b, p in zip(*np.nonzero(kept), strict=True):
            assert actions[row] == step["actions"][b, p]
            row += 1
    assert row == len(actions) > 0


def first_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A stand-in member of an ``--opponent`` mixture: always the first legal action."""
    return np.eye(masks.shape[1])[np.asarray(masks, dtype=bool).argmax(axis=1)]


def last_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Another: always the last legal action."""
    last = masks.shape[1] - 1 - np.asarray(masks, dtype=bool)[:, ::-1].argmax(axis=1)
    return np.eye(masks.shape[1])[last]


def test_an_opponent_mixture_draws_members_by_weight_and_each_plays_its_games_alone():
    """``--opponent random:1,heuristic:3``: each new deal draws its game's member in
    proportion to the weights, and a member plays every other seat of its own games and
    no seat of another's (the members replaced by two that always play the first and
    the last legal action, so that every move says who made it)."""
    config = {"num_players": 4}
    spec = envs.get_spec("hiddenhand/pickup-v0")
    args = tiny(env="hiddenhand/pickup-v0", num_players=4, opponent="random:1,heuristic:3")
    run = SelfPlay(args, spec.make_game(**config), config)
    assert len(run.members) == 2 and np.allclose(run.member_weights, [0.25, 0.75])
    draws = []
    for _ in range(1000):  # 3,000 deals: the heuristic's share is 0.75 +- 0.008 (s.d.)
        run._draw_learning_seats(np.arange(args.num_games))
        draws.append(run.member.copy())
    assert abs(np.mean(draws) - 0.75) < 0.03
    run.members = [first_legal, last_legal]
    run.engine = follow = FollowTheRules(run.engine)
    follow.learning, follow.member = run.learning, run.member  # redrawn in place
    rollout = run.collect()
    played = {0: 0, 1: 0}
    members_of_game: list[set] = [set() for _ in range(args.num_games)]
    for t, step in enumerate(follow.seen):
        np.testing.assert_array_equal(rollout.deciding[t], step["choosers"] & step["learning"])
        for b, p in zip(*np.nonzero(step["choosers"] & ~step["learning"]), strict=True):
            member = int(step["member"][b])
            legal = np.flatnonzero(step["masks"][b, p])
            assert step["actions"][b, p] == legal[-1 if member else 0]
            played[member] += 1
            members_of_game[b].add(member)
    assert min(played.values()) > 0  # both members played
    assert any(len(m) == 2 for m in members_of_game)  # a game's member redrawn at a new deal


def test_a_mixture_reads_names_weights_and_a_whole_path(tmp_path):
    assert parse_mixture("random", "--x") == {"random": 1.0}
    assert parse_mixture("runs/a/model.npz:0.5, pimc", "--x") == {
        "runs/a/model.npz": 0.5,
        "pimc": 1.0,
    }
    odd = tmp_path / "a,b:c"
    odd.mkdir()
    assert parse_mixture(str(odd), "--x") == {str(odd): 1.0}  # a path with , and :
    colon = tmp_path / "c:d"
    colon.mkdir()
    assert parse_mixture(f"{colon}:2,random", "--x") == {str(colon): 2.0, "random": 1.0}


def test_neurds_threshold_stops_a_logit_beyond_beta_from_being_pushed_further():
    """Two legal actions of three (the third's logit 7 neither counts in the legal mean
    nor gets a gradient); beta 2. Row 0: logits (less their mean) at +-2.5, beyond beta,
    each pushed outward by its advantage: no gradient. Row 1: the same advantages inside
    beta: the better logit rises. Row 2: beyond beta, pushed inward: it falls."""
    masks = torch.tensor([[True, True, False]] * 3)
    logits = torch.tensor(
        [[3.5, -1.5, 7.0], [1.0, -1.0, 7.0], [3.5, -1.5, 7.0]], requires_grad=True
    )
    q = torch.tensor([[1.0, -1.0, 5.0], [1.0, -1.0, 5.0], [-1.0, 1.0, 5.0]])
    probs = torch.softmax(logits.detach().masked_fill(~masks, -1e9), dim=1)
    selfplay.neurd_loss(logits, masks, q, probs, beta=2.0).backward()
    step = -logits.grad  # the direction gradient descent moves the logits
    assert torch.equal(step[0], torch.zeros(3))
    assert step[1, 0] > 0 > step[1, 1]
    assert step[2, 0] < 0 < step[2, 1]
    assert torch.equal(step[:, 2], torch.zeros(3))
    loose = logits.detach().clone().requires_grad_(True)
    selfplay.neurd_loss(loose, masks, q, probs, beta=3.0).backward()
    assert loose.grad[0, 0] < 0  # with beta 3 the same logit is pushed up


def test_a_few_thousand_decisions_of_pico_beat_random_more_than_an_untrained_network(tmp_path):
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    random = make_agent(spec, game, "random")
    settings = tiny(algorithm="ppo", learning_rate=1e-3, hidden="64,64", num_games=64)
    untrained = selfplay.agent_of(SelfPlay(settings, game, {}).learner)
    before = head_to_head(game, untrained, random, 400, seed=5)
    settings.num_steps, settings.decisions, settings.out = 16, 60_000, str(tmp_path / "run")
    after = head_to_head(
        game, make_agent(spec, game, str(selfplay.train(settings))), random, 400, 5
    )
    assert after["win_rate"] - after["win_ci"] > before["win_rate"] + before["win_ci"]


@pytest.fixture(scope="module")
def pico_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("selfplay") / "run"
    selfplay.main(
        [
            "--decisions",
            "3000",
            "--num-games",
            "16",
            "--num-steps",
            "8",
            "--hidden",
            "16",
            "--eval-every",
            "0",
            "--eval-games",
            "4",
            "--eval-pimc-games",
            "1",
            "--eval-deals",
            "1",
            "--no-progress-bar",
            "--out",
            str(out),
        ]
    )
    return out


def test_a_run_leaves_the_model_its_command_and_its_evaluations(pico_run):
    names = {path.name for path in pico_run.iterdir()}
    assert {"model.npz", "model.json", "config.json", "evaluations.csv", "curve.png", "tb"} <= names
    config = json.loads((pico_run / "config.json").read_text())
    assert config["command"].startswith("python -m training.selfplay --env hiddenhand/pico-v0")
    model = json.loads((pico_run / "model.json").read_text())
    assert model["command"] == config["command"]
    assert model["reward_mode"] == "win"
    last = (pico_run / "evaluations.csv").read_text().splitlines()[-1]
    assert model["decisions"] == int(last.split(",")[0]) >= config["decisions"]
    header = (pico_run / "evaluations.csv").read_text().splitlines()[0].split(",")
    assert {"decisions", "nash_conv", "win_random", "win_heuristic", "win_pimc"} <= set(header)
    with np.load(pico_run / "model.npz", allow_pickle=False) as arrays:  # plain arrays only
        assert sorted(arrays) == ["bias_0", "bias_1", "weight_0", "weight_1"]


def test_the_saved_model_loads_in_every_tool(pico_run):
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    for name in (str(pico_run), str(pico_run / "model.npz")):
        agent = make_agent(spec, game, name)
        probabilities = agent.action_probabilities(game.observation_layout.zeros(), np.ones(11))
        assert probabilities.min() > 0  # it plays its mixed strategy
    env = gymnasium.make("hiddenhand/Pico-v0", opponent=str(pico_run))
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    commands = [
        [
            "training.evaluate",
            "--env",
            "hiddenhand/pico-v0",
            "--agents",
            str(pico_run),
            "random",
            "--games",
            "4",
        ],
        ["training.exploitability", "--agent", str(pico_run / "model.npz"), "--deals", "1"],
    ]
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", *command], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr


def test_a_model_for_another_configuration_is_refused_by_name(pico_run):
    spec = envs.get_spec("hiddenhand/pico-v0")
    with pytest.raises(ValueError, match="model.npz was made for another env"):
        make_agent(spec, spec.make_game(num_players=3), str(pico_run))
    (pico_run / "broken").mkdir()
    (pico_run / "broken" / "model.npz").write_bytes(b"not an archive")
    (pico_run / "broken" / "model.json").write_text((pico_run / "model.json").read_text())
    with pytest.raises(ValueError, match="not a readable saved network"):
        make_agent(spec, spec.make_game(), str(pico_run / "broken"))


def test_the_same_seed_gives_the_same_run(tmp_path):
    for name in ("a", "b"):
        selfplay.train(
            tiny(decisions=2000, out=str(tmp_path / name), algorithm="mmd", magnet_update=0.1)
        )
    assert (tmp_path / "a" / "model.npz").read_bytes() == (
        tmp_path / "b" / "model.npz"
    ).read_bytes()


@pytest.mark.parametrize(
    "settings",
    [
        {"algorithm": "qmmd", "critic": "joint", "backup": "expanded", "off_path": 1},
        {"algorithm": "qmmd", "checkpoint_every": 250},  # kept between evaluations too
        {"algorithm": "mmd", "opponent_pool": 3, "snapshot_every": 600, "learning_rate": 0.003},
        {"env": "hiddenhand/pick_and_pack-v0", "algorithm": "ppo"},  # seats take turns
    ],
)
def test_a_resumed_run_is_the_run_that_was_not_stopped(tmp_path, settings):
    """``--resume``: a run stopped one rollout after its second evaluation and resumed from
    the command line ends with the same model, checkpoints and evaluations (all but the
    seconds) as the same run left alone; a finished run leaves nothing to resume."""
    args = tiny(
        decisions=2400,
        eval_every=600,
        eval_deals=2,
        keep_checkpoints=True,
        num_steps=20,
        num_games=4,
        **settings,
    )
    whole = selfplay.train(dataclasses.replace(args, out=str(tmp_path / "whole")))
    stopped = tmp_path / "stopped"
    with stopped_after_saves(2):
        selfplay.train(dataclasses.replace(args, out=str(stopped)))
    assert (stopped / selfplay.RESUME_FILE).is_file()
    assert len((stopped / "evaluations.csv").read_text().splitlines()) == 3  # header, 2 rows
    selfplay.main(["--out", str(stopped), "--resume", "--seed", "0", "--no-progress-bar"])

    def evaluations(run: Path) -> list[dict]:
        rows = list(csv.DictReader((run / "evaluations.csv").open()))
        return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]

    assert len(evaluations(whole)) == 4 and evaluations(stopped) == evaluations(whole)
    assert (stopped / "model.npz").read_bytes() == (whole / "model.npz").read_bytes()
    kept = sorted(p.name for p in (whole / "checkpoints").iterdir())
    assert kept == sorted(p.name for p in (stopped / "checkpoints").iterdir())
    for name in kept:  # the weights, and the metadata but for the run folder's name
        mine, theirs = (run / "checkpoints" / name for run in (stopped, whole))
        assert mine.read_bytes().replace(b"stopped", b"whole") == theirs.read_bytes()
    assert not (stopped / selfplay.RESUME_FILE).exists()
    assert not (whole / selfplay.RESUME_FILE).exists()


def test_resume_refuses_what_it_cannot_continue_exactly(tmp_path, capsys):
    """``--resume`` errors, each one line that leaves the run folder as it was: other
    arguments than the run's, with --overwrite, a damaged resume.pt, a finished run."""
    run = tmp_path / "run"
    args = tiny(decisions=600, eval_every=300, out=str(run), critic="joint")
    selfplay.train(args)
    finished = sorted(p.name for p in run.iterdir())
    (run / selfplay.RESUME_FILE).write_bytes(b"kept")  # as if it had stopped
    for argv, message in [
        (["--seed", "3"], "--resume continues the run with its own arguments: --seed 0, not 3"),
        (["--hidden", "8", "--critic", "action"], "--critic 'joint', not 'action'"),
        (["--overwrite"], "--overwrite would replace it"),
    ]:
        with pytest.raises(SystemExit):
            selfplay.main(["--out", str(run), "--resume", *argv])
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert message in error, error
    with pytest.raises(SystemExit):
        selfplay.main(["--out", str(run), "--resume"])
    assert "resume.pt is not a state saved by training.selfplay" in capsys.readouterr().err
    assert (run / selfplay.RESUME_FILE).read_bytes() == b"kept"
    (run / selfplay.RESUME_FILE).unlink()
    with pytest.raises(SystemExit):
        selfplay.main(["--out", str(run), "--resume"])
    assert "a finished run leaves none" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == finished


@pytest.mark.parametrize("algorithm", [a for a in selfplay.ALGORITHMS if a != "minimax"])
def test_every_algorithm_trains_with_an_opponent_pool(tmp_path, algorithm):
    out = selfplay.train(
        tiny(
            env="hiddenhand/pickup-v0",
            algorithm=algorithm,
            decisions=1500,
            opponent_pool=2,
            snapshot_every=300,
            out=str(tmp_path / "run"),
        )
    )
    game = envs.get_spec("hiddenhand/pickup-v0").make_game()
    agent = make_agent(envs.get_spec("hiddenhand/pickup-v0"), game, str(out))
    assert head_to_head(game, agent, agent, 2)["win_rate"] >= 0


def test_the_joint_critic_trains_on_pico_and_refuses_a_game_with_turns(tmp_path):
    selfplay.train(tiny(critic="joint", decisions=2000, out=str(tmp_path / "pico")))
    assert (tmp_path / "pico" / "model.npz").is_file()
    with pytest.raises(ValueError, match="for two players choosing together at every step.* turns"):
        selfplay.train(
            tiny(env="hiddenhand/pick_and_pack-v0", critic="joint", out=str(tmp_path / "pp"))
        )


def test_minimax_trains_on_pico_and_refuses_a_game_with_turns(tmp_path):
    out = selfplay.train(
        tiny(
            algorithm="minimax",
            decisions=2000,
            explore=0.2,
            explore_end=0.0,
            out=str(tmp_path / "pico"),
        )
    )
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    agent = make_agent(envs.get_spec("hiddenhand/pico-v0"), game, str(out))
    assert head_to_head(game, agent, agent, 2)["win_rate"] >= 0
    with pytest.raises(ValueError, match="for two players choosing together at every step.* turns"):
        selfplay.train(
            tiny(
                env="hiddenhand/pick_and_pack-v0",
                algorithm="minimax",
                decisions=2000,
                out=str(tmp_path / "pp"),
            )
        )


def test_minimax_plays_each_matrix_games_solution():
    """The decisions' strategies are the zero-sum solutions of the critic's matrices over
    both seats' legal actions (exact solver), within the solver's tolerance."""
    args = tiny(algorithm="minimax", solver_iterations=300)
    spec, options, game = selfplay.check(args)
    run = selfplay.SelfPlay(args, game, options)
    rng = np.random.default_rng(0)
    masks = rng.random((40, game.num_actions)) < 0.4
    masks[:, 3] = True
    q = torch.as_tensor(rng.uniform(-1, 1, (40, game.num_actions, game.num_actions)))
    partners = np.arange(40) ^ 1
    values, strategies = run._solve(q, masks, partners)
    for k in range(40):
        own, other = np.flatnonzero(masks[k]), np.flatnonzero(masks[partners[k]])
        value, _, _ = matrix_game(q[k].numpy()[np.ix_(own, other)])
        assert abs(values[k] - value) < 0.01
        assert strategies[k][~masks[k]].sum() == 0
        worst = (strategies[k][own] @ q[k].numpy()[np.ix_(own, other)]).min()
        assert worst > value - 0.02  # the strategy guarantees about the value


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algorithm", "dqn"], "--algorithm='dqn' is not allowed; allowed values: 'ppo'"),
        (["--magnet-coef", "-0.1"], "--magnet-coef must be at least 0"),
        (["--learning-rate", "0"], "--learning-rate must be positive"),
        (["--learning-rate-end", "-0.001"], "--learning-rate-end must be at least 0"),
        (["--critic-epochs", "0"], "--critic-epochs must be positive"),
        (["--kl-coef-end", "0"], "--kl-coef-end must be positive"),
        (["--gae-lambda", "2"], "--gae-lambda in \\[0, 1\\]"),
        (["--device", "cuda:7"], "--device 'cuda:7' is not available here"),
        (["--device", "abacus"], "--device 'abacus' is not available here"),
        (["--num-players", "9"], "num_players"),
        (["--opponent-pool", "3", "--algorithm", "minimax"], "needs every seat learning"),
        (["--opponent-pool", "3", "--opponent", "random"], "exclude each other"),
        (["--opponent", "nobody"], "--opponent: "),
        (["--opponent", "random:1,nobody:2"], "--opponent: .*nobody"),
        (["--opponent", "random:-1,heuristic:2"], "the weights must be at least 0"),
        (["--opponent", "random:0"], "with a positive sum"),
        (["--opponent", "random:lots"], "'lots' is not a weight"),
        (["--opponent", "random,random:2"], "every member needs a name, once"),
        (["--logit-threshold", "0"], "--logit-threshold must be positive"),
        (["--critic", "joint", "--num-players", "3"], "pico with these options has 3 players$"),
        (["--critic", "joint", "--algorithm", "mmd"], "--critic joint is for --algorithm qmmd"),
        (["--critic", "pairs"], "--critic='pairs' is not allowed; allowed values: 'action'"),
        (["--algorithm", "minimax", "--num-players", "3"], "minimax are for two players"),
        (
            ["--env", "hiddenhand/pick_and_pack-v0", "--algorithm", "qmmd", "--critic", "joint"],
            "choosing together at every step .* has 2 players and turns: use --critic action",
        ),
        (["--explore", "1.5"], "--explore and --explore-end must be in \\[0, 1\\]"),
        (["--algorithm", "ppo", "--explore", "0.1"], "--explore is for the algorithms whose"),
        (["--exploration", "curious"], "--exploration='curious' is not allowed"),
        (["--inner-method", "newton"], "--inner-method='newton' is not allowed; allowed values"),
        (["--solver-iterations", "0"], "--solver-iterations must be positive"),
        (["--inner-steps", "10"], "--inner-steps and --inner-method .* need --critic joint"),
        (["--inner-method", "extragradient"], "--inner-steps and --inner-method .* need --crit"),
        (["--off-path", "-1"], "--off-path is a count of positions, 0 or more, got -1"),
        (["--off-path", "1"], "--off-path fits qmmd's step .* --backup expanded"),
        (["--ignore-fields", "hand,colour"], "--ignore-fields: colour not in .* fields: hand"),
        (["--relative-fields", "colour"], "--relative-fields: colour not a field with one row"),
        (["--relative-fields", "aside"], "--relative-fields: aside not a field with one row per"),
        (["--thermometer-fields", "colour"], "--thermometer-fields: colour not in .* fields"),
        (
            ["--thermometer-fields", "scores", "--ignore-fields", "scores"],
            "--thermometer-fields: scores also ignored",
        ),
        (["--thermometer-range", "5,1"], "--thermometer-range must be LOW,HIGH, .* got '5,1'"),
        (["--thermometer-range", "-5"], "--thermometer-range must be LOW,HIGH"),
        (["--thermometer-range", "0,999"], "at most 201 thresholds"),
        (["--activation", "gelu"], "--activation='gelu' is not allowed; allowed values: 'tanh'"),
        (["--precision", "float16"], "--precision='float16' is not allowed; allowed values: 'f"),
        (["--checkpoint-every", "500"], "--checkpoint-every .* needs --keep-checkpoints, got 500 "),
        (["--checkpoint-every", "-1", "--keep-checkpoints"], "--checkpoint-every must be at le"),
    ],
)
def test_bad_arguments_are_one_line_errors_before_anything_is_written(
    tmp_path, argv, message, capsys
):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        selfplay.main([*argv, "--out", str(out)])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m training.selfplay: error:")
    assert __import__("re").search(message, error), error
    assert not out.exists()


def test_an_existing_run_folder_is_kept_without_overwrite(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit):
        selfplay.main(["--out", str(out)])
    assert "pass --overwrite" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"


def test_the_expanded_backup_values_each_joint_action_as_playing_it_does():
    """``--backup expanded``: at every decision, the target of the joint action the seats
    then played is its reward where the game ended, else the critic's value of the seat's
    next observation; every legal joint action has a target, and no illegal one (the
    copies that play the others are tested in test_batched_pico.py)."""
    args = tiny(critic="joint", backup="expanded", num_games=8, num_steps=24)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    rollout = run.collect()
    played = checked = 0
    for t in range(args.num_steps - 1):
        expanded, masks, own = rollout.expanded[t], rollout.masks[t], rollout.actions[t]
        partners = np.arange(len(own)) ^ 1  # rows: game * 2 + seat
        partner = own[partners]
        legal = masks[:, :, None] & masks[partners][:, None, :]
        assert (expanded[~legal] == 0).all()
        assert (expanded[legal] != 0).mean() > 0.9  # the critic's values are not zero
        with torch.no_grad():
            _, following = run.learner.values(torch.as_tensor(rollout.observations[t + 1]))
        ended = rollout.terminated[t].repeat(2)
        expected = np.where(ended, rollout.rewards[t].ravel(), following.numpy())
        target = expanded[np.arange(len(own)), own, partner]
        np.testing.assert_allclose(target, expected, atol=1e-5)
        played += ended.sum()
        checked += len(own)
    assert played > 0 and checked > played  # ends and play-ons both checked
    batch_critic = run.update(rollout, 0.0)
    assert np.isfinite(batch_critic["value_loss"])


def test_the_expanded_backup_is_refused_where_it_does_not_apply():
    with pytest.raises(ValueError, match="--backup expanded .* needs --critic joint"):
        selfplay.check(tiny(backup="expanded"))


def test_off_path_fits_the_policy_at_positions_one_reveal_off_the_played_path(monkeypatch):
    """``--off-path K``: at each reveal the rollout keeps, for up to K legal joint actions
    per game that do not end it, both seats' observations of the position it leads to
    (what playing it on a copy of the game shows, with the seat's legal cards), and the
    policy is fitted at those rows as well as at the played ones."""
    args = tiny(
        algorithm="qmmd",
        critic="joint",
        backup="expanded",
        off_path=2,
        num_games=4,
        num_steps=20,
        epochs=1,
        minibatches=2,
    )
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    children: list[set[bytes]] = []  # each step's positions one reveal on, as seat 0 sees them
    expand = run._expanded

    def recording(rows, masks, rollout):
        scratch = type(run.engine)(num_envs=1, reward_mode="win", seed=0, **options)
        seen = set()
        for game_index in np.unique(rows // 2):
            for a0, a1 in np.argwhere(masks[2 * game_index][:, None] & masks[2 * game_index + 1]):
                scratch.copy_games(run.engine, [game_index], [0])
                _, ended, _ = scratch.step(np.array([[a0, a1]]))
                if not ended[0]:
                    seen.add(scratch.observe(np.array([0]), np.array([0]))[0].tobytes())
        children.append(seen)
        return expand(rows, masks, rollout)

    monkeypatch.setattr(run, "_expanded", recording)
    rollout = run.collect()
    assert len(rollout.off_path) == args.num_steps
    layout = game.observation_layout
    own_hand = layout.views(np.arange(layout.size))["hand"][0]  # the observer's row
    for seen, observations, masks in zip(
        children, rollout.off_path, rollout.off_path_masks, strict=True
    ):
        assert 0 < len(observations) <= 2 * args.off_path * args.num_games
        assert all(row.tobytes() in seen for row in observations[0::2])
        np.testing.assert_array_equal(masks, observations[:, own_hand] > 0)
    fitted = []
    distil = run._distillation_loss
    monkeypatch.setattr(
        run, "_distillation_loss", lambda mb, lp, st: fitted.append(len(lp)) or distil(mb, lp, st)
    )
    run.update(rollout, 0.0)
    played = sum(map(len, rollout.observations))
    assert sum(fitted) == played + sum(map(len, rollout.off_path))


def test_explore_mixes_uniform_play_into_what_is_played_not_into_what_is_learned():
    """With ``--explore 1`` the seats play uniformly over their legal cards whatever the
    policy says, while the rollout keeps the policy's own probabilities (what the
    expected backups and MMD's step use); with 0 they play the policy."""
    shares = {}
    for explore in (0.0, 1.0):
        args = tiny(algorithm="qmmd", critic="joint", explore=explore, num_games=32)
        spec, options, game = selfplay.check(args)
        run = SelfPlay(args, game, options)
        with torch.no_grad():
            run.learner.policy[-1].bias[0] = 30.0  # the policy all but always plays card 0
        rollout = run.collect()
        masks, actions = np.concatenate(rollout.masks), np.concatenate(rollout.actions)
        policy = np.exp(np.concatenate(rollout.log_probs))
        can = masks[:, 0]
        assert policy[can, 0].min() > 0.99  # what is stored is the policy's
        shares[explore] = (actions[can] == 0).mean(), (1 / masks[can].sum(axis=1)).mean()
    assert shares[0.0][0] > 0.99
    played, uniform = shares[1.0]
    assert abs(played - uniform) < 0.06, shares


@pytest.mark.parametrize("critic", ["action", "joint"])
def test_greedy_exploration_plays_the_critics_best_action_against_the_other_policy(critic):
    """``--exploration greedy --explore 1``: every seat plays the legal card the critic
    values most against the other seat's policy (the joint critic's values averaged over
    that policy), while the rollout keeps the policy's own probabilities."""
    args = tiny(algorithm="qmmd", critic=critic, explore=1.0, exploration="greedy", num_games=32)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    actions = game.num_actions
    with torch.no_grad():
        run.learner.policy[-1].bias[0] = 30.0  # the policy all but always plays card 0
        run.learner.critic[-1].weight.zero_()
        values = run.learner.critic[-1].bias
        values.zero_()
        if critic == "action":
            values[3] = 1.0  # card 3 is the best wherever it is legal
        else:  # Q(own, other): card 3 is best against card 0, card 5 against the rest
            values[: actions * actions] = torch.as_tensor(
                np.fromfunction(
                    lambda own, other: np.where(other == 0, own == 3, own == 5),
                    (actions, actions),
                ).reshape(-1),
                dtype=torch.float32,
            )
    rollout = run.collect()
    masks, played = np.concatenate(rollout.masks), np.concatenate(rollout.actions)
    best = 3 if critic == "action" else None
    if best is None:  # the other seat plays card 0 wherever it can: near certain
        partners = np.concatenate(rollout.partners)
        best_of = np.where(masks[partners][:, 0], 3, 5)
    else:
        best_of = np.full(len(masks), best)
    legal = masks[np.arange(len(masks)), best_of]
    assert legal.sum() > 50
    assert np.array_equal(played[legal], best_of[legal])
    assert np.exp(np.concatenate(rollout.log_probs))[masks[:, 0], 0].min() > 0.99


@pytest.mark.parametrize("end", [None, 0.0])
def test_learning_rate_is_constant_or_annealed_linearly(end):
    """``--learning-rate-end`` moves Adam's step size linearly with the progress of the
    run; without it the rate stays where it started. A step at rate 0 changes nothing."""
    args = tiny(algorithm="ppo", learning_rate=1e-3, learning_rate_end=end)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    rollout = run.collect()
    for progress, expected in ((0.0, 1e-3), (0.75, 1e-3 if end is None else 2.5e-4)):
        stats = run.update(rollout, progress)
        assert stats["learning_rate"] == pytest.approx(expected)
        assert run.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    if end is not None:
        before = [p.detach().clone() for p in run.learner.parameters()]
        run.update(rollout, 1.0)
        assert all(torch.equal(b, p) for b, p in zip(before, run.learner.parameters(), strict=True))


def test_the_kl_weight_is_annealed_and_sets_the_step(monkeypatch):
    """``--kl-coef-end`` moves 1/eta linearly with the run's progress, and MMD's step at
    each decision is taken with the weight of that moment: a heavier weight keeps the
    goal nearer the rollout's policy."""
    args = tiny(algorithm="qmmd", kl_coef=1.0, kl_coef_end=5.0)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    rollout = run.collect()
    weights = []
    targets = run._mmd_targets
    monkeypatch.setattr(run, "_mmd_targets", lambda b, m, k: weights.append(k) or targets(b, m, k))
    for progress, expected in ((0.0, 1.0), (0.5, 3.0), (1.0, 5.0)):
        assert run.update(rollout, progress)["kl_coef"] == pytest.approx(expected)
    assert weights == pytest.approx([1.0, 3.0, 5.0])
    batch = {
        "inputs": run.learner.prepare(torch.as_tensor(np.concatenate(rollout.observations))),
        "masks": torch.as_tensor(np.concatenate(rollout.masks)),
        "old": torch.as_tensor(np.concatenate(rollout.log_probs), dtype=torch.float32),
    }
    old = batch["old"].exp()

    def moved(kl_coef):
        return (targets(batch, 0.1, kl_coef).exp() - old).abs().sum(1).mean().item()

    assert moved(1.0) > moved(5.0) > 0


@pytest.mark.parametrize(("method", "converges"), [("extragradient", True), ("mmd", False)])
def test_extragradient_inner_steps_reach_each_reveals_regularised_equilibrium(
    method, converges, monkeypatch
):
    """``--inner-method extragradient``: at a step (1/eta = 1) where the recipe's MMD steps
    circle, enough inner steps on fixed zero-sum matrices end where each seat's policy is
    the logit response to the other's, ``pi ∝ magnet^alpha * exp(Q pi') ^ (1 / alpha)``
    (the entropy-regularised equilibrium of each matrix)."""
    args = tiny(critic="joint", inner_steps=150, inner_method=method, kl_coef=1.0)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    generator = torch.Generator().manual_seed(0)
    pairs, size, alpha = 32, game.num_actions, 0.1
    own = torch.rand(pairs, size, size, generator=generator) * 2 - 1
    q = torch.stack([own, -own.transpose(1, 2)], dim=1).reshape(2 * pairs, size, size)
    masks = torch.rand(2 * pairs, size, generator=generator) < 0.7
    masks[:, 0] = True
    magnet = selfplay.masked_log_probs(torch.randn(2 * pairs, size, generator=generator), masks)
    monkeypatch.setattr(run.learner, "values_of", lambda x: (q, None))
    monkeypatch.setattr(run, "_magnet_log_probs", lambda batch: magnet)
    partners = torch.arange(2 * pairs) ^ 1
    old = selfplay.masked_log_probs(torch.randn(2 * pairs, size, generator=generator), masks)
    batch = {"inputs": None, "masks": masks, "old": old, "partners": partners}
    goal = run._mmd_targets(batch, alpha, 1.0).exp()
    response = (magnet + (q @ goal[partners][:, :, None])[:, :, 0] / alpha).masked_fill(
        ~masks, -torch.inf
    )
    gap = (goal - response.softmax(1)).abs().max().item()
    assert (gap < 1e-4) if converges else (gap > 0.1)


@pytest.mark.parametrize(("critic_epochs", "critic_steps"), [(None, 2), (3, 6)])
def test_the_critic_takes_its_own_number_of_passes(critic_epochs, critic_steps, monkeypatch):
    """``--critic-epochs`` sets the critic's passes over a rollout (the policy keeps
    ``--epochs``); without it both take ``--epochs``."""
    args = tiny(algorithm="qmmd", epochs=1, minibatches=2, critic_epochs=critic_epochs)
    spec, options, game = selfplay.check(args)
    run = SelfPlay(args, game, options)
    steps = []
    monkeypatch.setattr(run, "_step", lambda loss: steps.append(loss))
    stats = run.update(run.collect(), 0.0)
    assert len(steps) == critic_steps + 2
    assert np.isfinite(stats["value_loss"])


def test_checkpoint_every_keeps_more_models_of_the_same_run(tmp_path):
    """``--checkpoint-every`` also keeps the model at the first rollout past each multiple,
    and changes nothing else: the run ends with the same model."""
    args = tiny(decisions=1200, num_steps=20, eval_every=400, keep_checkpoints=True)
    plain = selfplay.train(dataclasses.replace(args, out=str(tmp_path / "a")))
    dense = selfplay.train(dataclasses.replace(args, checkpoint_every=250, out=str(tmp_path / "b")))
    assert (plain / "model.npz").read_bytes() == (dense / "model.npz").read_bytes()
    rollout = 3 * 20 * 2  # decisions a rollout: 3 games, 20 steps, both seats choose
    at_evaluations = {int(p.stem) for p in (plain / "checkpoints").glob("*.npz")}
    assert at_evaluations == {480, 840, 1200}
    first_past_a_multiple = {d for d in range(rollout, 1200, rollout) if d % 250 < rollout}
    assert first_past_a_multiple == {360, 600, 840, 1080}
    kept = {int(p.stem) for p in (dense / "checkpoints").glob("*.npz")}
    assert kept == at_evaluations | first_past_a_multiple
    # thinned to the evaluations' spacing, the dense run's checkpoints are the plain run's
    thinned = [path.name for path in selfplay.checkpoint_files(dense, spacing=400)]
    assert thinned == [path.name for path in selfplay.checkpoint_files(plain)]
    assert thinned == ["480.npz", "840.npz", "1200.npz"]


def test_keep_checkpoints_saves_the_model_of_every_evaluation(tmp_path):
    out = selfplay.train(
        tiny(decisions=1000, eval_every=400, keep_checkpoints=True, out=str(tmp_path / "run"))
    )
    rows = (out / "evaluations.csv").read_text().splitlines()[1:]
    saved = sorted(int(p.stem) for p in (out / "checkpoints").glob("*.npz"))
    assert saved == [int(row.split(",")[0]) for row in rows] and len(saved) >= 2
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    last = make_agent(
        envs.get_spec("hiddenhand/pico-v0"), game, str(out / "checkpoints" / f"{saved[-1]}.npz")
    )
    assert np.array_equal(
        last.logits_batch(np.ones((1, game.observation_layout.size))),
        make_agent(envs.get_spec("hiddenhand/pico-v0"), game, str(out)).logits_batch(
            np.ones((1, game.observation_layout.size))
        ),
    )


def test_ignored_fields_change_nothing_the_trained_policy_plays(tmp_path):
    out = selfplay.train(
        tiny(decisions=600, ignore_fields="last_played,last_winners", out=str(tmp_path / "run"))
    )
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agent = make_agent(spec, game, str(out))
    seen = np.random.default_rng(0).integers(0, 3, (8, game.observation_layout.size))
    changed = seen.copy()
    for name in ("last_played", "last_winners"):
        ignored = game.observation_layout.fields[name]
        changed[:, ignored.start : ignored.stop] = 1 - seen[:, ignored.start : ignored.stop]
    assert np.array_equal(agent.logits_batch(seen), agent.logits_batch(changed))
    hand = game.observation_layout.fields["hand"]
    changed[:, hand.start] += 1  # a field it reads
    assert not np.array_equal(agent.logits_batch(seen), agent.logits_batch(changed))


def test_relative_fields_read_each_seat_less_the_observer_and_the_saved_policy_agrees(tmp_path):
    """``--relative-fields scores``: the policy reads the margins, not the level, and the
    saved model (the transform folded into its first layer) plays what the learner does."""
    out = selfplay.train(
        tiny(decisions=600, relative_fields="scores", hidden="16,16", out=str(tmp_path / "run"))
    )
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    agent = make_agent(spec, game, str(out))
    seen = np.random.default_rng(0).integers(0, 30, (8, game.observation_layout.size))
    scores = game.observation_layout.fields["scores"]
    level = seen.copy()
    level[:, scores.start : scores.stop] += 17  # every seat's score up by the same
    assert np.allclose(agent.logits_batch(seen), agent.logits_batch(level), atol=1e-4)
    margin = seen.copy()
    margin[:, scores.start + 1] += 17  # the other seat's alone
    assert not np.allclose(agent.logits_batch(seen), agent.logits_batch(margin), atol=1e-4)
    learner = selfplay.Learner(game, [16, 16], relative=["scores"])
    observations = torch.as_tensor(seen, dtype=torch.float32)
    x = learner.inputs(observations)
    assert torch.equal(x[:, scores.start], torch.zeros(8))
    margins = observations[:, scores.start + 1] - observations[:, scores.start]
    assert torch.equal(x[:, scores.start + 1], margins)
    plain = NetworkAgent(learner.policy_layers(), learner.activation, False)
    assert np.allclose(
        plain.logits_batch(seen), learner.logits(observations).detach().numpy(), atol=1e-4
    )


@pytest.mark.parametrize("scale", ["none", "bounds"])
def test_thermometer_units_step_at_each_threshold_and_the_saved_policy_agrees(tmp_path, scale):
    """``--thermometer-fields scores`` with ``--relative-fields scores``: fixed units in the
    first hidden layers read the margin as a thermometer code, whatever the inputs' scale,
    and the saved model (a plain MLP, those units after the learned ones) plays what the
    learner does."""
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    learner = selfplay.Learner(
        game, [16, 16], True, scale, relative=["scores"], thermometer=["scores"], thresholds=(-2, 2)
    )
    scores = game.observation_layout.fields["scores"]
    seen = np.random.default_rng(0).integers(0, 2, (5, game.observation_layout.size))
    seen[:, scores.start], seen[:, scores.start + 1] = 20, [17, 19, 20, 21, 30]  # margins
    observations = torch.as_tensor(seen, dtype=torch.float32)
    x = learner.inputs(observations)
    for network in (learner.policy, learner.critic):
        units = torch.tanh(network[0](x))[:, 16:].detach().numpy()
        assert units.shape == (5, 5)  # one unit per threshold -2..2
        margins = np.array([-3, -1, 0, 1, 10])
        steps = np.where(margins[:, None] >= np.arange(-2, 3), 1.0, -1.0)
        assert np.allclose(units, steps, atol=0.05)  # each unit is on from its threshold
    layers = learner.policy_layers()
    assert [weight.shape for weight, _ in layers] == [(21, 84), (16, 21), (11, 16)]
    plain = NetworkAgent(layers, learner.activation, False)
    assert np.allclose(
        plain.logits_batch(seen), learner.logits(observations).detach().numpy(), atol=1e-4
    )
    fixed = list(learner.policy[0].parameters())
    assert len(fixed) == 2 and fixed[0].shape == (16, 84)  # the steps are not learned
    out = selfplay.train(
        tiny(
            decisions=600,
            hidden="16,16",
            relative_fields="scores",
            thermometer_fields="scores",
            thermometer_range="-2,2",
            out=str(tmp_path / "run"),
        )
    )
    spec = envs.get_spec("hiddenhand/pico-v0")
    agent = make_agent(spec, game, str(out))
    assert agent.layers[0][0].shape == (21, 84)


def test_a_relu_run_saves_a_relu_policy_that_plays_what_the_learner_does(tmp_path):
    out = selfplay.train(tiny(decisions=600, activation="relu", out=str(tmp_path / "run")))
    assert json.loads((out / "model.json").read_text())["activation"] == "relu"
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    learner = selfplay.Learner(game, [16, 16], activation="relu")
    assert isinstance(learner.policy[1], torch.nn.ReLU)
    seen = np.random.default_rng(0).integers(0, 3, (8, game.observation_layout.size))
    plain = NetworkAgent(learner.policy_layers(), learner.activation, False)
    expected = learner.logits(torch.as_tensor(seen, dtype=torch.float32)).detach().numpy()
    assert np.allclose(plain.logits_batch(seen), expected, atol=1e-5)
    assert make_agent(spec, game, str(out)).logits_batch(seen).shape == (8, game.num_actions)


def test_bfloat16_computes_in_bfloat16_and_keeps_weights_and_outputs_in_float32(tmp_path):
    """``--precision bfloat16``: the networks' products are rounded as bfloat16's (the
    outputs differ from float32's, by its rounding and no more), what comes out and the
    weights stay float32, and the run saves a float32 model that plays as every model."""
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    torch.manual_seed(0)
    exact = selfplay.Learner(game, [64, 64], joint=True)
    rounded = selfplay.Learner(game, [64, 64], joint=True, precision="bfloat16")
    rounded.load_state_dict(exact.state_dict())
    seen = torch.as_tensor(
        np.random.default_rng(0).integers(0, 3, (32, game.observation_layout.size)),
        dtype=torch.float32,
    )
    q, v = exact.values(seen)
    rounded_q, rounded_v = rounded.values(seen)
    for want, got in ((exact.logits(seen), rounded.logits(seen)), (q, rounded_q), (v, rounded_v)):
        assert got.dtype == torch.float32
        assert 0 < (got - want).abs().max() < 0.05 * (1 + want.abs().max())
    assert all(p.dtype == torch.float32 for p in rounded.parameters())
    out = selfplay.train(tiny(decisions=600, precision="bfloat16", out=str(tmp_path / "run")))
    assert json.loads((out / "config.json").read_text())["precision"] == "bfloat16"
    agent = make_agent(spec, game, str(out))
    assert agent.layers[0][0].dtype == np.float32
    assert 0 <= head_to_head(game, agent, make_agent(spec, game, "random"), 4)["win_rate"] <= 1


@pytest.mark.parametrize("precision", selfplay.PRECISIONS)
def test_prepared_inputs_give_what_the_networks_give_from_observations(precision):
    """``Learner.prepare`` rounds the inputs as autocast would: the policy and critic over
    a prepared batch give, bit for bit, what they give over the float32 inputs."""
    game = envs.get_spec("hiddenhand/pico-v0").make_game()
    torch.manual_seed(0)
    learner = selfplay.Learner(game, [64, 64], joint=True, precision=precision)
    seen = torch.as_tensor(
        np.random.default_rng(1).integers(0, 9, (32, game.observation_layout.size)),
        dtype=torch.float32,
    )
    x = learner.prepare(seen)
    assert x.dtype == getattr(torch, precision)
    for network in (learner.policy, learner.critic):
        assert torch.equal(learner.run(network, x), learner.run(network, learner.inputs(seen)))


def test_probabilities_are_the_softmax_over_the_legal_actions():
    """``probabilities`` floors the masked log-probabilities before ``exp``: the legal
    actions' probabilities are the softmax's, and the rest are below 2e-38."""
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 12, generator=generator) * 5
    masks = torch.rand(64, 12, generator=generator) < 0.5
    masks[:, 0] = True
    probs = selfplay.probabilities(selfplay.masked_log_probs(logits, masks))
    softmax = logits.masked_fill(~masks, -torch.inf).softmax(1)
    assert torch.allclose(probs[masks], softmax[masks], rtol=1e-6, atol=0)
    assert probs[~masks].max() < 2e-38


def test_the_average_of_the_last_checkpoints_is_a_model_every_tool_loads(tmp_path):
    run = selfplay.train(
        tiny(decisions=1200, eval_every=400, keep_checkpoints=True, out=str(tmp_path / "run"))
    )
    script = ["scripts/tools/average_checkpoints.py", str(run)]
    average = tmp_path / "average"
    for argv, message in (
        (["--last", "1"], "needs at least 2 checkpoints in all"),
        (["--last", "0"], "needs at least 1"),
        (["--last", "99"], "at most the 3 checkpoints of"),
        (["--spacing", "-1"], "needs 0 (every checkpoint) or more decisions"),
        (["--spacing", "800"], "at most the 1 checkpoints of"),  # the first past 800 alone
    ):
        result = subprocess.run(
            [sys.executable, *script, *argv, "--out", str(average)], capture_output=True, text=True
        )
        assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not average.exists()
    subprocess.run([sys.executable, *script, "--last", "2", "--out", str(average)], check=True)
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    averaged = make_agent(spec, game, str(average))
    files = sorted((run / "checkpoints").glob("*.npz"), key=lambda p: int(p.stem))[-2:]
    members = [make_agent(spec, game, str(path)) for path in files]
    rng = np.random.default_rng(0)
    seen = rng.integers(0, 3, (16, game.observation_layout.size)).astype(np.float32)
    masks = rng.random((16, game.num_actions)) < 0.5
    masks[:, 0] = True
    expected = np.mean([m.action_probabilities_batch(seen, masks) for m in members], 0)
    assert np.allclose(averaged.action_probabilities_batch(seen, masks), expected)
    assert not np.allclose(expected, members[-1].action_probabilities_batch(seen, masks))
    assert not hasattr(averaged, "logits_batch")  # an average of policies is not one softmax
    result = head_to_head(game, averaged, make_agent(spec, game, "random"), games=4)
    assert 0.0 <= result["win_rate"] <= 1.0
    weights = tmp_path / "weights"
    subprocess.run(
        [sys.executable, *script, "--last", "2", "--weights", "--out", str(weights)], check=True
    )
    swa = make_agent(spec, game, str(weights))
    first, last = (np.load(path) for path in files)
    mean = (first["weight_0"] + last["weight_0"]) / 2
    assert np.allclose(np.load(weights / "model.npz")["weight_0"], mean)
    assert swa.logits_batch(seen).shape == (16, game.num_actions)  # one network, batched
    made = json.loads((average / "model.json").read_text())["command"]
    trained = json.loads((run / "config.json").read_text())["command"]
    assert made == f"{trained} && python {' '.join(script)} --last 2 --out {average}"
    other = selfplay.train(
        tiny(decisions=800, eval_every=400, keep_checkpoints=True, seed=1, out=str(tmp_path / "b"))
    )
    seeds = [sys.executable, *script, str(other), "--last", "1"]
    refused = subprocess.run(
        [*seeds, "--weights", "--out", str(tmp_path / "w2")], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "other seeds' weights do not mix" in refused.stderr
    narrow = selfplay.train(
        tiny(
            decisions=400,
            eval_every=400,
            keep_checkpoints=True,
            hidden="8",
            out=str(tmp_path / "c"),
        )
    )
    mixed = [sys.executable, *script, str(narrow), "--last", "1", "--out", str(tmp_path / "m")]
    refused = subprocess.run(mixed, capture_output=True, text=True)
    assert refused.returncode == 2 and "differ in the game" in refused.stderr
    subprocess.run([*seeds, "--out", str(tmp_path / "ensemble")], check=True)
    ensemble = make_agent(spec, game, str(tmp_path / "ensemble"))
    ends = [make_agent(spec, game, str(run_ / "model.npz")) for run_ in (run, other)]
    expected = np.mean([m.action_probabilities_batch(seen, masks) for m in ends], 0)
    assert np.allclose(ensemble.action_probabilities_batch(seen, masks), expected)
    again = subprocess.run(
        [sys.executable, *script, "--last", "2", "--out", str(average)],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 2 and "--overwrite" in again.stderr
    arrays = dict(np.load(average / "model.npz"))
    del arrays["member1_bias_0"]
    np.savez(average / "model.npz", **arrays)
    with pytest.raises(ValueError, match="not a readable saved network"):
        make_agent(spec, game, str(average))


def test_init_starts_the_policy_from_a_saved_network_and_refuses_what_does_not_fit(tmp_path):
    saved = selfplay.train(tiny(decisions=300, hidden="16,16", out=str(tmp_path / "saved")))
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    args = tiny(hidden="16,16", init=str(saved), out=str(tmp_path / "run"))
    run = selfplay.SelfPlay(args, game, {})
    expected = make_agent(spec, game, str(saved)).layers
    for (weight, bias), (start, start_bias) in zip(
        run.learner.policy_layers(), expected, strict=True
    ):
        assert np.array_equal(weight, start) and np.array_equal(bias, start_bias)
    for overrides, message in (
        ({"hidden": "32,32"}, "the saved network is 16,16 tanh; pass --hidden"),
        ({"activation": "relu"}, "the saved network is 16,16 tanh; pass --hidden"),
        ({"relative_fields": "scores"}, "reads the raw observation"),
        ({"init": str(tmp_path / "nothing")}, "--init: no saved network at"),
    ):
        with pytest.raises(ValueError, match=message):
            selfplay.check(dataclasses.replace(args, **overrides))
    pickup = tiny(env="hiddenhand/pickup-v0", hidden="16,16", init=str(saved))
    with pytest.raises(ValueError, match="--init: .*made for another env"):
        selfplay.check(pickup)


def test_a_self_play_network_ships_whole_in_place_of_an_sb3_model(tmp_path, monkeypatch):
    """``scripts/tools/ship_baseline.py`` on a self-play run folder copies its network and
    metadata (``--play`` replacing the network's own), and refuses to ship it beside an SB3
    model of the same configuration: one agent is shipped per configuration."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "tools" / "ship_baseline.py"
    module_spec = importlib.util.spec_from_file_location("ship_baseline", path)
    ship_baseline = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(ship_baseline)
    run = selfplay.train(tiny(decisions=400, out=str(tmp_path / "run")))
    shipped = ship_baseline.ship_network(run, to=tmp_path / "pico_2p.npz", play="greedy")
    assert shipped.read_bytes() == (run / "model.npz").read_bytes()
    metadata = json.loads(shipped.with_suffix(".json").read_text())
    assert metadata["play"] == "greedy"
    assert metadata["command"] == json.loads((run / "model.json").read_text())["command"]
    spec = envs.get_spec("hiddenhand/pico-v0")
    assert make_agent(spec, spec.make_game(), str(shipped)).deterministic
    sb3 = tmp_path / "baselines" / "pico_2p.zip"
    sb3.parent.mkdir()
    sb3.write_bytes(b"an SB3 model")
    monkeypatch.setattr(ship_baseline, "baseline_path", lambda game: sb3)
    with pytest.raises(FileExistsError, match="pico_2p.zip is shipped .*git mv"):
        ship_baseline.ship_network(run)
    assert not sb3.with_suffix(".npz").exists()
    with pytest.raises(ValueError, match="play 'best' is not allowed"):
        ship_baseline.ship_network(run, to=tmp_path / "other.npz", play="best")
    half = ship_baseline.ship_network(run, to=tmp_path / "half" / "pico_2p.npz", half=True)
    with np.load(half) as arrays, np.load(run / "model.npz") as full:
        assert {a.dtype for a in arrays.values()} == {np.dtype(np.float16)}
        assert all(np.array_equal(arrays[k], full[k].astype(np.float16)) for k in full)
    assert half.stat().st_size < 0.6 * shipped.stat().st_size
    assert json.loads(half.with_suffix(".json").read_text())["dtype"] == "float16"
    halved, whole = (make_agent(spec, spec.make_game(), str(p)) for p in (half, run))
    assert all(w.dtype == np.float32 for layer in halved.layers for w in layer)
    x = np.random.default_rng(0).random((8, spec.make_game().observation_layout.size))
    masks = np.ones((8, 11), dtype=bool)
    gap = halved.action_probabilities_batch(x, masks) - whole.action_probabilities_batch(x, masks)
    assert 0 < np.abs(gap).max() < 1e-2  # rounded once, and only rounded
