"""Observation layouts: named views of one flat float32 array (as OpenSpiel's observers).

A game declares its fields once, in order; encoders write into the named views
and agents read them back with the same names, so nobody counts offsets by hand.
The layout also prints itself as the index table each game's docstring carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Field:
    name: str
    shape: tuple[int, ...]
    start: int
    description: str
    low: float
    high: float

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stop(self) -> int:
        return self.start + self.size


class ObservationLayout:
    """An ordered list of named fields laid end to end in one flat vector."""

    def __init__(self) -> None:
        self.fields: dict[str, Field] = {}
        self.size = 0
        self._spans: list[tuple[str, slice, tuple[int, ...]]] = []

    def add(
        self,
        name: str,
        shape: int | tuple[int, ...],
        description: str,
        low: float = 0.0,
        high: float = 1.0,
    ) -> ObservationLayout:
        """Declare the next field; ``low``/``high`` bound every entry (they make the Box)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if name in self.fields:
            raise ValueError(f"field {name!r} is declared twice")
        field = Field(name, shape, self.size, description, float(low), float(high))
        self.fields[name] = field
        self._spans.append((name, slice(field.start, field.stop), shape))
        self.size = field.stop
        return self

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-entry lower and upper bounds of the flat vector."""
        low, high = self.zeros(), self.zeros()
        for f in self.fields.values():
            low[f.start : f.stop], high[f.start : f.stop] = f.low, f.high
        return low, high

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.float32)

    def starts(self, *names: str) -> tuple[int, ...]:
        """Where each named field starts in the flat vector."""
        return tuple(self.fields[name].start for name in names)

    def views(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Named views into ``flat`` (writes through)."""
        return {name: flat[span].reshape(shape) for name, span, shape in self._spans}

    def table(self) -> str:
        """The layout as a Markdown table of index ranges, for documentation."""
        rows = ["| indices | field | shape | range | meaning |", "|---|---|---|---|---|"]
        for f in self.fields.values():
            shape = " × ".join(map(str, f.shape))
            span = f"{f.low:g}-{f.high:g}"
            rows.append(
                f"| {f.start}-{f.stop - 1} | `{f.name}` | {shape} | {span} | {f.description} |"
            )
        return "\n".join(rows)
