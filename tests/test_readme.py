"""The README's Python examples run as written, and its training commands parse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_example_runs(code, capsys):
    code = re.sub(r"\.learn\([\d_]+\)", ".learn(64)", code)  # one short rollout is enough
    code = code.replace('"MlpPolicy", env,', '"MlpPolicy", env, n_steps=64, batch_size=64,')
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})


TRAIN_COMMANDS = [c for c in re.findall(r"python -m training\.train (.*)", README) if c != "--help"]


def test_the_readmes_training_commands_parse():
    """Every training command the README gives is accepted as written."""
    from training.train import parse_args

    assert len(TRAIN_COMMANDS) >= 3
    for command in TRAIN_COMMANDS:
        parse_args(command.strip().strip("`").split())
