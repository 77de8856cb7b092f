"""A self-play run stopped part-way, as when its machine goes away: what the tests of
``training.selfplay --resume`` and of the benchmark's resumed runs stop runs with."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from training.selfplay import SelfPlay


class Stopped(Exception):
    """The run was killed (the tests' stand-in for a machine that goes away)."""


@contextlib.contextmanager
def stopped_after_saves(saves: int) -> Iterator[None]:
    """Within it, a run that has saved its state ``saves`` times plays one more rollout
    and update, then stops (``Stopped``), losing them; the run must stop."""
    state_dict, collect = SelfPlay.state_dict, SelfPlay.collect
    saved: list[int] = []
    lost: list[int] = []

    def saving(self):
        saved.append(1)
        return state_dict(self)

    def stopping(self, progress=0.0):
        if len(saved) == saves:
            lost.append(1)
            if len(lost) == 2:
                raise Stopped
        return collect(self, progress)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SelfPlay, "state_dict", saving)
        patch.setattr(SelfPlay, "collect", stopping)
        with pytest.raises(Stopped):
            yield
