"""Shared checks for crash safety and cross-process behaviour of durable stores."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from helix.kernel.log import EventStore

from ._children import APPEND_FOREVER, RACE_WRITER


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


async def check_appends_survive_sigkill(store: EventStore, url: str, run_id: str) -> None:
    """Kill -9 a writer mid-stream: every append it saw return is there, whole."""
    batch = 5
    child = subprocess.Popen(
        [sys.executable, "-c", APPEND_FOREVER, url, run_id, str(batch)],
        stdout=subprocess.PIPE,
        env=_env(),
    )
    assert child.stdout is not None
    acknowledged = -1
    for _ in range(40):
        line = await asyncio.to_thread(child.stdout.readline)
        assert line, "the writer exited early"
        acknowledged = int(line)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
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
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", RACE_WRITER, url, run_id, f"p{n}", "30"], env=_env()
        )
        for n in range(3)
    ]
    codes = [await asyncio.to_thread(w.wait) for w in writers]
    assert codes == [0, 0, 0]
    events = await store.read(run_id)
    assert [e.seq for e in events] == list(range(91))
    messages = sorted(e.data["message"] for e in events[1:])
    assert messages == sorted(f"p{n}-{i}" for n in range(3) for i in range(30))
