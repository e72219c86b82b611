"""A clock that moves only when a test says so: deadlines pass without sleeping."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass(eq=False)
class _Sleeper:
    due: float
    woken: asyncio.Future[None] = field(repr=False)


class ManualClock:
    """A ``helix.runtime.Clock`` whose time moves only with ``advance``.

    ``now()`` starts at ``start`` (by default the real time when it is made, so that it
    agrees with the times the store writes into the log) and ``monotonic()`` at 0. A
    ``sleep`` returns once ``advance`` has moved the clock past its end::

        clock = ManualClock()
        engine = Engine(store, home=home, clock=clock)
        ...                        # the run asks for an approval, then waits
        await clock.sleeping()     # someone waits on the clock
        clock.advance(601)         # the deadline passes: the request is denied
    """

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start
        self._monotonic = 0.0
        self._sleepers: list[_Sleeper] = []
        self._changed = asyncio.Event()

    def now(self) -> float:
        """POSIX seconds: ``start`` plus every ``advance``."""
        return self._now

    def monotonic(self) -> float:
        """Seconds advanced since the clock was made."""
        return self._monotonic

    async def sleep(self, seconds: float) -> None:
        """Return once the clock has been advanced by ``seconds`` (at once if not positive)."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        sleeper = _Sleeper(self._monotonic + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(sleeper)
        self._wake()
        try:
            await sleeper.woken
        finally:
            self._sleepers.remove(sleeper)
            self._wake()

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, waking every sleep that ends by then."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._now += seconds
        self._monotonic += seconds
        for sleeper in self._sleepers:
            if sleeper.due <= self._monotonic and not sleeper.woken.done():
                sleeper.woken.set_result(None)

    @property
    def sleepers(self) -> int:
        """How many sleeps are waiting right now."""
        return len(self._sleepers)

    async def sleeping(self, count: int = 1) -> None:
        """Wait (without time passing) until at least ``count`` sleeps are waiting."""
        while len(self._sleepers) < count:
            changed = self._changed
            await changed.wait()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
