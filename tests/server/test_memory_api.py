"""``/api/v1/workspaces/{w}/memory`` and ``/artifacts`` on a real server, and runs using them.

ann and bob are members of ``team``, vic a viewer, out a member of nothing. Runs by ann
and bob (a mock model calling the memory tools) see what the rules say and log the
``memory.*`` events; people's reads and writes through REST and the SDK follow the same
rules; bad input is a 4xx with a code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix import Client
from helix.errors import MemoryDeniedError, MemoryInputError, NotFoundError
from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    Admin,
    LiveServer,
    make_config,
    play,
    wait_for_event,
    wait_for_status,
)

PW = "api-pw-12345"


@pytest.fixture
def people(live: LiveServer, admin: Admin) -> dict[str, str]:
    admin.workspace("team")
    admin.user("ann", password=PW, workspace="team", role="member")
    admin.user("bob", password=PW, workspace="team", role="member")
    admin.user("vic", password=PW, workspace="team", role="viewer")
    admin.user("out", password=PW)
    return {name: live.login(name, PW) for name in ("ann", "bob", "vic", "out")}


def _error(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    return str(body["message"])


def _call(tool: str, **args: Any) -> dict[str, Any]:
    return {"text": "", "tool_calls": [{"name": tool, "args": args}]}


def _run(client: httpx.Client, server: MockModelServer, *steps: dict[str, Any]) -> list[Any]:
    play(server, *steps, {"text": "done"})
    body = {"objective": "use memory", "model": MODEL, "workspace": "team", "auto_approve": True}
    created = client.post("/runs", json=body)
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert wait_for_status(client, run_id, "completed", "failed")["status"] == "completed"
    events: list[Any] = client.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()[
        "events"
    ]
    return events


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_live(
    request: pytest.FixtureRequest, tmp_path: Path, model_server: MockModelServer
) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    """A server on SQLite or on PostgreSQL, with ann and bob members of ``team``."""
    overrides = {}
    if request.param == "postgres":
        overrides["db_url"] = str(request.getfixturevalue("fresh_postgres_url"))
    server = LiveServer(make_config(tmp_path, model_server, **overrides)).start()
    try:
        admin = Admin(server.config.db_url)
        admin.workspace("team")
        admin.user("ann", password=PW, workspace="team", role="member")
        admin.user("bob", password=PW, workspace="team", role="member")
        yield server, {name: server.login(name, PW) for name in ("ann", "bob")}
    finally:
        server.stop()


def test_runs_of_two_people_and_a_shared_workspace(
    any_live: tuple[LiveServer, dict[str, str]], model_server: MockModelServer
) -> None:
    live, people = any_live
    with live.client(people["ann"]) as ann, live.client(people["bob"]) as bob:
        events = _run(
            ann,
            model_server,
            _call("remember", text="Ann's pin is under the mat"),
            _call("remember", text="Standup is at nine", scope="workspace", tags=["meeting"]),
            _call("save_artifact", name="notes.md", content="# notes", scope="workspace"),
        )
        memory = [e for e in events if e["type"].startswith("memory.")]
        assert [(e["type"], e["data"]["scope"]) for e in memory] == [
            ("memory.remembered", "personal"),
            ("memory.remembered", "workspace"),
            ("memory.artifact_saved", "workspace"),
        ]
        events = _run(
            bob, model_server, _call("recall", query=""), _call("recall", query="pin mat")
        )
        outputs = [e["data"]["output"] for e in events if e["type"] == "tool.completed"]
        assert "Standup is at nine" in outputs[0]
        assert "pin" not in outputs[0]
        assert outputs[1] == "nothing remembered matches"
        recalled = [e["data"] for e in events if e["type"] == "memory.recalled"]
        assert [r["query"] for r in recalled] == ["", "pin mat"]
        assert [len(r["ids"]) for r in recalled] == [1, 0]
        # people read what their runs wrote, by the same rules
        mine = ann.get("/workspaces/team/memory", params={"scope": "personal"}).json()
        assert [m["text"] for m in mine["memories"]] == ["Ann's pin is under the mat"]
        theirs = bob.get("/workspaces/team/memory").json()["memories"]
        assert [m["text"] for m in theirs] == ["Standup is at nine"]
        pin = mine["memories"][0]["id"]
        _error(bob.get(f"/workspaces/team/memory/{pin}"), 404, "memory_not_found")
        _error(bob.delete(f"/workspaces/team/memory/{pin}"), 404, "memory_not_found")


def test_rest_reads_and_writes_follow_the_rules(live: LiveServer, people: dict[str, str]) -> None:
    base = "/workspaces/team/memory"
    with (
        live.client(people["ann"]) as ann,
        live.client(people["vic"]) as vic,
        live.client(people["out"]) as out,
    ):
        made = ann.post(base, json={"text": "Ship on green", "scope": "workspace", "tags": ["ci"]})
        assert made.status_code == 201, made.text
        memory_id = made.json()["id"]
        assert made.json()["by"] == "user:ann"
        assert [m["id"] for m in vic.get(base, params={"q": "green ship"}).json()["memories"]] == [
            memory_id
        ]
        for hostile in ['"', "ship OR", "NEAR(a b)", "*", "'; drop table x; --"]:
            answer = vic.get(base, params={"q": hostile})
            assert answer.status_code == 200, answer.text
        message = _error(
            vic.post(base, json={"text": "x", "scope": "workspace"}), 403, "memory_denied"
        )
        assert "viewer" in message
        _error(vic.patch(f"{base}/{memory_id}", json={"text": "y"}), 403, "memory_denied")
        _error(vic.delete(f"{base}/{memory_id}"), 403, "memory_denied")
        _error(out.get(base), 404, "not_found")
        _error(out.get(f"{base}/{memory_id}"), 404, "not_found")
        _error(ann.post(base, json={"text": "x", "scope": "everyone"}), 422, "invalid_request")
        _error(ann.post(base, json={"text": "x", "tags": ["no spaces"]}), 422, "invalid_memory")
        _error(ann.get(f"{base}/not-an-id"), 422, "invalid_request")
        edited = ann.patch(f"{base}/{memory_id}", json={"text": "Ship on green only"})
        assert edited.json()["text"] == "Ship on green only"
        audit = ann.get(f"{base}/audit").json()["entries"]
        assert [(e["action"], e["by"]) for e in audit] == [
            ("update", "user:ann"),
            ("remember", "user:ann"),
        ]
        assert ann.delete(f"{base}/{memory_id}").status_code == 200
        _error(ann.get(f"{base}/{memory_id}"), 404, "memory_not_found")


def test_artifacts_download_safely_and_bad_uploads_are_refused(
    live: LiveServer, people: dict[str, str]
) -> None:
    base = "/workspaces/team/artifacts"
    with live.client(people["ann"]) as ann, live.client(people["vic"]) as vic:
        page = b"<script>alert(1)</script>"
        saved = ann.put(f"{base}/page.html", params={"scope": "workspace"}, content=page)
        assert saved.status_code == 201, saved.text
        assert (saved.json()["media_type"], saved.json()["version"]) == ("text/html", 1)
        got = vic.get(f"{base}/page.html")
        assert got.content == page
        assert got.headers["content-type"] == "application/octet-stream"  # never rendered
        assert got.headers["content-disposition"].startswith("attachment;")
        assert got.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in got.headers["content-security-policy"]
        text = ann.put(f"{base}/a.txt", params={"scope": "workspace"}, content=b"hello")
        assert text.status_code == 201, text.text
        assert vic.get(f"{base}/a.txt").headers["content-type"].startswith("text/plain")
        listed = vic.get(base).json()["artifacts"]
        assert sorted(a["name"] for a in listed) == ["a.txt", "page.html"]
        _error(vic.put(f"{base}/b.txt", params={"scope": "workspace"}, content=b"x"), 403,
               "memory_denied")  # fmt: skip
        _error(vic.delete(f"{base}/a.txt", params={"scope": "workspace"}), 403, "memory_denied")
        for bad in (".hidden", "...", "a%5Cb", "tab%09x"):
            _error(ann.put(f"{base}/{bad}", content=b"x"), 422, "invalid_memory")
        assert ann.put(f"{base}/a%2Fb", content=b"x").status_code in (404, 405)  # no such route
        huge = ann.put(f"{base}/big.bin", content=b"x" * ((10 << 20) + 2048))
        _error(huge, 413, "payload_too_large")
        _error(vic.get(f"{base}/nothing.txt"), 404, "memory_not_found")
        assert ann.delete(f"{base}/a.txt", params={"scope": "workspace"}).json() == {"deleted": 1}


def test_export_and_import_through_the_server_and_the_sdk(
    live: LiveServer, people: dict[str, str], admin: Admin
) -> None:
    admin.workspace("copy", owner="ann")
    with Client(live.url, token=people["ann"]) as ann:
        ann.remember("Keep the changelog short", scope="workspace", workspace="team")
        ann.remember("my own", workspace="team")
        ann.save_artifact("r.md", b"# r", scope="workspace", workspace="team")
        text = ann.export_memory(workspace="team")
        lines = [json.loads(line) for line in text.splitlines()]
        assert lines[0] == {"helix": "memory", "version": 1, "workspace": "team"}
        assert [line["kind"] for line in lines[1:]] == ["memory", "artifact"]
        assert len(ann.export_memory(workspace="team", personal=True).splitlines()) == 4
        done = ann.import_memory(text, workspace="copy")
        assert (done.memories, done.artifacts) == (1, 1)
        assert [m.text for m in ann.memories(scope="workspace", workspace="copy")] == [
            "Keep the changelog short"
        ]
        artifact, content = ann.artifact("r.md", workspace="copy")
        assert (content, artifact.media_type, artifact.owner) == (b"# r", "text/markdown", "copy")
        with pytest.raises(MemoryInputError, match="line 2"):
            ann.import_memory(text.replace('"kind": "memory"', '"kind": "x"'), workspace="copy")
        assert len(ann.memories(scope="workspace", workspace="copy")) == 1  # nothing half-done
    with Client(live.url, token=people["vic"]) as vic:
        with pytest.raises(MemoryDeniedError):
            vic.remember("x", scope="workspace", workspace="team")
        with pytest.raises(NotFoundError):  # not a member: no such workspace
            vic.memories(workspace="copy")
        assert [m.text for m in vic.memories(workspace="team")] == ["Keep the changelog short"]


def test_a_run_whose_person_became_a_viewer_writes_no_workspace_memory(
    live: LiveServer, people: dict[str, str], admin: Admin, model_server: MockModelServer
) -> None:
    """The run acts with its person's role at each call: ann, made a viewer while her run
    waits for the approval of ``remember``, gets the refusal, not a write."""
    admin.role("team", "bob", "owner")
    play(
        model_server,
        _call("remember", text="written as a viewer", scope="workspace"),
        {"text": "done"},
    )
    with live.client(people["ann"]) as ann, live.client(live.login("bob", PW)) as bob:
        body = {"objective": "remember", "model": MODEL, "workspace": "team"}
        run_id = ann.post("/runs", json=body).json()["id"]
        wait_for_event(ann, run_id, "approval.requested")  # remember asks by default
        (pending,) = ann.get(f"/runs/{run_id}/approvals").json()["approvals"]
        assert pending["name"] == "remember"
        admin.role("team", "ann", "viewer")
        decided = bob.post(
            f"/runs/{run_id}/approvals/{pending['request_id']}", json={"decision": "allow"}
        )
        assert decided.status_code == 200, decided.text
        assert wait_for_status(bob, run_id, "completed", "failed")["status"] == "completed"
        events = bob.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
        (done,) = [e["data"] for e in events if e["type"] == "tool.completed"]
        assert not done["ok"]
        assert "a viewer cannot write workspace memory" in done["output"]
        assert not [e for e in events if e["type"].startswith("memory.")]
        assert bob.get("/workspaces/team/memory").json()["memories"] == []
