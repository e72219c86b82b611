"""The trace waterfall and the spend page in a real browser, at desktop and phone sizes.

Run with ``HELIX_UPDATE_SCREENSHOTS=1`` to refresh docs/screenshots/trace-desktop.png and
spend-desktop.png from this test (otherwise they go to artifacts/dashboard only).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "dashboard"
DOCS = ROOT / "docs" / "screenshots"
TIMEOUT_MS = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

_WIDER = """() => [...document.querySelectorAll("body *")].filter((e) => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && box.right > window.innerWidth + 1;
}).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
"""Every element that sticks out past the viewport's right edge."""


@pytest.fixture
def token(live: LiveServer, admin: Admin) -> str:
    admin.user("dana", password="dashboard-pw")
    return live.login("dana", "dashboard-pw")


def _delegating_run(live: LiveServer, token: str, model_server: MockModelServer) -> str:
    play(
        model_server,
        {"text": "Listing.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Over to you.", "tool_calls": [
            {"name": "delegate", "args": {"objective": "list the files"}}]},
        {"text": "Child looks.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Nothing there."},
        {"text": "The worker found nothing."},
    )  # fmt: skip
    with live.client(token) as client:
        made = client.post("/runs", json={"objective": "look around", "model": MODEL,
                                          "auto_approve": True})  # fmt: skip
        assert made.status_code == 201, made.text
        run_id = made.json()["id"]
        wait_for_status(client, run_id, "completed")
    assert isinstance(run_id, str)
    return run_id


def _page(browser: Browser, live: LiveServer, token: str, viewport: dict[str, int]) -> Page:
    context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)  # type: ignore[arg-type]
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return page


