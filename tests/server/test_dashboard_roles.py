"""Roles over REST and in the dashboard: spend by role, and the role on each model call."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

TIMEOUT_MS = 20_000
CHEAP = "openai:cheap-model"
LISTING = {"name": "list_files", "args": {}}


@pytest.fixture
def token(live: LiveServer, admin: Admin) -> str:
    admin.user("rhea", password="dashboard-pw")
    return live.login("rhea", "dashboard-pw")


def _compacted_run(live: LiveServer, token: str, model_server: MockModelServer) -> str:
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [LISTING]},
        {"text": "Looking again.", "tool_calls": [LISTING]},
        {"text": "SUMMARY: looked twice."},
        {"text": "Done."},
    )
    blueprint = {
        "model": MODEL,
        "roles": {"summary": CHEAP},
        "tools": ["list_files"],
        "context": {"compact_at_tokens": 1, "keep_turns": 1},
    }
    with live.client(token) as client:
        made = client.post("/runs", json={"objective": "look around", "blueprint": blueprint})
        assert made.status_code == 201, made.text
        run_id = made.json()["id"]
        wait_for_status(client, run_id, "completed")
    assert isinstance(run_id, str)
    return run_id


def test_spend_by_role_over_rest_and_bad_roles_refused(
    live: LiveServer, token: str, model_server: MockModelServer
) -> None:
    _compacted_run(live, token, model_server)
    assert [r.body["model"] for r in model_server.requests if r.api == "openai"] == [
        "gpt-4.1", "gpt-4.1", "cheap-model", "gpt-4.1"
    ]  # fmt: skip
    with live.client(token) as client:
        answer = client.get("/spend", params={"by": "role"})
        assert answer.status_code == 200, answer.text
        spent = answer.json()
        assert spent["by"] == "role"
        assert set(spent["groups"]) == {"main", "summary"}
        assert spent["by_role"]["summary"]["output_tokens"] > 0
        wrong = client.get("/spend", params={"by": "roles"})
        assert wrong.status_code == 422
        assert "role" in wrong.text
        bad = {"model": MODEL, "roles": {"boss": CHEAP}}
        refused = client.post("/runs", json={"objective": "x", "blueprint": bad})
        assert refused.status_code == 422
        assert "roles.boss" in refused.text


def test_the_timeline_shows_each_calls_role(
    live: LiveServer, token: str, model_server: MockModelServer, browser: Browser
) -> None:
    run_id = _compacted_run(live, token, model_server)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{live.url}/#/runs/{run_id}")
    expect(page.get_by_test_id("status").first).to_have_text("completed", timeout=TIMEOUT_MS)
    page.get_by_test_id("tab-events").click()
    timeline = page.get_by_test_id("timeline")
    asked = timeline.locator('[data-type="model.requested"]')
    expect(asked).to_have_count(3, timeout=TIMEOUT_MS)
    expect(asked.first).to_contain_text(f"main · {MODEL}")
    compacted = timeline.locator('[data-type="context.compacted"]')
    expect(compacted).to_contain_text(f"summarised by summary · {CHEAP}")
    expect(compacted).to_contain_text("SUMMARY: looked twice.")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()
