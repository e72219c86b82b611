"""Real MCP servers for the client's tests: the test server (stdio, HTTP), runs through Engine."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import helix
from helix.kernel.events import Event
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox, Sandbox
from helix.testing import mcp_test_server_argv

SRC = str(Path(helix.__file__).resolve().parents[1])
"""The Helix the test server imports (this checkout's)."""
MOUNTS = sorted({sys.prefix, sys.base_prefix, SRC})
"""What a Python MCP server needs to see under bwrap: the venv, its Python, Helix."""


def stdio_server(name: str = "t", **more: Any) -> dict[str, Any]:
    """A blueprint's entry for the test server over stdio."""
    argv = mcp_test_server_argv("stdio")
    return {
        "name": name,
        "command": argv[0],
        "args": argv[1:],
        "env": {"PYTHONPATH": "HELIX_SRC"},
        "mounts": MOUNTS,
        **more,
    }


class Recording(ScriptedModel):
    """A scripted model that remembers the tools each request offered."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario, label="test")
        self.offered: list[list[str]] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.offered.append(sorted(t.name for t in request.tools))
        return await super().request(request)


@dataclass
class Ran:
    """A finished run: its status, its log, the tools each model request offered."""

    status: str
    log: list[Event]
    offered: list[list[str]]
    engine: Engine
    run_id: str
    error: str = ""
    world: Path = field(default_factory=Path)

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The data of every event of ``kind``."""
        return [e.data for e in self.log if e.type == kind]

    def output(self, call_id: str) -> dict[str, Any]:
        """The ``tool.completed`` of a call."""
        return next(d for d in self.of("tool.completed") if d["call_id"] == call_id)

    def verdicts(self, call_id: str, gate: str = "approval") -> list[str]:
        return [
            d["verdict"]
            for d in self.of("gate.decided")
            if d["call_id"] == call_id and d["gate"] == gate
        ]


async def run_with(
    tmp_path: Path,
    steps: Sequence[dict[str, Any]],
    servers: Sequence[dict[str, Any]],
    *,
    sandbox: Sandbox | None = None,
    env: dict[str, str] | None = None,
    network: Sequence[str] = (),
    approvals: Sequence[dict[str, Any]] = (),
    auto_approve: bool = False,
) -> Ran:
    """Drive one real run whose model plays ``steps`` and whose blueprint names ``servers``."""
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    scenario = Scenario.of(*steps)
    model = Recording(scenario)

    def factory(_setup: RunSetup) -> ModelAdapter:
        return model

    own = ProcessSandbox() if sandbox is None else None
    box = sandbox or own
    assert box is not None
    engine = Engine(
        MemoryEventStore(),
        home=tmp_path / "home",
        sandbox=box,
        model_factory=factory,
        env={"HELIX_SRC": SRC, **(env or {})},
    )
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:t",
            "tools": ["read_file"],
            "mcp": list(servers),
            "sandbox": {"kind": box.tier, "network": list(network)},
            "approvals": {"rules": list(approvals)},
        }
    )
    try:
        record = await engine.create(
            "use the tools", blueprint=blueprint, world=world, attended=False,
            auto_approve=auto_approve,
        )  # fmt: skip
        state = await engine.drive(record.id)
    finally:
        if own is not None:
            own.close()
    log = await engine.store.read(record.id)
    failed = [e.data["error"] for e in log if e.type == "run.failed"]
    return Ran(
        state.status, log, model.offered, engine, record.id, failed[0] if failed else "", world
    )


def call(tool: str, call_id: str, /, **args: Any) -> dict[str, Any]:
    """A model turn calling one tool."""
    return {"text": "", "tool_calls": [{"name": tool, "args": args, "id": call_id}]}


DONE = {"text": "done"}


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server over streamable HTTP on a free port; its URL."""
    env = {**os.environ, "PYTHONPATH": SRC}
    process = subprocess.Popen(
        mcp_test_server_argv("http"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()  # printed once it answers
        assert line.startswith("listening on "), line
        yield f"http://127.0.0.1:{int(line.split()[-1])}/mcp"
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
