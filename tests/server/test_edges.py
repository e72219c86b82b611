"""The server's edges: the login limit, forwarded addresses, security headers, bad JSON."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import httpx
import pytest

from helix.notify import decision_link
from helix.testing import MockModelServer

from .conftest import (
    Admin,
    Cli,
    LiveServer,
    free_port,
    make_config,
    start_asking_run,
    wait_for_event,
)


def _login(
    client: httpx.Client, username: str, password: str = "wrong", via: str | None = None
) -> int:
    headers = {} if via is None else {"X-Forwarded-For": via}
    answer = client.post(
        "/auth/login", json={"username": username, "password": password}, headers=headers
    )
    if answer.status_code == 429:
        assert answer.json()["error"]["code"] == "too_many_requests"
        assert 0 < int(answer.headers["Retry-After"]) <= 61
    return answer.status_code


def test_a_spoofed_forwarded_for_is_not_believed_by_default(cli: Cli) -> None:
    port = free_port()
    cli.serve(port)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1") as client:
        # Every try claims another address and another user: only the peer counts.
        tries = [_login(client, f"user{n}", via=f"198.51.100.{n}") for n in range(6)]
    assert tries == [401] * 5 + [429]


def test_forwarded_for_is_believed_from_the_configured_proxies_only(cli: Cli) -> None:
    port = free_port()
    cli.serve(port, "--forwarded-allow-ips", "127.0.0.1, 10.0.0.0/8")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1") as client:
        spent = [_login(client, f"user{n}", via="203.0.113.7") for n in range(6)]
        other = _login(client, "user9", via="203.0.113.8")
        chain = _login(client, "user10", via="203.0.113.7, 10.1.2.3")  # the proxy's own hop
    assert spent == [401] * 5 + [429]
    assert other == 401  # another client behind the proxy has its own count
    assert chain == 429  # the rightmost untrusted hop is the client


def test_serve_refuses_a_forwarded_allow_ips_it_cannot_read(cli: Cli) -> None:
    refused = cli("serve", "--port", str(free_port()), "--forwarded-allow-ips", "10.0.0.1,proxy")
    assert refused.returncode == 2
    assert "'proxy' is not an IP address or network" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_failed_logins_are_limited_per_username_from_any_address(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    config = make_config(tmp_path, model_server, forwarded_allow_ips=("127.0.0.1",))
    live = LiveServer(config).start()
    try:
        Admin(config.db_url).user("alice", password="s3cret-pass")
        with live.client() as client:
            spread = [_login(client, "alice", via=f"192.0.2.{n}") for n in range(5)]
            locked = _login(client, "alice", "s3cret-pass", via="192.0.2.77")
            other_user = _login(client, "bob", via="192.0.2.77")
    finally:
        live.stop()
    assert spread == [401] * 5
    assert locked == 429  # five failures for alice, wherever they came from
    assert other_user == 401  # that address has tried once: bob is not locked


def test_only_failures_use_up_the_limit(live: LiveServer, admin: Admin) -> None:
    admin.user("alice", password="s3cret-pass")
    with live.client() as client:
        fine = [_login(client, "alice", "s3cret-pass") for _ in range(8)]
        failed = [_login(client, "alice") for _ in range(6)]
    assert fine == [200] * 8
    assert failed == [401] * 5 + [429]


def test_malformed_json_is_400_and_a_wrong_shape_stays_422(owner: httpx.Client) -> None:
    json_headers = {"Content-Type": "application/json"}
    for body in (b'{"objective": ', b"{'objective': 'x'}", b"\xff\xfe", b"nul"):
        answer = owner.post("/runs", content=body, headers=json_headers)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["error"]["code"] == "bad_json"
        assert "not valid JSON" in answer.json()["error"]["message"]
    for path in ("/auth/login", "/runs/x/steer", "/workspaces/default/policy"):
        method = owner.put if path.endswith("policy") else owner.post
        answer = method(path, content=b"{", headers=json_headers)
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "bad_json"), path
    wrong = owner.post("/runs", json=["objective", "x"])
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (422, "invalid_request")


_COMMON = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def _policy(answer: httpx.Response) -> dict[str, str]:
    for name, value in _COMMON.items():
        assert answer.headers.get(name) == value, (answer.request.url, name)
    csp = answer.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["frame-ancestors"] == "'none'"
    assert directives["default-src"] == "'none'"
    assert "unsafe-inline" not in directives["script-src"]
    return directives


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_every_answer_carries_the_security_headers(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    with httpx.Client(base_url=live.url) as raw:
        page = raw.get("/")
        assert page.status_code == 200
        assert "text/html" in page.headers["content-type"]
        dashboard = _policy(page)
        assert dashboard["script-src"] == "'self'"
        assert dashboard["style-src"] == "'self'"
        assert dashboard["connect-src"] == "'self'"
        for path in ("/app.js", "/style.css", "/api/v1/health", "/api/v1/openapi.json"):
            assert raw.get(path).status_code == 200
            _policy(raw.get(path))
        for path, status in (("/api/v1/runs", 401), ("/api/v1/nowhere", 404), ("/nope", 404)):
            answer = raw.get(path)
            assert answer.status_code == status
            _policy(answer)
        big = raw.post("/api/v1/runs", content=b"x" * (2 << 20))  # refused before reading
        assert big.status_code == 413
        _policy(big)
        expired = raw.get("/api/v1/links/not-a-token")
        assert expired.status_code == 404
        assert "Link expired" in expired.text
        _policy(expired)
        docs = raw.get("/api/v1/docs")
        assert docs.status_code == 200
        allowed = _policy(docs)["script-src"].split()
        for script in re.findall(r"<script>(.*?)</script>", docs.text, re.DOTALL):
            assert _sha(script) in allowed  # its inline script runs, nothing else inline
    _policy(owner.post("/runs", content=b"{", headers={"Content-Type": "application/json"}))
    _policy(owner.get("/runs"))

    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    approvals = owner.get(f"/runs/{run_id}/approvals").json()["approvals"]
    state = live.app.state.helix
    link = decision_link(state.signer, live.url, run_id, approvals[0], "allow")
    confirm = httpx.get(link)
    assert confirm.status_code == 200
    assert "<form" in confirm.text
    directives = _policy(confirm)
    style = re.search(r"<style>(.*?)</style>", confirm.text, re.DOTALL)
    assert style is not None
    assert directives["style-src"] == _sha(style.group(1))  # its own style, by hash
    assert directives["form-action"] == "'self'"
    recorded = httpx.post(link)
    assert recorded.status_code == 200
    _policy(recorded)


@pytest.mark.parametrize("value", ["*", "127.0.0.1,::1", "10.0.0.0/8"])
def test_forwarded_allow_ips_accepts_addresses_networks_and_star(value: str) -> None:
    from helix.server import parse_forwarded_allow_ips

    assert parse_forwarded_allow_ips(value) == tuple(v.strip() for v in value.split(","))
    assert parse_forwarded_allow_ips("") == ()
