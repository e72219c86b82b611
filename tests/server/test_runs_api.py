"""Runs through the API: started, driven by the server's engine, read back, controlled."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from helix import __version__
from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    Admin,
    LiveServer,
    event_types,
    make_config,
    play,
    start_asking_run,
    wait_for_event,
    wait_for_status,
)


def test_health_needs_no_token(live: LiveServer) -> None:
    with live.client() as client:
        answer = client.get("/health")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "version": __version__}


def test_a_run_started_over_http_is_driven_to_its_end(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Nothing to tidy."},
    )
    created = owner.post("/runs", json={"objective": "tidy up", "model": MODEL})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert created.json()["status"] == "queued"

    run = wait_for_status(owner, run_id, "completed")
    assert run["workspace"] == "default"
    assert run["turns"] == 2
    assert run["input_tokens"] > 0
    types = event_types(owner, run_id)
    assert types[0] == "run.created"
    assert types[-1] == "run.completed"
    assert "tool.completed" in types

    listed = owner.get("/runs", params={"status": "completed"}).json()
    assert [r["id"] for r in listed["runs"]] == [run_id]
    assert owner.get("/runs", params={"status": "failed"}).json()["runs"] == []


def test_events_page_by_after_and_limit(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say done", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    everything = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    seqs: list[int] = []
    after = -1
    while True:
        page = owner.get(f"/runs/{run_id}/events", params={"after": after, "limit": 2}).json()
        if not page["events"]:
            assert page["next_after"] == after
            break
        assert len(page["events"]) <= 2
        seqs += [e["seq"] for e in page["events"]]
        after = page["next_after"]
    assert seqs == [e["seq"] for e in everything] == list(range(len(everything)))


def test_an_approval_is_decided_once_then_conflicts(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    (pending,) = owner.get(f"/runs/{run_id}/approvals").json()["approvals"]
    assert pending["name"] == "run_command"
    assert pending["args"] == {"command": "true"}
    request = pending["request_id"]

    allowed = owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    assert allowed.status_code == 200, allowed.text
    assert allowed.json() == {"request_id": request, "decision": "allow"}
    again = owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "deny"})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "approval_closed"
    wait_for_status(owner, run_id, "completed")
    decided = [
        e
        for e in owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
        if e["type"] == "approval.decided"
    ]
    assert [(e["data"]["decision"], e["data"]["by"]) for e in decided] == [("allow", "user:admin")]


def test_steer_pause_resume_cancel(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}], "held": True},
        {"text": "Still here.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Done."},
    )
    run_id = owner.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    wait_for_event(owner, run_id, "model.requested")
    steered = owner.post(f"/runs/{run_id}/steer", json={"message": "use tabs"})
    assert steered.status_code == 202
    paused = owner.post(f"/runs/{run_id}/pause")
    assert paused.status_code == 200
    assert paused.json()["status"] == "paused"
    twice = owner.post(f"/runs/{run_id}/pause")
    assert twice.status_code == 409
    resumed = owner.post(f"/runs/{run_id}/resume")
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["status"] == "running"
    cancelled = owner.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200
    wait_for_status(owner, run_id, "cancelled")
    assert "steer.received" in event_types(owner, run_id)
    late = owner.post(f"/runs/{run_id}/steer", json={"message": "too late"})
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "invalid_run_state"


def test_fork_from_a_turn_runs_in_the_server(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Done."},
        {"text": "Done differently."},
    )
    run_id = owner.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    forked = owner.post(f"/runs/{run_id}/fork", json={"turn": 1, "message": "try again"})
    assert forked.status_code == 201, forked.text
    fork_id = forked.json()["id"]
    fork = wait_for_status(owner, fork_id, "completed")
    assert fork["parent"]["run_id"] == run_id
    no_turn = owner.post(f"/runs/{run_id}/fork", json={"turn": 99})
    assert no_turn.status_code == 422
    assert no_turn.json()["error"]["code"] == "invalid_fork_point"


def test_export_then_import_round_trips(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say done", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    exported = owner.get(f"/runs/{run_id}/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = exported.text.splitlines()
    assert len(lines) == len(event_types(owner, run_id))

    imported = owner.post(
        "/runs/import",
        params={"as": "copy-1"},
        content=exported.content,
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert imported.status_code == 201, imported.text
    assert imported.json() == {
        "id": "copy-1",
        "status": "completed",
        "events": len(lines),
        "original_id": None,
    }
    copy = owner.get("/runs/copy-1/export").text.splitlines()
    assert copy[1:] == exported.text.replace(run_id, "copy-1").splitlines()[1:]
    first, theirs = json.loads(copy[0]), json.loads(lines[0])
    # Re-homed: a new, empty folder of the workspace's worlds, whatever the file said.
    world = Path(first["data"].pop("world"))
    assert world.parent == (live.config.worlds / "default").resolve()
    assert world.name.startswith("imported-")
    assert list(world.iterdir()) == []
    del theirs["data"]["world"]
    assert first["data"] == theirs["data"]
    clash = owner.post("/runs/import", params={"as": "copy-1"}, content=exported.content)
    assert clash.status_code == 409
    garbage = owner.post("/runs/import", content=b'{"not": "an event"}\n')
    assert garbage.status_code == 422
    assert garbage.json()["error"]["code"] == "invalid_event"


def test_metrics_count_what_happened(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say done", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    with live.client() as anonymous:
        refused = anonymous.get("/metrics")
    assert refused.status_code == 401  # server-wide counts are not for everyone
    assert refused.json()["error"]["code"] == "unauthorized"
    text = owner.get("/metrics").text
    assert 'helix_runs{status="completed"} 1.0' in text
    assert 'helix_events_appended_total{type="run.completed"} 1.0' in text
    assert 'helix_model_tokens_total{direction="input"}' in text
    assert "helix_websocket_clients 0.0" in text


@pytest.mark.postgres
def test_the_server_on_postgresql(
    tmp_path: Path, model_server: MockModelServer, postgres_url: str
) -> None:
    config = make_config(tmp_path, model_server, db_url=postgres_url)
    Admin(postgres_url).user(name := f"pg-{uuid.uuid4().hex[:8]}", password="pg-password")
    live = LiveServer(config).start()
    try:
        with live.client(live.login(name, "pg-password")) as client:
            play(model_server, {"text": "Done."})
            run_id = client.post("/runs", json={"objective": "say", "model": MODEL}).json()["id"]
            run = wait_for_status(client, run_id, "completed")
            assert run["workspace"] == name
            assert event_types(client, run_id)[-1] == "run.completed"
            ws_token = client.post("/auth/ws-token").json()["token"]
            with connect(f"{live.ws_url}/runs/{run_id}/stream?token={ws_token}") as ws:
                streamed = [json.loads(ws.recv(timeout=10)) for _ in range(run["events"])]
            assert [e["seq"] for e in streamed] == list(range(run["events"]))
            assert streamed[-1]["type"] == "run.completed"
    finally:
        live.stop()
