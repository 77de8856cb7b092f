"""The Ray RLlib backend (``training.rllib``): needs the ``rllib`` extra (``make test-rllib``)."""

from __future__ import annotations

import numpy as np
import pytest

ray = pytest.importorskip("ray")  # the default install has no ray; the rllib venv runs these

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

import envs  # noqa: E402
from training import evaluate  # noqa: E402
from training import rllib as backend  # noqa: E402
from training.agents.rllib_policy import RLlibPolicyAgent  # noqa: E402


def random_episode(env: backend.HiddenHandMultiAgentEnv, rng: np.random.Generator) -> dict:
    """One episode of random legal actions through the adapter, checking its contract."""
    observations, infos = env.reset(seed=int(rng.integers(1000)))
    returns = dict.fromkeys(env.agents, 0.0)
    steps = 0
    while True:
        assert observations, "a live step shows at least one learning seat"
        for agent, observation in observations.items():
            assert agent in env.agents and observation in env.observation_spaces[agent]
            assert env._infos[agent]["choosing"] and env.seats[agent] is None
        actions = {
            agent: int(rng.choice(np.flatnonzero(observation["action_mask"])))
            for agent, observation in observations.items()
        }
        observations, rewards, terminateds, truncateds, infos = env.step(actions)
        steps += 1
        assert set(rewards) == set(env.agents) and not truncateds["__all__"]
        for agent, reward in rewards.items():
            returns[agent] += reward
        if terminateds["__all__"]:
            assert (
                set(observations) == set(env.agents) == {a for a in terminateds if a != "__all__"}
            )
            return {"returns": returns, "steps": steps}
        assert steps <= 10 * env.game.max_decisions


def test_the_adapter_asks_only_the_learning_seats_that_choose():
    env = backend.HiddenHandMultiAgentEnv(
        {"env_id": "hiddenhand/pico-v0", "options": {"reward_mode": "win"}}
    )
    rng = np.random.default_rng(0)
    for _ in range(5):
        episode = random_episode(env, rng)
        assert np.isclose(sum(episode["returns"].values()), 0.0)  # both seats learn: zero-sum
    frozen = backend.HiddenHandMultiAgentEnv(
        {"env_id": "hiddenhand/pickup-v0", "options": {"num_players": 3}, "opponents": ["random"]}
    )
    for _ in range(3):
        random_episode(frozen, rng)
        assert len(frozen.agents) == 1  # one learning seat, drawn each episode


@pytest.mark.slow
@pytest.mark.parametrize("env_id", envs.ids())
def test_the_adapter_runs_every_id_and_configuration(env_id):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    spec = envs.get_spec(env_id)
    rng = np.random.default_rng(0)
    for configuration in spec.configurations:
        for opponents in (["self"], ["self", "random"]):
            env = backend.HiddenHandMultiAgentEnv(
                {"env_id": env_id, "options": configuration, "opponents": opponents}
            )
            for _ in range(2):
                random_episode(env, rng)
        # RLlib's own check steps unmasked random actions: with "penalize" they end the game.
        check_multiagent_environments(
            backend.HiddenHandMultiAgentEnv(
                {"env_id": env_id, "options": configuration, "illegal_action": "penalize"}
            )
        )


def masked_module(env: backend.HiddenHandMultiAgentEnv):
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return RLModuleSpec(
        module_class=backend.ActionMaskingTorchRLModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config=DefaultModelConfig(fcnet_hiddens=[16], vf_share_layers=False),
    ).build()


@pytest.mark.parametrize("env_id", ["hiddenhand/pickup-v0", "hiddenhand/easter_collection-v0"])
def test_the_masking_module_never_samples_an_illegal_action(env_id):
    env = backend.HiddenHandMultiAgentEnv({"env_id": env_id})
    module = masked_module(env)
    rng = np.random.default_rng(0)
    observations = []
    for _ in range(3):  # the decisions of a few random games
        views, _ = env.reset(seed=int(rng.integers(1000)))
        while views:
            observations += views.values()
            actions = {
                a: int(rng.choice(np.flatnonzero(v["action_mask"]))) for a, v in views.items()
            }
            views, _, done, _, _ = env.step(actions)
            if done["__all__"]:
                break
    masks = torch.as_tensor(np.stack([o["action_mask"] for o in observations]))
    batch = {
        Columns.OBS: {
            "observations": torch.as_tensor(np.stack([o["observations"] for o in observations])),
            "action_mask": masks,
        }
    }
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    distribution = module.get_exploration_action_dist_cls().from_logits(logits)
    for _ in range(200):
        actions = distribution.sample()
        assert masks.gather(1, actions[:, None]).all(), "sampled an illegal action"
    # The exported network is the same policy: its masked greedy choice is the module's.
    network = backend.policy_network(
        {k: v.detach().numpy() for k, v in module.state_dict().items()}, env.game, [16], "tanh"
    )
    agent = RLlibPolicyAgent(network)
    chosen = [agent.act(o["observations"], o["action_mask"], None) for o in observations]
    assert chosen == logits.argmax(dim=1).tolist()


def test_arguments_are_checked_before_ray_starts(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    for argv, message in [
        (["--address", "somewhere"], "--address 'somewhere'; allowed: local, auto"),
        (["--opponents", "self", "nobody"], "--opponents 'nobody'"),
        (["--out", str(tmp_path / "full")], "already holds files; pass --overwrite"),
        (["--env", "hiddenhand/nope-v0"], "unknown --env"),
        (["--num-env-runners", "-1"], "--num-env-runners must be at least 0"),
        ([], "--out DIR is required"),
    ]:
        if "--out" not in argv and message != "--out DIR is required":
            argv = [*argv, "--out", str(tmp_path / "run")]
        with pytest.raises(SystemExit):
            backend.parse_args(argv)
        assert message in capsys.readouterr().err
    assert not ray.is_initialized()


def test_help_names_the_python_m_command(capsys):
    with pytest.raises(SystemExit):
        backend.parse_args(["--help"])
    assert capsys.readouterr().out.startswith("usage: python -m training.rllib ")


@pytest.fixture(scope="module")
def two_node_cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.mark.parametrize(
    "env_id, extra",
    [("hiddenhand/pico-v0", []), ("hiddenhand/pickup-v0", ["--opponents", "self", "heuristic"])],
)
def test_training_on_a_two_node_cluster_exports_an_agent(
    two_node_cluster, tmp_path, capsys, env_id, extra
):
    out = tmp_path / "run"
    backend.main(
        ["--env", env_id, "--iterations", "2", "--num-env-runners", "2"]
        + ["--address", two_node_cluster.address, "--out", str(out), "--eval-every", "1"]
        + ["--eval-games", "4", "--train-batch-size", "256", "--minibatch-size", "64"]
        + ["--num-epochs", "2", "--net-arch", "32"]
        + extra
    )
    output = capsys.readouterr().out
    assert "2 env runner(s) on 2 node(s)" in output
    assert "[2/2]" in output and "vs heuristic: win rate" in output
    assert {"agent.pt", "agent.json", "evaluations.csv", "checkpoint", "tensorboard"} <= {
        p.name for p in out.iterdir()
    }
    assert len((out / "evaluations.csv").read_text().splitlines()) == 1 + 2 * 2
    evaluate.main(["--env", env_id, "--agents", str(out / "agent.pt"), "random", "--games", "4"])
    assert f"| {out / 'agent.pt'} | random |" in capsys.readouterr().out
