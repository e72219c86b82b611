"""Tool sources: their tools are offered beside the built-ins, and a change is taken at
the next turn boundary, never in the middle of a turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from helix.kernel.events import UiComponent
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox
from helix.tools import SourceHost, ToolContext, ToolDef, ToolResult, ToolSource, tool


@tool(read_only=True, effect="none")
async def v1(ctx: ToolContext) -> ToolResult:
    """The first version."""
    return ToolResult(ok=True, output="one")


@tool(read_only=True, effect="none")
async def v2(ctx: ToolContext) -> ToolResult:
    """The second version."""
    return ToolResult(ok=True, output="two")


class Swapping:
    """A source offering ``v1``; its first call swaps it for ``v2`` (and says so)."""

    name = "test:swapping"

    def __init__(self) -> None:
        self.host: SourceHost | None = None
        self.current: list[ToolDef] = [v1]
        self.closed = 0

    async def open(self, host: SourceHost) -> None:
        self.host = host
        await host.record(UiComponent(component="note", props={"opened": True}))

    def tools(self) -> Sequence[ToolDef]:
        return self.current

    async def close(self) -> None:
        self.closed += 1


class Broken:
    name = "test:broken"

    async def open(self, host: SourceHost) -> None:
        raise OSError("no such server")

    def tools(self) -> Sequence[ToolDef]:
        return []

    async def close(self) -> None:
        pass


class Recording(ScriptedModel):
    """Remembers the tools each request offered."""

    def __init__(self, scenario: Scenario, offered: list[list[str]]) -> None:
        super().__init__(scenario, label="test")
        self.offered = offered

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.offered.append(sorted(t.name for t in request.tools))
        return await super().request(request)


async def test_a_sources_tools_are_offered_and_a_change_waits_for_the_turn_boundary(
    tmp_path: Path,
) -> None:
    source = Swapping()
    swap = {"text": "", "tool_calls": [{"name": "v1", "args": {}, "id": "a"}]}
    again = {"text": "", "tool_calls": [{"name": "v2", "args": {}, "id": "b"}]}
    scenario = Scenario.of(swap, again, {"text": "done"})
    offered: list[list[str]] = []

    @tool(read_only=True, effect="none", name="v1")
    async def swapping_v1(ctx: ToolContext) -> ToolResult:
        """The first version, which changes the list."""
        source.current = [v2]
        assert source.host is not None
        source.host.changed(source.name)
        return ToolResult(ok=True, output="one")

    source.current = [swapping_v1]

    def model(_setup: RunSetup) -> ModelAdapter:
        return Recording(scenario, offered)

    box = ProcessSandbox()
    engine = Engine(
        MemoryEventStore(),
        home=tmp_path,
        sandbox=box,
        model_factory=model,
        env={},
        sources=lambda setup: [source],
    )
    blueprint = Blueprint.model_validate({"model": "scripted:t", "tools": ["read_file"]})
    try:
        record = await engine.create("swap", blueprint=blueprint, attended=False)
        state = await engine.drive(record.id)
    finally:
        box.close()
    assert state.status == "completed", state
    assert offered == [["read_file", "v1"], ["read_file", "v2"], ["read_file", "v2"]]
    log = await engine.store.read(record.id)
    outputs = [e.data["output"] for e in log if e.type == "tool.completed"]
    assert outputs == ["one", "two"]
    assert [e.data for e in log if e.type == "ui.component"] == [
        {"component": "note", "props": {"opened": True}, "id": None, "call_id": None}
    ]
    assert source.closed == 1


async def test_a_source_that_cannot_open_fails_the_run_naming_it(tmp_path: Path) -> None:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(Scenario.of({"text": "done"}), label="test")

    sources: list[ToolSource] = []

    def make(setup: RunSetup) -> list[ToolSource]:
        sources.append(Broken())
        return sources[-1:]

    engine = Engine(MemoryEventStore(), home=tmp_path, model_factory=model, env={}, sources=make)
    record = await engine.create("x", blueprint=Blueprint(model="scripted:t"), attended=False)
    state = await engine.drive(record.id)
    assert state.status == "failed"
    failed = [e for e in await engine.store.read(record.id) if e.type == "run.failed"]
    assert "test:broken: could not start: OSError: no such server" in failed[0].data["error"]
    assert not [e for e in await engine.store.read(record.id) if e.type == "model.requested"]
