"""The loop's bookkeeping: how a turn's results are recorded, and what a cancel leaves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, cancel
from helix.tools import ToolContext, ToolRegistry, ToolResult, builtin_registry, tool

CALL = {"name": "wait", "args": {"path": "a.txt"}}


def _engine(tmp_path: Path, scenario: Scenario, registry: ToolRegistry) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    return Engine(MemoryEventStore(), home=tmp_path, tools=registry, model_factory=model, env={})


def _registry(gate: asyncio.Event, started: asyncio.Event) -> ToolRegistry:
    @tool(read_only=True, idempotent=True, effect="none")
    async def wait(ctx: ToolContext, path: str) -> ToolResult:
        """Wait until the test says go."""
        started.set()
        await gate.wait()
        return ToolResult(ok=True, output=f"read {path}")

    registry = builtin_registry()
    registry.register(wait)
    return registry


async def test_a_turns_last_result_is_recorded_with_its_end_and_the_next_request(
    tmp_path: Path,
) -> None:
    go, started = asyncio.Event(), asyncio.Event()
    go.set()
    scenario = Scenario.of({"text": "reading", "tool_calls": [CALL]}, {"text": "done"})
    engine = _engine(tmp_path, scenario, _registry(go, started))
    record = await engine.create("read", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    state = await engine.drive(record.id)
    assert state.status == "completed"
    log = await engine.store.read(record.id)
    types = [e.type for e in log]
    at = types.index("tool.completed")
    assert types[at : at + 4] == ["tool.completed", "turn.ended", "turn.started", "model.requested"]
    (completed,) = [e for e in log if e.type == "tool.completed"]
    assert completed.data["output"] == "read a.txt"
    # One append: the result and the next turn's opening share a commit time.
    assert len({e.ts for e in log[at : at + 4]}) == 1


async def test_a_cancel_during_an_allowed_call_still_records_its_result(tmp_path: Path) -> None:
    go, started = asyncio.Event(), asyncio.Event()
    scenario = Scenario.of({"text": "reading", "tool_calls": [CALL]}, {"text": "never"})
    engine = _engine(tmp_path, scenario, _registry(go, started))
    record = await engine.create("read", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        await started.wait()
        await cancel(engine.store, record.id, by="user:test")
    assert driving.result().status == "cancelled"
    log = await engine.store.read(record.id)
    (completed,) = [e for e in log if e.type == "tool.completed"]
    assert completed.data["ok"] is False
    assert "cancelled" in completed.data["output"]
    assert "turn.ended" not in [e.type for e in log]
    assert log[-1].type == "tool.completed"
