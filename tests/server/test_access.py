"""Who may do what: tokens, workspaces, roles, rate limits, and refused input."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import jwt
import pytest

from helix.accounts import open_accounts
from helix.server._errors import ApiError
from helix.server._limits import AttemptLimiter
from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    Admin,
    LiveServer,
    play,
    start_asking_run,
    wait_for_event,
    wait_for_status,
)


def _error(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    code = body["error"]["code"]
    assert isinstance(code, str)
    return code


def test_login_gives_a_day_long_token(live: LiveServer, admin: Admin) -> None:
    admin.user("alice", password="s3cret-pass")
    with live.client() as client:
        answer = client.post("/auth/login", json={"username": "alice", "password": "s3cret-pass"})
    assert answer.status_code == 200
    claims = jwt.decode(answer.json()["token"], options={"verify_signature": False})
    assert claims["sub"] == "alice"
    assert 86000 < claims["exp"] - time.time() <= 86400
    with live.client(answer.json()["token"]) as alice:
        me = {"user": "alice", "workspaces": {"alice": "owner"}, "password": True}
        assert alice.get("/me").json() == me


def test_wrong_password_and_unknown_user_are_401(live: LiveServer, admin: Admin) -> None:
    admin.user("alice", password="s3cret-pass")
    with live.client() as client:
        wrong = client.post("/auth/login", json={"username": "alice", "password": "nope"})
        nobody = client.post("/auth/login", json={"username": "bob", "password": "nope"})
    assert _error(wrong, 401) == "unauthorized"
    assert _error(nobody, 401) == "unauthorized"


def test_the_sixth_login_in_a_minute_is_429(live: LiveServer, admin: Admin) -> None:
    admin.user("alice", password="s3cret-pass")
    with live.client() as client:
        for _ in range(5):
            client.post("/auth/login", json={"username": "alice", "password": "wrong"})
        sixth = client.post("/auth/login", json={"username": "alice", "password": "s3cret-pass"})
    assert _error(sixth, 429) == "too_many_requests"
    assert 0 < int(sixth.headers["Retry-After"]) <= 61


async def test_servers_on_one_database_share_the_login_limit(tmp_path: Path) -> None:
    store = await open_accounts(f"sqlite:///{tmp_path / 'helix.db'}")
    try:
        first, second = AttemptLimiter(store, 5), AttemptLimiter(store, 5)  # two API nodes
        address = ("address", "10.1.2.3")
        for limiter in (first, second, first, second, first):
            await limiter.check(address)
        with pytest.raises(ApiError) as refused:
            await second.check(address)
        assert refused.value.status == 429
        await second.check(("address", "10.9.9.9"))  # another address has its own count
    finally:
        await store.close()


@pytest.mark.parametrize(
    "header",
    [None, "Bearer not-a-token", "Bearer hx_not-a-real-api-token", "Basic YWxpY2U6cHc="],
    ids=["none", "garbage-jwt", "unknown-api-token", "basic"],
)
def test_missing_or_bad_tokens_are_401(live: LiveServer, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    with live.client() as client:
        for path in ("/runs", "/runs/run_x", "/me"):
            assert _error(client.get(path, headers=headers), 401) == "unauthorized"


def test_an_expired_or_foreign_token_is_401(live: LiveServer, admin: Admin) -> None:
    admin.user("alice")
    secret = admin.secret()
    expired = jwt.encode(
        {"sub": "alice", "typ": "access", "exp": int(time.time()) - 5}, secret, algorithm="HS256"
    )
    foreign = jwt.encode(
        {"sub": "alice", "typ": "access", "exp": int(time.time()) + 60}, b"x" * 32, "HS256"
    )
    ws_only = jwt.encode(
        {"sub": "alice", "typ": "ws", "exp": int(time.time()) + 60}, secret, algorithm="HS256"
    )
    for token in (expired, foreign, ws_only):
        with live.client(token) as client:
            assert _error(client.get("/runs"), 401) == "unauthorized"


def test_api_tokens_and_the_one_time_link(live: LiveServer, admin: Admin) -> None:
    admin.user("alice")
    with live.client(admin.api_token("alice")) as alice:
        assert alice.get("/me").json()["user"] == "alice"
    with live.client() as client:
        first = client.post("/auth/link", json={"token": live.bootstrap_token})
        second = client.post("/auth/link", json={"token": live.bootstrap_token})
    assert first.status_code == 200
    assert _error(second, 401) == "unauthorized"
    assert live.links == [f"{live.config.public_url}/#login={live.bootstrap_token}"]


def test_other_workspaces_runs_are_404(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "true"}}]},
    )
    run_id = owner.post("/runs", json={"objective": "build", "model": MODEL}).json()["id"]
    wait_for_event(owner, run_id, "approval.requested")
    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    admin.user("mallory")
    with live.client(admin.api_token("mallory")) as mallory:
        assert mallory.get("/runs").json() == {"runs": [], "next_cursor": None}
        for path in ("", "/events", "/approvals", "/export"):
            assert _error(mallory.get(f"/runs/{run_id}{path}"), 404) == "run_not_found"
        decide = mallory.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
        assert _error(decide, 404) == "run_not_found"
        steer = mallory.post(f"/runs/{run_id}/steer", json={"message": "hi"})
        assert _error(steer, 404) == "run_not_found"
        in_default = mallory.post(
            "/runs", json={"objective": "x", "model": MODEL, "workspace": "default"}
        )
        assert _error(in_default, 404) == "not_found"
    owner.post(f"/runs/{run_id}/cancel")


def test_viewers_look_but_cannot_act(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    admin.user("vera", workspace="default", role="viewer")
    with live.client(admin.api_token("vera")) as vera:
        assert vera.get(f"/runs/{run_id}").status_code == 200
        assert len(vera.get(f"/runs/{run_id}/approvals").json()["approvals"]) == 1
        decide = vera.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
        assert _error(decide, 403) == "forbidden"
        assert _error(vera.post(f"/runs/{run_id}/steer", json={"message": "x"}), 403)
        assert _error(vera.post(f"/runs/{run_id}/cancel"), 403) == "forbidden"
        start = vera.post("/runs", json={"objective": "x", "model": MODEL, "workspace": "default"})
        assert _error(start, 403) == "forbidden"
    allowed = owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    assert allowed.status_code == 200
    wait_for_status(owner, run_id, "completed")


def test_policy_ceilings_are_kept_by_owners_and_applied_to_runs(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    admin.user("mia", workspace="default", role="member")
    with live.client(admin.api_token("mia")) as mia:
        refused = mia.put("/workspaces/default/policy", json={"deny_tools": ["list_files"]})
        assert _error(refused, 403) == "forbidden"
    stored = owner.put("/workspaces/default/policy", json={"deny_tools": ["list_files"]})
    assert stored.status_code == 200, stored.text
    assert owner.get("/workspaces/default/policy").json()["deny_tools"] == ["list_files"]
    assert _error(owner.get("/workspaces/elsewhere/policy"), 404)

    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Cannot look."},
    )
    run_id = owner.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    verdicts = [
        (e["data"]["gate"], e["data"]["verdict"]) for e in events if e["type"] == "gate.decided"
    ]
    assert ("ceiling", "deny") in verdicts


def test_bad_input_gets_the_error_body_never_a_500(live: LiveServer, owner: httpx.Client) -> None:
    big = owner.post("/runs", content=b'{"objective": "' + b"x" * (2 << 20) + b'"}',
                     headers={"Content-Type": "application/json"})  # fmt: skip
    assert _error(big, 413) == "payload_too_large"
    chunked = owner.post("/runs", content=iter([b"{", b" " * (2 << 20), b"}"]),
                         headers={"Content-Type": "application/json"})  # fmt: skip
    assert _error(chunked, 413) == "payload_too_large"
    malformed = owner.post(
        "/runs", content=b'{"objective": ', headers={"Content-Type": "application/json"}
    )
    assert _error(malformed, 400) == "bad_json"
    wrong_type = owner.post("/runs", json={"objective": 42})
    assert _error(wrong_type, 422) == "invalid_request"
    assert "objective" in wrong_type.json()["error"]["message"]
    unknown_field = owner.post("/runs", json={"objective": "x", "modle": MODEL})
    assert _error(unknown_field, 422) == "invalid_request"
    no_model = owner.post("/runs", json={"objective": "x"})
    assert _error(no_model, 422) == "invalid_config"
    bad_model = owner.post("/runs", json={"objective": "x", "model": "nonsense"})
    assert _error(bad_model, 422) == "invalid_model"
    bad_blueprint = owner.post("/runs", json={"objective": "x", "blueprint": {"tools": 3}})
    assert _error(bad_blueprint, 422) == "invalid_blueprint"
    bad_world = owner.post("/runs", json={"objective": "x", "model": MODEL, "world": "../etc"})
    assert _error(bad_world, 422) == "invalid_request"
    refused = owner.post("/runs", json={"objective": "x", "model": "nonsense", "world": "kept"})
    assert _error(refused, 422) == "invalid_model"
    assert not (live.config.worlds / "default" / "kept").exists()
    assert _error(owner.get("/runs", params={"status": "sleeping"}), 422) == "invalid_request"
    assert _error(owner.get("/runs", params={"cursor": "nonsense"}), 422) == "invalid_event"
    assert _error(owner.get("/runs", params={"limit": 0}), 422) == "invalid_request"
    assert _error(owner.get("/runs/nope"), 404) == "run_not_found"
    assert _error(owner.get("/runs/nope/events", params={"after": "x"}), 422)
    assert _error(owner.post("/runs/nope/approvals/r1", json={"decision": "maybe"}), 422)
    assert _error(owner.get("/nowhere/at/all"), 404) == "not_found"
    assert _error(owner.delete("/runs"), 405) == "method_not_allowed"
