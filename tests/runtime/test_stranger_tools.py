"""A tool of the user's own that runs commands in the sandbox is run as the built-in is.

``shell(cmd=…)`` declares ``command`` and ``sandboxed``: a real run (the process
sandbox, the real egress proxy) names the tier in its ``tool.started`` and decides the
connections it attempts by the run's egress lists, exactly as for ``run_command``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext, ToolResult, builtin_registry, tool

CONNECT = """\
import os, socket
from urllib.parse import urlsplit

proxy = urlsplit(os.environ["http_proxy"])
with socket.create_connection((proxy.hostname, proxy.port), timeout=60) as s:
    s.sendall(b"CONNECT blocked.test:443 HTTP/1.1\\r\\n\\r\\n")
    print(s.recv(64).split(b" ")[1].decode())
"""


@tool(effect="world", command="cmd", sandboxed=True)
async def shell(ctx: ToolContext, cmd: str) -> ToolResult:
    """Run a command line in the run's sandbox."""
    result = await ctx.sandbox.run(
        cmd,
        cwd=ctx.world,
        timeout_s=ctx.command_timeout_s,
        max_output=ctx.max_output,
        egress=ctx.egress,
        tmp_bytes=ctx.tmp_bytes,
    )
    return ToolResult(ok=result.exit_code == 0, output=result.output)


async def test_a_stranger_shell_runs_in_the_sandbox_behind_the_egress_lists(
    tmp_path: Path,
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "connect.py").write_text(CONNECT)
    calls = [
        {"name": "run_command", "args": {"command": "python3 connect.py"}, "id": "builtin"},
        {"name": "shell", "args": {"cmd": "python3 connect.py"}, "id": "stranger"},
    ]
    scenario = Scenario.of({"text": "connecting", "tool_calls": calls}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    tools = builtin_registry()
    tools.register(shell)
    box = ProcessSandbox()
    engine = Engine(
        MemoryEventStore(), home=tmp_path, tools=tools, sandbox=box, model_factory=model, env={}
    )
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:t",
            "sandbox": {"network": ["127.0.0.1"]},
            "approvals": {"rules": [{"tool": "*", "action": "allow"}]},
        }
    )
    try:
        record = await engine.create("connect", blueprint=blueprint, world=world, attended=False)
        state = await engine.drive(record.id)
    finally:
        box.close()
    assert state.status == "completed"
    log = await engine.store.read(record.id)

    def seen(call_id: str) -> dict[str, Any]:
        data = [e.data for e in log if e.data.get("call_id") == call_id]
        started = next(d for d in data if "sandbox" in d)
        egress = [(d["verdict"], d["reason"]) for d in data if d.get("gate") == "egress"]
        output = next(d["output"] for d in data if "output" in d)
        return {"sandbox": started["sandbox"], "egress": egress, "output": output.split()[0]}

    builtin, stranger = seen("builtin"), seen("stranger")
    assert builtin["sandbox"] == "process"
    assert builtin["egress"][0][0] == "deny"
    assert builtin["output"] == "403"
    assert stranger == builtin
