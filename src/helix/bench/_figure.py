"""One measured figure, in the contract's benchmark output format."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_json


@dataclass(frozen=True, slots=True)
class Figure:
    """A value a benchmark measured, optionally beside a baseline from the same run."""

    suite: str
    name: str
    value: float
    unit: str
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    baseline: float | None = None
    """The same work done the plainest way, measured in the same run."""

    @property
    def ratio(self) -> float | None:
        """``value / baseline`` (above 1 means faster than the baseline for rates)."""
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline

    def to_dict(self) -> dict[str, Any]:
        """Return the figure as the contract's JSON object."""
        out: dict[str, Any] = {
            "suite": self.suite,
            "name": self.name,
            "value": _round(self.value),
            "unit": self.unit,
            "params": self.params,
        }
        if self.baseline is not None:
            out["baseline"] = _round(self.baseline)
            out["ratio"] = _round(self.ratio or 0.0)
        return out

    def to_json(self) -> str:
        """Return the figure as one line of JSON."""
        return to_json(self.to_dict()).decode()


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    digits = max(0, 4 - math.floor(math.log10(abs(value))))
    return round(value, digits)


def percentile(samples: list[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) of ``samples``, nearest-rank."""
    ordered = sorted(samples)
    rank = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return ordered[rank]
