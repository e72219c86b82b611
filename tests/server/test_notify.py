"""Notifications through Apprise to a local HTTP endpoint, and the links they carry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    WAIT_S,
    Admin,
    LiveServer,
    make_config,
    play,
    wait_for_status,
    wait_until,
)


class Inbox:
    """An HTTP endpoint that keeps what Apprise's ``json://`` posts to it."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.failing = 0
        """How many posts to answer 503 before taking them (a service briefly down)."""
        self.refused = 0
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                message = json.loads(self.rfile.read(length))
                if inbox.refused < inbox.failing:
                    inbox.refused += 1
                    self.send_response(503)
                else:
                    inbox.messages.append(message)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def titled(self, title: str) -> dict[str, Any]:
        found: dict[str, Any] = wait_until(
            lambda: next((m for m in self.messages if m["title"] == title), None), title
        )
        return found


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    box = Inbox()
    try:
        yield box
    finally:
        box.server.shutdown()
        box.server.server_close()


@pytest.fixture
def notifying(tmp_path: Path, model_server: MockModelServer, inbox: Inbox) -> Iterator[LiveServer]:
    server = LiveServer(make_config(tmp_path, model_server, notify=(inbox.url,))).start()
    try:
        yield server
    finally:
        server.stop()


def test_an_approval_decided_from_a_link_without_signing_in(
    notifying: LiveServer, inbox: Inbox, model_server: MockModelServer
) -> None:
    live = notifying
    with live.client() as anonymous:
        token = anonymous.post("/auth/link", json={"token": live.bootstrap_token}).json()["token"]
    owner = live.client(token)
    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "make"}}]},
        {"text": "Built."},
    )
    run_id = owner.post("/runs", json={"objective": "build", "model": MODEL}).json()["id"]
    asked = inbox.titled("Approval needed: run_command")
    assert run_id in asked["message"]
    links = dict(re.findall(r"(Allow|Deny): (\S+)", asked["message"]))
    allow = links["Allow"].replace(live.config.public_url, live.url)
    deny = links["Deny"].replace(live.config.public_url, live.url)

    page = httpx.get(allow)  # no token: the link is the authority
    assert page.status_code == 200
    assert "Allow run_command?" in page.text
    assert "make" in page.text
    assert len(owner.get(f"/runs/{run_id}/approvals").json()["approvals"]) == 1  # opening: nothing

    done = httpx.post(allow)
    assert done.status_code == 200
    assert "Allowed" in done.text
    again = httpx.post(allow)
    assert again.status_code == 409
    assert "decided already" in again.text
    assert "Already decided" in again.text
    twin = httpx.get(deny)
    assert twin.status_code == 409
    assert "no longer pending" in twin.text
    tampered = httpx.get(allow[:-3] + ("aaa" if not allow.endswith("aaa") else "bbb"))
    assert tampered.status_code == 404
    assert "not valid" in tampered.text

    wait_for_status(owner, run_id, "completed")
    events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    (decided,) = [e for e in events if e["type"] == "approval.decided"]
    assert decided["data"]["decision"] == "allow"
    assert decided["data"]["by"] == "user:approval-link"
    assert run_id in inbox.titled("Run completed")["message"]
    owner.close()


def test_an_expired_link_explains_itself(notifying: LiveServer) -> None:
    secret = Admin(notifying.config.db_url).secret()
    claims = {"typ": "link", "run": "r", "req": "q", "dec": "allow", "exp": int(time.time()) - 1}
    stale = jwt.encode(claims, secret, algorithm="HS256")
    for method in ("GET", "POST"):
        page = httpx.request(method, f"{notifying.url}/api/v1/links/{stale}")
        assert page.status_code == 404
        assert "expired" in page.text


