"""Detached runs wait for people: ``helix run --detach`` answered from another process.

Real processes throughout: ``helix run --detach`` leaves the run to a background
``helix resume`` process; the test watches the store (an embedded ``helix.Client``)
and answers with ``helix approve``/``helix deny``, each a process of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix import Client
from helix.api import Approval, Run, RunEvent
from helix.kernel.events import parse_iso
from helix.providers import Scenario
from helix.testing import MockModelServer, kill_all, processes_mentioning

MODEL = "openai:gpt-4.1"
WAIT_S = 90.0
"""A safety net for a busy machine, never a performance limit."""

BUILD = {
    "text": "Building.",
    "tool_calls": [{"name": "run_command", "args": {"command": "touch built"}}],
}


class Here:
    """``helix`` on a store of its own, its model the mock model server."""

    def __init__(self, tmp_path: Path, model_server: MockModelServer) -> None:
        self.home = tmp_path / "home"
        self.world = tmp_path / "world"
        self.world.mkdir()
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "OPENAI_"))}
        self.env = {
            **inherited,
            "HELIX_HOME": str(self.home),
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": model_server.openai_base_url,
        }
        self.model = model_server
        self.client = Client(home=self.home, env=self.env)

    def __call__(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=WAIT_S,
        )

    def detach(self, *options: str, env: dict[str, str] | None = None) -> str:
        """Start a run with ``--detach``; its id."""
        started = self("run", "build it", "--model", MODEL, "--dir", str(self.world),
                       "--detach", *options, env=env)  # fmt: skip
        assert started.returncode == 0, started.stderr
        return started.stdout.strip()

    def wait(self, what: str, check: Any) -> Any:
        deadline = time.monotonic() + WAIT_S
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}")
            time.sleep(0.05)

    def pending(self, run_id: str) -> Approval:
        """The run's one approval request, once it waits on it."""

        def asked() -> Approval | None:
            run = self.client.get(run_id)
            approvals = self.client.approvals(run_id) if run.status == "waiting" else []
            return approvals[0] if approvals else None

        found: Approval = self.wait("a pending approval", asked)
        return found

    def ended(self, run_id: str) -> Run:
        run: Run = self.wait("the run's end", lambda: self._ended(run_id))
        return run

    def _ended(self, run_id: str) -> Run | None:
        run = self.client.get(run_id)
        return run if run.status in ("completed", "failed", "cancelled") else None

    def events(self, run_id: str) -> list[RunEvent]:
        return list(self.client.events(run_id))


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
def here(tmp_path: Path, model_server: MockModelServer) -> Iterator[Here]:
    harness = Here(tmp_path, model_server)
    try:
        yield harness
    finally:
        for run in harness.client.runs().runs:  # nothing left driving in the background
            if run.status not in ("completed", "failed", "cancelled"):
                harness.client.cancel(run.id)
        harness.client.close()


def _decisions(events: list[RunEvent]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == "approval.decided"]


def _told(model_server: MockModelServer) -> str:
    """What the model was sent last (its messages, as JSON text)."""
    return json.dumps(model_server.requests[-1].body["messages"])


def test_a_detached_runs_approval_is_answered_from_another_process(here: Here) -> None:
    here.model.play(Scenario.of(BUILD, {"text": "Built."}))
    run_id = here.detach()
    assert run_id.startswith("run_")
    request = here.pending(run_id)
    assert request.name == "run_command"
    assert request.expires_at is not None  # the blueprint's deadline, not an instant denial

    approved = here("approve", run_id)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == f"allowed {request.request_id}"

    run = here.ended(run_id)
    assert run.status == "completed"
    assert (here.world / "built").exists()
    (decided,) = _decisions(here.events(run_id))
    assert (decided["decision"], decided["auto"]) == ("allow", False)
    assert decided["by"].startswith("user:")


def test_a_detached_runs_denial_is_told_to_the_model(here: Here) -> None:
    here.model.play(Scenario.of(BUILD, {"text": "Not built, as you wish."}))
    run_id = here.detach()
    request = here.pending(run_id)

    denied = here("deny", run_id, request.request_id, "--reason", "not today")
    assert denied.returncode == 0, denied.stderr

    assert here.ended(run_id).status == "completed"
    assert not (here.world / "built").exists()
    (decided,) = _decisions(here.events(run_id))
    assert (decided["decision"], decided["reason"]) == ("deny", "not today")
    assert "not today" in _told(here.model)


