"""The engineering pack's components on the run page, in Chromium on a real server: test
results and a delivered diff drawn (not shown as JSON), hostile text kept as text,
readable on a phone."""

from __future__ import annotations

import json
from collections.abc import Mapping

from playwright.sync_api import Browser, expect

from .conftest import MODEL, Admin, LiveServer

TIMEOUT_MS = 20_000
TOO_WIDE = """() => document.documentElement.scrollWidth > document.documentElement.clientWidth"""
RUN = "run_engineering00000000001"
RESULTS = {
    "title": "Tests: failing",
    "passed": 1,
    "failed": 1,
    "errors": 0,
    "skipped": 0,
    "green": False,
    "source": "junit",
    "duration_s": 0.1,
    "failures": [
        {
            "test_id": "test_calc.py::test_add",
            "outcome": "failed",
            "message": 'assert -1 == 5 <img src=x onerror="window.pwned=1">',
            "file": "test_calc.py",
            "line": 5,
            "traceback": "E   assert -1 == 5\n" + "x" * 400,
        }
    ],
    "notes": [],
}
DIFF = {
    "title": "Delivered helix/0123456789ab",
    "branch": "helix/0123456789ab",
    "commit": "a" * 40,
    "remote": "origin",
    "files": [{"path": "calc.py", "added": 1, "removed": 1}],
    "diff": "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
    "+    return a + b\n",
    "summary": "Review summary\n\nTests after: green",
}


def _line(seq: int, kind: str, data: Mapping[str, object]) -> str:
    ts = f"2026-12-01T00:00:0{seq}.000000Z"
    actor = "user:uma" if seq == 0 else "agent"
    turn = None if seq == 0 else 1
    return json.dumps(
        {"run_id": RUN, "seq": seq, "type": kind, "v": 2, "ts": ts, "turn": turn,
         "actor": actor, "data": data}
    )  # fmt: skip


def test_test_results_and_diff_are_drawn_on_a_phone(
    live: LiveServer, admin: Admin, browser: Browser
) -> None:
    admin.user("uma", password="dashboard-pw")
    token = live.login("uma", "dashboard-pw")
    created = {"objective": "o", "model": MODEL, "world": "w", "budget": None, "parent": None}
    results = {"component": "engineering.test_results", "props": RESULTS, "id": "cmp_1"}
    diff = {"component": "engineering.diff", "props": DIFF, "id": "cmp_2"}
    lines = [
        _line(0, "run.created", created),
        _line(1, "ui.component", results),
        _line(2, "ui.component", diff),
    ]
    body = "\n".join(lines) + "\n"
    with live.client(token) as client:
        answer = client.post(
            "/runs/import", content=body, headers={"Content-Type": "application/x-ndjson"}
        )
        assert answer.status_code == 201, answer.text
        run_id = answer.json()["id"]

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    tests = page.get_by_test_id("eng-tests")
    expect(tests.get_by_test_id("eng-verdict")).to_contain_text("FAIL")
    expect(tests.get_by_test_id("eng-passed")).to_have_text("1 passed")
    expect(tests.get_by_test_id("eng-failed")).to_have_text("1 failed")
    failure = tests.get_by_test_id("eng-failure")
    expect(failure.locator("summary")).to_contain_text("test_calc.py::test_add")
    expect(failure.locator("summary")).to_contain_text("test_calc.py:5")
    failure.locator("summary").click()
    expect(failure).to_contain_text('<img src=x onerror="window.pwned=1">')  # text, not markup
    assert failure.locator("img").count() == 0
    files = page.get_by_test_id("eng-files")
    expect(files.locator("li")).to_have_text(["calc.py +1 -1"])
    expect(page.locator(".eng-branch")).to_contain_text("helix/0123456789ab @ aaaaaaaaaaaa")
    expect(page.get_by_test_id("eng-diff").locator(".add")).to_have_text("+    return a + b\n")
    assert page.get_by_test_id("ui-json").count() == 0
    assert page.evaluate("() => window.pwned === undefined")
    assert not page.evaluate(TOO_WIDE)
    context.close()
