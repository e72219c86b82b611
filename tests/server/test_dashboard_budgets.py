"""The budgets page in a real browser, on a phone: bars of spent against each cap, a run's
pause read at a glance, owners setting and removing budgets, viewers only reading."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    open_dashboard,
    play,
    wait_for_status,
)


def test_budgets_read_on_a_phone_set_by_owners_read_by_viewers(
    browser: Browser,
    live: LiveServer,
    admin: Admin,
    owner: httpx.Client,
    model_server: MockModelServer,
) -> None:
    body = {"kind": "workspace", "period": "month", "usd": 0, "tokens": 1_000_000}
    assert owner.put("/workspaces/default/budgets", json=body).is_success
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "x", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "paused")
    admin.user("dana", password="dashboard-pw", workspace="default", role="admin")
    admin.user("vera", password="dashboard-pw", workspace="default", role="viewer")

    page = open_dashboard(browser, live.url, live.login("dana", "dashboard-pw"), PHONE)
    try:
        page.goto(f"{live.url}/#/runs/{run_id}")  # the run says which budget paused it
        expect(
            page.get_by_text(
                "budget reached: workspace:default's month budget: $0.0000 spent of $0.0000"
            )
        ).to_be_visible()
        page.goto(f"{live.url}/#/budgets?workspace=default")
        card = page.get_by_test_id("budget")
        expect(card).to_have_count(1)
        expect(card).to_have_attribute("data-scope", "workspace:default")
        expect(card.get_by_test_id("budget-usd")).to_contain_text("reached")
        expect(card.get_by_test_id("budget-tokens")).to_contain_text("0 tokens of 1,000,000 tokens")
        assert page.evaluate(WIDER_THAN_SCREEN) == []

        page.get_by_test_id("budget-kind").select_option("blueprint")
        page.get_by_test_id("budget-name-input").fill("coder")
        page.get_by_test_id("budget-period").select_option("day")
        page.get_by_test_id("budget-usd-input").fill("-1")
        page.get_by_test_id("budget-set").click()
        expect(page.get_by_test_id("budget-form-error")).to_contain_text("a cap is 0 or more")
        page.get_by_test_id("budget-usd-input").fill("2.5")
        page.get_by_test_id("budget-set").click()
        expect(page.get_by_test_id("budget")).to_have_count(2)
        coder = page.locator('[data-scope="blueprint:coder"]')
        expect(coder.get_by_test_id("budget-usd")).to_contain_text("$0.0000 of $2.5000")
        coder.get_by_test_id("budget-remove").click()
        expect(page.get_by_test_id("budget")).to_have_count(1)
    finally:
        page.context.close()

    page = open_dashboard(browser, live.url, live.login("vera", "dashboard-pw"), PHONE)
    try:
        page.goto(f"{live.url}/#/budgets?workspace=default")
        expect(page.get_by_test_id("budget")).to_have_count(1)
        expect(page.get_by_test_id("budget-form")).to_have_count(0)
        expect(page.get_by_test_id("budget-remove")).to_have_count(0)
    finally:
        page.context.close()
