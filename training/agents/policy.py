"""Trained MaskablePPO policies as agents, saved with the facts needed to check them.

A saved policy is a pair: ``<name>.zip`` (the SB3 model) and ``<name>.json`` (the
env id, the game options and the spaces it was trained on). Loading checks the
pair against the game it is meant to play and says what differs.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.game import Game
from envs.core.spec import get_spec, spec_of

#: Trained baselines shipped with the package, one per game and player count.
BASELINES = Path(__file__).resolve().parent.parent / "baselines"
#: A shipped agent's file: an SB3 model (this module's), or a network saved by the
#: self-play learner (``training.agents.network``); its metadata is the ``.json`` beside it.
SHIPPED_SUFFIXES = (".zip", ".npz")
#: How a saved policy chooses (its metadata's ``play``): the best legal logit, or a draw
#: from the softmax over the legal actions (a mixed strategy).
PLAYS = ("greedy", "sample")
#: How a policy chooses unless told: shipping's default, and the play of a metadata file
#: that names none (files from before the key existed).
DEFAULT_PLAY = "greedy"


def policy_metadata(env_id: str, game: Game, options: dict[str, Any], **extra: Any) -> dict:
    return {
        "env_id": get_spec(env_id).aec_id,
        "options": options,
        "num_players": game.num_players,
        "observation_size": game.observation_layout.size,
        "num_actions": game.num_actions,
        **extra,
    }


def save_policy(model, path: str | Path, metadata: dict) -> Path:
    """Save ``model`` to ``path`` (.zip) with its metadata beside it (.json)."""
    path = Path(path).with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    path.with_suffix(".json").write_text(json.dumps(metadata, indent=2, default=str))
    return path


class LogitsAgent:
    """A policy network behind the agent protocol, written once for every kind of network:
    subclasses give ``logits_batch`` (unmasked action logits, one row per observation).

    Greedy by default (``act`` takes the first best legal logit, and ``action_probabilities``
    is the one-hot of it); ``deterministic=False`` samples from the softmax over the legal
    actions with the ``rng`` it is given, and ``action_probabilities`` is that softmax.
    ``action_probabilities_batch`` does the same for a batch in one forward pass.
    """

    def __init__(self, deterministic: bool = True) -> None:
        self.deterministic = deterministic

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The unmasked action logits for one observation."""
        return self.logits_batch(np.asarray(observation)[None])[0]

    def _masked(self, logits: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(action_masks).astype(bool), logits, -np.inf)

    def _distribution(self, masked: np.ndarray) -> np.ndarray:
        """The policy over the actions for masked logits (rows), float64."""
        masked = masked.astype(np.float64)
        if self.deterministic:
            return np.eye(masked.shape[-1])[np.argmax(masked, axis=-1)]
        weights = np.exp(masked - masked.max(axis=-1, keepdims=True))
        return weights / weights.sum(axis=-1, keepdims=True)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        logits = self._masked(self.logits(observation), action_mask)
        if self.deterministic:
            return int(np.argmax(logits))
        weights = np.exp(logits - logits.max())
        return int(rng.choice(len(weights), p=weights / weights.sum()))

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self._distribution(self._masked(self.logits(observation), action_mask))

    def action_probabilities_batch(
        self, observations: np.ndarray, action_masks: np.ndarray
    ) -> np.ndarray:
        """``action_probabilities`` of every row of ``observations`` (B, obs) with
        ``action_masks`` (B, actions): (B, actions), one forward pass."""
        return self._distribution(self._masked(self.logits_batch(observations), action_masks))


class PolicyAgent(LogitsAgent):
    """A MaskablePPO (or PPO) model as an agent (see ``LogitsAgent`` for how it chooses).

    It runs the actor network directly rather than through SB3's ``predict``, which
    checks and converts its input on every call: the same choices, about 4× faster for
    plain MLPs and 1.8× with a game's feature extractor (``scripts/measure/bench_policy.py``).
    """

    def __init__(self, model, deterministic: bool = True) -> None:
        super().__init__(deterministic)
        self.model = model

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        """The actor's unmasked action logits for a batch of observations (one row each)."""
        import torch

        policy = self.model.policy
        with torch.no_grad():
            features = policy.extract_features(
                torch.tensor(np.asarray(observations), dtype=torch.float32),
                policy.pi_features_extractor,
            )
            return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()


def hidden_layers_of(policy) -> list[int] | dict:
    """An SB3 policy's hidden layer sizes: one list where the actor and the critic share
    them (SB3's default spells ``[64, 64]`` as ``{"pi": [64, 64], "vf": [64, 64]}``), the
    dict as SB3 holds it where they differ."""
    hidden = policy.net_arch
    if isinstance(hidden, dict) and hidden.get("pi") == hidden.get("vf"):
        return hidden["pi"]
    return hidden


def load_policy(
    path: str | Path, game: Game, env_id: str, same_options: bool = True
) -> PolicyAgent:
    """Load a saved policy for ``game``; raise ValueError if it was made for another env.

    A model saved by ``save_policy`` is checked against its metadata: the env, the game
    options (the whole configuration, unless ``same_options`` is False: a warm start from
    another configuration whose spaces agree) and the spaces. Its ``play`` (``PLAYS``)
    says how it chooses: ``greedy`` (the default) or ``sample`` (a mixed strategy, drawn
    with the ``rng`` given to ``act``). A plain SB3 ``model.save()`` file (MaskablePPO or
    PPO, no metadata beside it) loads greedy, with a warning, where its spaces fit.
    """
    path = Path(path).with_suffix(".zip")
    if not path.is_file():
        raise ValueError(f"no saved model at {path}")
    meta_path = path.with_suffix(".json")
    play = DEFAULT_PLAY
    if meta_path.is_file():
        play = check_metadata(path, game, env_id, same_options)["play"]
    else:
        warnings.warn(
            f"{path} has no metadata file {meta_path.name} beside it: loading it as a plain "
            "SB3 model, checked only by its spaces (it may have been trained on another game)",
            stacklevel=2,
        )
    model = read_model(path)
    if model.observation_space.shape != (game.observation_layout.size,) or (
        getattr(model.action_space, "n", None) != game.num_actions
    ):
        raise ValueError(
            f"{path} has spaces {model.observation_space} / {model.action_space}, "
            f"the env needs ({game.observation_layout.size},) / Discrete({game.num_actions})"
        )
    return PolicyAgent(model, deterministic=play == "greedy")


