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


async def test_a_run_finishes_beside_a_never_awaiting_run_that_never_ends(tmp_path: Path) -> None:
    """Run b completes while run a (never awaiting, never ending) is driven in the same loop.

    Without a scheduling point per step, a would hold the loop and b never finish.
    """
    with inproc_provider(turns=None), library_engine(tmp_path / "home") as engine:
        a = await engine.create("a", blueprint=BLUEPRINT, model="inproc:a")
        short = BLUEPRINT.model_copy(
            update={"budget": BLUEPRINT.budget.model_copy(update={"max_turns": 3})}
        )
        b = await engine.create("b", blueprint=short, model="inproc:b")
        async with asyncio.TaskGroup() as group:
            forever = group.create_task(engine.drive(a.id))
            while "a" not in ORDER:  # noqa: ASYNC110 - a never awaits: only steps let us see it
                await asyncio.sleep(0)
            finished = await engine.drive(b.id, until=lambda s: s.status == "paused")
            running_a = not forever.done()
            forever.cancel()
    assert running_a
    assert (finished.status, finished.turn) == ("paused", 3)
    assert ORDER.count("b") == 3
    assert "a" in ORDER


async def test_a_subscriber_sees_a_never_awaiting_run_while_it_runs(
    tmp_path: Path, helix_home: Path
) -> None:
    store = SqliteEventStore(helix_home / "events.db")
    with inproc_provider(turns=None), library_engine(helix_home, store) as engine:
        run = await engine.create("a", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        seen: list[str] = []
        async with asyncio.TaskGroup() as group:
            driving = group.create_task(engine.drive(run.id))
            async with store.subscribe(run.id) as events:
                async for event in events:
                    seen.append(event.type)
                    if event.type == "turn.ended":
                        break
            running = not driving.done()
            driving.cancel()
    await store.close()
    assert running  # the turn's end reached the subscriber while the run went on
    assert seen[0] == "run.created"


async def test_a_never_awaiting_run_is_cancelled_by_another_task(
    tmp_path: Path, helix_home: Path
) -> None:
    with inproc_provider(turns=None), library_engine(helix_home) as engine:
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
        assert not await engine.is_driven(run.id)  # the lease went with the drive
        state = await engine.step(run.id)  # and the run goes on from its log
    assert state.status == "running"
    assert state.turn > 3


async def test_wait_for_times_out_a_never_awaiting_drive(tmp_path: Path, helix_home: Path) -> None:
    with inproc_provider(turns=None), library_engine(helix_home) as engine:
        run = await engine.create("forever", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(engine.drive(run.id), timeout=0.2)
        assert not await engine.is_driven(run.id)
        log = await engine.store.read(run.id)
    assert log[-1].type not in {"run.completed", "run.failed"}
