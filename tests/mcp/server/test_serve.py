"""``helix mcp serve`` driven by the ``mcp`` SDK's client: over stdio and streamable HTTP.

A supervising agent starts a run, sees the call the gates ask about, approves it (only
when the person allowed that with ``--allow-approvals``), and reads the run's events
until it completes; bad tokens, bad arguments and unknown runs get clear answers.
"""

from __future__ import annotations

import base64
import json
import signal
from typing import Any

import httpx
import pytest

from mcp import Client

from .conftest import TOKEN, WAIT_S, Here, call, events_until, http_client, refused


async def _text(client: Any, uri: str) -> str:
    [content] = (await client.read_resource(uri)).contents
    assert content.mime_type == "application/json"
    text: str = content.text
    return text


async def _start(client: Any, here: Here, **more: Any) -> str:
    started = await call(
        client, "start_run",
        {"objective": "build it", "model": here.model, "folder": str(here.world), **more},
    )  # fmt: skip
    run = started["run"]
    assert run["objective"] == "build it"
    assert run["world"] == str(here.world)
    return str(run["id"])


async def _approve_and_finish(client: Any, run_id: str) -> list[dict[str, Any]]:
    """Wait for the run's ask, approve it through MCP, read on until it completes."""
    seen, status = await events_until(client, run_id, "waiting")
    assert seen[-1]["type"] == "approval.requested"
    pending = await call(client, "pending_approvals", {"run_id": run_id[:12]})
    assert pending["answerable_here"] is True
    [ask] = pending["approvals"]
    assert (ask["name"], ask["args"]) == ("run_command", {"command": "touch built"})
    decided = await call(client, "approve", {"run_id": run_id, "reason": "looks safe"})
    assert decided == {"run_id": run_id, "request_id": ask["request_id"], "decision": "allow"}
    rest, status = await events_until(client, run_id, "completed", "failed", after=seen[-1]["seq"])
    assert status == "completed"
    events = seen + rest
    assert [e["seq"] for e in events] == list(range(len(events)))
    return events


async def test_stdio_start_approve_and_read_a_run(here: Here) -> None:
    async with Client(here.stdio("--allow-approvals")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"start_run", "run_events", "approve", "deny", "cancel_run", "diff_run"} <= set(
            tools
        )
        hints = {name: tool.annotations for name, tool in tools.items()}
        assert all(hint is not None for hint in hints.values())
        assert getattr(hints["get_run"], "read_only_hint", None) is True
        assert getattr(hints["cancel_run"], "destructive_hint", None) is True
        assert getattr(hints["rollback_run"], "destructive_hint", None) is True
        assert getattr(hints["start_run"], "read_only_hint", None) is False
        schema = tools["run_events"].input_schema
        assert schema["required"] == ["run_id"]
        assert schema["properties"]["limit"]["maximum"] == 500
        assert schema["additionalProperties"] is False

        run_id = await _start(client, here)
        events = await _approve_and_finish(client, run_id)
        decided = next(e for e in events if e["type"] == "approval.decided")
        assert decided["actor"] == "user:pat"  # the person who gave the client that right
        assert decided["data"]["reason"] == "[mcp] looks safe"
        assert events[-1]["type"] == "run.completed"

        # The world the run changed, through the same door.
        files = await call(client, "list_files", {"run_id": "last"})
        assert [f["path"] for f in files["files"]] == ["built"]
        read = await call(client, "read_file", {"run_id": run_id, "path": "built"})
        assert (read["text"], read["size"], read["truncated"]) == ("", 0, False)
        diff = await call(client, "diff_run", {"run_id": run_id})
        assert "built" in diff["diff"]
        (here.world / "notes.md").write_text("héllo wörld\n")  # the world as it is now
        (here.world / "blob.bin").write_bytes(bytes(range(256)))
        cut = await call(
            client, "read_file", {"run_id": run_id, "path": "notes.md", "max_bytes": 2}
        )
        assert (cut["text"], cut["size"], cut["truncated"]) == ("h", 14, True)  # é not split
        blob = await call(client, "read_file", {"run_id": run_id, "path": "blob.bin"})
        assert base64.b64decode(blob["base64"]) == bytes(range(256))
        assert "text" not in blob
        gone = await refused(client, "read_file", {"run_id": run_id, "path": "../etc/passwd"})
        assert gone["code"] != "internal_error", gone

        # A page is bounded, and pages on from next_after.
        first = await call(client, "run_events", {"run_id": run_id, "limit": 3})
        assert [e["seq"] for e in first["events"]] == [0, 1, 2]
        assert (first["next_after"], first["more"]) == (2, True)
        last = await call(client, "run_events", {"run_id": run_id, "after": len(events) - 2})
        assert [e["type"] for e in last["events"]] == ["run.completed"]
        assert last["more"] is False

        # Resources: the runs, one run, its events.
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        assert listed == ["helix://runs", f"helix://runs/{run_id}"]
        shown = await _text(client, f"helix://runs/{run_id[:10]}")
        assert json.loads(shown)["run"]["status"] == "completed"
        page = json.loads(
            await _text(client, f"helix://runs/{run_id}/events?after={len(events) - 3}")
        )
        assert [e["type"] for e in page["events"]] == ["turn.ended", "run.completed"]


