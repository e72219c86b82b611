"""``helix mcp serve`` in front of a real ``helix serve``: the same tools, the server's door.

The MCP server opens the door the environment names (``HELIX_SERVER`` +
``HELIX_TOKEN``), so runs are created, driven and approved on the server, as the
token's user; nothing is stored where the MCP server runs.
"""

from __future__ import annotations

from helix.testing import MockModelServer
from mcp import Client
from tests.server.conftest import MODEL, Admin, LiveServer, play

from .conftest import Here, call, events_until, refused


async def test_runs_started_through_mcp_are_the_servers(
    here: Here, live: LiveServer, model_server: MockModelServer
) -> None:
    token = Admin(live.config.db_url).api_token("admin")
    remote = {"HELIX_SERVER": live.url, "HELIX_TOKEN": token}
    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "true"}}]},
        {"text": "Built."},
    )
    async with Client(here.stdio("--allow-approvals", env=remote)) as client:
        started = await call(client, "start_run", {"objective": "build", "model": MODEL})
        run_id = started["run"]["id"]
        seen, _ = await events_until(client, run_id, "waiting")
        assert seen[-1]["type"] == "approval.requested"
        [ask] = (await call(client, "pending_approvals", {"run_id": run_id}))["approvals"]
        assert ask["args"] == {"command": "true"}
        await call(client, "approve", {"run_id": run_id})
        rest, status = await events_until(client, run_id, "completed", after=seen[-1]["seq"])
        assert status == "completed"
        decided = next(e for e in rest if e["type"] == "approval.decided")
        assert decided["actor"] == "user:admin"  # the token's user, as the server knows it
        missing = await refused(client, "get_run", {"run_id": "run_nope"})
        assert missing["code"] == "run_not_found"
        path = await refused(client, "start_run", {"objective": "x", "folder": "/etc"})
        assert path["code"] == "invalid_config"  # a server takes folder names, not paths

    with live.client(token) as owner:  # the server has the run; the MCP server stored nothing
        assert owner.get(f"/runs/{run_id}").json()["status"] == "completed"
    assert not (here.home / "helix.db").exists()


def test_a_refused_token_is_said_at_start(here: Here, live: LiveServer) -> None:
    result = here.helix("mcp", "serve", env={"HELIX_SERVER": live.url, "HELIX_TOKEN": "hx_wrong"})
    assert result.returncode == 1, result.stderr
    assert "log in again, or pass a valid token" in result.stderr
    assert "serving" not in result.stderr
