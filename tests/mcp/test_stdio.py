"""An MCP server over stdio, through real runs: namespacing, facets and gates, filters,
list_changed, a crash mid-call, secrets, replay without the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import DONE, call, run_with, stdio_server


async def test_tools_are_namespaced_and_meet_the_gates_by_their_annotations(
    tmp_path: Path,
) -> None:
    steps = [
        call("t__echo", "read", text="hello"),
        call("t__delete_item", "destroy", name="x"),
        DONE,
    ]
    ran = await run_with(tmp_path, steps, [stdio_server()])
    assert ran.status == "completed", ran.error
    offered = ran.offered[0]
    assert "t__echo" in offered
    assert "t__delete_item" in offered
    assert "read_file" in offered
    assert ran.verdicts("read") == ["allow"]
    assert ran.output("read")["output"] == "hello"
    # Destructive: not known to be read-only, so the approval gate asks; unattended: denied.
    assert ran.verdicts("destroy") == ["ask"]
    assert not (ran.world / "deleted-x").exists()
    started = ran.of("tool.started")
    assert {d["origin"] for d in started} == {"mcp:t"}
    (server,) = ran.of("mcp.server.started")
    assert server["server"] == "t"
    assert server["transport"] == "stdio"
    assert server["server_name"] == "helix-test"
    assert server["tier"] == "process"
    assert ran.of("mcp.server.stopped") == [{"server": "t"}]
    # A tool whose schema refers outside itself is left out, and the log says why.
    assert "t__odd" not in offered
    assert server["refused"] == {
        "odd": "its input schema refers outside itself ($ref: https://schemas.test/x)"
    }


async def test_an_approval_rule_or_an_override_lets_a_destructive_tool_run(
    tmp_path: Path,
) -> None:
    steps = [call("t__delete_item", "a", name="a"), call("u__delete_item", "b", name="b"), DONE]
    servers = [
        stdio_server("t"),
        stdio_server("u", overrides={"delete_*": {"effect": "none"}}),
    ]
    rules = [{"tool": "t__delete_item", "action": "allow"}]
    ran = await run_with(tmp_path, steps, servers, approvals=rules)
    assert ran.status == "completed", ran.error
    assert ran.verdicts("a") == ["allow"]
    assert ran.verdicts("b") == ["allow"]
    assert (ran.world / "deleted-a").read_text() == "a"
    assert (ran.world / "deleted-b").read_text() == "b"


async def test_the_allowlist_and_the_denylist_choose_the_tools_offered(tmp_path: Path) -> None:
    servers = [stdio_server("t", tools=["echo", "del*", "grow"], deny=["grow"])]
    ran = await run_with(tmp_path, [call("t__grow", "g"), DONE], servers)
    assert ran.offered[0] == ["read_file", "t__delete_item", "t__echo"]
    # A tool left out is unknown to the run: refused by the arguments gate.
    assert ran.verdicts("g", "arguments") == ["deny"]


async def test_list_changed_changes_the_tools_at_the_next_turn(tmp_path: Path) -> None:
    steps = [call("t__grow", "g"), call("t__late", "l"), DONE]
    # grow is not read-only: the operator says it has no effect, so it runs unasked.
    servers = [stdio_server(tools=["grow", "late"], overrides={"grow": {"effect": "none"}})]
    ran = await run_with(tmp_path, steps, servers)
    assert ran.status == "completed", ran.error
    assert ran.offered == [["read_file", "t__grow"], *[["read_file", "t__grow", "t__late"]] * 2]
    assert ran.of("mcp.tools.changed") == [
        {
            "server": "t",
            "added": ["t__late"],
            "removed": [],
            "tools": ["t__grow", "t__late"],
            "refused": {},
        }
    ]
    assert ran.output("l")["output"] == "late"


async def test_a_server_crash_is_a_clear_tool_error_and_the_next_call_restarts_it(
    tmp_path: Path,
) -> None:
    steps = [call("t__crash", "boom", code=7), call("t__echo", "after", text="back"), DONE]
    servers = [stdio_server(overrides={"crash": {"effect": "none"}})]
    ran = await run_with(tmp_path, steps, servers)
    assert ran.status == "completed", ran.error
    boom = ran.output("boom")
    assert not boom["ok"]
    assert "MCP server t exited (code 7) during the call to crash" in boom["output"]
    assert ran.output("after") == {**ran.output("after"), "ok": True, "output": "back"}
    (failed,) = ran.of("mcp.server.failed")
    assert failed["reason"] == "exited (code 7)"
    assert not failed["gave_up"]
    assert [d["restarts"] for d in ran.of("mcp.server.started")] == [0, 1]


async def test_the_restart_limit_stops_a_server_that_keeps_dying(tmp_path: Path) -> None:
    steps = [call("t__crash", "a"), call("t__crash", "b"), call("t__echo", "c", text="x"), DONE]
    servers = [stdio_server(overrides={"crash": {"effect": "none"}}, max_restarts=1)]
    ran = await run_with(tmp_path, steps, servers)
    assert ran.status == "completed", ran.error
    assert "it is not started again" in ran.output("b")["output"]
    assert ran.output("c")["output"].startswith("MCP server t is stopped: exited (code 3)")
    assert [d["gave_up"] for d in ran.of("mcp.server.failed")] == [False, True]


async def test_secrets_reach_the_server_but_not_the_log(tmp_path: Path) -> None:
    secret = "s3cr3t-value-for-the-server"
    servers = [stdio_server(env={"PYTHONPATH": "HELIX_SRC", "HELIX_TEST_SECRET": "MY_TOKEN"})]
    ran = await run_with(
        tmp_path, [call("t__inspect", "i"), DONE], servers, env={"MY_TOKEN": secret}
    )
    assert ran.status == "completed", ran.error
    seen = json.loads(ran.output("i")["output"])
    assert seen["secret_set"] is True
    assert seen["cwd"] == str(ran.world)
    # Only what was declared, and the sandbox's own minimum: none of Helix's environment.
    assert "MY_TOKEN" not in seen["env"]
    assert "HELIX_SRC" not in seen["env"]
    assert secret not in json.dumps([e.data for e in ran.log])


async def test_a_missing_secret_fails_the_run_naming_it(tmp_path: Path) -> None:
    servers = [stdio_server(env={"HELIX_TEST_SECRET": "NOT_SET_ANYWHERE"})]
    ran = await run_with(tmp_path, [DONE], servers)
    assert ran.status == "failed"
    assert "mcp:t: the engine's environment has no NOT_SET_ANYWHERE" in ran.error
    assert ran.of("mcp.server.failed")[0]["reason"].endswith("NOT_SET_ANYWHERE")


async def test_a_server_that_cannot_start_fails_the_run_naming_it(tmp_path: Path) -> None:
    servers = [{"name": "gone", "command": "/bin/false"}]
    ran = await run_with(tmp_path, [DONE], servers)
    assert ran.status == "failed"
    assert "mcp:gone:" in ran.error
    assert "exited (code 1)" in ran.error


async def test_a_destructive_tool_raises_an_approval_request(tmp_path: Path) -> None:
    steps = [call("t__delete_item", "d", name="y"), DONE]
    ran = await run_with(tmp_path, steps, [stdio_server()], auto_approve=True)
    assert ran.status == "completed", ran.error
    (requested,) = ran.of("approval.requested")
    assert requested["name"] == "t__delete_item"
    assert requested["args"] == {"name": "y"}
    assert [d["decision"] for d in ran.of("approval.decided")] == ["allow"]
    assert (ran.world / "deleted-y").read_text() == "y"


async def test_a_rollback_past_an_external_call_says_it_cannot_undo_it(tmp_path: Path) -> None:
    from helix.runtime import rollback

    steps = [call("t__delete_item", "d", name="q"), DONE]
    rules = [{"tool": "t__delete_item", "action": "allow"}]
    ran = await run_with(tmp_path, steps, [stdio_server()], approvals=rules)
    assert ran.status == "completed", ran.error
    (effect,) = ran.of("effect.recorded")
    assert effect["kind"] == "irreversible"
    assert effect["summary"] == "mcp:t delete_item"
    marker = await rollback(ran.engine, ran.run_id, "start", by="user:ann")
    assert [(o.call_id, o.detail) for o in marker.cannot_undo] == [("d", "mcp:t delete_item")]
    assert not (ran.world / "deleted-q").exists()  # what it wrote in the world is restored


async def test_a_server_that_never_answers_fails_the_start_and_is_ended(tmp_path: Path) -> None:
    from helix.testing import processes_mentioning

    marker = f"{tmp_path.name}-mute"
    servers = [{"name": "mute", "command": "/bin/sh", "args": ["-c", f"sleep 300 # {marker}"],
                "timeout_s": 1}]  # fmt: skip
    ran = await run_with(tmp_path, [DONE], servers)
    assert ran.status == "failed"
    assert "mcp:mute: did not answer within 1s" in ran.error
    assert processes_mentioning(marker) == []


@pytest.mark.parametrize(
    ("tool", "args", "rerun"),
    [("t__echo", {"text": "again"}, True), ("t__delete_item", {"name": "once"}, False)],
)
async def test_a_call_cut_short_by_a_crash_follows_the_idempotent_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, args: dict[str, str], rerun: bool
) -> None:
    # The loop crashes right after the call started: the restarted loop (and the server,
    # started again with it) finds the call begun and never finished.
    monkeypatch.setenv("HELIX_FAULTS", "crash-after:tool.started")
    steps = [call(tool, "c", **args), DONE]
    rules = [{"tool": "t__delete_item", "action": "allow"}]
    ran = await run_with(tmp_path, steps, [stdio_server()], approvals=rules)
    assert ran.status == "completed", ran.error
    assert len(ran.of("supervisor.restarted")) == 1
    assert [d["restarts"] for d in ran.of("mcp.server.started")] == [0, 0]  # a new incarnation
    (completed,) = ran.of("tool.completed")
    if rerun:  # idempotentHint: run again
        assert completed["output"] == "again"
        assert len(ran.of("tool.started")) == 2
    else:  # not idempotent: not run again, and the model is told
        assert ran.of("tool.interrupted")
        assert "not run again" in completed["output"]
        assert not (ran.world / "deleted-once").exists()
