"""The shipped agents, the rule-based agents and the panel's search members (``pimc``,
``ismcts``) choose as they did when ``tests/data/shipped_choices.json`` was recorded
(``python scripts/record_choices.py``): the guard that a refactor of the rules, the
observations, the features, the batched engines or the agents changed no choice."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORDED = json.loads((ROOT / "tests" / "data" / "shipped_choices.json").read_text())


def recorder():
    spec = importlib.util.spec_from_file_location(
        "record_choices", ROOT / "scripts" / "record_choices.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = recorder()


CASES = pytest.mark.parametrize(
    "env_id, options", RECORDER.SHIPPED, ids=[RECORDER.key(*case) for case in RECORDER.SHIPPED]
)


@CASES
def test_the_agents_choose_as_recorded(env_id, options):
    expected = RECORDED[RECORDER.key(env_id, options)]
    assert len(expected["ppo"]) == RECORDER.POSITIONS
    chosen = RECORDER.choices(env_id, options)
    assert chosen == {name: expected[name] for name in chosen}


@CASES
def test_the_search_members_choose_as_recorded(env_id, options):
    expected = RECORDED[RECORDER.key(env_id, options)]
    chosen = RECORDER.choices(env_id, options, search=True)
    assert set(chosen) == set(RECORDER.SEARCH)
    assert chosen == {name: expected[name] for name in chosen}
