"""History that does not cost its length, on real runs: snapshots the run keeps itself.

A run driven by the engine keeps session snapshots as it goes; replaying it, or a
fork of it, from them gives exactly the full fold; the world at a turn (what a fork
with its world is given) is the same whether folded from a world snapshot or from
the start; dropping every snapshot changes nothing but the time it takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_core import from_json, to_json

from helix.kernel.log import FoldSnapshot, SqliteEventStore
from helix.kernel.session import fold_version, replay, replay_run
from helix.runtime import Engine, fork_with_world
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext, ToolResult, builtin_registry, tool
from helix.world import fold_world, load_manifest, save_manifest, world_at, world_fold_version

from ._library import BLUEPRINT, inproc_provider


@tool("tick", effect="world")
async def writing_tick(ctx: ToolContext) -> ToolResult:
    """Write one more file into the world, so each turn's world differs."""
    count = sum(1 for _ in ctx.world.glob("n*.txt"))
    (ctx.world / f"n{count}.txt").write_text(f"file {count}\n")
    return ToolResult(ok=True, output=f"wrote n{count}.txt")


@contextlib.asynccontextmanager
async def _ticking(
    tmp_path: Path, *, snapshot_every: int, turns: int
) -> AsyncIterator[tuple[Engine, SqliteEventStore]]:
    """An engine whose runs write a file a turn (``tick``), on a store keeping snapshots."""
    store = SqliteEventStore(tmp_path / "events.db")
    store.snapshot_every = snapshot_every
    tools = builtin_registry()
    tools.register(writing_tick)
    box = ProcessSandbox()
    try:
        with inproc_provider(turns=turns):
            yield Engine(store, home=tmp_path, tools=tools, sandbox=box, env={}), store
    finally:
        box.close()
        await store.close()


async def _check_every_seq(store: SqliteEventStore, run_id: str) -> None:
    events = await store.read(run_id)
    for to_seq in range(len(events)):
        expected = replay(events, to_seq=to_seq)
        expected.run_id = run_id
        assert await replay_run(store, run_id, to_seq=to_seq) == expected


async def test_real_runs_and_forks_replay_from_their_snapshots(tmp_path: Path) -> None:
    async with _ticking(tmp_path, snapshot_every=6, turns=8) as (engine, store):
        objects = engine.objects
        parent = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        assert (await engine.drive(parent.id)).status == "completed"
        head = (await store.get_run(parent.id)).head
        # The live session kept snapshots while the run went, without any replay.
        kept = await store.nearest_snapshot(parent.id, "session", fold_version())
        assert kept is not None
        assert head - kept.seq < 2 * store.snapshot_every
        # ...and so did the loop for the world, as the log passed each point.
        version = world_fold_version()
        world_kept = await store.nearest_snapshot(parent.id, "world", version)
        assert world_kept is not None
        assert head - world_kept.seq < 3 * store.snapshot_every
        worlds = {t: await world_at(store, objects, parent.id, t) for t in range(1, 7)}
        assert [len(worlds[t]) for t in range(1, 7)] == [1, 2, 3, 4, 5, 6]

        fork = await fork_with_world(engine, parent.id, 5, message="once more")
        given = sorted(await asyncio.to_thread(os.listdir, fork.world))
        assert given == [f"n{i}.txt" for i in range(5)]
        assert (await engine.drive(fork.id)).status == "completed"
        for run_id in (parent.id, fork.id):
            await _check_every_seq(store, run_id)

        # A world snapshot is read: one that lies is believed (it is derived data)...
        end = await store.turn_end(parent.id, 3)
        assert end is not None
        digest, _ = save_manifest(objects, worlds[1])
        lie = {"manifest": digest, "snapshots": 1, "skipped": []}
        await store.put_snapshot(FoldSnapshot(parent.id, end, "world", version, to_json(lie)))
        assert await world_at(store, objects, parent.id, 3) == worlds[1]
        # ...unless it names no manifest there is: then the log is folded again.
        lie["manifest"] = "0" * 64
        await store.put_snapshot(FoldSnapshot(parent.id, end, "world", version, to_json(lie)))
        assert await world_at(store, objects, parent.id, 3) == worlds[3]

        # Dropped, the snapshots are rebuilt; the answers do not change.
        await store.drop_snapshots()
        store.snapshot_every = 0
        assert {t: await world_at(store, objects, parent.id, t) for t in worlds} == worlds
        fold_only = await replay_run(store, fork.id)
        store.snapshot_every = 4
        assert await replay_run(store, fork.id) == fold_only
        assert await replay_run(store, fork.id) == fold_only  # now from a kept one
        assert {t: await world_at(store, objects, parent.id, t) for t in worlds} == worlds


async def test_the_world_snapshots_a_run_keeps_are_its_fold_at_each_point(tmp_path: Path) -> None:
    # The loop folds the world's history as the session folds each event (the log is
    # not read back); what it keeps at each point is what folding the log gives there.
    async with _ticking(tmp_path, snapshot_every=5, turns=9) as (engine, store):
        run = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        assert (await engine.drive(run.id)).status == "completed"
        events = await store.read(run.id)
        version = world_fold_version()
        points = range(5, len(events), 5)
        kept = {}
        for point in points:
            snapshot = await store.nearest_snapshot(run.id, "world", version, at_most=point)
            if snapshot is not None and snapshot.seq == point:
                kept[point] = from_json(snapshot.data)
        # The first points are kept by reading the log, the later ones by the live fold.
        assert len(kept) >= len(points) - 2
        for point, data in kept.items():
            fold = fold_world(events[: point + 1], engine.objects)
            assert load_manifest(engine.objects, data["manifest"]) == fold.manifest
            assert (data["snapshots"], data["skipped"]) == (fold.snapshots, sorted(fold.skipped))
