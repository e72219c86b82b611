"""A published MCP server from PyPI (``mcp-server-time``) over stdio, through a real run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helix.sandbox import BwrapSandbox

from .conftest import DONE, MOUNTS, call, run_with

TIME = {
    "name": "time",
    "command": sys.executable,
    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    "mounts": MOUNTS,
}


@pytest.mark.usefixtures("bwrap_available")
async def test_the_time_server_answers_under_bwrap_and_its_read_only_tools_run_unasked(
    tmp_path: Path,
) -> None:
    steps = [call("time__get_current_time", "now", timezone="Europe/Paris"), DONE]
    box = BwrapSandbox()
    try:
        ran = await run_with(tmp_path, steps, [{**TIME, "tools": ["get_*"]}], sandbox=box)
    finally:
        box.close()
    assert ran.status == "completed", ran.error
    assert ran.offered[0] == ["read_file", "time__get_current_time"]
    assert ran.verdicts("now") == ["allow"]
    answer = json.loads(ran.output("now")["output"])
    assert answer["timezone"] == "Europe/Paris"
    (started,) = ran.of("mcp.server.started")
    assert started["server_name"] == "mcp-time"
    assert started["tier"] == "bwrap"


async def test_a_bad_argument_is_refused_by_the_schema_before_the_server(tmp_path: Path) -> None:
    steps = [call("time__convert_time", "bad", source_timezone="UTC"), DONE]
    ran = await run_with(tmp_path, steps, [TIME])
    assert ran.status == "completed", ran.error
    assert ran.verdicts("bad", "arguments") == ["deny"]
    (reason,) = [
        d["reason"]
        for d in ran.of("gate.decided")
        if d["call_id"] == "bad" and d["gate"] == "arguments"
    ]
    assert "'time' is a required property" in reason
    assert not ran.of("tool.started")
