"""Every step of the run loop is a scheduling point, whatever the model and tools do.

A model object and a tool of the caller's that never await (a benchmark's, a
LangGraph-style node's) must not hold the event loop: runs in one process take turns,
subscribers see events as they are logged, and ``wait_for``/``cancel`` stop a drive.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.kernel.log import SqliteEventStore

from ._library import BLUEPRINT, ORDER, inproc_provider, library_engine


async def test_two_never_awaiting_runs_driven_together_take_turns(tmp_path: Path) -> None:
    with inproc_provider(turns=30), library_engine(tmp_path / "home") as engine:
        a = await engine.create("a", blueprint=BLUEPRINT, model="inproc:a")
        b = await engine.create("b", blueprint=BLUEPRINT, model="inproc:b")
        first, second = await asyncio.gather(engine.drive(a.id), engine.drive(b.id))
    assert first.status == second.status == "completed"
    assert sorted(ORDER) == ["a"] * 30 + ["b"] * 30
    # interleaved: b answered before a's last answer (run a did not starve run b)
    last_a = len(ORDER) - 1 - ORDER[::-1].index("a")
    assert ORDER.index("b") < last_a, ORDER


async def test_a_subscriber_sees_a_never_awaiting_run_while_it_runs(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "events.db")
    with inproc_provider(turns=20) as models, library_engine(tmp_path, store) as engine:
        run = await engine.create("a", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        calls_when_seen: list[int] = []

        async def follow() -> None:
            async with store.subscribe(run.id) as events:
                async for event in events:
                    if event.type == "turn.ended":
                        calls_when_seen.append(models["a"].calls)
                    if event.type == "run.completed":
                        return

        async with asyncio.TaskGroup() as group:
            group.create_task(follow())
            group.create_task(engine.drive(run.id))
    await store.close()
    assert calls_when_seen, "the subscriber saw no turn end"
    assert calls_when_seen[0] < 20  # the first turn's end arrived before the run's last call


async def test_a_never_awaiting_run_is_cancelled_by_another_task(tmp_path: Path) -> None:
    with inproc_provider(turns=None), library_engine(tmp_path) as engine:
        run = await engine.create("forever", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        seen = asyncio.Event()

        async def watch() -> None:
            async with engine.store.subscribe(run.id) as events:
                async for event in events:
                    if event.type == "turn.ended" and event.turn == 3:
                        seen.set()
                        return

        async with asyncio.TaskGroup() as group:
            group.create_task(watch())
            driving = group.create_task(engine.drive(run.id))
            await seen.wait()
            driving.cancel()
        assert driving.cancelled()
        assert not engine.is_driven(run.id)  # the driver lock went with the drive
        state = await engine.step(run.id)  # and the run goes on from its log
    assert state.status == "running"
    assert state.turn > 3


async def test_wait_for_times_out_a_never_awaiting_drive(tmp_path: Path) -> None:
    with inproc_provider(turns=None), library_engine(tmp_path) as engine:
        run = await engine.create("forever", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(engine.drive(run.id), timeout=0.2)
        assert not engine.is_driven(run.id)
        log = await engine.store.read(run.id)
    assert log[-1].type not in {"run.completed", "run.failed"}