def test_an_unattended_run_is_denied_at_once_by_the_system(here: Here) -> None:
    here.model.play(Scenario.of(BUILD, {"text": "Could not build."}))
    run_id = here.detach("--unattended")

    assert here.ended(run_id).status == "completed"
    events = here.events(run_id)
    assert [e for e in events if e.type == "approval.requested"] == []  # nobody was asked
    (result,) = [e.data for e in events if e.type == "tool.completed"]
    assert result["ok"] is False
    assert "nobody attends this run" in result["output"]
    assert "nobody attends this run" in _told(here.model)
    assert not (here.world / "built").exists()


def test_unattended_in_the_foreground_runs_here_and_asks_nobody(here: Here) -> None:
    here.model.play(Scenario.of(BUILD, {"text": "Could not build."}))
    ran = here("run", "build it", "--model", MODEL, "--dir", str(here.world),
               "--unattended", "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    types = [json.loads(line)["type"] for line in ran.stdout.splitlines()]
    assert "approval.requested" not in types
    assert types[-1] == "run.completed"


def test_an_unanswered_approval_is_denied_at_its_deadline_and_the_run_goes_on(
    here: Here, tmp_path: Path
) -> None:
    blueprint = tmp_path / "short.yaml"
    blueprint.write_text("approvals:\n  timeout_s: 1\n")
    here.model.play(Scenario.of(BUILD, {"text": "Nobody answered; stopping."}))
    run_id = here.detach("--blueprint", str(blueprint))

    run = here.ended(run_id)
    assert run.status == "completed"
    events = here.events(run_id)
    (asked,) = [e for e in events if e.type == "approval.requested"]
    (decided,) = [e for e in events if e.type == "approval.decided"]
    assert (decided.data["decision"], decided.data["by"]) == ("deny", "system")
    assert decided.data["auto"] is True
    assert decided.data["reason"] == "no decision before the deadline"
    # It waited for a person until the deadline: not an instant refusal.
    assert parse_iso(decided.ts) >= parse_iso(asked.data["expires_at"]) > parse_iso(asked.ts)
    assert "no decision before the deadline" in _told(here.model)
    assert len(here.model.requests) == 2  # the model was told and answered

    late = here("approve", run_id, str(asked.data["request_id"]))
    assert late.returncode == 1
    assert late.stderr.startswith("error: ")
    assert "Traceback" not in late.stderr


# -- notifications from the process driving a detached run ------------------------------


class Inbox:
    """A local HTTP endpoint keeping what Apprise's ``json://`` posts to it."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                inbox.messages.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def titled(self, here: Here, title: str) -> str:
        def find() -> str | None:
            return next((m["message"] for m in self.messages if m["title"] == title), None)

        found: str = here.wait(title, find)
        return found


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    box = Inbox()
    try:
        yield box
    finally:
        box.server.shutdown()
        box.server.server_close()


def test_the_detached_driver_notifies_with_what_to_run(here: Here, inbox: Inbox) -> None:
    here.model.play(Scenario.of(BUILD, {"text": "Built."}))
    run_id = here.detach(env={"HELIX_NOTIFY": inbox.url})
    request = here.pending(run_id)

    asked = inbox.titled(here, "Approval needed: run_command")
    assert f"Run {run_id} asks to call run_command" in asked
    assert "touch built" in asked
    command = f"helix approve {run_id} {request.request_id}"
    assert command in asked
    assert f"helix deny {run_id} {request.request_id}" in asked
    assert "Allow:" not in asked  # no server named: no links
    assert request.expires_at is not None
    assert request.expires_at in asked

    approved = here(*command.split()[1:])  # exactly what the notification says to run
    assert approved.returncode == 0, approved.stderr
    assert here.ended(run_id).status == "completed"
    done = inbox.titled(here, "Run completed")
    assert run_id in done
    assert [m["title"] for m in inbox.messages] == ["Approval needed: run_command", "Run completed"]


def test_a_bad_notify_setting_is_refused_before_the_run_starts(here: Here) -> None:
    refused = here("run", "build it", "--model", MODEL, "--detach",
                   env={"HELIX_NOTIFY": "nonsense-scheme://what"})  # fmt: skip
    assert refused.returncode == 2
    understood = "error: HELIX_NOTIFY: Apprise does not understand URL number 1"
    assert refused.stderr.startswith(understood)
    assert "nonsense-scheme" not in refused.stderr  # URLs carry tokens: never echoed
    assert here.client.runs().runs == []


def test_the_detached_drivers_links_are_the_servers_own(
    here: Here, inbox: Inbox, tmp_path: Path
) -> None:
    """A server on the same store (``HELIX_PUBLIC_URL``) honours the driver's signed links."""
    port = _free_port()
    server = _serve(here, port, tmp_path)
    try:
        here.model.play(Scenario.of(BUILD, {"text": "Built."}))
        public = f"http://127.0.0.1:{port}"
        run_id = here.detach(env={"HELIX_NOTIFY": inbox.url, "HELIX_PUBLIC_URL": public})
        asked = inbox.titled(here, "Approval needed: run_command")
        links = dict(re.findall(r"(Allow|Deny): (\S+)", asked))
        assert links["Allow"].startswith(f"{public}/api/v1/links/")
        assert f"Run: {public}/#/runs/{run_id}" in asked

        confirm = httpx.get(links["Allow"])  # the server verifies the driver's signature
        assert confirm.status_code == 200, confirm.text
        assert "Allow run_command?" in confirm.text
        assert httpx.post(links["Allow"]).status_code == 200

        assert here.ended(run_id).status == "completed"  # driven here, answered there
        (decided,) = _decisions(here.events(run_id))
        assert (decided["decision"], decided["by"]) == ("allow", "user:approval-link")
        assert httpx.get(links["Deny"]).status_code == 409  # its twin: decided already
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(WAIT_S)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(here: Here, port: int, tmp_path: Path) -> subprocess.Popen[bytes]:
    """``helix serve`` on the same store as ``here`` (it drives nothing of ours)."""
    with open(tmp_path / "serve.log", "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "helix", "serve", "--port", str(port)],
            env={**here.env, "HELIX_EXECUTOR": "local"},  # no worker processes to start
            stdout=log,
            stderr=log,
            start_new_session=True,
        )

    def up() -> bool:
        if server.poll() is not None:
            pytest.fail(f"helix serve exited: {(tmp_path / 'serve.log').read_text()}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200
        except httpx.TransportError:
            return False

    here.wait("helix serve", up)
    return server


def test_a_driver_taking_over_a_waiting_run_notifies_what_already_waits(
    here: Here, inbox: Inbox, tmp_path: Path
) -> None:
    """Its first driver died while the run waited: the next one says what is pending."""
    here.model.play(Scenario.of(BUILD, {"text": "Built."}))
    run_id = here.detach()  # no HELIX_NOTIFY: nobody is told
    request = here.pending(run_id)
    (first,) = here.wait("the background driver", lambda: processes_mentioning(run_id))
    kill_all([first])
    here.wait("its lock released", lambda: not processes_mentioning(run_id))

    with open(tmp_path / "driver.log", "wb") as log:
        driver = subprocess.Popen(
            [sys.executable, "-m", "helix", "resume", run_id],
            env={**here.env, "HELIX_NOTIFY": inbox.url},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    try:
        asked = inbox.titled(here, "Approval needed: run_command")
        assert f"helix approve {run_id} {request.request_id}" in asked
        assert here("approve", run_id).returncode == 0
        assert driver.wait(WAIT_S) == 0, (tmp_path / "driver.log").read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(WAIT_S)
    assert here.ended(run_id).status == "completed"
    assert [m["title"] for m in inbox.messages] == ["Approval needed: run_command", "Run completed"]


def test_a_bad_public_url_is_refused(here: Here) -> None:
    refused = here("run", "build it", "--model", MODEL, "--detach",
                   env={"HELIX_PUBLIC_URL": "ftp://example.test"})  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: HELIX_PUBLIC_URL: 'ftp://example.test'")
    assert "Traceback" not in refused.stderr
