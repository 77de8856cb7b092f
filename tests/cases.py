"""Every registered id with every configuration it declares: the shared suites' cases."""

from __future__ import annotations

import pytest

import envs

CASES = [
    pytest.param(env_id, config, id=f"{env_id}-{'-'.join(f'{k}={v}' for k, v in config.items())}")
    for env_id in envs.ids()
    for config in envs.get_spec(env_id).configurations
]
