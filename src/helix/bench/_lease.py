"""``lease_takeover_s``: how long a run waits for a new driver once its driver is lost.

A real ``helix run`` process drives a run (its model hangs in a call), then is lost:
``killed`` (``SIGKILL``: a dead process of this host, taken over at once) or ``frozen``
(``SIGSTOP``: alive but silent, as a partitioned machine is: taken over only once its
lease expires). A second driver, in this process, tries the run every ``poll_s`` and
finishes it; the figure is the time from the loss to that driver's first append (the
store's commit time of it). One of the ``distributed`` suite's figures (``_distributed.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from helix.errors import RunStateError
from helix.kernel.events import parse_iso
from helix.kernel.log import SqliteEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Engine, RunSetup

from ._figure import Figure

SUITE = "distributed"
WAIT_S = 60.0


@dataclass(frozen=True, slots=True)
class LeaseSizes:
    """How many takeovers to time, and the lease's time to live."""

    samples: int = 3
    ttl_s: float = 2.0
    poll_s: float = 0.05

    @classmethod
    def quick(cls) -> LeaseSizes:
        """A smoke test's sizes."""
        return cls(samples=1, ttl_s=1.0)


async def run_lease(sizes: LeaseSizes, *, workdir: Path | None = None) -> AsyncIterator[Figure]:
    """Time takeovers of a killed and of a frozen driver (the median of ``samples``)."""
    for lost in ("killed", "frozen"):
        times = []
        for _ in range(sizes.samples):
            with tempfile.TemporaryDirectory(dir=workdir) as tmp:
                times.append(await _takeover(Path(tmp), lost, sizes))
        yield Figure(
            SUITE,
            "lease_takeover_s",
            statistics.median(times),
            "s",
            params={"driver": lost, "lease_ttl_s": sizes.ttl_s, "samples": sizes.samples},
        )


async def _takeover(tmp: Path, lost: str, sizes: LeaseSizes) -> float:
    home, world, db = tmp / "home", tmp / "world", tmp / "events.db"
    world.mkdir()
    scenario = tmp / "hang.json"
    scenario.write_text(json.dumps([{"text": "never answered", "delay_s": 3600}]))
    env = {
        **os.environ,
        "HELIX_HOME": str(home),
        "HELIX_DB": f"sqlite:///{db}",
        "HELIX_LEASE_TTL_S": str(sizes.ttl_s),
    }
    args = ["run", "hang", "--model", f"scripted:{scenario}", "--dir", str(world), "--json"]
    first = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "helix",
        *args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        assert first.stdout is not None
        async with asyncio.timeout(WAIT_S):
            run_id = json.loads(await first.stdout.readline())["run_id"]
        store = SqliteEventStore(db)
        try:
            await _wait_for(store, run_id, "model.requested")
            os.killpg(first.pid, signal.SIGKILL if lost == "killed" else signal.SIGSTOP)
            lost_at = time.time()
            head = (await store.get_run(run_id)).next_seq
            await _drive_when_free(store, run_id, home, sizes, env)
            taken = await store.event_at(run_id, head)
            assert taken is not None, "the second driver appended nothing"
            return parse_iso(taken.ts) - lost_at
        finally:
            await store.close()
    finally:
        if first.returncode is None:
            # Gone already when something else reaped it (Ray, in the same process).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(first.pid, signal.SIGKILL)
        await first.wait()


async def _drive_when_free(
    store: SqliteEventStore, run_id: str, home: Path, sizes: LeaseSizes, env: dict[str, str]
) -> None:
    """Drive the run here as soon as its lease can be taken, to its end."""

    def done(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(Scenario.of({"text": "done"}), label="bench")

    engine = Engine(store, home=home, model_factory=done, env=env, snapshots=False)
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            state = await engine.drive(run_id)
            break
        except RunStateError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(sizes.poll_s)
    assert state.status == "completed", state.status


async def _wait_for(store: SqliteEventStore, run_id: str, event_type: str) -> None:
    async with asyncio.timeout(WAIT_S), store.subscribe(run_id) as events:
        async for event in events:
            if event.type == event_type:
                return
