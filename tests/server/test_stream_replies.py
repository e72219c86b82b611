"""A run's replies over its WebSocket stream (``?replies=true``), as they are written.

A real server (in this process with the local executor, and ``helix serve`` with its
default processes executor, whose worker relays the pieces over its pipe); the mock
model server pauses the streamed reply after its first piece, so the test sees it
half-way, then lets it go on. The run first waits on an approval: the socket is open
(its first event received, so the watch is on) before the watched call starts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    WAIT_S,
    Cli,
    LiveServer,
    free_port,
    play,
    wait_for_status,
    wait_until,
)

WORDS = "The check passed, and every word of this answer reached the page as it was written."
Message = dict[str, Any]


def _ws_token(client: httpx.Client) -> str:
    token = client.post("/auth/ws-token").json()["token"]
    assert isinstance(token, str)
    return token


def _waiting_run(client: httpx.Client, model_server: MockModelServer, *, pause: bool) -> str:
    """A run waiting on its first call's approval; its second reply is ``WORDS``."""
    call = {"name": "run_command", "args": {"command": "true"}}
    play(
        model_server,
        {"text": "Checking.", "tool_calls": [call]},
        {"text": WORDS, "pause_mid_stream": pause},
    )
    run_id: str = client.post("/runs", json={"objective": "check", "model": MODEL}).json()["id"]
    wait_for_status(client, run_id, "waiting")
    return run_id


def _read_until(ws: ClientConnection, done: Any) -> list[Message]:
    seen: list[Message] = []
    while not (seen and done(seen[-1])):
        seen.append(json.loads(ws.recv(timeout=WAIT_S)))
    return seen


def _text(messages: list[Message]) -> str:
    return "".join(m["text"] for m in messages if m.get("type") == "reply.text")


def _watch_the_reply_being_written(
    client: httpx.Client, ws_url: str, model_server: MockModelServer
) -> list[Message]:
    """Every message of the socket from its open to the run's end (see the module)."""
    run_id = _waiting_run(client, model_server, pause=True)
    url = f"{ws_url}/runs/{run_id}/stream?token={_ws_token(client)}&replies=true"
    with connect(url, max_size=None) as ws:
        seen = _read_until(ws, lambda m: "seq" in m)  # an event: the socket watches the run
        ws.send(json.dumps({"type": "approval", "decision": "allow", "id": "a1"}))
        seen += _read_until(ws, lambda m: m.get("type") == "reply.text")
        events = client.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
        assert [e["type"] for e in events].count("model.responded") == 1  # not logged yet
        model_server.release()
        seen += _read_until(ws, lambda m: m.get("type") == "run.completed")
    return seen


def _check(seen: list[Message], model_server: MockModelServer) -> None:
    pieces = [m for m in seen if str(m.get("type")).startswith("reply.")]
    assert pieces
    assert all("seq" not in m and m["turn"] == 2 for m in pieces)
    assert _text(seen) == WORDS
    responded = [m for m in seen if m.get("type") == "model.responded" and m.get("turn") == 2]
    assert len(responded) == 1
    assert seen.index(pieces[-1]) < seen.index(responded[0])  # the pieces, then their reply
    assert responded[0]["data"]["text"] == WORDS
    events = [m for m in seen if "seq" in m]
    assert [e["seq"] for e in events] == list(range(events[0]["seq"], events[-1]["seq"] + 1))
    assert [r.stream for r in model_server.requests] == [False, True]  # nobody watched turn 1


def test_a_watched_runs_reply_streams_over_its_socket(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    seen = _watch_the_reply_being_written(owner, live.ws_url, model_server)

    _check(seen, model_server)
    hub = live.app.state.helix.replies  # the watch goes with the socket (once the server sees it)
    wait_until(lambda: not hub.watching(seen[0]["run_id"]), "the watch to end")


def test_a_socket_that_asks_for_no_replies_gets_events_only(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _waiting_run(owner, model_server, pause=False)
    url = f"{live.ws_url}/runs/{run_id}/stream?token={_ws_token(owner)}"
    with connect(url, max_size=None) as ws:
        seen = _read_until(ws, lambda m: "seq" in m)
        ws.send(json.dumps({"type": "approval", "decision": "allow", "id": "a1"}))
        seen += _read_until(ws, lambda m: m.get("type") == "run.completed")

    assert all("seq" in m or m.get("type") == "ack" for m in seen)
    assert [r.stream for r in model_server.requests] == [False, False]  # nobody watched


def test_a_worker_process_relays_the_pieces_of_a_watched_run(
    cli: Cli, model_server: MockModelServer
) -> None:
    del cli.env["HELIX_EXECUTOR"]  # serve's default: the processes executor
    port = free_port()
    cli.serve(port, "--workers", "1")
    assert "runs: 1 worker processes" in cli.log(0)
    link = re.search(r"http://\S+/#login=(\S+)", cli.log(0))
    assert link is not None, cli.log(0)
    api = f"http://127.0.0.1:{port}/api/v1"
    token = httpx.post(f"{api}/auth/link", json={"token": link.group(1)}).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=api, headers=headers, timeout=WAIT_S) as client:
        seen = _watch_the_reply_being_written(client, f"ws://127.0.0.1:{port}/api/v1", model_server)

    _check(seen, model_server)
