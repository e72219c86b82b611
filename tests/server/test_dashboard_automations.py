"""The dashboard's automations page: trigger, target, next and last firing with its run,
pause and resume; readable on a phone; a viewer sees no buttons."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from ._automation_kit import (
    T0,
    SetClock,
    add,
    answer_always,
    checked,
    fired_runs,
    serve,
    store_blueprint,
)
from .conftest import DESKTOP, PHONE, WIDER_THAN_SCREEN, Admin, open_dashboard


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_automations_page_shows_firings_and_pauses(
    tmp_path: Path, model_server: MockModelServer, browser: Browser, viewport: dict[str, int]
) -> None:
    answer_always(model_server)
    clock = SetClock()
    live = serve(tmp_path, model_server, clock)
    try:
        admin = Admin(live.config.db_url)
        admin.user("ann", password="dashboard-pw")
        admin.user("vic", password="dashboard-pw")
        admin.role("ann", "vic", "viewer")
        token = live.login("ann", "dashboard-pw")
        with live.client(token) as ann:
            store_blueprint(ann, "ann")
            cron = add(ann, "ann", {"kind": "cron", "cron": "* * * * *"}, name="minutely")[
                "automation"
            ]
            add(ann, "ann", {"kind": "webhook"}, name="deploy")
            clock.set(T0 + 30)
            checked(live, T0 + 30)
            [fired] = fired_runs(ann, "ann")

        page = open_dashboard(browser, live.url, token, viewport)
        page.get_by_test_id("nav-automations").click()
        row = page.locator(f"[data-testid=automation][data-id={cron['id']}]")
        expect(row).to_contain_text("minutely")
        expect(row).to_contain_text("* * * * *")
        expect(row.get_by_test_id("automation-state")).to_have_text("active")
        expect(row.get_by_test_id("automation-next")).to_have_text("2030-01-01 12:02 UTC")
        expect(row.get_by_test_id("automation-run")).to_have_text(fired["run"])
        expect(page.locator("[data-testid=automation]")).to_have_count(2)
        assert page.evaluate(WIDER_THAN_SCREEN) == []

        row.get_by_test_id("pause").click()
        expect(page.get_by_test_id("automations-notice")).to_have_text("minutely paused.")
        expect(row.get_by_test_id("automation-state")).to_have_text("paused")
        expect(row.get_by_test_id("automation-next")).to_have_text("—")
        row.get_by_test_id("resume").click()
        expect(row.get_by_test_id("automation-state")).to_have_text("active")

        row.get_by_test_id("automation-run").click()
        expect(page).to_have_url(f"{live.url}/#/runs/{fired['run']}")
        page.context.close()

        viewer = open_dashboard(browser, live.url, live.login("vic", "dashboard-pw"), viewport)
        viewer.get_by_test_id("nav-automations").click()
        seen = viewer.locator(f"[data-testid=automation][data-id={cron['id']}]")
        expect(seen).to_contain_text("minutely")
        expect(seen.get_by_test_id("pause")).to_have_count(0)
        viewer.context.close()
    finally:
        live.stop()
