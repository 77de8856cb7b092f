"""RLlib exports as agents in the default install: loaded with torch alone, never ray."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
import torch

import envs
from envs.core.spec import is_model_path, model_loader
from training import evaluate
from training.agents.policy import policy_metadata
from training.agents.rllib_policy import (
    RLlibPolicyAgent,
    build_network,
    load_rllib_agent,
    save_rllib_agent,
)


def tiny_export(folder, env_id="hiddenhand/pico-v0", options=None, hidden=(8,)):
    """An export as ``training.rllib`` writes it, with a network made by torch directly."""
    options = options or {}
    spec = envs.get_spec(env_id)
    game = spec.make_game(**options)
    torch.manual_seed(0)
    network = build_network(game.observation_layout.size, list(hidden), game.num_actions, "tanh")
    return save_rllib_agent(network, folder / "agent.pt", policy_metadata(env_id, game, options))


def test_an_export_loads_without_ray_by_file_or_folder(tmp_path):
    path = tiny_export(tmp_path)
    code = (
        "import sys, envs\n"
        f"spec = envs.get_spec('hiddenhand/pico-v0'); game = spec.make_game()\n"
        f"for name in ({str(path)!r}, {str(tmp_path)!r}):\n"
        "    agent = spec.make_agent(name, game)\n"
        "    assert type(agent).__name__ == 'RLlibPolicyAgent', agent\n"
        "assert 'ray' not in sys.modules, 'loading an export imported ray'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    from training.agents.rllib_policy import load_rllib_agent as rllib

    assert model_loader(str(path)) == rllib and model_loader(str(tmp_path)) == rllib
    assert is_model_path(str(path)) and model_loader("heuristic") is None
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["kind"] == "rllib" and meta["hidden"] == [8] and meta["activation"] == "tanh"


def test_the_exported_agent_plays_legal_greedy_or_sampled_moves(tmp_path):
    path = tiny_export(tmp_path, "hiddenhand/pickup-v0", {"num_players": 3})
    spec = envs.get_spec("hiddenhand/pickup-v0")
    game = spec.make_game(num_players=3)
    agent = spec.make_agent(str(path), game)
    assert isinstance(agent, RLlibPolicyAgent) and agent.deterministic
    rng = np.random.default_rng(0)
    state = game.new_initial_state(np.random.default_rng(1))
    player = state.to_act()[0]
    observation = game.observation(state, player)
    mask = state.legal_mask(player).astype(np.int8)
    action = agent.act(observation, mask, rng)
    assert mask[action]
    greedy = agent.action_probabilities(observation, mask)
    assert greedy[action] == 1 and greedy.sum() == 1
    agent.deterministic = False
    probabilities = agent.action_probabilities(observation, mask)
    assert np.isclose(probabilities.sum(), 1) and not probabilities[mask == 0].any()
    assert all(mask[agent.act(observation, mask, rng)] for _ in range(50))
    batch = agent.action_probabilities_batch(np.stack([observation] * 2), np.stack([mask] * 2))
    assert np.allclose(batch, probabilities)
    meta = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps(meta | {"play": "sample"}))
    assert not spec.make_agent(str(path), game).deterministic  # as its metadata says


def test_an_export_is_checked_against_the_env_it_is_loaded_into(tmp_path):
    path = tiny_export(tmp_path)
    pickup = envs.get_spec("hiddenhand/pickup-v0")
    with pytest.raises(ValueError, match=r"agent\.pt was made for another env"):
        pickup.make_agent(str(path), pickup.make_game())
    pico = envs.get_spec("hiddenhand/pico-v0")
    with pytest.raises(ValueError, match="num_players: model 2, env 3"):
        pico.make_agent(str(path), pico.make_game(num_players=3))
    forslag = envs.get_spec("hiddenhand/forslag-v0")
    other = tiny_export(tmp_path / "f", "hiddenhand/forslag-v0", {"board_play": "simultaneous"})
    with pytest.raises(ValueError, match="board_play: model 'simultaneous', env 'in_turn'"):
        forslag.make_agent(str(other), forslag.make_game())
    with pytest.raises(ValueError, match="no RLlib export"):
        load_rllib_agent(tmp_path / "absent.pt", pico.make_game(), pico.aec_id)
    path.with_suffix(".json").unlink()
    with pytest.raises(ValueError, match="no metadata file agent.json"):
        pico.make_agent(str(path), pico.make_game())


def test_an_export_is_an_agent_wherever_saved_models_are(tmp_path, capsys):
    path = tiny_export(tmp_path)
    evaluate.main(["--env", "hiddenhand/pico-v0", "--agents", str(path), "random", "--games", "4"])
    assert f"| {path} | random |" in capsys.readouterr().out
    view = gymnasium.make("hiddenhand/Pico-v0", opponent=str(tmp_path))
    view.reset(seed=0)
    assert type(view.unwrapped.opponents[0]).__name__ == "RLlibPolicyAgent"
    view.step(int(np.flatnonzero(view.unwrapped.action_masks())[0]))
