"""Leaving a watched run early without leaving it looking active with nothing driving it.

- Ctrl-C: a run driven here is paused (with the child it waits on) and the drive
  stops once it is (a running step gets a moment to finish; a second Ctrl-C cuts it,
  and a cut tool call is recorded as interrupted when the run resumes). A run driven
  elsewhere (a server, another process) goes on. Either way the way back is printed.
- The input ends at a question (Ctrl-D): the same, the call left waiting for a
  decision from ``helix approve`` or ``helix deny``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from helix.errors import HelixError
from helix.kernel.events import TERMINAL_STATUSES

from ._prompt import NoAnswer

if TYPE_CHECKING:
    from helix.api import HelixApi

    from ._view import RunView

EXIT_INTERRUPTED = 130
GRACE_S = 5.0
"""How long leaving waits for a step under way to finish before cutting it."""
NO_ANSWER = "(no answer)"


class Watched(Protocol):
    """What leaving needs of the watch it ends (``_watch.Watch``)."""

    api: HelixApi
    run_id: str
    views: list[RunView]
    leaving: bool
    driven_here: bool

    async def follow(self) -> str | None:
        """Show the run until it ends."""
        ...

    def say(self, line: str) -> None:
        """Tell the person something."""
        ...


async def watch_driving(watch: Watched, driving: Coroutine[Any, Any, object] | None) -> int:
    """Show the run while ``driving`` (or another driver) drives it; the exit code."""
    stop = asyncio.Event()
    drive: asyncio.Task[object] | None = None
    watch.driven_here = driving is not None

    def again() -> None:  # a second Ctrl-C: cut the step under way
        if drive is not None:
            drive.cancel()

    async def follow() -> str | None:
        try:
            return await watch.follow()
        except NoAnswer:
            return NO_ANSWER

    try:
        async with asyncio.TaskGroup() as group:
            drive = group.create_task(driving) if driving is not None else None
            shown = group.create_task(follow())
            stopped = group.create_task(stop.wait())
            try:
                with _interrupts(stop, again):
                    first = asyncio.FIRST_COMPLETED
                    done, _ = await asyncio.wait({shown, stopped}, return_when=first)
                    if stopped in done or shown.result() == NO_ANSWER:
                        why = "interrupted" if stopped in done else "unanswered"
                        return await _leave(watch, shown, drive, why)
            finally:
                stopped.cancel()
            if drive is not None:
                await drive  # at a pause it stops by itself (``Watch.until``)
    except BaseExceptionGroup as failed:  # the drive failed: say why, not "a group"
        raise failed.exceptions[0] from None
    if shown.result() == "run.paused":  # why and how to resume: said by the follow
        from ._paused import EXIT_PAUSED

        return EXIT_PAUSED
    return 0 if shown.result() == "run.completed" else 1


async def _leave(
    watch: Watched, shown: asyncio.Task[str | None], drive: asyncio.Task[object] | None, why: str
) -> int:
    views = list(watch.views)
    active = [v.run_id for v in views if v.transcript.status not in TERMINAL_STATUSES]
    only_waiting = len(views) == 1 and views[0].transcript.status == "waiting"
    shown.cancel()
    await asyncio.gather(shown, return_exceptions=True)
    here = drive is not None and not drive.done()
    if drive is not None and here:
        watch.leaving = True
        for run_id in reversed(active):  # a child first: its parent then stops too
            with contextlib.suppress(HelixError):  # already paused, or just ended
                await watch.api.pause(run_id)
        if only_waiting:  # no step under way: nothing to wait for
            drive.cancel()
        await _stop_driving(drive, watch.say)
    status: str = "unknown"
    with contextlib.suppress(HelixError):
        status = (await watch.api.get(watch.run_id)).status
    for line in leaving_hint(watch.run_id, status, why, here=here):
        watch.say(line)
    return EXIT_INTERRUPTED if why == "interrupted" else 1


async def _stop_driving(drive: asyncio.Task[object], say: Callable[[str], None]) -> None:
    """Let the drive reach the pause (a step under way finishes), then stop it."""
    done, _ = await asyncio.wait({drive}, timeout=GRACE_S / 5)
    if not done:
        say("pausing: the step under way finishes first (Ctrl-C again to cut it)")
        await asyncio.wait({drive}, timeout=GRACE_S)
    if not drive.done():
        drive.cancel()  # it waits on a run paused before, or a step is cut
    await asyncio.gather(drive, return_exceptions=True)


def leaving_hint(run_id: str, status: str, why: str, *, here: bool) -> list[str]:
    """What a person is told when leaving a run early: where it stands, how to go on."""
    first = "no answer (the input ended): " if why == "unanswered" else ""
    answer = f"answer its call: helix approve {run_id} · helix deny {run_id}"
    if status in TERMINAL_STATUSES:
        return [f"{first}run {run_id} {status}.", f"see it again: helix replay {run_id}"]
    if status == "paused":
        lines = [f"{first}run {run_id} is paused."]
        return [
            *lines,
            *([answer] if why == "unanswered" else []),
            f"resume it: helix resume {run_id}",
        ]
    where = "this process" if here else "its driver (a server, or another process)"
    lines = [f"{first}run {run_id} is {status}, driven by {where}."]
    if why == "unanswered" or status == "waiting":
        lines.append(answer)
    return [*lines, f"follow it: helix logs {run_id} --follow · pause it: helix pause {run_id}"]


@contextlib.contextmanager
def _interrupts(stop: asyncio.Event, again: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C sets ``stop`` (then calls ``again``) instead of raising, while watching."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    loop = asyncio.get_running_loop()

    def pressed() -> None:
        if stop.is_set():
            again()
        stop.set()

    loop.add_signal_handler(signal.SIGINT, pressed)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
