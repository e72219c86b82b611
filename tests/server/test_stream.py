"""Live streams over WebSocket: backlog then live, resume from a seq, drop the slow."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import struct
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from helix.kernel.log import SqliteEventStore
from helix.testing import MockModelServer, run_created, session_events

from .conftest import (
    MODEL,
    WAIT_S,
    Admin,
    Cli,
    LiveServer,
    free_port,
    make_config,
    play,
    start_asking_run,
    wait_for_event,
    wait_for_status,
    wait_until,
)

Event = dict[str, Any]


def ws_token(client: httpx.Client) -> str:
    answer = client.post("/auth/ws-token")
    assert answer.status_code == 200, answer.text
    token = answer.json()["token"]
    assert isinstance(token, str)
    return token


def read_until(ws: ClientConnection, event_type: str) -> list[Event]:
    seen: list[Event] = []
    while True:
        message = json.loads(ws.recv(timeout=WAIT_S))
        seen.append(message)
        if message.get("type") == event_type:
            return seen


def close_code(ws: ClientConnection) -> tuple[int, str]:
    def drain() -> None:
        while True:
            ws.recv(timeout=WAIT_S)

    with pytest.raises(ConnectionClosed) as closed:
        drain()
    received = closed.value.rcvd
    assert received is not None
    return received.code, received.reason


def test_backlog_then_live_in_order_and_resume_from_after(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}], "delay_s": 0.5},
        {"text": "Done."},
    )
    run_id = owner.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    wait_for_event(owner, run_id, "model.requested")  # some backlog exists, more is coming
    url = f"{live.ws_url}/runs/{run_id}/stream?token={ws_token(owner)}"
    with connect(url) as ws:
        events = read_until(ws, "run.completed")
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(len(events)))  # no gap, no duplicate
    logged = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    assert events == logged

    with connect(f"{url}&after=4") as ws:
        again = read_until(ws, "run.completed")
    assert [e["seq"] for e in again] == seqs[5:]


def test_unauthorised_and_invisible_streams_are_closed_with_a_code(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say", "model": MODEL}).json()["id"]
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token=nonsense") as ws:
        assert close_code(ws)[0] == 4401
    with connect(f"{live.ws_url}/stream") as ws:
        assert close_code(ws)[0] == 4401
    access = owner.headers["Authorization"].removeprefix("Bearer ")
    with connect(f"{live.ws_url}/stream?token={access}") as ws:  # a day-long token: not in URLs
        assert close_code(ws)[0] == 4401
    api_token = admin.api_token("admin")
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={api_token}") as ws:
        assert close_code(ws)[0] == 4401
    admin.user("mallory")
    with live.client(admin.api_token("mallory")) as mallory:
        token = ws_token(mallory)
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={token}") as ws:
        assert close_code(ws)[0] == 4404


@pytest.mark.parametrize(("query", "named"), [("after=abc", "after"), ("replies=maybe", "replies")])
def test_a_bad_query_closes_the_stream_with_4400_naming_it(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, query: str, named: str
) -> None:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say", "model": MODEL}).json()["id"]
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={ws_token(owner)}&{query}") as ws:
        code, reason = close_code(ws)
    assert code == 4400
    assert reason.startswith(f"{named}: "), reason


def test_a_long_unicode_run_id_is_closed_with_a_reason_that_fits(
    live: LiveServer, owner: httpx.Client
) -> None:
    run_id = "é" * 200  # 400 bytes: a close frame's reason holds 123
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={ws_token(owner)}") as ws:
        code, reason = close_code(ws)
    assert code == 4404
    assert reason.startswith("run 'é")
    assert len(reason.encode()) <= 123


def test_steer_and_approve_over_the_socket(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={ws_token(owner)}") as ws:
        asked = read_until(ws, "approval.requested")[-1]
        ws.send(json.dumps({"type": "steer", "message": "be quick", "id": 1}))
        ws.send("not json")
        ws.send(json.dumps({"type": "dance", "id": 3}))
        ws.send(json.dumps({"type": "steer", "message": "x" * 200_000, "id": 6}))
        request = asked["data"]["request_id"]
        ws.send(
            json.dumps({"type": "approval", "request_id": request, "decision": "allow", "id": 4})
        )
        ws.send(
            json.dumps({"type": "approval", "request_id": request, "decision": "deny", "id": 5})
        )
        seen = read_until(ws, "run.completed")
    replies = {m["id"]: m for m in seen if m["type"] in ("ack", "error") and m["id"] is not None}
    assert replies[1] == {"type": "ack", "id": 1}
    assert replies[3]["error"]["code"] == "invalid_request"
    assert replies[4] == {"type": "ack", "id": 4, "request_id": request}
    assert replies[5]["status"] == 409
    assert any(m["type"] == "error" and m["status"] == 400 for m in seen)
    assert any(m["type"] == "error" and m["status"] == 413 for m in seen)
    types = [m["type"] for m in seen]
    assert "steer.received" in types
    assert "approval.decided" in types

    admin.user("vera", workspace="default", role="viewer")
    with live.client(admin.api_token("vera")) as vera:
        token = ws_token(vera)
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={token}") as ws:
        ws.send(json.dumps({"type": "steer", "message": "x", "id": 9}))
        refused = next(m for m in read_until(ws, "error") if m["type"] == "error")
    assert refused["status"] == 403


def test_the_all_runs_stream_shows_only_visible_runs(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    admin.user("alice")
    play(model_server, {"text": "Done.", "delay_s": 0.3}, {"text": "Done.", "delay_s": 0.3})
    with live.client(admin.api_token("alice")) as alice:
        with connect(f"{live.ws_url}/stream?token={ws_token(alice)}") as ws:
            theirs = owner.post("/runs", json={"objective": "a", "model": MODEL}).json()["id"]
            wait_for_status(owner, theirs, "completed")
            mine = alice.post("/runs", json={"objective": "b", "model": MODEL}).json()["id"]
            events = read_until(ws, "run.completed")
        assert {e["run_id"] for e in events} == {mine}
        assert [e["seq"] for e in events] == list(range(len(events)))


def test_a_client_that_falls_behind_is_dropped_and_resumes(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    live = LiveServer(make_config(tmp_path, model_server, ws_queue=4)).start()
    try:
        with live.client() as anonymous:
            token = anonymous.post("/auth/link", json={"token": live.bootstrap_token}).json()[
                "token"
            ]

        async def write(run_id: str) -> None:
            async with SqliteEventStore(live.config.home / "helix.db") as store:
                if run_id == "burst":
                    await store.create_run(run_created(), run_id="burst")
                else:
                    await store.append("burst", session_events(5), expected_seq=1)

        asyncio.run(write("burst"))
        with live.client(token) as owner:
            url = f"{live.ws_url}/runs/burst/stream?token={ws_token(owner)}"
        with connect(url) as ws:
            first = json.loads(ws.recv(timeout=WAIT_S))
            assert first["seq"] == 0
            asyncio.run(write("more"))  # one commit of many events: past the client's queue
            code, reason = close_code(ws)
        assert code == 4008
        assert reason == "too slow: reconnect with after=0"
        with connect(f"{url}&after=0") as ws:
            rest = read_until(ws, "run.completed")
        assert [e["seq"] for e in rest] == list(range(1, len(rest) + 1))
    finally:
        live.stop()


def _drop(ws: ClientConnection, how: str) -> None:
    """Leave the way browsers and networks do: a close frame, a FIN, or a reset."""
    if how == "close":
        ws.close()
        return
    raw = ws.socket
    if how == "reset":  # no close frame, no FIN: the kernel sends RST
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    else:
        raw.shutdown(socket.SHUT_RDWR)
    raw.close()


def test_clients_that_leave_abruptly_leave_no_traceback_in_the_log(cli: Cli) -> None:
    port = free_port()
    cli.serve(port)
    home = cli.home

    async def write() -> None:  # a long history: the server is mid-send when they leave
        async with SqliteEventStore(home / "helix.db") as store:
            await store.create_run(run_created(), run_id="long")
            events = session_events(150, calls=2, output="x" * 2000)
            await store.append("long", events, expected_seq=1)

    asyncio.run(write())
    base = f"http://127.0.0.1:{port}/api/v1"
    token = re.search(r"#login=(\S+)", cli.log(0))
    assert token is not None
    access = httpx.post(f"{base}/auth/link", json={"token": token.group(1)}).json()["token"]
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {access}"}) as owner:
        for how in ("close", "fin", "reset") * 3:
            for path in ("/runs/long/stream", "/stream"):
                url = f"ws://127.0.0.1:{port}/api/v1{path}?token={ws_token(owner)}"
                with connect(url) as ws:
                    if path == "/stream":  # live events only: make some while it leaves
                        owner.post("/runs/long/steer", json={"message": "still there?"})
                    _drop(ws, how)
            owner.post("/runs/long/steer", json={"message": "after"})

        def clients() -> float:
            text = owner.get("/metrics").text
            found = re.search(r"^helix_websocket_clients (\S+)$", text, re.MULTILINE)
            return float(found.group(1)) if found else -1.0

        wait_until(lambda: clients() == 0.0, "every dropped client to be let go")
        assert owner.get("/health").status_code == 200
    log = cli.log(0)
    assert "Traceback" not in log, log
    assert "Exception in ASGI application" not in log, log
