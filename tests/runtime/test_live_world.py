"""A run with a live world: a background server kept between turns, paused, resumed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.kernel.events import Budget, Event
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, resume
from helix.sandbox import ProcessSandbox, Sandbox
from helix.testing.conformance import COUNTER_SERVER, free_port

FETCH = (
    'python3 -c "import time, urllib.request\n'
    "for _ in range(400):\n"
    "    try:\n"
    "        print(urllib.request.urlopen('http://127.0.0.1:{port}/').read().decode()); break\n"
    '    except OSError: time.sleep(0.05)"'
)


def call(name: str, **args: object) -> dict[str, object]:
    return {"name": name, "args": args}


def engine_for(home: Path, scenario: Scenario, sandbox: Sandbox) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="live")

    return Engine(MemoryEventStore(), home=home, model_factory=model, env={}, sandbox=sandbox)


def outputs(log: list[Event]) -> list[str]:
    return [e.data["output"] for e in log if e.type == "tool.completed"]


async def drive_live_run(engine: Engine, world: Path, port: int) -> tuple[str, list[Event]]:
    blueprint = Blueprint(
        model="scripted:t",
        sandbox={"live": True},
        budget=Budget(max_turns=3),
    )
    record = await engine.create(
        "serve and count", blueprint=blueprint, world=world, auto_approve=True
    )
    state = await engine.drive(record.id, until=lambda s: s.status == "paused")
    assert state.status == "paused"
    assert await resume(engine.store, record.id, by="user:test", budget=Budget(max_turns=6))
    state = await engine.drive(record.id)
    assert state.status == "completed", state.error
    return record.id, await engine.store.read(record.id)


def scenario(port: int) -> Scenario:
    """Start a counter, ask it (a command, then http_fetch) | pause | ask again, read it."""
    fetch = call("http_fetch", url=f"http://world:{port}/")
    return Scenario.of(
        {
            "text": "start the server",
            "tool_calls": [
                call("write_file", path="counter.py", content=COUNTER_SERVER),
                call("run_command", command=f"exec python3 counter.py {port}", background=True),
            ],
        },
        {"text": "ask it", "tool_calls": [call("run_command", command=FETCH.format(port=port))]},
        {"text": "ask with a tool", "tool_calls": [fetch]},
        {"text": "after the pause", "tool_calls": [fetch]},
        {"text": "its output", "tool_calls": [call("read_output", process="p1")]},
        {"text": "done"},
    )


async def test_a_process_tier_world_keeps_its_server_between_turns_and_stops_on_pause(
    tmp_path: Path, helix_home: Path
) -> None:
    port = free_port()
    sandbox = ProcessSandbox()
    engine = engine_for(helix_home, scenario(port), sandbox)
    _run_id, log = await drive_live_run(engine, tmp_path, port)
    types = [e.type for e in log]
    results = outputs(log)
    assert results[1].startswith("started p1 in the background")
    assert results[2].startswith("1\n")  # the server of turn 1 answered in turn 2
    assert results[3].startswith("HTTP 200 OK")
    assert results[3].endswith("\n2")  # http_fetch of world:PORT, through a relay
    (stopped, ended) = [e for e in log if e.type == "world.stopped"]
    assert stopped.data["reason"] == "paused"
    assert "cannot checkpoint" in stopped.data["detail"]
    assert stopped.data["processes"] == ["p1"]
    assert types.index("world.stopped") < types.index("run.resumed")
    assert ended.data["reason"] == "ended"
    # The paused world was stopped: after the resume nothing answers, and p1 is gone.
    assert "nothing answered" in results[4]
    assert "no background process p1" in results[5]
    sandbox.close()


async def test_background_needs_a_live_world(tmp_path: Path, helix_home: Path) -> None:
    script = Scenario.of(
        {
            "text": "go",
            "tool_calls": [
                call("run_command", command="sleep 1", background=True),
                call("http_fetch", url="http://world:8000/"),
            ],
        },
        {"text": "done"},
    )
    engine = engine_for(helix_home, script, ProcessSandbox())
    record = await engine.create(
        "x", blueprint=Blueprint(model="scripted:t"), world=tmp_path, auto_approve=True
    )
    await engine.drive(record.id)
    log = await engine.store.read(record.id)
    assert "needs a live world" in outputs(log)[0]
    denied = [e.data for e in log if e.type == "gate.decided" and e.data["verdict"] == "deny"]
    assert any("this run's is not live" in d["reason"] for d in denied)
    requested = [e for e in log if e.type == "model.requested"]
    assert requested  # the live tools are not offered to a run that is not live


async def test_a_one_shot_tier_refuses_a_live_run(tmp_path: Path, helix_home: Path) -> None:
    from helix.errors import ConfigError
    from helix.sandbox import BwrapSandbox

    engine = engine_for(helix_home, scenario(1), BwrapSandbox())
    blueprint = Blueprint(model="scripted:t", sandbox={"live": True})
    record = await engine.create("x", blueprint=blueprint, world=tmp_path, auto_approve=True)
    await engine.drive(record.id)
    log = await engine.store.read(record.id)
    assert any("cannot keep a live world" in o for o in outputs(log))
    with pytest.raises(ConfigError):
        await BwrapSandbox().open_box(cwd=tmp_path)


async def test_a_cancelled_live_run_leaves_nothing_behind(tmp_path: Path, helix_home: Path) -> None:
    from helix.runtime import cancel
    from helix.testing import processes_mentioning

    marker = f"{free_port()}{free_port()}"  # a sleep no other process on the host mentions
    script = Scenario.of(
        {
            "text": "start",
            "tool_calls": [call("run_command", command=f"exec sleep {marker}", background=True)],
        },
        {"text": "wait", "tool_calls": [call("run_command", command="sleep 600")]},
        {"text": "never"},
    )
    engine = engine_for(helix_home, script, ProcessSandbox())
    blueprint = Blueprint(model="scripted:t", sandbox={"live": True})
    record = await engine.create("x", blueprint=blueprint, world=tmp_path, auto_approve=True)
    driving = asyncio.create_task(engine.drive(record.id))
    try:
        async with engine.store.subscribe(record.id) as events:
            async for event in events:
                if event.type == "tool.started" and event.data["call_id"] == "call_1_0":
                    break
        assert processes_mentioning(marker)  # the background process runs on the host
        await cancel(engine.store, record.id, by="user:test")
        state = await driving
    finally:
        driving.cancel()
    assert state.status == "cancelled"
    log = await engine.store.read(record.id)
    (stopped,) = [e for e in log if e.type == "world.stopped"]
    assert (stopped.data["reason"], stopped.data["processes"]) == ("ended", ["p1"])
    assert processes_mentioning(marker) == []  # judged from the host: nothing is left