def _shoot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    if os.environ.get("HELIX_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / name), full_page=True)


def _spend(live: LiveServer, token: str, **params: str) -> dict[str, Any]:
    with live.client(token) as client:
        answer = client.get("/spend", params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_trace_is_a_waterfall_with_the_child_nested(
    live: LiveServer, token: str, model_server: MockModelServer, browser: Browser,
    viewport: dict[str, int],
) -> None:  # fmt: skip
    run_id = _delegating_run(live, token, model_server)
    page = _page(browser, live, token, viewport)
    page.goto(f"{live.url}/#/runs/{run_id}")
    page.get_by_test_id("trace-link").click()  # reachable from the run's page
    waterfall = page.get_by_test_id("waterfall")
    spans = waterfall.get_by_test_id("span")
    expect(spans.first).to_have_attribute("data-kind", "run")
    kinds = spans.evaluate_all(
        "rows => rows.map((r) => [r.dataset.kind, r.dataset.depth, r.dataset.run])"
    )
    own = [k for k, _, run in kinds if run == run_id]
    # model calls and tool calls in the order they happened, turn by turn
    assert own[:6] == ["run", "turn", "model", "call", "gates", "tool"]
    assert own.count("turn") == 3
    assert own.count("model") == 3
    # the delegated child is nested under the delegate call, deeper than it
    child = [(k, int(d)) for k, d, run in kinds if run != run_id]
    assert child[0] == ("run", 3)
    assert ("tool", 6) in child
    assert all(depth >= 3 for _, depth in child)
    bars = waterfall.locator('[data-kind="model"] [data-testid="bar"]')
    expect(bars).to_have_count(5)  # the parent's three model calls and the child's two
    widths = bars.evaluate_all("bars => bars.map((b) => b.getBoundingClientRect().width)")
    assert all(w > 0 for w in widths)
    lefts = spans.locator('[data-testid="bar"]').evaluate_all(
        "bars => bars.map((b) => parseFloat(b.style.left))"
    )
    own_lefts = [left for left, (_, _, run) in zip(lefts, kinds, strict=True) if run == run_id]
    assert own_lefts == sorted(own_lefts)  # each starts no earlier than the one before
    # per-turn cost shown, and the run's own cost is what the API says
    with live.client(token) as client:
        traced = client.get(f"/runs/{run_id}/trace").json()
    first_turn = traced["children"][0]
    assert first_turn["cost_usd"] > 0
    turn_row = waterfall.locator('[data-kind="turn"]').first
    expect(turn_row).to_contain_text(f"${first_turn['cost_usd']:.4f}")
    expect(turn_row).to_contain_text(f"{first_turn['input_tokens']} in")
    expect(page.get_by_test_id("trace-cost")).to_have_text(f"${traced['cost_usd']:.4f}")
    assert page.evaluate(_WIDER) == []
    if viewport is DESKTOP:
        _shoot(page, "trace-desktop.png")
    else:
        _shoot(page, "trace-phone.png")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_spend_page_charts_what_get_spend_says_and_filters_change_it(
    live: LiveServer, token: str, model_server: MockModelServer, browser: Browser,
    viewport: dict[str, int],
) -> None:  # fmt: skip
    _delegating_run(live, token, model_server)
    expected = _spend(live, token, by="model", bucket="day")
    assert expected["total"]["cost_usd"] > 0
    page = _page(browser, live, token, viewport)
    page.goto(f"{live.url}/#/")
    page.get_by_test_id("nav-spend").click()
    table = page.get_by_test_id("spend-table")
    rows = table.get_by_test_id("spend-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-key", MODEL)
    expect(page.get_by_test_id("spend-total")).to_have_text(f"${expected['total']['cost_usd']:.4f}")
    bars = page.get_by_test_id("spend-bar")
    expect(bars).to_have_count(len(expected["series"]))
    drawn = sum(float(u) for u in bars.evaluate_all("bars => bars.map((b) => b.dataset.usd)"))
    assert drawn == pytest.approx(expected["total"]["cost_usd"], abs=1e-5)
    assert page.evaluate(_WIDER) == []

    # Group by run: a row per run (the parent and its child), each as GET /spend says.
    page.get_by_test_id("spend-by").select_option("run")
    by_run = _spend(live, token, by="run", bucket="day")
    expect(rows).to_have_count(2)
    for key, usage in by_run["groups"].items():
        row = table.locator(f'[data-key="{key}"]')
        expect(row.get_by_test_id("spend-usd")).to_have_text(f"${usage['cost_usd']:.4f}")
    expect(page.get_by_test_id("spend-bar")).to_have_count(len(by_run["series"]))
    assert page.evaluate(_WIDER) == []
    _shoot(page, "spend-desktop.png" if viewport is DESKTOP else "spend-phone.png")
    # Only the runs the system made (the child): one row, the child's cost.
    page.get_by_test_id("spend-person").select_option("system")
    by_system = _spend(live, token, by="run", person="system")
    assert len(by_system["groups"]) == 1
    expect(rows).to_have_count(1)
    expect(page.get_by_test_id("spend-total")).to_have_text(
        f"${by_system['total']['cost_usd']:.4f}"
    )
    page.get_by_test_id("spend-person").select_option("")
    expect(rows).to_have_count(2)
    # A model that spent nothing: no rows, no bars.
    page.goto(f"{live.url}/#/spend?by=model&model=openai:gpt-nothing")
    expect(page.get_by_test_id("spend-empty")).to_be_visible()
    expect(rows).to_have_count(0)
    expect(page.get_by_test_id("spend-total")).to_have_text("$0.0000")
    # Back to every model through the select.
    page.get_by_test_id("spend-model").select_option("")
    expect(rows).to_have_count(1)


def test_spend_and_trace_of_another_workspace_stay_hidden(
    live: LiveServer, token: str, admin: Admin, model_server: MockModelServer
) -> None:
    run_id = _delegating_run(live, token, model_server)
    admin.user("erin", password="other-pw-123")
    other = live.login("erin", "other-pw-123")
    with httpx.Client(
        base_url=f"{live.url}/api/v1", headers={"Authorization": f"Bearer {other}"}
    ) as c:
        assert c.get(f"/runs/{run_id}/trace").status_code == 404
        assert c.get("/spend", params={"workspace": "dana", "by": "run"}).json()["groups"] == {}
        assert c.get("/spend").json()["total"]["cost_usd"] == 0
