"""Deadlines and time budgets read the engine's clock: a test moves time, nobody sleeps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.errors import ApprovalClosedError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, cancel, decide
from helix.testing import ManualClock
from helix.tools import ToolContext, ToolRegistry, ToolResult, builtin_registry, tool

ASK = {"name": "run_command", "args": {"command": "echo hi > a.txt"}}
"""A call the approval gate asks a person about."""


def _engine(
    home: Path, scenario: Scenario, clock: ManualClock, tools: ToolRegistry | None = None
) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    store = MemoryEventStore()
    return Engine(store, home=home, tools=tools, model_factory=model, env={}, clock=clock)


async def _first(store: EventStore, run_id: str, event_type: str) -> Event:
    """Wait (on the log, not on time) for the run's first event of ``event_type``."""
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == event_type:
                return event
    raise AssertionError(f"the log ended without {event_type}")


async def test_an_unanswered_approval_is_denied_when_the_clock_passes_its_deadline(
    tmp_path: Path,
    helix_home: Path,
) -> None:
    clock = ManualClock()
    scenario = Scenario.of({"text": "running", "tool_calls": [ASK]}, {"text": "done"})
    engine = _engine(helix_home, scenario, clock)
    blueprint = Blueprint(model="scripted:t").model_copy(
        update={"approvals": Blueprint().approvals.model_copy(update={"timeout_s": 600})}
    )
    record = await engine.create("run it", blueprint=blueprint, world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        asked = await _first(engine.store, record.id, "approval.requested")
        await clock.sleeping(2)  # the lease renewer, and the run waiting for a person
        clock.advance(599.9)
        for _ in range(10):  # let anything woken run: nothing is
            await asyncio.sleep(0)
        assert "approval.decided" not in [e.type for e in await engine.store.read(record.id)]
        clock.advance(0.2)  # past the deadline (the log keeps it to the microsecond)
    assert driving.result().status == "completed"
    log = await engine.store.read(record.id)
    (decided,) = [e for e in log if e.type == "approval.decided"]
    assert decided.data["request_id"] == asked.data["request_id"]
    assert (decided.data["decision"], decided.data["auto"]) == ("deny", True)
    assert decided.data["reason"] == "no decision before the deadline"
    (completed,) = [e for e in log if e.type == "tool.completed"]
    assert completed.data["ok"] is False
    assert not (tmp_path / "a.txt").exists()


async def test_a_decision_after_the_deadline_on_the_clock_is_refused(
    tmp_path: Path, helix_home: Path
) -> None:
    clock = ManualClock()
    scenario = Scenario.of({"text": "running", "tool_calls": [ASK]}, {"text": "done"})
    engine = _engine(helix_home, scenario, clock)
    record = await engine.create("run it", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        await _first(engine.store, record.id, "approval.requested")
        timeout = Blueprint().approvals.timeout_s
        later = ManualClock(start=clock.now() + timeout + 1)  # another process, past the deadline
        with pytest.raises(ApprovalClosedError, match="expired at"):
            await decide(engine.store, record.id, None, "allow", by="user:me", clock=later)
        await decide(engine.store, record.id, None, "allow", by="user:me", clock=clock)
    assert driving.result().status == "completed"
    assert (tmp_path / "a.txt").read_text() == "hi\n"


def _ticking(clock: ManualClock, seconds: float) -> ToolRegistry:
    @tool(read_only=True, effect="none", concurrent=False)
    async def tick(ctx: ToolContext) -> ToolResult:
        """Let time pass."""
        clock.advance(seconds)
        return ToolResult(ok=True, output="ticked")

    registry = builtin_registry()
    registry.register(tick)
    return registry


async def test_a_time_budget_runs_out_when_the_clock_passes_it(
    tmp_path: Path, helix_home: Path
) -> None:
    clock = ManualClock()
    calls = [{"name": "tick", "args": {}}, {"name": "list_files", "args": {}}]
    scenario = Scenario.of({"text": "ticking", "tool_calls": calls}, {"text": "never"})
    engine = _engine(helix_home, scenario, clock, tools=_ticking(clock, 61))
    blueprint = Blueprint(model="scripted:t").model_copy(
        update={"budget": Blueprint().budget.model_copy(update={"max_seconds": 60})}
    )
    record = await engine.create("tick", blueprint=blueprint, world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        paused = await _first(engine.store, record.id, "run.paused")
        await cancel(engine.store, record.id, by="user:me")
    assert paused.data["reason"] == "max_seconds"
    assert driving.result().status == "cancelled"
    log = await engine.store.read(record.id)
    # The call gated after the clock passed the budget was denied by the budget gate.
    (denied,) = [e for e in log if e.type == "gate.decided" and e.data["verdict"] == "deny"]
    assert denied.data["gate"] == "budget"
    assert "time limit reached" in denied.data["reason"]
    assert [e.data["ok"] for e in log if e.type == "tool.completed"] == [True, False]
    assert [e.type for e in log].count("model.requested") == 1


async def test_a_manual_clock_sleep_ends_only_when_advanced_past_it() -> None:
    clock = ManualClock(start=1_000.0)
    async with asyncio.TaskGroup() as group:
        slept = group.create_task(clock.sleep(10))
        await clock.sleeping()
        clock.advance(9.5)
        await asyncio.sleep(0)
        assert not slept.done()
        clock.advance(0.5)
    assert (clock.now(), clock.monotonic(), clock.sleepers) == (1_010.0, 10.0, 0)
    with pytest.raises(ValueError, match="does not go back"):
        clock.advance(-1)
