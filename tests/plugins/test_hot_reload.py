"""Hot reload: editing a folder plugin while a run is in flight. The call in flight
finishes on the version it started with; the next turn's call is served by the new
one; no run is dropped; the log says which version served each call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from helix.kernel.events import Event
from helix.kernel.log import MemoryEventStore
from helix.plugins import Plugins
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox

from ._folders import write_plugin

SLOW = """
import asyncio

RELEASE = Path(__file__).resolve().parents[1] / "release"


@tool(read_only=True, effect="none")
async def work(ctx: ToolContext) -> ToolResult:
    \"\"\"Do the work (this version waits until the test lets it finish).\"\"\"
    while {wait} and not RELEASE.exists():
        await asyncio.sleep(0.01)
    return ToolResult(ok=True, output="served by {label}")


plugin = Plugin(name="slow", version="1.0", tools=(work,))
"""


def _slow(label: str, *, wait: bool) -> str:
    return SLOW.format(label=label, wait=wait)


async def _until(store: MemoryEventStore, run_id: str, found: Any) -> list[Event]:
    """Wait (on the log, not the clock) until ``found(log)`` holds; the log then."""

    async def look() -> list[Event]:
        while True:
            log = await store.read(run_id)
            if found(log):
                return log
            await asyncio.sleep(0.01)

    return await asyncio.wait_for(look(), timeout=60)


def _engine(tmp_path: Path, root: Path, calls: int, tool: str = "work") -> Engine:
    steps = [
        {"text": "", "tool_calls": [{"name": tool, "args": {}, "id": f"c{i}"}]}
        for i in range(calls)
    ]
    scenario = Scenario.of(*steps, {"text": "done"})

    def model(_setup: RunSetup) -> ScriptedModel:
        return ScriptedModel(scenario, label="test")

    plugins = Plugins(home=tmp_path / "home", env={"HELIX_PLUGINS": str(root)}, poll_s=0.02)
    return Engine(
        MemoryEventStore(),
        home=tmp_path / "home",
        sandbox=ProcessSandbox(),
        model_factory=model,
        env={},
        plugins=plugins,
    )


def _types(log: list[Event], *types: str) -> list[Event]:
    return [e for e in log if e.type in types]


async def test_an_edit_during_a_call_serves_the_next_turn_with_the_new_version(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugins"
    folder = write_plugin(root, "slow", _slow("v1", wait=True))
    engine = _engine(tmp_path, root, calls=2)
    store = engine.store
    assert isinstance(store, MemoryEventStore)
    blueprint = Blueprint.model_validate({"model": "scripted:t", "tools": [], "plugins": ["slow"]})
    record = await engine.create("work twice", blueprint=blueprint, attended=False)
    v1 = engine.plugins.info("slow").version
    driving = asyncio.create_task(engine.drive(record.id))

    await _until(store, record.id, lambda log: _types(log, "tool.started"))
    write_plugin(root, "slow", _slow("v2", wait=False))  # edited while c0 runs on v1
    log = await _until(store, record.id, lambda log: _types(log, "plugin.reloaded"))
    assert not _types(log, "tool.completed")  # the call is still in flight
    (root / "release").touch()
    state = await asyncio.wait_for(driving, timeout=60)

    assert state.status == "completed", state
    log = await store.read(record.id)
    v2 = engine.plugins.info("slow").version
    assert v1 is not None
    assert v2 is not None
    assert v1 != v2
    assert v1.startswith("1.0+")
    assert v2.startswith("1.0+")
    started = [(e.data["call_id"], e.data["origin"], e.turn) for e in _types(log, "tool.started")]
    assert started == [("c0", f"plugin:slow@{v1}", 1), ("c1", f"plugin:slow@{v2}", 2)]
    outputs = [e.data["output"] for e in _types(log, "tool.completed")]
    assert outputs == ["served by v1", "served by v2"]
    (reloaded,) = _types(log, "plugin.reloaded")
    assert reloaded.data == {
        "name": "slow",
        "version": v2,
        "previous": v1,
        "reason": "files changed",
        "tools": ["work"],
        "gates": [],
        "components": [],
    }
    # The switch is at the turn boundary: after c0 started, before turn 2 began.
    order = [e.seq for e in log]
    (c0,) = [e.seq for e in _types(log, "tool.started") if e.data["call_id"] == "c0"]
    (turn2,) = [e.seq for e in _types(log, "turn.started") if e.data["turn"] == 2]
    assert c0 < reloaded.seq < turn2
    assert order == sorted(order)
    assert not _types(log, "run.failed", "supervisor.restarted")
    assert folder.is_dir()


async def test_an_edit_that_does_not_load_keeps_the_previous_version_serving(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "slow", _slow("v1", wait=True))
    engine = _engine(tmp_path, root, calls=2)
    store = engine.store
    assert isinstance(store, MemoryEventStore)
    blueprint = Blueprint.model_validate({"model": "scripted:t", "tools": [], "plugins": ["slow"]})
    record = await engine.create("work twice", blueprint=blueprint, attended=False)
    v1 = engine.plugins.info("slow").version
    driving = asyncio.create_task(engine.drive(record.id))

    await _until(store, record.id, lambda log: _types(log, "tool.started"))
    (root / "slow" / "plugin.py").write_text("this is not python (\n")
    log = await _until(store, record.id, lambda log: _types(log, "plugin.failed"))
    (root / "release").touch()
    state = await asyncio.wait_for(driving, timeout=60)

    assert state.status == "completed", state
    log = await store.read(record.id)
    (failed,) = _types(log, "plugin.failed")
    assert failed.data["serving"] == v1
    assert failed.data["error"].startswith("plugin slow: does not import: SyntaxError")
    origins = [e.data["origin"] for e in _types(log, "tool.started")]
    assert origins == [f"plugin:slow@{v1}", f"plugin:slow@{v1}"]
    info = engine.plugins.info("slow")
    assert info.status == "active"
    assert info.version == v1
    assert info.reason.startswith("the edit did not load: plugin slow: does not import")


CHAT = """
import asyncio