def test_the_link_works_on_a_phone(
    notifying: LiveServer, inbox: Inbox, model_server: MockModelServer, chromium: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    from .conftest import CHROMIUM_ARGS
    from .test_dashboard import ARTIFACTS

    live = notifying
    with live.client() as anonymous:
        token = anonymous.post("/auth/link", json={"token": live.bootstrap_token}).json()["token"]
    play(
        model_server,
        {
            "text": "Deploying.",
            "tool_calls": [{"name": "run_command", "args": {"command": "make deploy"}}],
        },
        {"text": "Not deployed."},
    )
    with live.client(token) as owner:
        run_id = owner.post("/runs", json={"objective": "deploy", "model": MODEL}).json()["id"]
        message = inbox.titled("Approval needed: run_command")["message"]
        deny = dict(re.findall(r"(Allow|Deny): (\S+)", message))["Deny"]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
            page = phone.new_page()
            page.goto(deny.replace(live.config.public_url, live.url))
            expect(page.get_by_role("heading")).to_have_text("Deny run_command?")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "approval-link-phone.png"))
            page.get_by_role("button", name="Deny").click()
            expect(page.get_by_role("heading")).to_have_text("Denied")
            browser.close()
        wait_for_status(owner, run_id, "completed")
        events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
        decided = [e["data"]["decision"] for e in events if e["type"] == "approval.decided"]
        assert decided == ["deny"]


def test_a_notification_is_sent_again_when_the_service_was_briefly_down(
    notifying: LiveServer, inbox: Inbox, model_server: MockModelServer
) -> None:
    inbox.failing = 1
    with notifying.client() as anonymous:
        link = {"token": notifying.bootstrap_token}
        token = anonymous.post("/auth/link", json=link).json()["token"]
    with notifying.client(token) as client:
        play(model_server, {"text": "Done."})
        run_id = client.post("/runs", json={"objective": "finish", "model": MODEL}).json()["id"]
        wait_for_status(client, run_id, "completed")
    assert run_id in inbox.titled("Run completed")["message"]
    assert inbox.refused == 1


def test_a_detached_client_run_is_driven_and_notified_by_the_server(
    notifying: LiveServer, inbox: Inbox, model_server: MockModelServer, tmp_path: Path
) -> None:
    """``helix run --detach`` against a server: it waits for ``helix approve``, and tells."""
    admin = Admin(notifying.config.db_url)
    admin.user("alice", workspace="default")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "OPENAI_"))}
    env = {**inherited, "HELIX_HOME": str(tmp_path / "client-home"),
           "HELIX_SERVER": notifying.url, "HELIX_TOKEN": admin.api_token("alice")}  # fmt: skip

    def helix(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "helix", *args]
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=WAIT_S,
        )

    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "make"}}]},
        {"text": "Built."},
    )
    started = helix("run", "build", "--model", MODEL, "--detach")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    asked = inbox.titled("Approval needed: run_command")["message"]
    assert f"Run {run_id} asks to call run_command" in asked
    assert re.search(r"Allow: \S+/api/v1/links/", asked)
    assert f"helix approve {run_id} apr_" in asked

    approved = helix("approve", run_id)
    assert approved.returncode == 0, approved.stderr
    with notifying.client(admin.api_token("alice")) as client:
        wait_for_status(client, run_id, "completed")
        events = client.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    (decided,) = [e["data"] for e in events if e["type"] == "approval.decided"]
    assert (decided["decision"], decided["by"]) == ("allow", "user:alice")
    assert run_id in inbox.titled("Run completed")["message"]

    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "make"}}]},
        {"text": "Could not build."},
    )
    alone = helix("run", "build", "--model", MODEL, "--unattended", "--json")
    assert alone.returncode == 0, alone.stderr
    shown = [json.loads(line) for line in alone.stdout.splitlines()]
    assert "approval.requested" not in [e["type"] for e in shown]
    (refused,) = [e["data"] for e in shown if e["type"] == "tool.completed"]
    assert "nobody attends this run" in refused["output"]


def test_an_unattended_client_run_is_refused_at_once_by_the_server(
    live: LiveServer, owner: Any, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "make"}}]},
        {"text": "Could not build."},
    )
    body = {"objective": "build", "model": MODEL, "attended": False}
    run_id = owner.post("/runs", json=body).json()["id"]
    wait_for_status(owner, run_id, "completed")
    events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    assert "approval.requested" not in [e["type"] for e in events]
    (result,) = [e["data"] for e in events if e["type"] == "tool.completed"]
    assert "nobody attends this run" in result["output"]
