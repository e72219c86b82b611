"""``helix bench eventlog``: the event log's throughput, replay, fork and latency figures.

Every throughput figure has a baseline measured in the same run: the raw driver
(``sqlite3`` or ``asyncpg``) inserting the very same encoded rows into a table of the
same shape, with the same durability settings. Ratios hold on a noisy machine where
absolute rates do not.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from helix.kernel.events import DEFAULT_REGISTRY, NewEvent, SteerReceived, ToolCompleted
from helix.kernel.log import EncodedEvent, EventStore, SqliteEventStore, encode_event, open_store
from helix.kernel.session import replay_run
from helix.testing import run_created, session_events

from ._figure import Figure, percentile
from ._history import history_figures, wal_figure
from ._postgres import PostgresBench, temporary_database
from ._sqlite import SqliteBench

SUITE = "eventlog"


@dataclass(frozen=True, slots=True)
class EventlogSizes:
    """How much work each measurement does."""

    single: int = 5_000
    batched: int = 100_000
    batch: int = 100
    replay: int = 100_000
    fork_histories: tuple[int, ...] = (1_000, 100_000)
    forks: int = 30
    subscriber_events: int = 1_000
    cross_process_events: int = 300
    history_turns: tuple[int, ...] = (1_000, 10_000)
    history_samples: int = 5
    wal_turns: int = 1_000

    @classmethod
    def quick(cls) -> EventlogSizes:
        """Sizes small enough for a smoke test (figures are then only indicative)."""
        return cls(
            single=300,
            batched=3_000,
            replay=3_000,
            fork_histories=(100, 1_000),
            forks=5,
            subscriber_events=50,
            cross_process_events=20,
            history_turns=(100, 300),
            history_samples=3,
            wal_turns=100,
        )


async def run_eventlog(
    sizes: EventlogSizes, *, postgres_url: str | None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure everything on SQLite, then on PostgreSQL when a server is given."""
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-") as tmp:
        root = Path(tmp)
        async for figure in _sqlite_figures(sizes, root):
            yield figure
        if postgres_url is not None:
            async with temporary_database(postgres_url) as url:
                async for figure in _postgres_figures(sizes, url, root):
                    yield figure


# -- the workloads -------------------------------------------------------------------


def _tool_events(count: int) -> list[NewEvent]:
    output = "x" * 150  # with the envelope, rows of about 200 bytes
    return [
        NewEvent(ToolCompleted(call_id=f"c{i}", ok=True, output=output, duration_ms=1.0), turn=1)
        for i in range(count)
    ]


def _encoded(run_id: str, events: list[NewEvent]) -> list[EncodedEvent]:
    """Encode the rows the store would write, for the raw-driver baselines to insert."""
    ts = "2026-11-29T00:00:00.000000Z"
    return [
        encode_event(run_id, i, e, ts, DEFAULT_REGISTRY, 1 << 30, {}) for i, e in enumerate(events)
    ]


async def _append_single(store: EventStore, run_id: str, events: list[NewEvent]) -> float:
    seq = (await store.get_run(run_id)).next_seq
    started = time.perf_counter()
    for event in events:
        seq = await store.append(run_id, [event], expected_seq=seq)
    return len(events) / (time.perf_counter() - started)


async def _append_batched(
    store: EventStore, run_id: str, events: list[NewEvent], batch: int
) -> float:
    seq = (await store.get_run(run_id)).next_seq
    started = time.perf_counter()
    for i in range(0, len(events), batch):
        seq = await store.append(run_id, events[i : i + batch], expected_seq=seq)
    return len(events) / (time.perf_counter() - started)


async def _session_run(store: EventStore, events: int) -> str:
    """Create a run holding a realistic session of about ``events`` events."""
    run_id = (await store.create_run(run_created())).id
    turns = max(1, events // 8)  # one tool call per turn: eight events a turn
    body = session_events(turns)
    seq = 1
    for i in range(0, len(body), 1000):
        seq = await store.append(run_id, body[i : i + 1000], expected_seq=seq)
    return run_id


async def _replay_rate(store: EventStore, run_id: str) -> tuple[float, int]:
    started = time.perf_counter()
    state = await replay_run(store, run_id)
    elapsed = time.perf_counter() - started
    return (state.head + 1) / elapsed, state.head + 1


async def _fork_latency(store: EventStore, run_id: str, forks: int) -> tuple[float, str]:
    events = await store.read(run_id, after=(await store.get_run(run_id)).head - 12)
    boundary = max(e.seq for e in events if e.type == "turn.ended")
    samples = []
    fork_id = ""
    for _ in range(forks):
        started = time.perf_counter()
        fork_id = (await store.fork(run_id, at_seq=boundary, message="try again")).id
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), fork_id


async def _subscriber_latencies(store: EventStore, count: int) -> list[float]:
    run_id = (await store.create_run(run_created())).id
    sent: dict[int, float] = {}
    latencies: list[float] = []

    async def receive() -> None:
        async with store.subscribe(run_id, after=0) as sub:
            async for event in sub:
                latencies.append((time.perf_counter() - sent[event.seq]) * 1000)
                if len(latencies) == count:
                    return

    async with asyncio.TaskGroup() as group:
        receiver = group.create_task(receive())
        await asyncio.sleep(0.01)
        seq = 1
        for i in range(count):
            sent[seq] = time.perf_counter()
            event = NewEvent(SteerReceived(message=str(i)))
            seq = await store.append(run_id, [event], expected_seq=seq)
            await asyncio.sleep(0.001)
        await asyncio.wait_for(receiver, 30)
    return latencies


