"""Shared checks for crash safety and cross-process behaviour of durable stores."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator

from helix.kernel.log import EventStore

from ._children import APPEND_FOREVER, RACE_WRITER


async def _spawn(program: str, *args: str, stdout: int | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        program,
        *args,
        stdout=stdout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@contextlib.asynccontextmanager
async def appending_child(url: str, run_id: str, batch: int) -> AsyncIterator[None]:
    """Run a child process that appends to ``run_id`` until the block ends."""
    child = await _spawn(APPEND_FOREVER, url, run_id, str(batch), stdout=asyncio.subprocess.DEVNULL)
    try:
        yield
    finally:
        child.kill()
        await child.wait()


async def check_appends_survive_sigkill(store: EventStore, url: str, run_id: str) -> None:
    """Kill -9 a writer mid-stream: every append it saw return is there, whole."""
    batch = 5
    child = await _spawn(APPEND_FOREVER, url, run_id, str(batch), stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    acknowledged = -1
    for _ in range(40):
        line = await asyncio.wait_for(child.stdout.readline(), 30)
        assert line, "the writer exited early"
        acknowledged = int(line)
    child.kill()  # SIGKILL: no cleanup, no flush, no goodbye
    await child.wait()
    events = await store.read(run_id)
    seqs = [e.seq for e in events]
    assert seqs == list(range(len(seqs))), "the log has a gap or a duplicate"
    assert seqs[-1] >= acknowledged, "an acknowledged append was lost"
    # Batches are atomic: the log ends on a batch boundary (seq 0 is run.created).
    assert len(seqs) % batch == 1
    for event in events[1:]:
        assert event.data == {"message": f"m{event.seq}"}


async def check_racing_processes(store: EventStore, url: str, run_id: str) -> None:
    """Three processes race on one run: no gap, no duplicate, nothing lost."""
    writers = [await _spawn(RACE_WRITER, url, run_id, f"p{n}", "30") for n in range(3)]
    codes = [await asyncio.wait_for(w.wait(), 60) for w in writers]
    assert codes == [0, 0, 0]
    events = await store.read(run_id)
    assert [e.seq for e in events] == list(range(91))
    messages = sorted(e.data["message"] for e in events[1:])
    assert messages == sorted(f"p{n}-{i}" for n in range(3) for i in range(30))
