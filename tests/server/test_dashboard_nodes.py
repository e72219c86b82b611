"""The dashboard's nodes page: the executor's node, its state, the run it drives (a link),
a Drain button that asks first and shows why the server refused; readable on a phone;
hidden from, and refused to, a member."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Browser, Dialog, expect

from helix.testing import MockModelServer

from .conftest import (
    DESKTOP,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    open_dashboard,
    start_asking_run,
    wait_for_event,
    wait_for_status,
)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_nodes_page_shows_the_node_its_run_and_a_refused_drain(
    live: LiveServer,
    admin: Admin,
    model_server: MockModelServer,
    browser: Browser,
    viewport: dict[str, int],
) -> None:
    admin.user("dana", password="dashboard-pw", workspace="default", role="admin")
    token = live.login("dana", "dashboard-pw")
    with live.client(token) as dana:
        run_id = start_asking_run(dana, model_server)
        wait_for_event(dana, run_id, "approval.requested")
        page = open_dashboard(browser, live.url, token, viewport)
        page.get_by_test_id("nav-nodes").click()

        node = page.locator("[data-testid=node][data-id=local]")
        expect(node.get_by_test_id("node-state")).to_have_text("alive")
        expect(node.get_by_test_id("node-run-count")).to_have_text("1")
        expect(node.get_by_test_id("node-run")).to_have_text(run_id)
        assert page.evaluate(WIDER_THAN_SCREEN) == []

        asked: list[str] = []

        def answer(dialog: Dialog) -> None:
            asked.append(dialog.message)
            dialog.accept()

        page.once("dialog", answer)
        node.get_by_test_id("drain").click()
        expect(node.get_by_test_id("drain-error")).to_contain_text("nowhere to move its runs")
        assert asked
        assert asked[0].startswith("Drain node local?")
        expect(node.get_by_test_id("drain")).to_be_enabled()

        node.get_by_test_id("node-run").click()
        expect(page).to_have_url(f"{live.url}/#/runs/{run_id}")
        page.context.close()
        _finish(dana, run_id)


def test_a_member_sees_no_nodes_link_and_is_refused_the_page(
    live: LiveServer, admin: Admin, browser: Browser
) -> None:
    admin.user("mia", password="dashboard-pw", workspace="default", role="member")
    token = live.login("mia", "dashboard-pw")
    page = open_dashboard(browser, live.url, token, DESKTOP)
    expect(page.get_by_test_id("runs")).to_be_visible()
    expect(page.get_by_test_id("nav-nodes")).to_be_hidden()
    page.goto(f"{live.url}/#/nodes")
    expect(page.get_by_test_id("nodes-error")).to_have_text(
        "only team workspaces' owners and admins may see the nodes"
    )
    page.context.close()


def _finish(client: httpx.Client, run_id: str) -> None:
    request = client.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    client.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    wait_for_status(client, run_id, "completed")