async def test_errors_are_results_and_the_server_goes_on(here: Here) -> None:
    async with Client(here.stdio()) as client:
        missing = await refused(client, "get_run", {"run_id": "run_nope"})
        assert missing == {"code": "run_not_found", "message": "run 'run_nope' does not exist"}
        for name in ("run_events", "pending_approvals", "cancel_run", "list_files"):
            assert (await refused(client, name, {"run_id": "run_nope"}))["code"] == "run_not_found"
        bad = await refused(client, "run_events", {"run_id": "last", "limit": 10_000, "x": 1})
        assert bad["code"] == "invalid_arguments"
        assert "limit: Input should be less than or equal to 500" in bad["message"]
        assert "x: Extra inputs are not permitted" in bad["message"]
        empty = await refused(client, "start_run", {})
        assert empty == {
            "code": "invalid_arguments",
            "message": "start_run: objective: Field required",
        }
        unknown = await refused(client, "rm_rf", {})
        assert unknown["code"] == "unknown_tool"
        bad_model = await refused(client, "start_run", {"objective": "x", "model": "nope"})
        assert bad_model["code"] == "invalid_model"
        from mcp.shared.exceptions import MCPError

        for uri in ("helix://runs/run_nope", "helix://nothing", "helix://runs/last/secrets"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            assert raised.value.data["uri"] == uri
        assert (await call(client, "list_runs", {}))["runs"] == []  # still serving


async def test_without_the_flags_only_a_person_approves(here: Here) -> None:
    """By default a client cannot approve, nor start a run that approves itself."""
    async with Client(here.stdio()) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "approve" not in names
        assert "deny" not in names
        self_approving = await refused(
            client, "start_run",
            {"objective": "x", "model": here.model, "folder": str(here.world),
             "auto_approve": True},
        )  # fmt: skip
        assert self_approving["code"] == "not_allowed"
        assert "--allow-auto-approve" in self_approving["message"]
        assert (await call(client, "list_runs", {}))["runs"] == []  # nothing was started

        run_id = await _start(client, here)
        seen, _ = await events_until(client, run_id, "waiting")
        pending = await call(client, "pending_approvals", {"run_id": run_id})
        assert pending["answerable_here"] is False
        for name in ("approve", "deny"):
            error = await refused(client, name, {"run_id": run_id})
            assert error["code"] == "not_allowed"
            assert "--allow-approvals" in error["message"]
        # The person answers from their terminal; the run this server drives goes on.
        approved = here.helix("approve", run_id)
        assert approved.returncode == 0, approved.stderr
        _, status = await events_until(client, run_id, "completed", after=seen[-1]["seq"])
        assert status == "completed"


async def test_streamable_http_with_a_token(here: Here) -> None:
    url, process = here.serve_http("--allow-approvals", env={"HELIX_MCP_TOKEN": TOKEN})
    assert url.startswith("http://127.0.0.1:")
    wrong: tuple[dict[str, str], ...] = (
        {},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Basic {TOKEN}"},
    )
    for headers in wrong:
        async with httpx.AsyncClient(timeout=WAIT_S) as anonymous:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            answer = await anonymous.post(url, json=ping, headers=headers)
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "unauthorized"
        assert answer.headers["www-authenticate"] == "Bearer"
    async with http_client(url) as client:
        run_id = await _start(client, here)
        events = await _approve_and_finish(client, run_id)
        assert events[-1]["type"] == "run.completed"
    process.send_signal(signal.SIGTERM)
    assert process.wait(WAIT_S) == 0


async def test_a_run_left_waiting_is_resumable_after_the_server_stops(here: Here) -> None:
    token_file = here.home.parent / "mcp-token"
    token_file.write_text(f"{TOKEN}\n")
    url, process = here.serve_http("--token-file", str(token_file))
    async with http_client(url) as client:
        run_id = await _start(client, here)
        await events_until(client, run_id, "waiting")
    process.send_signal(signal.SIGTERM)
    assert process.wait(WAIT_S) == 0
    shown = here.helix("show", run_id)
    assert "waiting" in shown.stdout
    async with Client(here.stdio("--allow-approvals")) as client:
        assert (await call(client, "get_run", {"run_id": run_id}))["run"]["driven"] is False
        resumed = await call(client, "resume_run", {"run_id": run_id})
        assert resumed["run"]["id"] == run_id
        [ask] = (await call(client, "pending_approvals", {"run_id": run_id}))["approvals"]
        await call(client, "approve", {"run_id": run_id, "request_id": ask["request_id"]})
        events, status = await events_until(client, run_id, "completed", "failed")
        assert status == "completed"
        assert [e["type"] for e in events].count("tool.completed") == 1


def test_http_refuses_to_start_without_a_token(here: Here) -> None:
    cases = {
        ("--http", "0"): "serving HTTP needs a token",
        ("--http", "0", "--host", "0.0.0.0", "--no-auth"): "--no-auth is refused on 0.0.0.0",
        ("--host", "127.0.0.1"): "go with --http PORT",
        ("--http", "0", "--token-file", str(here.world / "none")): "cannot read it",
    }
    for options, words in cases.items():
        result = here.helix("mcp", "serve", *options)
        assert result.returncode == 2, (options, result.stderr)
        assert words in result.stderr
        assert "Traceback" not in result.stderr
    short = here.helix("mcp", "serve", "--http", "0", env={"HELIX_MCP_TOKEN": "short"})
    assert (short.returncode, "at least 16 characters" in short.stderr) == (2, True)


def test_an_unreachable_server_is_said_at_start(here: Here) -> None:
    result = here.helix("mcp", "serve", env={"HELIX_SERVER": "http://127.0.0.1:1"})
    assert result.returncode == 4, result.stderr
    assert "cannot reach the server at http://127.0.0.1:1" in result.stderr
    assert "serving" not in result.stderr


async def test_steer_cancel_fork_and_roll_back_through_mcp(here: Here) -> None:
    async with Client(here.stdio("--allow-approvals")) as client:
        run_id = await _start(client, here)
        await _approve_and_finish(client, run_id)
        assert (here.world / "built").exists()

        fork = await call(client, "fork_run", {"run_id": run_id, "turn": 1, "message": "again"})
        fork_id = fork["run"]["id"]
        assert fork_id != run_id
        assert fork["run"]["parent"]["run_id"] == run_id
        events, _ = await events_until(client, fork_id, "completed", "failed")
        assert events[0]["type"] == "run.created"  # the fork's log reads from the start
        assert any(e["type"] == "run.forked" for e in events)

        rolled = await call(client, "rollback_run", {"run_id": run_id, "to": "start"})
        assert rolled["run_id"] == run_id
        assert not (here.world / "built").exists()  # the world as the run found it

        second = await _start(client, here)
        await events_until(client, second, "waiting")
        steered = await call(client, "steer_run", {"run_id": second, "message": "be careful"})
        assert steered == {"run_id": second, "steered": True}
        cancelled = await call(client, "cancel_run", {"run_id": second})
        assert cancelled["run"]["status"] == "cancelled"
        again = await refused(client, "cancel_run", {"run_id": second})
        assert again["code"] == "invalid_run_state"
        events, _ = await events_until(client, second, "cancelled")
        assert [e["type"] for e in events][-1] == "run.cancelled"
        steer = next(e for e in events if e["type"] == "steer.received")
        assert steer["actor"] == "user:pat"


CHOOSING = """\
- text: Which way?
  tool_calls:
    - name: ask_choice
      args:
        question: Which release?
        choices: [{id: minor, label: A minor release}, {id: major, label: A major one}]
- text: Going with it.
"""


async def test_an_options_card_is_answered_through_mcp_only_when_allowed(here: Here) -> None:
    here.scenario.write_text(CHOOSING)
    async with Client(here.stdio()) as client:  # without --allow-approvals: listed only
        run_id = await _start(client, here)
        seen, _ = await events_until(client, run_id, "waiting")
        pending = await call(client, "pending_choices", {"run_id": run_id})
        assert pending["answerable_here"] is False
        [card] = pending["choices"]
        assert [c["id"] for c in card["choices"]] == ["minor", "major"]
        error = await refused(client, "choose", {"run_id": run_id, "choice": "major"})
        assert error["code"] == "not_allowed"
    async with Client(here.stdio("--allow-approvals")) as client:
        wrong = await refused(client, "choose", {"run_id": run_id, "choice": "patch"})
        assert wrong["code"] == "invalid_choice", wrong
        made = await call(client, "choose", {"run_id": run_id, "choice": "major"})
        await call(client, "resume_run", {"run_id": run_id})  # its driver left with the first
        assert (made["run_id"], made["component_id"], made["choice"]) == (
            run_id, card["component_id"], "major"
        )  # fmt: skip
        rest, status = await events_until(client, run_id, "completed", after=seen[-1]["seq"])
        assert status == "completed"
        (result,) = [e["data"] for e in rest if e["type"] == "tool.completed"]
        assert json.loads(result["output"])["choice"] == "major"
