"""A live run's background processes: the REST list, and its page's Processes tab on a phone."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    PHONE,
    WIDER_THAN_SCREEN,
    LiveServer,
    open_dashboard,
    play,
    wait_for_event,
    wait_for_status,
)

LIVE = {"sandbox": {"live": True}}


def test_a_live_runs_processes_are_listed_and_shown(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, browser: Browser
) -> None:
    serve = {"name": "run_command", "args": {"command": "exec sleep 600", "background": True}}
    play(model_server, {"text": "Serving.", "tool_calls": [serve]}, {"text": "Served."})
    body = {"objective": "serve", "model": MODEL, "blueprint": LIVE, "auto_approve": True}
    created = owner.post("/runs", json=body)
    assert created.status_code in (200, 201), created.text
    run_id = created.json()["id"]
    wait_for_status(owner, run_id, "completed")
    wait_for_event(owner, run_id, "world.stopped")  # logged as the run's driver lets go
    listed = owner.get(f"/runs/{run_id}/processes")
    assert listed.status_code == 200, listed.text
    (process,) = listed.json()["processes"]
    assert (process["process"], process["command"], process["turn"]) == ("p1", "exec sleep 600", 1)
    assert (process["running"], process["ended"]) == (False, "world_stopped")  # killed at the end
    assert owner.get("/runs/run_nope/processes").status_code == 404

    token = owner.headers["Authorization"].removeprefix("Bearer ")
    page = open_dashboard(browser, live.url, token, PHONE)
    try:
        page.goto(f"{live.url}/#/runs/{run_id}")
        page.get_by_test_id("tab-processes").click()
        row = page.get_by_test_id("process-p1")
        expect(row).to_contain_text("exec sleep 600")
        expect(row).to_contain_text("killed")
        expect(row).to_contain_text("turn 1")
        assert page.evaluate(WIDER_THAN_SCREEN) == []
    finally:
        page.context.close()
