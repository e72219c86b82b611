"""``helix serve`` with the ``processes`` executor (its default): real server, real workers."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import httpx
import pytest

from helix.kernel.log import SqliteEventStore
from helix.testing import MockModelServer

from .conftest import MODEL, Cli, free_port, play, wait_for_event, wait_for_status


@pytest.fixture(autouse=True)
def _serves_default_executor(cli: Cli) -> None:
    """These tests are about serve's default (processes): no ``HELIX_EXECUTOR=local`` here."""
    del cli.env["HELIX_EXECUTOR"]


def _holder_pid(db: Path, run_id: str) -> int | None:
    async def read() -> int | None:
        store = SqliteEventStore(db)
        try:
            lease = await store.get_lease(run_id)
        finally:
            await store.close()
        return int(lease.holder.split("/")[1]) if lease is not None else None

    return asyncio.run(read())


def _events(client: httpx.Client, run_id: str) -> list[dict[str, object]]:
    answer = client.get(f"/runs/{run_id}/events", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    events: list[dict[str, object]] = answer.json()["events"]
    return events


def test_a_served_run_is_driven_by_a_worker_and_survives_its_kill(
    cli: Cli, model_server: MockModelServer
) -> None:
    port = free_port()
    server = cli.serve(port, "--workers", "2")  # the processes executor is serve's default
    assert "runs: 2 worker processes" in cli.log(0)
    link = re.search(r"http://\S+/#login=(\S+)", cli.log(0))
    assert link is not None, cli.log(0)
    api = f"http://127.0.0.1:{port}/api/v1"
    token = httpx.post(f"{api}/auth/link", json={"token": link.group(1)}).json()["token"]
    client = httpx.Client(base_url=api, headers={"Authorization": f"Bearer {token}"})
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Slow thoughts.", "delay_s": 30.0},  # in flight when its worker dies
        {"text": "Done after the takeover."},
    )
    run_id = client.post("/runs", json={"objective": "look", "model": MODEL}).json()["id"]
    wait_for_event(client, run_id, "tool.completed")
    deadline = time.monotonic() + 60
    while len([r for r in model_server.requests if r.api == "openai"]) < 2:
        assert time.monotonic() < deadline, "the slow model call never arrived"
        time.sleep(0.02)
    pid = _holder_pid(cli.home / "helix.db", run_id)
    assert pid is not None
    assert pid != server.pid
    os.kill(pid, signal.SIGKILL)
    wait_for_event(client, run_id, "lease.taken_over")  # how soon: a benchmark's figure
    assert wait_for_status(client, run_id, "completed")["turns"] == 2
    events = _events(client, run_id)
    assert [e["seq"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert kinds.count("model.requested") == 3 == len(model_server.requests)
    assert kinds.count("tool.completed") == 1
    (taken,) = [e["data"] for e in events if e["type"] == "lease.taken_over"]
    assert isinstance(taken, dict)
    assert taken["reason"] == "holder_gone"
    client.close()


def test_serve_refuses_bad_executor_settings(cli: Cli) -> None:
    port = str(free_port())
    bad_kind = cli("serve", "--port", port, "--executor", "threads")
    assert bad_kind.returncode == 2
    assert "not one of local, processes, ray" in bad_kind.stderr
    no_workers = cli("serve", "--port", port, "--workers", "0")
    assert no_workers.returncode == 2
    assert "between 1 and 256" in no_workers.stderr
    from_env = cli("serve", "--port", port, env={"HELIX_WORKERS": "lots"})
    assert from_env.returncode == 2
    assert "not a whole number" in from_env.stderr
    kind_env = cli("serve", "--port", port, env={"HELIX_EXECUTOR": "fibers"})
    assert kind_env.returncode == 2
    assert "Traceback" not in bad_kind.stderr + no_workers.stderr + from_env.stderr
    assert not (cli.home / "helix.db").exists()  # refused before anything was made