_CROSS_WRITER = """
import asyncio, sys, time
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import open_store

async def main(url, run_id, count):
    store = await open_store(url)
    seq = (await store.get_run(run_id)).next_seq
    for _ in range(count):
        message = str(time.time_ns())
        event = NewEvent(SteerReceived(message=message))
        seq = await store.append(run_id, [event], expected_seq=seq)
        await asyncio.sleep(0.005)
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def _cross_process_latencies(store: EventStore, url: str, count: int) -> list[float]:
    """Latency from another process's append to this process's subscriber."""
    run_id = (await store.create_run(run_created())).id
    latencies: list[float] = []
    async with store.subscribe(run_id, after=0) as sub:
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CROSS_WRITER, url, run_id, str(count), env=dict(os.environ)
        )
        try:
            async with asyncio.timeout(60):
                async for event in sub:
                    latencies.append((time.time_ns() - int(event.data["message"])) / 1e6)
                    if len(latencies) == count:
                        break
        finally:
            await writer.wait()
    return latencies


def _latency_figures(backend: str, mode: str, samples: list[float]) -> list[Figure]:
    params = {"backend": backend, "mode": mode, "events": len(samples)}
    return [
        Figure(SUITE, "subscriber_latency_p50", percentile(samples, 50), "ms", params),
        Figure(SUITE, "subscriber_latency_p99", percentile(samples, 99), "ms", params),
    ]


# -- the figures, the same for every backend -----------------------------------------


class _Baselines(Protocol):
    """What a backend's benchmark needs besides the store: raw inserts, row sizes."""

    async def raw_inserts(self, rows: list[EncodedEvent], batch: int) -> float:
        """Insert ``rows`` with the raw driver, ``batch`` a transaction; return events/s."""
        ...

    async def fork_bytes(self, fork_id: str) -> int:
        """Return the bytes of the rows a fork added."""
        ...

    async def close(self) -> None:
        """Release what the baselines hold."""
        ...


async def _figures(
    store: EventStore,
    url: str,
    backend: str,
    baselines: _Baselines,
    sizes: EventlogSizes,
    root: Path,
) -> AsyncIterator[Figure]:
    params: dict[str, Any] = {"backend": backend}
    run_id = (await store.create_run(run_created())).id
    single = _tool_events(sizes.single)
    rate = await _append_single(store, run_id, single)
    raw = await baselines.raw_inserts(_encoded(run_id, single), 1)
    single_params = {**params, "events": sizes.single, "durability": "normal"}
    yield Figure(SUITE, "append_single", rate, "events/s", single_params, baseline=raw)
    del single

    run_id = (await store.create_run(run_created())).id
    batched = _tool_events(sizes.batched)
    rate = await _append_batched(store, run_id, batched, sizes.batch)
    raw = await baselines.raw_inserts(_encoded(run_id, batched), sizes.batch)
    batched_params = {**params, "events": sizes.batched, "batch": sizes.batch}
    yield Figure(SUITE, "append_batched", rate, "events/s", batched_params, baseline=raw)
    del batched

    replay_run_id = await _session_run(store, sizes.replay)
    rate, count = await _replay_rate(store, replay_run_id)
    yield Figure(SUITE, "replay", rate, "events/s", {**params, "events": count})
    for history in sizes.fork_histories:
        run_id = replay_run_id if history == sizes.replay else await _session_run(store, history)
        latency, fork_id = await _fork_latency(store, run_id, sizes.forks)
        fork_params = {**params, "history": history}
        yield Figure(SUITE, "fork_latency", latency, "ms", {**fork_params, "forks": sizes.forks})
        size = float(await baselines.fork_bytes(fork_id))
        yield Figure(SUITE, "fork_bytes", size, "bytes", fork_params)

    samples = await _subscriber_latencies(store, sizes.subscriber_events)
    for figure in _latency_figures(backend, "in-process", samples):
        yield figure
    samples = await _cross_process_latencies(store, url, sizes.cross_process_events)
    for figure in _latency_figures(backend, "cross-process", samples):
        yield figure

    turns, repeat = sizes.history_turns, sizes.history_samples
    async for figure in history_figures(store, backend, root, turns, repeat):
        yield figure


async def _sqlite_figures(sizes: EventlogSizes, root: Path) -> AsyncIterator[Figure]:
    store = SqliteEventStore(root / "helix.db")
    baselines = SqliteBench(root, store)
    try:
        url = f"sqlite:///{store.path}"
        async for figure in _figures(store, url, "sqlite", baselines, sizes, root):
            yield figure
        yield await wal_figure(root, sizes.wal_turns)
    finally:
        await baselines.close()
        await store.close()


async def _postgres_figures(sizes: EventlogSizes, url: str, root: Path) -> AsyncIterator[Figure]:
    store = await open_store(url)
    baselines = PostgresBench(url)
    # A networked commit costs more: half the single appends keep the run short.
    sizes = replace(sizes, single=max(1, sizes.single // 2))
    try:
        async for figure in _figures(store, url, "postgres", baselines, sizes, root):
            yield figure
    finally:
        await baselines.close()
        await store.close()