def check_metadata(
    model: Path, game: Game, env_id: str, same_options: bool = True, kind: str | None = None
) -> dict:
    """The metadata beside the saved ``model`` file (its ``.json``; its ``play`` filled in:
    ``DEFAULT_PLAY`` where absent); raise ValueError naming the file if it is missing or
    unreadable, says another ``kind`` than the one given, says the model was made for
    another env or (where ``same_options``) other options, or names an unknown ``play``."""
    meta_path = model.with_suffix(".json")
    if not meta_path.is_file():
        raise ValueError(f"{model} has no metadata file {meta_path.name} beside it")
    try:
        meta = json.loads(meta_path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{meta_path} is not valid JSON: {error}") from error
    if kind is not None and meta.get("kind") != kind:
        raise ValueError(f"{meta_path} says kind {meta.get('kind')!r}, not {kind!r}")
    meta.setdefault("play", DEFAULT_PLAY)
    if meta["play"] not in PLAYS:
        raise ValueError(f"{meta_path} says play {meta['play']!r}; allowed: {', '.join(PLAYS)}")
    spec = get_spec(env_id)
    expected = {
        "env_id": spec.aec_id,
        "num_players": game.num_players,
        "observation_size": game.observation_layout.size,
        "num_actions": game.num_actions,
    }
    mismatches = [
        f"{key}: model {meta.get(key)!r}, env {value!r}"
        for key, value in expected.items()
        if meta.get(key) != value
    ]
    if mismatches:
        raise ValueError(f"{model} was made for another env ({'; '.join(mismatches)})")
    if not same_options:
        return meta
    # Compared as JSON (how the options were saved: tuples become lists, keys strings).
    env_config = as_json(dataclasses.asdict(game.config))
    trained_on = as_json({**dataclasses.asdict(type(game.config)()), **meta.get("options", {})})
    differ = [key for key in env_config if trained_on.get(key) != env_config[key]]
    if differ:
        raise ValueError(
            f"{model} was trained with other game options: "
            + "; ".join(f"{k}: model {trained_on.get(k)!r}, env {env_config[k]!r}" for k in differ)
        )
    return meta


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def read_model(path: Path):
    """The SB3 model in ``path``: MaskablePPO, or PPO for a plain SB3 file."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    for algorithm in (MaskablePPO, PPO):
        try:
            return algorithm.load(path, device="cpu")
        except (zipfile.BadZipFile, EOFError, KeyError, ValueError, RuntimeError, TypeError) as e:
            error = e
    raise ValueError(f"{path} is not a readable SB3 model (MaskablePPO or PPO): {error}")


def actor_and_critic_parameters(policy) -> tuple[list, list]:
    """A MaskablePPO policy's parameters, split into the actor's and the value network's
    (SB3 names the latter ``mlp_extractor.value_net`` and ``value_net``)."""
    named = list(policy.named_parameters())
    return (
        [p for name, p in named if "value" not in name],
        [p for name, p in named if "value" in name],
    )


def baseline_name(game: Game) -> str:
    """The shipped baseline's file stem for a configuration: the game, the player count,
    then every option that differs from its default (``forslag_4p``,
    ``forslag_4p_board_play-simultaneous``)."""
    defaults = dataclasses.asdict(type(game.config)())
    options = dataclasses.asdict(game.config)
    changed = "".join(
        f"_{key}-{value}"
        for key, value in sorted(options.items())
        if key != "num_players" and as_json(value) != as_json(defaults[key])
    )
    return f"{spec_of(game).name}_{game.num_players}p{changed}"


def baseline_path(game: Game) -> Path:
    """Where an SB3 baseline of ``game``'s configuration is shipped
    (``scripts/tools/ship_baseline.py`` writes it)."""
    return BASELINES / f"{baseline_name(game)}.zip"


def shipped_files() -> list[Path]:
    """The shipped agents' files (``BASELINES``), one per configuration, by name."""
    return sorted(p for suffix in SHIPPED_SUFFIXES for p in BASELINES.glob(f"*{suffix}"))


def shipped_path(game: Game, folder: Path | None = None) -> Path | None:
    """The file of the agent shipped in ``folder`` (by default ``BASELINES``) for
    ``game``'s configuration, of either kind (``SHIPPED_SUFFIXES``); None if none is."""
    found = [(folder or BASELINES) / f"{baseline_name(game)}{s}" for s in SHIPPED_SUFFIXES]
    return next((path for path in found if path.is_file()), None)


def shipped_policy(game: Game) -> Any:
    """The trained agent shipped for ``game``'s configuration (``opponent="ppo"``): an SB3
    model or a self-play network, loaded (and checked) as any saved model of its kind."""
    spec = spec_of(game)
    path = shipped_path(game)
    if path is None:
        shipped = [p.stem for p in shipped_files() if p.stem.startswith(f"{spec.name}_")]
        raise ValueError(
            f"no shipped baseline for {spec.aec_id} in this configuration "
            f"({baseline_name(game)}); shipped: {', '.join(shipped) or 'none'}"
        )
    return spec.make_agent(str(path), game)
