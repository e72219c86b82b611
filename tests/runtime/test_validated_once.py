"""A call's arguments are validated once: the arguments gate rules on what the tool runs with."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.tools import ToolContext, ToolResult, builtin_registry, tool

SEEN: list[str] = []


def _counted(value: str) -> str:
    SEEN.append(value)
    return value


Counted = Annotated[str, AfterValidator(_counted)]


@tool(read_only=True, effect="none")
async def note(ctx: ToolContext, text: Counted) -> ToolResult:
    """Note a text."""
    return ToolResult(ok=True, output=f"noted {text}")


@tool()
async def send(ctx: ToolContext, text: Counted) -> ToolResult:
    """Send a text (asks: it may change anything)."""
    return ToolResult(ok=True, output=f"sent {text}")


async def test_each_call_is_validated_once_whether_allowed_or_approved(
    tmp_path: Path, helix_home: Path
) -> None:
    SEEN.clear()
    registry = builtin_registry()
    registry.register(note)
    registry.register(send)
    calls = [
        {"name": "note", "args": {"text": "a"}},
        {"name": "send", "args": {"text": "b"}},
        {"name": "note", "args": {"text": 7}},  # invalid: never runs
    ]
    scenario = Scenario.of({"text": "working", "tool_calls": calls}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    engine = Engine(
        MemoryEventStore(), home=helix_home, tools=registry, model_factory=model, env={}
    )
    record = await engine.create(
        "note", blueprint=Blueprint(model="scripted:t"), world=tmp_path, auto_approve=True
    )
    state = await engine.drive(record.id)
    assert state.status == "completed"
    log = await engine.store.read(record.id)
    outputs = [e.data["output"] for e in log if e.type == "tool.completed"]
    assert outputs[:2] == ["noted a", "sent b"]
    assert "invalid arguments" in outputs[2]
    assert SEEN == ["a", "b"]  # once each: gated and run with the same validated arguments
    assert [e.data["name"] for e in log if e.type == "approval.requested"] == ["send"]
