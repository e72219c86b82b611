"""History that does not cost its length: the ``eventlog`` suite's long-run figures.

A run of 1,000 or 10,000 turns (nine events a turn: a tool call and a world snapshot
changing one file of a 50-file world) is written straight through the store, its
derived data built as a live run keeps it (session snapshots every
``snapshot_every`` events; world snapshots at the same points). Then, near its end:

- ``state_at_turn_ms``: ``replay_run(…, turn=k)``;
- ``fork_with_world_ms``: ``fork_with_world`` at turn k (the world materialised
  from the nearest world snapshot) plus the fork's first load (``replay_run``).

Each has its baseline from the same run: the same call with snapshots off
(``store.snapshot_every = 0``: every fold starts at seq 0). Both use the turn index
(the old scan for a turn's end would make the baseline slower still). ``wal_bytes`` is
the SQLite WAL's size after 1,000 turns appended an event a commit, with the WAL's
limit and, as the baseline, without it (``wal_limit=None``: timed passive checkpoints
only, as before).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from helix.kernel.events import NewEvent, WorldEntry, WorldSnapshotted
from helix.kernel.log import DEFAULT_WAL_LIMIT, EventStore, SqliteEventStore
from helix.kernel.session import replay_run, snapshot_run
from helix.runtime import Engine, fork_with_world
from helix.testing import run_created, session_events, turn_events
from helix.world import ObjectStore, world_at

from ._figure import Figure

SUITE = "eventlog"
_FILES = 50
_BATCH = 1000


def _entry(objects: ObjectStore, path: str, turn: int) -> WorldEntry:
    data = f"{path} as of turn {turn}\n".encode() * 8
    digest, _added = objects.put_bytes(data)
    return WorldEntry(hash=digest, mode=0o100644, size=len(data), mtime_ns=turn)


async def long_run(store: EventStore, objects: ObjectStore, world: Path, turns: int) -> str:
    """Write a run of ``turns`` turns straight through the store; returns its id."""
    run_id = (await store.create_run(run_created(world=str(world)))).id
    start = {f"f{i:02d}.txt": _entry(objects, f"f{i:02d}.txt", 0) for i in range(_FILES)}
    first = WorldSnapshotted(turn=0, changes=start, files=_FILES, bytes_added=0, scanned=True)
    events = [NewEvent(first, turn=0)]
    for turn in range(1, turns + 1):
        path = f"f{turn % _FILES:02d}.txt"
        change = {path: _entry(objects, path, turn)}
        snap = WorldSnapshotted(
            turn=turn, changes=change, files=_FILES, bytes_added=0, scanned=False
        )
        body = turn_events(turn, final=turn == turns)
        end = next(i for i, e in enumerate(body) if e.payload.TYPE == "turn.ended")
        events += [*body[:end], NewEvent(snap, turn=turn), *body[end:]]
    seq = 1
    for i in range(0, len(events), _BATCH):
        seq = await store.append(run_id, events[i : i + _BATCH], expected_seq=seq)
    await snapshot_run(store, run_id)  # what the live session keeps as the run goes
    await world_at(store, objects, run_id, "last")  # the world's, kept at the same points
    return run_id


async def _median_ms(work: Callable[[], Awaitable[Any]], samples: int) -> float:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def history_figures(
    store: EventStore, backend: str, root: Path, turns: tuple[int, ...], samples: int
) -> AsyncIterator[Figure]:
    """``state_at_turn_ms`` and ``fork_with_world_ms`` for each history length."""
    engine = Engine(store, home=root / f"home-{backend}")
    world = root / f"world-{backend}"
    world.mkdir(parents=True, exist_ok=True)
    every = store.snapshot_every
    for count in turns:
        run_id = await long_run(store, engine.objects, world, count)
        turn = count - 1
        events = (await store.get_run(run_id)).next_seq
        params = {"backend": backend, "turns": count, "turn": turn, "events": events}
        params["snapshot_every"] = every

        async def state() -> None:
            await replay_run(store, run_id, turn=turn)  # noqa: B023 (awaited in this loop)

        async def fork() -> None:
            made = await fork_with_world(engine, run_id, turn, message="again")  # noqa: B023
            await replay_run(store, made.id)

        fast_state = await _median_ms(state, samples)
        fast_fork = await _median_ms(fork, samples)
        store.snapshot_every = 0
        try:
            slow_state = await _median_ms(state, max(1, samples // 2))
            slow_fork = await _median_ms(fork, max(1, samples // 2))
        finally:
            store.snapshot_every = every
        yield Figure(SUITE, "state_at_turn_ms", fast_state, "ms", params, baseline=slow_state)
        yield Figure(SUITE, "fork_with_world_ms", fast_fork, "ms", params, baseline=slow_fork)


async def wal_figure(root: Path, turns: int) -> Figure:
    """The WAL's size after ``turns`` turns appended an event a commit, bounded and not."""
    sizes: dict[str, int] = {}
    database = 0
    for limit in (DEFAULT_WAL_LIMIT, None):
        path = root / f"wal-{limit}.db"
        store = SqliteEventStore(path, wal_limit=limit)
        try:
            run_id = (await store.create_run(run_created())).id
            seq = 1
            for event in session_events(turns):
                seq = await store.append(run_id, [event], expected_seq=seq)
                await asyncio.sleep(0)  # as a live run yields between steps
            sizes[str(limit)] = await asyncio.to_thread(os.path.getsize, f"{path}-wal")
            database = await asyncio.to_thread(os.path.getsize, path)
        finally:
            await store.close()
    params = {"backend": "sqlite", "turns": turns, "database_bytes": database}
    params["wal_limit"] = DEFAULT_WAL_LIMIT
    bounded, unbounded = sizes[str(DEFAULT_WAL_LIMIT)], sizes["None"]
    return Figure(SUITE, "wal_bytes", bounded, "bytes", params, baseline=unbounded)
