"""An MCP server over streamable HTTP: reached through the run's egress policy only."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import DONE, call, run_with


def http(url: str, **more: object) -> dict[str, object]:
    return {"name": "web", "url": url, **more}


async def test_an_allowed_server_is_reached_with_its_secret_headers(
    tmp_path: Path, http_server: str
) -> None:
    secret = "header-secret-value-123"
    steps = [call("web__echo", "e", text="over http"), call("web__headers", "h"), DONE]
    ran = await run_with(
        tmp_path,
        steps,
        [http(http_server, headers={"X-Api-Key": "MY_TOKEN"})],
        network=["127.0.0.1"],
        env={"MY_TOKEN": secret},
    )
    assert ran.status == "completed", ran.error
    assert ran.output("e")["output"] == "over http"
    assert "x-api-key" in json.loads(ran.output("h")["output"])
    (started,) = ran.of("mcp.server.started")
    assert started["transport"] == "http"
    assert started["target"] == http_server
    assert started["tier"] is None
    assert ran.of("mcp.egress.decided") == [
        {
            "server": "web",
            "host": "127.0.0.1",
            "port": int(http_server.split(":")[2].split("/")[0]),
            "verdict": "allow",
            "reason": "127.0.0.1 is in the egress allowlist",
        }
    ]
    assert secret not in json.dumps([e.data for e in ran.log])


async def test_a_host_the_egress_policy_does_not_list_is_refused_and_logged(
    tmp_path: Path, http_server: str
) -> None:
    ran = await run_with(tmp_path, [DONE], [http(http_server)], network=["example.com"])
    assert ran.status == "failed"
    assert "mcp:web: 127.0.0.1:" in ran.error
    assert "refused: 127.0.0.1 is not in the egress allowlist" in ran.error
    # Each start of the run's loop (the supervisor tries it again) is refused and logged.
    decided = ran.of("mcp.egress.decided")
    assert decided
    assert {d["verdict"] for d in decided} == {"deny"}
    failed = ran.of("mcp.server.failed")
    assert len(failed) == len(decided)
    assert all("not in the egress allowlist" in d["reason"] for d in failed)
    assert not ran.of("model.requested")


async def test_a_run_without_network_reaches_no_server(tmp_path: Path, http_server: str) -> None:
    ran = await run_with(tmp_path, [DONE], [http(http_server)])
    assert ran.status == "failed"
    assert "the run may reach no host (its sandbox.network is empty)" in ran.error


async def test_a_server_that_dies_mid_call_is_a_tool_error_not_a_hung_run(
    tmp_path: Path, http_server: str
) -> None:
    steps = [call("web__crash", "boom"), call("web__echo", "after", text="x"), DONE]
    servers = [http(http_server, overrides={"crash": {"effect": "none"}}, max_restarts=1)]
    ran = await run_with(tmp_path, steps, servers, network=["127.0.0.1"])
    assert ran.status == "completed", ran.error
    boom = ran.output("boom")
    assert not boom["ok"]
    assert boom["output"].startswith("MCP server web went away (does not answer: ")
    assert boom["output"].endswith(
        "during the call to crash; it is started again at the next call (1 restarts left)"
    )
    after = ran.output("after")
    assert not after["ok"]
    assert after["output"].startswith("MCP server web could not be restarted: ")
    assert [d["gave_up"] for d in ran.of("mcp.server.failed")] == [False, False, True]
