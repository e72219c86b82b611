"""The one clock a run reads: deadlines, budgets and timeouts, never the wall directly.

Runtime code asks a ``Clock`` what time it is and how long to wait, so a test can move
time on by hand (``helix.testing.ManualClock``) and see a deadline pass without sleeping.
``tests/test_conventions.py`` refuses direct wall-clock calls in ``runtime/`` and
``gates/``; this module is the one place that makes them. The log's event times are the
store's own (the kernel stamps them when it commits).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from helix.kernel.events import format_iso


@runtime_checkable
class Clock(Protocol):
    """What time it is, and how to wait for a time to come."""

    def now(self) -> float:
        """The current time as POSIX seconds (UTC): what deadlines in the log are compared to."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for measuring durations."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock."""
        ...


class SystemClock:
    """The machine's clocks (``time.time``, ``time.monotonic``, ``asyncio.sleep``)."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


SYSTEM_CLOCK = SystemClock()
"""The clock an engine uses unless given another."""


def iso_after(clock: Clock, seconds: float) -> str:
    """The time ``seconds`` from now on ``clock``, as the log writes times (a deadline)."""
    return format_iso(datetime.fromtimestamp(clock.now() + seconds, UTC))


async def scheduling_point() -> None:
    """Let every other ready task run once (and a pending cancel in); reads no time.

    The run loop passes one at every step, so a model and tools that never await do not
    hold the event loop (``asyncio.sleep(0)``: the one zero sleep, kept with the clock).
    """
    await asyncio.sleep(0)
