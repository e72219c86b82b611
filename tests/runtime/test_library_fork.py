"""Forking from code: at a turn with a message, or with one event of a turn replaced.

A replacing fork starts at the boundary before the event's turn, copies that turn's
events up to the event into its own log, then the replacement: the model reads the
edited result next, and nothing before it is asked or run again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import ForkError
from helix.kernel.events import ModelResponded, ToolCompleted
from helix.kernel.log import SqliteEventStore
from helix.runtime import fork_replacing, fork_with_world

from ._library import BLUEPRINT, ORDER, inproc_provider, library_engine


async def test_a_fork_with_an_edited_tool_result_goes_on_from_the_edit(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "events.db")
    with inproc_provider(turns=3) as models, library_engine(tmp_path, store) as engine:
        parent = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        assert (await engine.drive(parent.id)).status == "completed"
        log = await store.read(parent.id)
        (first, _second) = [e for e in log if e.type == "tool.completed"]
        asked_before = len(ORDER)
        edited = ToolCompleted(
            call_id=first.data["call_id"], ok=True, output="edited", duration_ms=0
        )
        fork = await fork_replacing(engine, parent.id, first.seq, edited)
        assert len(ORDER) == asked_before  # forking asks the model nothing
        own = [e for e in await store.read(fork.id) if e.seq > 0 and e.run_id == fork.id]
        assert own[0].type == "run.forked"
        assert own[0].data["turn"] == 0
        copied = [e.type for e in own[1:] if e.type != "world.snapshotted"]
        parents = [e.type for e in log if 0 < e.seq < first.seq]
        assert copied == [t for t in parents if t not in {"run.started", "world.snapshotted"}] + [
            "tool.completed"
        ]
        assert own[-1].data["output"] == "edited"
        assert [e.type for e in own].count("tool.started") == 1  # copied, not run again
        state = await engine.drive(fork.id)
        fork_log = await store.read(fork.id)
    await store.close()
    assert state.status == "completed"
    assert models["a"].seen[0] == "edited"  # the fork's first request reads the edit
    assert [e.data["output"] for e in fork_log if e.type == "tool.completed"] == [
        "edited",
        "tick",
    ]
    assert fork_log[-1].run_id == fork.id


async def test_a_fork_with_an_edited_reply_runs_the_calls_of_the_edit(tmp_path: Path) -> None:
    with inproc_provider(turns=3), library_engine(tmp_path) as engine:
        parent = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        await engine.drive(parent.id)
        log = await engine.store.read(parent.id)
        reply = [e for e in log if e.type == "model.responded"][1]
        data = {**reply.data, "text": "no more ticks", "tool_calls": []}
        fork = await fork_replacing(engine, parent.id, reply.seq, ModelResponded(**data))
        state = await engine.drive(fork.id)
    assert (state.status, state.summary, state.turn) == ("completed", "no more ticks", 2)


async def test_a_fork_at_a_turn_with_a_message(tmp_path: Path) -> None:
    with inproc_provider(turns=3) as models, library_engine(tmp_path) as engine:
        parent = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        await engine.drive(parent.id)
        fork = await fork_with_world(engine, parent.id, 1, message="count again")
        state = await engine.drive(fork.id)
    assert state.status == "completed"
    assert models["a"].seen[0] == "count again"


async def test_what_a_fork_cannot_replace_is_refused(tmp_path: Path) -> None:
    with inproc_provider(turns=2), library_engine(tmp_path) as engine:
        parent = await engine.create("p", blueprint=BLUEPRINT, model="inproc:a")
        await engine.drive(parent.id)
        log = await engine.store.read(parent.id)
        result = next(e for e in log if e.type == "tool.completed")
        ended = next(e for e in log if e.type == "turn.ended")
        right = ToolCompleted(call_id=result.data["call_id"], ok=True, output="x", duration_ms=0)
        wrong = ToolCompleted(call_id="another", ok=True, output="x", duration_ms=0)
        with pytest.raises(ForkError, match="can replace only"):
            await fork_replacing(engine, parent.id, ended.seq, right)
        with pytest.raises(ForkError, match="keep the event's call_id"):
            await fork_replacing(engine, parent.id, result.seq, wrong)
        reply = next(e for e in log if e.type == "model.responded")
        with pytest.raises(ForkError, match="must be one too"):
            await fork_replacing(engine, parent.id, reply.seq, right)
        with pytest.raises(ForkError, match="no event at seq"):
            await fork_replacing(engine, parent.id, 10_000, right)
        page = await engine.store.list_runs(limit=10)
    assert [r.id for r in page.runs] == [parent.id]  # nothing was forked
