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


CASES = pytest.mark.parametrize("name", list(RECORDER.SHIPPED))


def recorded(name: str) -> dict[str, list[int]]:
    assert name in RECORDED, (
        f"no recorded choices for the shipped agent {name}: run python scripts/record_choices.py"
    )
    return RECORDED[name]


@CASES
def test_the_agents_choose_as_recorded(name):
    expected = recorded(name)
    assert len(expected["ppo"]) == RECORDER.POSITIONS
    chosen = RECORDER.choices(*RECORDER.SHIPPED[name])
    assert chosen == {agent: expected[agent] for agent in chosen}


@CASES
def test_the_search_members_choose_as_recorded(name):
    expected = recorded(name)
    chosen = RECORDER.choices(*RECORDER.SHIPPED[name], search=True)
    assert set(chosen) == set(RECORDER.SEARCH)
    assert chosen == {agent: expected[agent] for agent in chosen}


def test_every_recorded_configuration_is_shipped():
    assert set(RECORDED) == set(RECORDER.SHIPPED)
