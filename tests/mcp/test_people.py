"""A real MCP server's requests that reach people and the run's model, end to end.

The test server (over stdio, in the process tier) elicits during ``confirm``: the run
asks it as an approval question, and ``helix approve --answer`` in another process
answers it, on the same SQLite store. During ``summarise`` it asks for sampling: the
run's model answers, and the answer is logged with its cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from helix.kernel.log import EventStore, open_store
from helix.providers import (
    ModelAdapter,
    ModelRequest,
    ModelResponse,
    Scenario,
    ScriptedModel,
    TokenUsage,
)
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox

from .conftest import SRC, call, stdio_server

WAIT_S = 90.0
"""A safety net for a busy machine, never a performance limit."""


class Summarising(ScriptedModel):
    """Plays the run's steps; answers a sampling request (no tools offered) itself."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.tools:
            return await super().request(request)
        usage = TokenUsage(input_tokens=7, output_tokens=3)
        return ModelResponse("builds are old", (), usage, "end", "scripted:test")


async def _question(store: EventStore, run_id: str) -> dict[str, object]:
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == "approval.requested" and event.data.get("question"):
                return event.data
    raise AssertionError("the run asked nothing")


async def test_an_mcp_servers_question_is_answered_from_another_process(
    tmp_path: Path, helix_home: Path
) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'helix.db'}")
    steps = [
        call("t__confirm", "c1", question="Delete the old builds?"),
        call("t__summarise", "c2", text="a long text about builds"),
        {"text": "done"},
    ]

    def model(_setup: RunSetup) -> ModelAdapter:
        return Summarising(Scenario.of(*steps), label="test")

    box = ProcessSandbox()
    engine = Engine(
        store, home=helix_home, sandbox=box, model_factory=model, env={"HELIX_SRC": SRC}
    )
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:t",
            "tools": ["read_file"],
            "mcp": [stdio_server(tools=["confirm", "summarise"])],
            "approvals": {"rules": [{"tool": "*", "action": "allow"}]},
            "sampling": {"allow": "allow"},
        }
    )
    world = tmp_path / "world"
    world.mkdir()
    try:
        record = await engine.create("tidy up", blueprint=blueprint, world=world)
        async with asyncio.TaskGroup() as group:
            driving = group.create_task(engine.drive(record.id))
            asked = await _question(store, record.id)
            env = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
            answered = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "helix", "approve", record.id, "--answer", "ok=true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                env={**env, "HELIX_HOME": str(helix_home)},
                timeout=WAIT_S,
            )
            assert answered.returncode == 0, answered.stderr
            state = await asyncio.wait_for(driving, WAIT_S)
    finally:
        box.close()
    log = await store.read(record.id)
    await store.close()
    assert state.status == "completed", state.error
    question = asked["question"]
    assert isinstance(question, dict)
    assert (question["source"], question["message"]) == ("mcp:t", "Delete the old builds?")
    (decided,) = [e.data for e in log if e.type == "approval.decided" and e.data.get("answer")]
    assert decided["answer"] == {"ok": True}
    results = {e.data["call_id"]: e.data for e in log if e.type == "tool.completed"}
    assert json.loads(results["c1"]["output"]) == {"action": "accept", "data": {"ok": True}}
    (sampled,) = [e.data for e in log if e.type == "mcp.sampled"]
    assert (sampled["source"], sampled["text"]) == ("mcp:t", "builds are old")
    assert results["c2"]["output"].endswith(": builds are old")
