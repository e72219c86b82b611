"""Detached runs wait for people: ``helix run --detach`` answered from another process.

Real processes throughout: ``helix run --detach`` leaves the run to a background
``helix resume`` process; the test watches the store (an embedded ``helix.Client``)
and answers with ``helix approve``/``helix deny``, each a process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix import Client
from helix.api import Approval, Run, RunEvent
from helix.kernel.events import parse_iso
from helix.providers import Scenario
from helix.testing import MockModelServer

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