RELEASE = Path(__file__).resolve().parents[1] / "release"
STATE = {}


def start(caps):
    STATE["llm"] = caps["llm.name"]


@tool(read_only=True, effect="none")
async def ask(ctx: ToolContext) -> ToolResult:
    \"\"\"Ask the model the plugin was given (waits until the test lets it finish).\"\"\"
    llm = STATE["llm"]
    while not RELEASE.exists():
        await asyncio.sleep(0.01)
    return ToolResult(ok=True, output="asked " + llm)


plugin = Plugin(name="chat", version="3.1", requires=("llm.name",), tools=(ask,), activate=start)
"""


def _llm(name: str) -> str:
    return f'plugin = Plugin(name="llm", version="1.0", provides={{"llm.name": {name!r}}})\n'


async def test_swapping_a_provider_during_a_run_restarts_the_plugin_it_uses(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "llm", _llm("first"))
    write_plugin(root, "chat", CHAT)
    engine = _engine(tmp_path, root, calls=2, tool="ask")
    store = engine.store
    assert isinstance(store, MemoryEventStore)
    blueprint = Blueprint.model_validate({"model": "scripted:t", "tools": [], "plugins": ["chat"]})
    record = await engine.create("ask twice", blueprint=blueprint, attended=False)
    chat = engine.plugins.info("chat").version
    driving = asyncio.create_task(engine.drive(record.id))

    await _until(store, record.id, lambda log: _types(log, "tool.started"))
    write_plugin(root, "llm", _llm("second-provider"))
    log = await _until(store, record.id, lambda log: _types(log, "plugin.reloaded"))
    (root / "release").touch()
    state = await asyncio.wait_for(driving, timeout=60)

    assert state.status == "completed", state
    log = await store.read(record.id)
    (reloaded,) = _types(log, "plugin.reloaded")
    assert reloaded.data["name"] == "chat"
    assert reloaded.data["reason"] == "a capability it requires changed"
    assert reloaded.data["version"] == reloaded.data["previous"] == chat  # its own files did not
    outputs = [e.data["output"] for e in _types(log, "tool.completed")]
    assert outputs == ["asked first", "asked second-provider"]
    assert [e.data["name"] for e in _types(log, "plugin.loaded")] == ["chat"]
