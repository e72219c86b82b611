"""Live worlds paused, checkpointed into the store and resumed with their memory.

The issue's done-when, end to end, on each tier that checkpoints (gVisor, microVM): a
run starts a background HTTP server with an in-memory counter, a later turn fetches
from it (through the run's own relay), the run pauses (the world is checkpointed), is
resumed, and the server answers on with its counter intact. Then (gVisor) an idle
world is checkpointed while the run waits on an approval.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.kernel.events import Budget, Event
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, decide, resume
from helix.sandbox import resolve_sandbox
from helix.testing.conformance import COUNTER_SERVER, free_port
from tests.conftest import gvisor_tier, microvm_tier
from tests.runtime.test_live_world import FETCH, call, outputs, scenario

CHECKPOINTING = [
    pytest.param("gvisor", marks=gvisor_tier),
    pytest.param("microvm", marks=microvm_tier),
]


def engine_for(home: Path, steps: Scenario, tier: str = "gvisor") -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(steps, label=tier)

    sandbox = resolve_sandbox(tier)
    return Engine(MemoryEventStore(), home=home, model_factory=model, env={}, sandbox=sandbox)


async def first_event(engine: Engine, run_id: str, kind: str) -> Event:
    """The run's first ``kind`` event, waited for on its live feed."""
    async with engine.store.subscribe(run_id, after=-1) as events:
        async for event in events:
            if event.type == kind:
                return event
    raise AssertionError(f"the run's log ended without {kind}")


@pytest.mark.parametrize("tier", CHECKPOINTING)
async def test_a_paused_world_resumes_with_its_server_and_counter(
    tmp_path: Path, helix_home: Path, tier: str, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue(f"{tier}_available")
    port = free_port()
    engine = engine_for(helix_home, scenario(port), tier)
    blueprint = Blueprint(
        model="scripted:t", sandbox={"live": True, "kind": tier}, budget=Budget(max_turns=3)
    )
    record = await engine.create("count", blueprint=blueprint, world=tmp_path, auto_approve=True)
    state = await engine.drive(record.id, until=lambda s: s.status == "paused")
    assert state.status == "paused"
    (checkpoint,) = [
        e for e in await engine.store.read(record.id) if e.type == "world.checkpointed"
    ]
    assert checkpoint.data["processes"] == ["p1"]
    assert checkpoint.data["reason"] == "paused"
    assert engine.objects.has(checkpoint.data["image"])  # the image is an object in the store
    assert state.live.image == checkpoint.data["image"]

    assert await resume(engine.store, record.id, by="user:test", budget=Budget(max_turns=6))
    state = await engine.drive(record.id)
    assert state.status == "completed", state.error
    log: list[Event] = await engine.store.read(record.id)
    results = outputs(log)
    assert results[2].startswith("1\n")
    assert results[3].endswith("\n2")
    assert results[4].endswith("\n3")  # after the pause: the same process, its memory kept
    assert results[5].startswith("[p1: running")
    types = [e.type for e in log]
    assert types.index("world.checkpointed") < types.index("run.resumed")
    assert types.index("run.resumed") < types.index("world.restored")
    (stopped,) = [e for e in log if e.type == "world.stopped"]
    assert (stopped.data["reason"], stopped.data["processes"]) == ("ended", ["p1"])


@gvisor_tier
async def test_an_idle_world_is_checkpointed_and_restored_on_next_use(
    tmp_path: Path, helix_home: Path, gvisor_available: None
) -> None:
    port = free_port()
    steps = Scenario.of(
        {
            "text": "serve",
            "tool_calls": [
                call("write_file", path="counter.py", content=COUNTER_SERVER),
                call("run_command", command=f"exec python3 counter.py {port}", background=True),
            ],
        },
        {"text": "ask", "tool_calls": [call("run_command", command=FETCH.format(port=port))]},
        {"text": "ask later", "tool_calls": [call("http_fetch", url=f"http://world:{port}/")]},
        {"text": "done"},
    )
    engine = engine_for(helix_home, steps)
    blueprint = Blueprint(
        model="scripted:t",
        sandbox={"live": True, "kind": "gvisor", "checkpoint_idle_min": 0.01},
        approvals={
            "rules": [
                {"tool": "write_file", "action": "allow"},
                {"tool": "run_command", "action": "allow"},
                {"tool": "http_fetch", "action": "ask"},
            ]
        },
    )
    record = await engine.create("idle", blueprint=blueprint, world=tmp_path, auto_approve=False)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        checkpointed = await first_event(engine, record.id, "world.checkpointed")
        assert checkpointed.data["reason"] == "idle"
        assert checkpointed.data["processes"] == ["p1"]
        await decide(engine.store, record.id, None, "allow", by="user:test")
    state = driving.result()
    assert state.status == "completed", state.error
    log = await engine.store.read(record.id)
    assert outputs(log)[-1].endswith("\n2")  # the frozen server, restored, counted on
    assert [e.type for e in log].count("world.restored") == 1
