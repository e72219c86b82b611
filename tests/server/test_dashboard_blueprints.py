"""The blueprints pages in Chromium: the list with current versions, a blueprint's
history and coloured diff, Roll back (a new version), the run page naming its version;
a viewer sees no rollback; the pages fit a phone."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import (
    DESKTOP,
    MODEL,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    open_dashboard,
    play,
    wait_for_status,
)

BASE = "/workspaces/default/blueprints"


def _reviewer(system: str) -> dict[str, Any]:
    return {"model": MODEL, "tools": ["list_files"], "system": system}


def _member(live: LiveServer, admin: Admin) -> tuple[str, httpx.Client]:
    admin.user("ann", password="dashboard-pw", workspace="default", role="member")
    token = live.login("ann", "dashboard-pw")
    client = live.client(token)
    for n, system in enumerate(["Review.", "Review hard.", "Review very hard."], start=1):
        saved = client.put(f"{BASE}/reviewer", json=_reviewer(system), params={"note": f"edit {n}"})
        assert saved.status_code == 200, saved.text
    return token, client


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_history_diff_and_rollback(
    live: LiveServer, admin: Admin, browser: Browser, viewport: dict[str, int]
) -> None:
    token, client = _member(live, admin)
    page = open_dashboard(browser, live.url, token, viewport)
    page.goto(f"{live.url}/#/blueprints/default")
    expect(page.get_by_test_id("blueprints")).to_contain_text("reviewer")
    expect(page.get_by_test_id("bp-version")).to_have_text("v3")
    assert page.evaluate(WIDER_THAN_SCREEN) == []

    page.get_by_test_id("blueprints").get_by_role("link").first.click()
    expect(page.get_by_test_id("bp-current")).to_have_text("v3")
    expect(page.get_by_test_id("bp-history-row")).to_have_count(3)
    expect(page.get_by_test_id("bp-history")).to_contain_text("edit 1")
    diff = page.get_by_test_id("bp-diff")  # v2 → v3 at first
    expect(diff.locator(".del")).to_have_text("-system: Review hard.")
    expect(diff.locator(".add")).to_have_text("+system: Review very hard.")
    expect(page.get_by_test_id("bp-changed")).to_have_text("Changed: system (changed)")
    page.get_by_test_id("bp-a").select_option("1")
    expect(diff.locator(".del")).to_have_text("-system: Review.")
    assert page.evaluate(WIDER_THAN_SCREEN) == []

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("[data-testid=bp-rollback][data-version='1']").click()
    expect(page.get_by_test_id("bp-notice")).to_have_text("Saved version 4 (rollback to v1).")
    expect(page.get_by_test_id("bp-current")).to_have_text("v4")
    latest = client.get(f"{BASE}/reviewer/versions/latest").json()
    assert (latest["version"], latest["blueprint"]["system"]) == (4, "Review.")
    page.context.close()
    client.close()


def test_the_run_page_names_the_version_and_a_viewer_cannot_roll_back(
    live: LiveServer, admin: Admin, browser: Browser, model_server: MockModelServer
) -> None:
    _, client = _member(live, admin)
    play(model_server, {"text": "Fine."})
    created = client.post(
        "/runs", json={"objective": "review", "blueprint": "reviewer@2", "workspace": "default"}
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    wait_for_status(client, run_id, "completed")

    admin.user("vic", password="dashboard-pw", workspace="default", role="viewer")
    page = open_dashboard(browser, live.url, live.login("vic", "dashboard-pw"), DESKTOP)
    page.goto(f"{live.url}/#/runs/{run_id}")
    named = page.get_by_test_id("run-blueprint")
    expect(named).to_have_text("blueprint reviewer v2")
    expect(named).to_have_attribute("href", "#/blueprints/default/reviewer")
    page.goto(f"{live.url}/#/blueprints/default/reviewer")
    expect(page.get_by_test_id("bp-current")).to_have_text("v3")
    expect(page.get_by_test_id("bp-history-row")).to_have_count(3)
    expect(page.get_by_test_id("bp-rollback")).to_have_count(0)
    page.context.close()
    client.close()
