"""Webhook and run-event automations, and what the routes refuse."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helix.automations import sign
from helix.providers import Scenario
from helix.testing import MockModelServer

from ._automation_kit import (
    T0,
    SetClock,
    add,
    answer_always,
    fired_runs,
    serve,
    store_blueprint,
    user,
)
from .conftest import MODEL, Admin, LiveServer, wait_for_status, wait_until


@pytest.fixture
def clock() -> SetClock:
    return SetClock()


@pytest.fixture
def server(tmp_path: Path, model_server: MockModelServer, clock: SetClock) -> Iterator[LiveServer]:
    answer_always(model_server)
    live = serve(tmp_path, model_server, clock)
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def ann(
    tmp_path: Path, model_server: MockModelServer, server: LiveServer
) -> Iterator[httpx.Client]:
    token = user(Admin(server.config.db_url), "ann")
    with server.client(token) as client:
        store_blueprint(client, "ann")
        yield client


def _post(
    server: LiveServer, automation_id: str, body: bytes, headers: dict[str, str]
) -> httpx.Response:
    with server.client() as anonymous:  # no token: the signature is the credential
        return anonymous.post(f"/hooks/{automation_id}", content=body, headers=headers)


def _signed(secret: str, body: bytes, at: float) -> dict[str, str]:
    stamp = str(int(at))
    return {"X-Helix-Timestamp": stamp, "X-Helix-Signature": sign(secret, stamp, body)}


def test_a_signed_webhook_starts_a_run_once_and_refuses_forgeries_and_replays(
    server: LiveServer, ann: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    created = add(ann, "ann", {"kind": "webhook"}, name="deploy")
    automation, secret = created["automation"], created["secret"]
    assert secret
    assert secret.startswith("whsec_")
    body = json.dumps({"ref": "main"}).encode()

    good = _post(server, automation["id"], body, _signed(secret, body, T0))
    assert good.status_code == 202, good.text
    run_id = good.json()["run_id"]
    fired = fired_runs(ann, "ann")
    assert [(f["run"], f["trigger"]) for f in fired] == [(run_id, "webhook")]

    replay = _post(server, automation["id"], body, _signed(secret, body, T0))
    assert replay.status_code == 409, replay.text
    assert replay.json()["error"]["code"] == "conflict"

    forged = _signed("whsec_" + "x" * 43, body, T0)
    tampered = _signed(secret, body, T0 + 1)
    stale = _signed(secret, body, T0 - 301)
    for headers, what in [
        (forged, "a wrong secret"),
        ({**tampered, "X-Helix-Timestamp": str(int(T0 + 2))}, "a changed timestamp"),
        (stale, "a timestamp past the window"),
        ({}, "no signature"),
    ]:
        refused = _post(server, automation["id"], body, headers)
        assert refused.status_code == 401, what
        assert refused.json()["error"]["code"] == "invalid_signature", what
    changed = _post(server, automation["id"], body + b" ", _signed(secret, body, T0 + 3))
    assert changed.status_code == 401
    assert len(fired_runs(ann, "ann")) == 1

    # the secret is shown once: never listed, never in a run's events or the logs
    assert secret not in ann.get("/automations").text
    assert secret not in ann.get(f"/runs/{run_id}/events").text
    assert secret not in caplog.text

    assert _post(server, "aut_nope", body, _signed(secret, body, T0)).status_code == 404
    ann.post(f"/automations/{automation['id']}/pause").raise_for_status()
    paused = _post(server, automation["id"], body, _signed(secret, body, T0 + 4))
    assert paused.status_code == 409


def test_a_failed_run_starts_the_automation_waiting_for_failures(
    server: LiveServer, ann: httpx.Client, model_server: MockModelServer
) -> None:
    created = add(ann, "ann", {"kind": "event", "event": "run.cancelled"}, name="on-cancel")
    model_server.play(
        Scenario.of(
            {
                "text": "Asking.",
                "tool_calls": [{"name": "run_command", "args": {"command": "true"}}],
            },
            repeat=True,
        )
    )
    source = ann.post(
        "/runs", json={"objective": "build", "model": MODEL, "workspace": "ann"}
    ).json()["id"]
    wait_for_status(ann, source, "waiting")
    ann.post(f"/runs/{source}/cancel").raise_for_status()

    fired = wait_until(lambda: fired_runs(ann, "ann"), "the event automation's run")
    assert len(fired) == 1
    assert fired[0]["trigger"] == "event"
    assert fired[0]["source_run"] == source
    assert fired[0]["automation_id"] == created["automation"]["id"]
    # the run it started is cancelled too: runs an automation started trigger none
    wait_for_status(ann, fired[0]["run"], "waiting")
    ann.post(f"/runs/{fired[0]['run']}/cancel").raise_for_status()
    wait_for_status(ann, fired[0]["run"], "cancelled")
    scheduler = server.app.state.helix.scheduler
    wait_until(lambda: scheduler.endings_seen >= 2, "the second ending seen")
    listed = ann.get(f"/automations/{created['automation']['id']}").json()
    assert listed["last_firing"]["run_id"] == fired[0]["run"]
    assert len(fired_runs(ann, "ann")) == 1


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"trigger": {"kind": "cron", "cron": "61 * * * *"}}, 422, "invalid_request"),
        ({"trigger": {"kind": "cron", "cron": "* * *"}}, 422, "invalid_request"),
        ({"trigger": {"kind": "cron", "cron": "0 0 30 2 *"}}, 422, "invalid_request"),
        (
            {"trigger": {"kind": "cron", "cron": "* * * * *", "timezone": "Mars/Base"}},
            422,
            "invalid_request",
        ),
        ({"trigger": {"kind": "sometimes"}}, 422, "invalid_request"),
        ({"missed": "twice"}, 422, "invalid_request"),
        ({"name": "../x"}, 422, "invalid_request"),
        (
            {"target": {"kind": "blueprint", "blueprint": "missing", "objective": "x"}},
            404,
            "account_not_found",
        ),
        (
            {"target": {"kind": "blueprint", "blueprint": "nightly", "objective": " "}},
            422,
            "invalid_request",
        ),
        ({"target": {"kind": "workflow", "workflow": "release"}}, 409, "target_unavailable"),
        ({"target": {"kind": "graph", "plan": "plan.yaml"}}, 404, "account_not_found"),
        ({"target": {"kind": "graph", "plan": "nightly"}}, 422, "invalid_blueprint"),
        ({"workspace": "elsewhere"}, 404, "automation_not_found"),
    ],
)
def test_bad_automations_are_refused_with_a_clear_error(
    ann: httpx.Client, change: dict[str, object], status: int, code: str
) -> None:
    body = {
        "name": "tidy",
        "workspace": "ann",
        "trigger": {"kind": "cron", "cron": "0 3 * * *"},
        "target": {"kind": "blueprint", "blueprint": "nightly", "objective": "tidy up"},
        **change,
    }
    answer = ann.post("/automations", json=body)
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code
    assert ann.get("/automations").json()["automations"] == []


def test_a_webhook_starts_the_task_graph_of_a_stored_plan(
    server: LiveServer, ann: httpx.Client
) -> None:
    tasks = [{"id": "a", "objective": "a"}, {"id": "b", "objective": "b", "depends_on": ["a"]}]
    stored = ann.put("/workspaces/ann/blueprints/release", json={"model": MODEL, "tasks": tasks})
    assert stored.status_code == 200, stored.text
    target = {"kind": "graph", "plan": "release", "objective": "ship the release"}
    created = add(ann, "ann", {"kind": "webhook"}, name="ship", target=target)
    body = b"{}"
    started = _post(server, created["automation"]["id"], body, _signed(created["secret"], body, T0))
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    done = wait_for_status(ann, run_id, "completed", "failed")
    assert done["status"] == "completed"
    assert done["objective"] == "ship the release"
    types = [e["type"] for e in ann.get(f"/runs/{run_id}/events").json()["events"]]
    assert types[:3] == ["run.created", "automation.fired", "graph.planned"]
    assert types.count("task.completed") == 2


def test_viewers_list_but_cannot_change_and_others_see_nothing(
    server: LiveServer, ann: httpx.Client
) -> None:
    admin = Admin(server.config.db_url)
    created = add(ann, "ann", {"kind": "cron", "cron": "0 3 * * *"})["automation"]
    twice = ann.post(
        "/automations",
        json={"name": "tidy", "workspace": "ann", "trigger": {"kind": "webhook"},
              "target": {"kind": "blueprint", "blueprint": "nightly", "objective": "x"}},
    )  # fmt: skip
    assert twice.status_code == 409
    assert twice.json()["error"]["code"] == "automation_exists"
    bob = user(admin, "bob")
    admin.role("ann", "bob", "viewer")
    eve = user(admin, "eve")
    with server.client(bob) as viewer, server.client(eve) as stranger:
        assert [a["id"] for a in viewer.get("/automations").json()["automations"]] == [
            created["id"]
        ]
        for path in ("pause", "resume"):
            assert viewer.post(f"/automations/{created['id']}/{path}").status_code == 403
        assert viewer.delete(f"/automations/{created['id']}").status_code == 403
        assert stranger.get("/automations").json()["automations"] == []
        assert stranger.get(f"/automations/{created['id']}").status_code == 404
        assert stranger.post(f"/automations/{created['id']}/pause").status_code == 404
    paused = ann.post(f"/automations/{created['id']}/pause").json()
    assert paused["paused"] is True
    assert paused["next_firing"] is None
    resumed = ann.post(f"/automations/{created['id']}/resume").json()
    assert resumed["paused"] is False
    assert resumed["next_firing"] is not None
    assert ann.delete(f"/automations/{created['id']}").status_code == 204
    assert ann.get(f"/automations/{created['id']}").status_code == 404
    assert ann.get("/automations/..%2F").status_code == 404


def test_a_firing_whose_owner_may_no_longer_act_records_why(
    server: LiveServer, ann: httpx.Client, clock: SetClock
) -> None:
    admin = Admin(server.config.db_url)
    created = add(ann, "ann", {"kind": "webhook"}, name="deploy")
    admin.role("ann", "ann", "viewer")  # the owner became a viewer of the workspace
    body = b"{}"
    refused = _post(server, created["automation"]["id"], body, _signed(created["secret"], body, T0))
    assert refused.status_code == 409
    assert "can no longer start runs" in refused.json()["error"]["message"]
    listed = ann.get(f"/automations/{created['automation']['id']}").json()
    assert listed["last_firing"]["run_id"] is None
    assert "can no longer start runs" in listed["last_firing"]["error"]
    assert fired_runs(ann, "ann") == []
