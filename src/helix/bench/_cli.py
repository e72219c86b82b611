"""``helix bench cli``: how long a person waits for the command line to answer.

* ``help_ms``: the median wall time of a cold ``helix --help`` (a new interpreter each
  time, running what the ``helix`` console script runs, as typed in a shell), against
  a bare ``python -c pass`` (the baseline: what any Python command costs before it
  imports anything) measured in the same run.
* ``import_ms``: the same for ``python -c "import helix"`` (a library's first line).

The three commands are timed in turn, round after round, so a busy moment of the
machine weighs on all of them alike. ``ratio`` is ``value / baseline``.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ._figure import Figure

SUITE = "cli"
GOAL_HELP_MS = 300.0
"""Issue 14's ceiling for ``helix --help`` and every command's ``--help``."""


@dataclass(frozen=True, slots=True)
class CliSizes:
    """How many cold starts each figure is the median of."""

    runs: int = 21

    @classmethod
    def quick(cls) -> CliSizes:
        """A smoke test's sizes."""
        return cls(runs=3)


_COMMANDS = {
    "baseline": ("-c", "pass"),
    # What the ``helix`` console script runs (``python -m helix`` adds runpy's ~15 ms).
    "help_ms": (
        "-c",
        "import sys; sys.argv[0] = 'helix'; from helix.cli import main; main()",
        "--help",
    ),
    "import_ms": ("-c", "import helix"),
}
_SHOWN = {"help_ms": "helix --help", "import_ms": 'python -c "import helix"'}


def _time_ms(args: tuple[str, ...]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def _measure(runs: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in _COMMANDS}
    for _ in range(runs):
        for name, args in _COMMANDS.items():
            samples[name].append(_time_ms(args))
    return samples


async def run_cli(sizes: CliSizes) -> AsyncIterator[Figure]:
    """Time the cold starts, then report each against the bare interpreter."""
    samples = await asyncio.to_thread(_measure, sizes.runs)
    baseline = statistics.median(samples["baseline"])
    for name in ("help_ms", "import_ms"):
        params: dict[str, object] = {
            "command": _SHOWN[name],
            "runs": sizes.runs,
            "python": sys.version.split()[0],
        }
        if name == "help_ms":
            params["goal_ms"] = GOAL_HELP_MS
        yield Figure(SUITE, name, statistics.median(samples[name]), "ms", params, baseline)
