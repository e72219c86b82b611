"""``close_fully``: a close finishes even when its caller is cancelled, twice."""

from __future__ import annotations

import asyncio

import pytest

from helix._util import close_fully


async def test_a_close_cancelled_twice_still_runs_to_its_end() -> None:
    started, release, closed = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def close() -> None:
        started.set()
        await release.wait()
        closed.set()

    async def closer() -> None:
        await close_fully(close())

    async with asyncio.TaskGroup() as group:
        task = group.create_task(closer())
        await started.wait()
        task.cancel()
        await asyncio.sleep(0)
        task.cancel()  # a second cancel, as a task group's after its body's
        await asyncio.sleep(0)
        assert not task.done()  # still closing
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert closed.is_set()


async def test_a_close_that_fails_says_so() -> None:
    async def close() -> None:
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        await close_fully(close())
