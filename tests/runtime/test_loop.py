"""The loop's bookkeeping: how a turn's results are recorded, and what a cancel leaves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, cancel
from helix.tools import ToolContext, ToolRegistry, ToolResult, builtin_registry, tool

CALL = {"name": "wait", "args": {"path": "a.txt"}}


def _engine(home: Path, scenario: Scenario, registry: ToolRegistry) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    return Engine(MemoryEventStore(), home=home, tools=registry, model_factory=model, env={})


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
    tmp_path: Path, helix_home: Path
) -> None:
    go, started = asyncio.Event(), asyncio.Event()
    go.set()
    scenario = Scenario.of({"text": "reading", "tool_calls": [CALL]}, {"text": "done"})
    engine = _engine(helix_home, scenario, _registry(go, started))
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


async def test_a_cancel_during_an_allowed_call_still_records_its_result(
    tmp_path: Path, helix_home: Path
) -> None:
    go, started = asyncio.Event(), asyncio.Event()
    scenario = Scenario.of({"text": "reading", "tool_calls": [CALL]}, {"text": "never"})
    engine = _engine(helix_home, scenario, _registry(go, started))
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


def _two_call_turns(turns: int) -> Scenario:
    """Replies that write a file, then run a command that needs approval, ``turns`` times."""
    replies: list[dict[str, object]] = [
        {
            "text": f"turn {n}",
            "tool_calls": [
                {"name": "write_file", "args": {"path": f"f{n}.txt", "content": f"{n}\n"}},
                {"name": "run_command", "args": {"command": f"echo line{n} >> log.txt"}},
            ],
        }
        for n in range(turns)
    ]
    return Scenario.of(*replies, {"text": "done"})


async def _decide_each(engine: Engine, run_id: str, decision: str, count: int) -> None:
    """Answer ``count`` approval requests as a person would, each once it is asked."""
    from helix.runtime import decide

    answered: set[str] = set()
    async for event in engine.store.subscribe(run_id):
        if event.type == "approval.requested":
            request_id = str(event.data["request_id"])
            await decide(engine.store, run_id, request_id, decision, by="user:test")
            answered.add(request_id)
            if len(answered) == count:
                return


async def test_a_second_call_that_is_auto_approved_runs_every_turn(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(tmp_path, _two_call_turns(3), builtin_registry())
    record = await engine.create(
        "write", blueprint=Blueprint(model="scripted:t"), world=world, auto_approve=True
    )
    state = await engine.drive(record.id)
    assert state.status == "completed"
    assert (world / "log.txt").read_text() == "line0\nline1\nline2\n"
    log = await engine.store.read(record.id)
    assert "supervisor.restarted" not in [e.type for e in log]


async def test_a_second_call_denied_unattended_goes_back_to_the_model(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(tmp_path, _two_call_turns(3), builtin_registry())
    record = await engine.create(
        "write", blueprint=Blueprint(model="scripted:t"), world=world, attended=False
    )
    state = await engine.drive(record.id)
    assert state.status == "completed"
    assert not (world / "log.txt").exists()
    assert sorted(p.name for p in world.iterdir()) == ["f0.txt", "f1.txt", "f2.txt"]
    log = await engine.store.read(record.id)
    assert "supervisor.restarted" not in [e.type for e in log]
    refused = [e for e in log if e.type == "tool.completed" and not e.data["ok"]]
    assert len(refused) == 3


async def test_a_second_call_approved_or_denied_by_a_person_each_turn(tmp_path: Path) -> None:
    for decision, expected in (("allow", "line0\nline1\nline2\n"), ("deny", None)):
        world = tmp_path / decision
        world.mkdir()
        engine = _engine(tmp_path / f"home-{decision}", _two_call_turns(3), builtin_registry())
        record = await engine.create("write", blueprint=Blueprint(model="scripted:t"), world=world)
        async with asyncio.TaskGroup() as group:
            group.create_task(_decide_each(engine, record.id, decision, 3))
            driving = group.create_task(engine.drive(record.id))
        assert driving.result().status == "completed"
        log_file = world / "log.txt"
        assert (log_file.read_text() if log_file.exists() else None) == expected
        assert [(world / f"f{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "2\n"]
        log = await engine.store.read(record.id)
        assert "supervisor.restarted" not in [e.type for e in log]
