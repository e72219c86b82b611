"""The runtime's one optimistic append: a conflict is folded and the append rebuilt.

Every writer names the seq it expects. When someone else appended first (another
process deciding, steering, cancelling), the writer folds what they wrote and asks its
builder again: the append lands after theirs, is dropped as pointless, or is refused
with the error the new state calls for. A concurrent writer is played here by a store
that lets one other append through just before the writer's first attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from helix.errors import ApprovalClosedError, RunStateError
from helix.kernel.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    NewEvent,
    RunCancelled,
    RunCompleted,
    SteerReceived,
    ToolRequested,
)
from helix.kernel.log import Lease, MemoryEventStore
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, cancel, decide, steer
from helix.testing import run_created


class Interloper(MemoryEventStore):
    """A store where ``cut_in`` is appended, as by another process, before the next append."""

    def __init__(self) -> None:
        super().__init__()
        self.cut_in: tuple[str, list[NewEvent]] | None = None
        self.conflicts = 0

    async def append_events(
        self,
        run_id: str,
        events: Sequence[NewEvent],
        *,
        expected_seq: int,
        lease: Lease | None = None,
    ) -> list[Event]:
        if self.cut_in is not None:
            theirs, self.cut_in = self.cut_in, None
            head = (await self.get_run(theirs[0])).next_seq
            await super().append_events(theirs[0], theirs[1], expected_seq=head)
            if head == expected_seq:
                self.conflicts += 1
        return await super().append_events(run_id, events, expected_seq=expected_seq, lease=lease)


async def _run_waiting_for_approval(store: MemoryEventStore) -> str:
    record = await store.create_run(run_created())
    asked = [
        NewEvent(ToolRequested(call_id="c1", name="write_file", args={"path": "a"})),
        NewEvent(
            ApprovalRequested(
                request_id="r1", call_id="c1", name="write_file", args={}, expires_at=None
            )
        ),
    ]
    await store.append(record.id, asked, expected_seq=1)
    return record.id


async def test_a_steer_that_meets_another_lands_after_it() -> None:
    store = Interloper()
    run_id = (await store.create_run(run_created())).id
    store.cut_in = (run_id, [NewEvent(SteerReceived(message="theirs"), actor="user:b")])
    await steer(store, run_id, "mine", by="user:a")
    assert store.conflicts == 1
    log = await store.read(run_id)
    assert [e.seq for e in log] == list(range(len(log)))
    assert [e.data["message"] for e in log if e.type == "steer.received"] == ["theirs", "mine"]


async def test_a_decision_that_meets_another_is_refused_as_closed() -> None:
    store = Interloper()
    run_id = await _run_waiting_for_approval(store)
    theirs = ApprovalDecided(request_id="r1", decision="deny", by="user:b", auto=False)
    store.cut_in = (run_id, [NewEvent(theirs, actor="user:b")])
    with pytest.raises(ApprovalClosedError):
        await decide(store, run_id, "r1", "allow", by="user:a")
    assert store.conflicts == 1
    decided = [e.data for e in await store.read(run_id) if e.type == "approval.decided"]
    assert [d["by"] for d in decided] == ["user:b"]  # one answer, theirs


class CrashAfterCancel(ScriptedModel):
    """Cancels its run, then crashes the loop before the loop can notice the cancel."""

    def __init__(self, store: MemoryEventStore) -> None:
        super().__init__(Scenario.of({"text": "never"}), label="t")
        self.store = store
        self.run_id = ""
        self.crashed = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        head = (await self.store.get_run(self.run_id)).next_seq
        cancelled = NewEvent(RunCancelled(by="user:b"), actor="user:b")
        await self.store.append(self.run_id, [cancelled], expected_seq=head)
        self.crashed += 1
        raise RuntimeError("the loop breaks right after someone cancelled the run")


async def test_a_crash_after_a_cancel_is_not_logged_after_the_end(tmp_path: Path) -> None:
    """The supervisor's notes (restarted, gave up) are appended only to a running run."""
    store = MemoryEventStore()
    model = CrashAfterCancel(store)

    def factory(_setup: RunSetup) -> ModelAdapter:
        return model

    engine = Engine(store, home=tmp_path, model_factory=factory, env={})
    world = tmp_path / "world"
    world.mkdir()
    record = await engine.create("o", blueprint=Blueprint(model="scripted:t"), world=world)
    model.run_id = record.id
    state = await engine.drive(record.id)
    assert model.crashed == 1  # the loop did crash, after the cancel
    assert state.status == "cancelled"
    types = [e.type for e in await store.read(record.id)]
    assert types[-1] == "run.cancelled", types
    assert "supervisor.restarted" not in types


async def test_a_cancel_that_meets_the_runs_end_is_refused() -> None:
    store = Interloper()
    run_id = (await store.create_run(run_created())).id
    store.cut_in = (run_id, [NewEvent(RunCompleted(summary="done"))])
    with pytest.raises(RunStateError, match="completed"):
        await cancel(store, run_id, by="user:a")
    assert [e.type for e in await store.read(run_id)][-1] == "run.completed"
