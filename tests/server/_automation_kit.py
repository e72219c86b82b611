"""What the automation tests share: a clock a test sets, servers that read it, helpers."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from helix.providers import Scenario
from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, make_config, wait_until

T0 = datetime(2030, 1, 1, 12, 0, 30, tzinfo=UTC).timestamp()
"""Half a minute past a slot: the tests' clocks start here."""


class SetClock:
    """A ``Clock`` a test sets from its own thread; sleeps are short real waits.

    The scheduler wakes often enough to see a new time soon; tests wait for it to have
    gone through a time (``Scheduler.checked_until``), never for an amount of time.
    """

    def __init__(self, start: float = T0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(min(max(seconds, 0.0), 0.02))

    def set(self, when: float) -> None:
        with self._lock:
            self._now = when


def serve(tmp_path: Path, model: MockModelServer, clock: SetClock, **overrides: Any) -> LiveServer:
    return LiveServer(make_config(tmp_path, model, clock=clock, **overrides)).start()


def checked(server: LiveServer, when: float) -> None:
    """Wait until the server's scheduler went through every automation at ``when``."""
    scheduler = server.app.state.helix.scheduler
    wait_until(lambda: scheduler.checked_until >= when, f"the scheduler at {when}")


def user(admin: Admin, name: str) -> str:
    """A user with a personal workspace (named like them) and an API token."""
    admin.user(name)
    return admin.api_token(name)


def answer_always(model: MockModelServer) -> None:
    model.play(Scenario.of({"text": "Done."}, repeat=True))


def store_blueprint(client: httpx.Client, workspace: str, name: str = "nightly") -> None:
    answer = client.put(f"/workspaces/{workspace}/blueprints/{name}", json={"model": MODEL})
    assert answer.status_code == 200, answer.text


def add(
    client: httpx.Client, workspace: str, trigger: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    body = {
        "name": extra.pop("name", "tidy"),
        "workspace": workspace,
        "trigger": trigger,
        "target": {"kind": "blueprint", "blueprint": "nightly", "objective": "tidy up"},
        **extra,
    }
    answer = client.post("/automations", json=body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fired_runs(client: httpx.Client, workspace: str) -> list[dict[str, Any]]:
    """``automation.fired`` of every run of the workspace, oldest slot first."""
    runs = client.get("/runs", params={"limit": 200}).json()["runs"]
    found = []
    for run in runs:
        events = client.get(f"/runs/{run['id']}/events", params={"limit": 5}).json()["events"]
        for event in events:
            if event["type"] == "automation.fired":
                found.append({"run": run["id"], "seq": event["seq"], **event["data"]})
    return sorted(found, key=lambda f: f["slot"])
