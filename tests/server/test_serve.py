"""``helix serve`` and the admin commands, as people run them: real processes."""

from __future__ import annotations

import json
import re

import httpx
from websockets.sync.client import connect

from helix.testing import MockModelServer

from .conftest import MODEL, WAIT_S, Cli, free_port, play, wait_for_status, wait_until


def test_admin_commands_make_users_workspaces_and_tokens(cli: Cli) -> None:
    missing = cli("users", "add", "alice", "--workspace", "team", "--role", "viewer")
    assert missing.returncode == 3, missing.stderr
    assert "no workspace 'team'" in missing.stderr
    assert cli("workspaces", "add", "team").returncode == 0
    added = cli(
        "users", "add", "alice", "--workspace", "team", "--role", "viewer", "--password-stdin",
        stdin="hunter22\n",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    again = cli("users", "add", "alice")
    assert again.returncode == 1
    assert "already exists" in again.stderr
    bad_role = cli("users", "add", "bob", "--role", "emperor")
    assert bad_role.returncode == 2
    assert "unknown role" in bad_role.stderr
    token = cli("tokens", "create", "--user", "alice")
    assert token.returncode == 0
    assert re.fullmatch(r"hx_[A-Za-z0-9_-]{40,}\n", token.stdout)
    assert cli("tokens", "create", "--user", "nobody").returncode == 3

    port = free_port()
    cli.serve(port)
    api = f"http://127.0.0.1:{port}/api/v1"
    me = httpx.get(f"{api}/me", headers={"Authorization": f"Bearer {token.stdout.strip()}"})
    assert me.json() == {
        "user": "alice",
        "workspaces": {"alice": "owner", "team": "viewer"},
        "password": True,
    }
    login = httpx.post(f"{api}/auth/login", json={"username": "alice", "password": "hunter22"})
    assert login.status_code == 200
    assert "login=" not in cli.log(0)  # users exist: no first-start link

    # A leaked token is revoked at once, against the running server; so is a password.
    revoked = cli("tokens", "revoke", stdin=token.stdout)
    assert (revoked.returncode, revoked.stdout) == (0, "revoked an API token of alice\n")
    me = httpx.get(f"{api}/me", headers={"Authorization": f"Bearer {token.stdout.strip()}"})
    assert me.status_code == 401
    assert cli("tokens", "revoke", stdin=token.stdout).returncode == 3
    assert cli("tokens", "revoke").returncode == 2
    cli("tokens", "create", "--user", "alice")
    cli("tokens", "create", "--user", "alice")
    assert cli("tokens", "revoke", "--user", "alice").stdout == "revoked 2 API tokens of alice\n"
    assert cli("tokens", "revoke", "--user", "nobody").returncode == 3
    changed = cli("users", "passwd", "alice", "--password-stdin", stdin="correct horse\n")
    assert changed.returncode == 0, changed.stderr
    old = httpx.post(f"{api}/auth/login", json={"username": "alice", "password": "hunter22"})
    assert old.status_code == 401
    signed_in = {"Authorization": f"Bearer {login.json()['token']}"}
    stale = httpx.get(f"{api}/me", headers=signed_in)  # a session of the old password
    assert stale.status_code == 401
    assert "the password changed" in stale.json()["error"]["message"]
    new = httpx.post(f"{api}/auth/login", json={"username": "alice", "password": "correct horse"})
    fresh = {"Authorization": f"Bearer {new.json()['token']}"}
    assert httpx.get(f"{api}/me", headers=fresh).json()["user"] == "alice"
    ws = httpx.post(f"{api}/auth/ws-token", headers=fresh).json()["token"]
    with connect(f"ws://127.0.0.1:{port}/api/v1/stream?token={ws}") as socket:
        socket.ping()  # a stream token carries the same stamp, and is accepted
    removed = cli("users", "remove", "alice")
    assert removed.returncode == 0, removed.stderr
    gone = httpx.get(f"{api}/me", headers=fresh)
    assert gone.status_code == 401
    assert "no longer exists" in gone.json()["error"]["message"]
    assert cli("users", "remove", "alice").returncode == 3
    assert cli("users", "passwd", "alice").returncode == 2  # neither stdin nor --remove
    assert cli("users", "passwd", "nobody", "--remove").returncode == 3


def test_first_start_prints_a_one_time_link_and_a_restart_resumes_runs(
    cli: Cli, model_server: MockModelServer
) -> None:
    port = free_port()
    first = cli.serve(port)
    link = re.search(r"http://\S+/#login=(\S+)", cli.log(0))
    assert link is not None, cli.log(0)
    api = f"http://127.0.0.1:{port}/api/v1"
    token = httpx.post(f"{api}/auth/link", json={"token": link.group(1)}).json()["token"]
    client = httpx.Client(base_url=api, headers={"Authorization": f"Bearer {token}"})
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Slow thoughts.", "held": True},  # never sent: the kill comes first
        {"text": "Done after the restart."},
    )
    run_id = client.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    seen: list[dict[str, object]] = []
    ws_token = client.post("/auth/ws-token").json()["token"]
    with connect(f"ws://127.0.0.1:{port}/api/v1/runs/{run_id}/stream?token={ws_token}") as ws:
        while len([e for e in seen if e["type"] == "model.requested"]) < 2:
            seen.append(json.loads(ws.recv(timeout=WAIT_S)))
        # Logged is not yet sent: a worker process makes the call a moment later.
        wait_until(lambda: len(model_server.requests) >= 2, "the slow model call")
        cli.kill(first)  # mid model call: the run is neither finished nor paused
    model_server.release()

    cli.serve(port)
    ws_token = client.post("/auth/ws-token").json()["token"]
    after = seen[-1]["seq"]
    url = f"ws://127.0.0.1:{port}/api/v1/runs/{run_id}/stream?token={ws_token}&after={after}"
    with connect(url) as ws:
        while seen[-1]["type"] != "run.completed":
            seen.append(json.loads(ws.recv(timeout=WAIT_S)))
    assert [e["seq"] for e in seen] == list(range(len(seen)))  # every event once
    # The call cut off by the kill was made again by the new server process.
    assert [e["type"] for e in seen].count("model.requested") == 3
    (summary,) = [e["data"] for e in seen if e["type"] == "run.completed"]
    assert summary == {"summary": "Done after the restart."}
    assert wait_for_status(client, run_id, "completed")["turns"] == 2
    client.close()


def test_serve_refuses_what_it_cannot_use(cli: Cli) -> None:
    import socket

    port = str(free_port())  # a busy 8420 must not change which refusal comes first
    unreachable = cli(
        "serve", "--port", port, env={"HELIX_DB": "postgresql://postgres@127.0.0.1:1/helix"}
    )
    assert unreachable.returncode == 4
    assert "cannot open the PostgreSQL store" in unreachable.stderr
    memory = cli("serve", "--port", port, env={"HELIX_DB": "memory://"})
    assert memory.returncode == 2
    assert "accounts need a database" in memory.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = cli("serve", "--port", str(taken.getsockname()[1]))
    assert busy.returncode == 2
    assert "choose another --port" in busy.stderr
    assert "Traceback" not in unreachable.stderr + memory.stderr + busy.stderr
    assert not (cli.home / "helix.db").exists()  # no first account spent on a failed start
