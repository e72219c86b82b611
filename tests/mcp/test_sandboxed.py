"""A stdio MCP server runs in the run's sandbox: under bwrap it sees the world, not the host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helix.sandbox import BwrapSandbox, ProcessSandbox

from .conftest import DONE, call, run_with, stdio_server


@pytest.mark.usefixtures("bwrap_available")
async def test_a_stdio_server_under_bwrap_sees_the_world_and_not_the_host(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the host's")
    box = BwrapSandbox()
    try:
        steps = [call("t__inspect", "i", probe=str(outside)), call("t__delete_item", "w", name="z")]
        ran = await run_with(
            tmp_path,
            [*steps, DONE],
            [stdio_server()],
            sandbox=box,
            approvals=[{"tool": "t__delete_item", "action": "allow"}],
        )
    finally:
        box.close()
    assert ran.status == "completed", ran.error
    seen = json.loads(ran.output("i")["output"])
    assert seen["probe"] is False  # a file beside the world, invisible to the server
    assert seen["cwd"] == str(ran.world)
    assert "home" not in seen["root"]
    assert ran.of("mcp.server.started")[0]["tier"] == "bwrap"
    assert {d["sandbox"] for d in ran.of("tool.started")} == {"bwrap"}
    # What it writes lands in the world, and the turn's snapshot sees it.
    assert (ran.world / "deleted-z").read_text() == "z"
    assert any("deleted-z" in d["changes"] for d in ran.of("world.snapshotted"))


async def test_the_process_tier_hides_nothing_but_the_environment(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the host's")
    steps = [call("t__inspect", "i", probe=str(outside)), DONE]
    ran = await run_with(tmp_path, steps, [stdio_server()], sandbox=ProcessSandbox())
    seen = json.loads(ran.output("i")["output"])
    assert seen["probe"] is True
    assert ran.of("mcp.server.started")[0]["tier"] == "process"


async def test_the_docker_tier_refuses_a_stdio_server_clearly(tmp_path: Path) -> None:
    from helix.sandbox import DockerSandbox

    box = DockerSandbox()
    with pytest.raises(Exception, match="cannot run a long-lived server"):
        box.serve(["true"], cwd=tmp_path, env={})


@pytest.mark.usefixtures("bwrap_available")
async def test_a_stdio_servers_connections_meet_the_runs_egress_lists(
    tmp_path: Path, web: int
) -> None:
    box = BwrapSandbox()
    try:
        steps = [
            call("t__fetch", "in", url=f"http://127.0.0.1:{web}/"),
            call("t__fetch", "out", url="http://blocked.test/"),
            DONE,
        ]
        ran = await run_with(tmp_path, steps, [stdio_server()], sandbox=box, network=["127.0.0.1"])
    finally:
        box.close()
    assert ran.status == "completed", ran.error
    assert ran.output("in")["output"] == "200"
    assert ran.output("out")["output"] == "403"
    decided = {(d["host"], d["verdict"]) for d in ran.of("mcp.egress.decided")}
    assert decided == {("127.0.0.1", "allow"), ("blocked.test", "deny")}
