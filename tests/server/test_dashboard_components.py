"""Generative UI on the run page, in Chromium on a real server: each kind drawn, an options
card clicked (the choice goes back to the waiting call), hostile Markdown kept as text,
readable on a phone.

``HELIX_REFRESH_SCREENSHOTS=1`` also rewrites ``docs/screenshots/components-phone.png``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
REFRESH = os.environ.get("HELIX_REFRESH_SCREENSHOTS") == "1"
TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)

TABLE = {"title": "Timings", "columns": ["step", "ms"], "rows": [["boot", 12], ["query", 3.5]]}
CHART = {"kind": "bar", "labels": ["mon", "tue"], "series": [{"name": "runs", "points": [1, 4]}]}
HOSTILE = '# Notes\n\n**bold** <img src=x onerror="window.pwned=1"> [link](javascript:alert(1))'
CARD = {
    "question": "Which database?",
    "choices": [
        {"id": "sqlite", "label": "SQLite", "description": "embedded"},
        {"id": "postgres", "label": "PostgreSQL", "description": "a server"},
    ],
}
TOO_WIDE = """() => document.documentElement.scrollWidth > document.documentElement.clientWidth"""


def _show(component: str, props: Mapping[str, object]) -> dict[str, object]:
    return {"name": "show_component", "args": {"component": component, "props": props}}


def test_components_are_drawn_and_an_options_card_is_clicked(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("uma", password="dashboard-pw")
    token = live.login("uma", "dashboard-pw")
    play(
        model_server,
        {
            "text": "What I measured.",
            "tool_calls": [
                _show("table", TABLE),
                _show("chart", CHART),
                _show("markdown", {"text": HOSTILE}),
                _show("diff", {"path": "a.txt", "diff": "@@ -1 +1 @@\n-old\n+new\n"}),
            ],
        },
        {"text": "Which one?", "tool_calls": [{"name": "ask_choice", "args": CARD}]},
        {"text": "PostgreSQL it is."},
    )
    with live.client(token) as client:
        run_id = client.post("/runs", json={"objective": "ask", "model": MODEL}).json()["id"]

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    talk = page.get_by_test_id("conversation")

    table = talk.get_by_test_id("ui-table")
    expect(table.locator("th")).to_have_text(["step", "ms"])
    expect(table.locator("tbody tr").nth(1).locator("td")).to_have_text(["query", "3.5"])
    expect(talk.get_by_test_id("ui-chart").locator("rect")).to_have_count(2)
    markdown = talk.get_by_test_id("ui-markdown")
    expect(markdown.locator("strong")).to_have_text("bold")
    expect(markdown).to_contain_text('<img src=x onerror="window.pwned=1">')  # text, not markup
    assert markdown.locator("img").count() == 0
    assert markdown.locator("a").count() == 0  # only http(s) links become links
    assert page.evaluate("() => window.pwned === undefined")
    expect(talk.get_by_test_id("ui-diff").locator(".add")).to_have_text("+new\n")

    card = talk.get_by_test_id("ui-options")
    expect(card.get_by_test_id("ui-options-state")).to_contain_text("Waiting for your choice")
    assert not page.evaluate(TOO_WIDE)  # readable on a phone, nothing wider than it
    if REFRESH:
        page.screenshot(path=str(SCREENSHOTS / "components-phone.png"), full_page=True)
    card.locator("[data-choice=postgres]").click()
    expect(card.get_by_test_id("ui-options-state")).to_have_text("Chosen: PostgreSQL (by user:uma)")
    expect(card.locator("[data-choice=sqlite]")).to_be_disabled()

    with live.client(token) as client:
        wait_for_status(client, run_id, "completed")
        events = client.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    (chosen,) = [e["data"] for e in events if e["type"] == "ui.chosen"]
    assert (chosen["choice"], chosen["by"]) == ("postgres", "user:uma")
    results = [e["data"] for e in events if e["type"] == "tool.completed"]
    assert json.loads(results[-1]["output"])["choice"] == "postgres"
    context.close()


def test_an_unknown_plugin_kind_is_shown_as_json(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    """A component of a kind the page does not know: its props as JSON (imported log)."""
    admin.user("uma", password="dashboard-pw")
    token = live.login("uma", "dashboard-pw")
    created = {"objective": "o", "model": MODEL, "world": "w", "budget": None, "parent": None}
    lines = [
        {"run_id": "run_plugin0000000000000001", "seq": 0, "type": "run.created", "v": 2,
         "ts": "2026-12-01T00:00:00.000000Z", "turn": None, "actor": "user:uma", "data": created},
        {"run_id": "run_plugin0000000000000001", "seq": 1, "type": "ui.component", "v": 2,
         "ts": "2026-12-01T00:00:01.000000Z", "turn": 1, "actor": "agent",
         "data": {"component": "acme.gauge", "props": {"value": 7}, "id": "cmp_1"}},
    ]  # fmt: skip
    body = "\n".join(json.dumps(line) for line in lines) + "\n"
    with live.client(token) as client:
        answer = client.post(
            "/runs/import", content=body, headers={"Content-Type": "application/x-ndjson"}
        )
        assert answer.status_code == 201, answer.text
        run_id = answer.json()["id"]
    page = browser.new_page()
    page.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    page.goto(f"{live.url}/#/runs/{run_id}")
    shown = page.get_by_test_id("ui-json")
    expect(shown).to_contain_text('"value": 7')
    page.close()
