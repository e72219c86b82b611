"""An OTP-style supervisor for asyncio: child specs, one-for-one restarts, intensity.

Every task Helix runs belongs to a supervisor (or a task group inside one): no task is
created anywhere else (``tests/test_conventions.py`` checks). A child that raises is
restarted on its own (one-for-one); past the intensity limit (``max_restarts`` within
``period_s``) the supervisor gives up on it and reports why. Cancellation is not a
crash: a cancelled child just ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal, final

from ._clock import SYSTEM_CLOCK, Clock

Restart = Literal["permanent", "transient", "temporary"]
"""``permanent``: always restarted; ``transient``: only after a crash; ``temporary``: never."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start a child and when to restart it."""

    id: str
    start: Callable[[], Awaitable[None]]
    restart: Restart = "transient"
    max_restarts: int = 3
    period_s: float = 60.0
    fatal: tuple[type[Exception], ...] = ()
    """Errors no restart can fix (a configuration error): the supervisor gives up at once.

    Matched through task groups: an exception group holding only these counts.
    """


OnRestart = Callable[[str, BaseException, int], Awaitable[None]]
"""Called with (child id, the error, restart number) before a child is restarted."""
OnGiveUp = Callable[[str, BaseException], Awaitable[None]]
"""Called with (child id, the error) when a child crashed too often to restart."""


async def _nothing(*_args: object) -> None:
    return None


@final
class Supervisor:
    """Owns children in a task group; create it with ``open_supervisor()``."""

    def __init__(
        self,
        group: asyncio.TaskGroup,
        on_restart: OnRestart,
        on_give_up: OnGiveUp,
        clock: Clock = SYSTEM_CLOCK,
    ):
        self._group = group
        self._clock = clock
        self._on_restart = on_restart
        self._on_give_up = on_give_up
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def start_child(self, spec: ChildSpec) -> asyncio.Task[None]:
        """Start a supervised child; its id must not be running already."""
        if spec.id in self._tasks and not self._tasks[spec.id].done():
            raise ValueError(f"child {spec.id!r} is already running")
        task = self._group.create_task(self._supervise(spec), name=f"helix:{spec.id}")
        self._tasks[spec.id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(spec.id, None))
        return task

    def spawn(self, coroutine: Awaitable[None], *, name: str) -> asyncio.Task[None]:
        """Run a helper task in the supervisor's group, unsupervised (it must not crash)."""

        async def run() -> None:
            await coroutine

        return self._group.create_task(run(), name=f"helix:{name}")

    def cancel_child(self, child_id: str) -> None:
        """Cancel a child (it is not restarted)."""
        task = self._tasks.get(child_id)
        if task is not None:
            task.cancel()

    @property
    def children(self) -> list[str]:
        """Ids of running children."""
        return list(self._tasks)

    async def wait(self, child_id: str) -> None:
        """Wait until the child has ended for good (restarts included)."""
        task = self._tasks.get(child_id)
        if task is not None:
            await asyncio.wait({task})

    async def _supervise(self, spec: ChildSpec) -> None:
        crashes: list[float] = []
        while True:
            try:
                await spec.start()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                now = self._clock.monotonic()
                crashes = [t for t in crashes if now - t < spec.period_s] + [now]
                if (
                    spec.restart == "temporary"
                    or len(crashes) > spec.max_restarts
                    or _is_fatal(error, spec.fatal)
                ):
                    await self._on_give_up(spec.id, error)
                    return
                await self._on_restart(spec.id, error, len(crashes))
                continue
            if spec.restart != "permanent":
                return


def _is_fatal(error: Exception, fatal: tuple[type[Exception], ...]) -> bool:
    if not fatal:
        return False
    if isinstance(error, BaseExceptionGroup):
        return all(_is_fatal(e, fatal) for e in error.exceptions if isinstance(e, Exception))
    return isinstance(error, fatal)


@asynccontextmanager
async def open_supervisor(
    *,
    on_restart: OnRestart = _nothing,
    on_give_up: OnGiveUp = _nothing,
    clock: Clock = SYSTEM_CLOCK,
) -> AsyncIterator[Supervisor]:
    """Open a supervisor; leaving the block waits for every child to end.

    ``clock`` measures the restart intensity's period.
    """
    async with asyncio.TaskGroup() as group:
        yield Supervisor(group, on_restart, on_give_up, clock)
