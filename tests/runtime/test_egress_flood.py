"""A command flooding the egress proxy: real bwrap, the real proxy, thousands of CONNECTs.

Repeats reuse the first decision for a host: the log keeps a bounded number of
``gate.decided`` events and one ``egress.counted`` with every attempt, and a person is
asked once per host, with a cap on the questions a run may have waiting at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, decide
from helix.sandbox import BwrapSandbox

pytestmark = pytest.mark.usefixtures("bwrap_available")

FLOOD = """\
import concurrent.futures, json, os, socket, sys
from urllib.parse import urlsplit

proxy = urlsplit(os.environ["http_proxy"])
targets = json.loads(sys.argv[1])

def attempt(target):
    with socket.create_connection((proxy.hostname, proxy.port), timeout=120) as s:
        s.sendall(("CONNECT %s HTTP/1.1\\r\\n\\r\\n" % target).encode())
        return s.recv(64).split(b" ")[1].decode()

with concurrent.futures.ThreadPoolExecutor(int(sys.argv[2])) as pool:
    codes = list(pool.map(attempt, targets))
print(json.dumps({code: codes.count(code) for code in sorted(set(codes))}))
"""
WAIT_S = 120.0
"""The longest any wait may take before the test fails (never asserted as a limit)."""


@dataclass
class Flood:
    store: EventStore
    run_id: str
    driving: asyncio.Task[Any]

    async def events(self) -> list[Event]:
        return await self.store.read(self.run_id)

    async def wait_for(self, check: Callable[[list[Event]], bool]) -> list[Event]:
        deadline = time.monotonic() + WAIT_S
        while True:
            log = await self.events()
            if check(log):
                return log
            assert time.monotonic() < deadline, f"never happened; saw {[e.type for e in log]}"
            await asyncio.sleep(0.05)


@asynccontextmanager
async def flooding(
    tmp_path: Path, targets: list[str], *, threads: int = 32, **create: Any
) -> AsyncIterator[Flood]:
    """A run whose one command attempts a CONNECT to each of ``targets``."""
    world = tmp_path / "world"
    world.mkdir()
    (world / "flood.py").write_text(FLOOD)
    command = f"python3 flood.py '{json.dumps(targets)}' {threads}"
    call = {"name": "run_command", "args": {"command": command}}
    scenario = Scenario.of({"text": "flooding", "tool_calls": [call]}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    box = BwrapSandbox(max_processes=256)
    engine = Engine(MemoryEventStore(), home=tmp_path, sandbox=box, model_factory=model, env={})
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:t",
            "sandbox": {"kind": "bwrap", "network": ["127.0.0.1"]},
            "approvals": {"rules": [{"tool": "run_command", "action": "allow"}]},
        }
    )
    record = await engine.create("flood", blueprint=blueprint, world=world, **create)
    try:
        async with asyncio.TaskGroup() as group:
            driving = group.create_task(engine.drive(record.id))
            yield Flood(engine.store, record.id, driving)
            state = await driving
            assert state.status == "completed"
    finally:
        box.close()


def egress_gates(log: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in log if e.type == "gate.decided" and e.data["gate"] == "egress"]


def only(log: list[Event], event_type: str) -> dict[str, Any]:
    (event,) = [e for e in log if e.type == event_type]
    return event.data


async def test_thousands_of_attempts_log_one_decision_per_host_and_are_counted(
    tmp_path: Path, web: int
) -> None:
    targets = ["blocked.test:443"] * 3000 + [f"127.0.0.1:{web}"] * 20
    async with flooding(tmp_path, targets, attended=False) as flood:
        pass
    log = await flood.events()
    gates = egress_gates(log)
    assert sorted((g["verdict"], g["reason"].split(":")[0]) for g in gates) == [
        ("allow", "127.0.0.1"),
        ("deny", "blocked.test"),
    ]
    counted = only(log, "egress.counted")
    assert sorted((h["host"], h["verdict"], h["attempts"]) for h in counted["hosts"]) == [
        ("127.0.0.1", "allow", 20),
        ("blocked.test", "deny", 3000),
    ]
    assert counted["other_attempts"] == 0
    output = only(log, "tool.completed")["output"]
    assert json.loads(output.splitlines()[0]) == {"200": 20, "403": 3000}
    types = [e.type for e in log]
    assert types[types.index("egress.counted") + 1] == "tool.completed"


async def test_an_attended_run_asks_once_per_host_and_repeats_wait_on_that_answer(
    tmp_path: Path, web: int
) -> None:
    targets = ["blocked.test:443"] * 3000 + [f"127.0.0.1:{web}"] * 20
    async with flooding(tmp_path, targets) as flood:
        log = await flood.wait_for(lambda log: any(e.type == "approval.requested" for e in log))
        asked = only(log, "approval.requested")
        assert asked["name"] == "egress"
        assert asked["args"] == {"host": "blocked.test", "port": 443}
        await decide(flood.store, flood.run_id, asked["request_id"], "deny", by="user:test")
    log = await flood.events()
    assert len([e for e in log if e.type == "approval.requested"]) == 1
    assert sorted(g["verdict"] for g in egress_gates(log)) == ["allow", "ask"]
    counted = only(log, "egress.counted")
    assert sorted((h["host"], h["verdict"], h["attempts"]) for h in counted["hosts"]) == [
        ("127.0.0.1", "allow", 20),
        ("blocked.test", "deny", 3000),
    ]
    output = only(log, "tool.completed")["output"]
    assert json.loads(output.splitlines()[0]) == {"200": 20, "403": 3000}


async def test_a_run_has_at_most_four_egress_questions_waiting_at_once(tmp_path: Path) -> None:
    targets = [f"h{n}.test:443" for n in range(12) for _ in range(5)]
    not_asked = "not asked: 4 egress questions of this run already wait for a person"

    def settled(log: list[Event]) -> bool:
        asked = [e for e in log if e.type == "approval.requested"]
        refused = [g for g in egress_gates(log) if not_asked in g["reason"]]
        return len(asked) == 4 and len(refused) == 8

    async with flooding(tmp_path, targets, threads=60) as flood:
        log = await flood.wait_for(settled)
        for event in [e for e in log if e.type == "approval.requested"]:
            request = event.data["request_id"]
            await decide(flood.store, flood.run_id, request, "deny", by="user:test")
    log = await flood.events()
    assert len([e for e in log if e.type == "approval.requested"]) == 4
    assert len(egress_gates(log)) == 12  # 4 asks, 8 refusals: one per host
    counted = only(log, "egress.counted")
    assert sum(h["attempts"] for h in counted["hosts"]) == 60
    assert {h["verdict"] for h in counted["hosts"]} == {"deny"}


async def test_a_command_asks_about_few_hosts_and_logs_a_bounded_number(tmp_path: Path) -> None:
    targets = [f"h{n}.test:443" for n in range(40)]
    async with flooding(tmp_path, targets, threads=1, auto_approve=True) as flood:
        pass
    log = await flood.events()
    assert len([e for e in log if e.type == "approval.requested"]) == 8
    gates = egress_gates(log)
    assert len([g for g in gates if g["verdict"] == "ask"]) == 8
    refused = [g for g in gates if g["verdict"] == "deny"]
    assert len(refused) == 32 - 8
    assert all(
        "not asked: this command already asked about 8 hosts" in g["reason"] for g in refused
    )
    counted = only(log, "egress.counted")
    assert len(counted["hosts"]) == 32
    assert counted["other_attempts"] == 8
    output = only(log, "tool.completed")["output"]
    # Auto-approved hosts were allowed but do not resolve: the proxy answers 502.
    assert json.loads(output.splitlines()[0]) == {"403": 32, "502": 8}
