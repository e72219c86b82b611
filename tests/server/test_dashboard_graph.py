"""A task graph on its run's page, in a real browser: its tasks as nodes by level with the
edges between them, states followed live, a report approved from the page (and the
dependent then runs), a node's run and report one tap away; a list by level on a phone.

``HELIX_REFRESH_SCREENSHOTS=1`` also rewrites ``docs/screenshots/graph-desktop.png`` and
``docs/screenshots/graph-phone.png``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from helix.kernel.events import Event
from helix.kernel.session import replay
from helix.testing import MockModelServer

from .conftest import (
    DASHBOARD_TIMEOUT_MS,
    DESKTOP,
    PHONE,
    WIDER_THAN_SCREEN,
    LiveServer,
    make_config,
    open_dashboard,
    wait_for_status,
)

expect.set_options(timeout=DASHBOARD_TIMEOUT_MS)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
REFRESH = os.environ.get("HELIX_REFRESH_SCREENSHOTS") == "1"
PLAN: dict[str, Any] = {
    "model": "scripted:done.yaml",
    "graph": {
        "tasks": [
            {"id": "fetch", "objective": "fetch the data"},
            {"id": "left", "objective": "clean the left half", "depends_on": ["fetch"]},
            {"id": "right", "objective": "clean the right half", "inputs": {"data": "fetch"}},
            {
                "id": "join",
                "objective": "join both halves",
                "depends_on": ["left", "right"],
                "approve": True,
            },
            {"id": "ship", "objective": "ship it", "depends_on": ["join"]},
        ]
    },
}
EDGES = {("fetch", "left"), ("fetch", "right"), ("left", "join"), ("right", "join"),
         ("join", "ship")}  # fmt: skip


@pytest.fixture
def server(tmp_path: Path, model_server: MockModelServer) -> Iterator[LiveServer]:
    """A server whose tasks may play ``scripts/done.yaml``: one reply, the task's report."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "done.yaml").write_text("- text: the task is done\n")
    live = LiveServer(make_config(tmp_path, model_server, scripts=scripts)).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def owner(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as anonymous:
        answer = anonymous.post("/auth/link", json={"token": server.bootstrap_token})
    assert answer.status_code == 200, answer.text
    with server.client(answer.json()["token"]) as client:
        yield client


def _start(owner: httpx.Client) -> str:
    answer = owner.post("/runs", json={"objective": "the data report", "blueprint": PLAN})
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["id"]
    return run_id


def _run_page(
    browser: Browser, server: LiveServer, token: str, viewport: dict[str, int], run_id: str
) -> Page:
    page = open_dashboard(browser, server.url, token, viewport)
    expect(page.get_by_test_id("new-run")).to_be_visible()  # signed in, the first page drawn
    page.goto(f"{server.url}/#/runs/{run_id}")
    return page


FOLD = """async (events) => {
  const { GraphFold } = await import("/graph.js");
  const fold = new GraphFold();
  events.forEach((event) => fold.add(event));
  return Object.fromEntries([...fold.tasks].map(([id, t]) => [id, { status: t.status,
    attempts: t.attempts, run_id: t.runId, runs: t.runs, objective: t.objective,
    report: t.report, error: t.error, cost_usd: t.costUsd, budget_usd: t.budgetUsd,
    awaiting: fold.state(id) === "awaiting", passed: Boolean(fold.passed(id)) }]));
}"""
"""The page's own fold (static/graph.js) of a graph's events, task by task."""


def _folds_as_the_engine_does(page: Page, owner: httpx.Client, graph: str) -> None:
    """The page folds the graph's log into the tasks ``SessionState.tasks`` holds."""
    events = owner.get(f"/runs/{graph}/events", params={"limit": 1000}).json()["events"]
    state = replay([Event(**e) for e in events])
    plan = {t["id"]: t for t in (state.plan or {})["tasks"]}
    expected = {
        task_id: {
            "status": t.status, "attempts": t.attempts, "run_id": t.run_id, "runs": t.runs,
            "objective": t.objective, "report": t.report, "error": t.error,
            "cost_usd": t.cost_usd, "budget_usd": t.budget_usd,
            "awaiting": t.status == "completed" and any(
                p.call_id == f"task:{task_id}:{t.run_id}" for p in state.pending_approvals.values()
            ),
            "passed": t.status == "completed" and (
                not plan[task_id].get("approve")
                or f"task:{task_id}:{t.run_id}" in state.approved_calls
            ),
        }
        for task_id, t in state.tasks.items()
    }  # fmt: skip
    assert page.evaluate(FOLD, events) == expected


def _node(page: Page, task: str) -> Locator:
    return page.locator(f"[data-testid=graph-node][data-task={task}]")


def _left(page: Page, task: str) -> float:
    box = _node(page, task).bounding_box()
    assert box is not None
    return box["x"]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_graph_is_drawn_followed_live_and_its_gate_approved_from_the_page(
    server: LiveServer, owner: httpx.Client, browser: Browser, viewport: dict[str, int]
) -> None:
    graph = _start(owner)
    token = owner.headers["Authorization"].split()[1]
    page = _run_page(browser, server, token, viewport, graph)
    expect(page.get_by_test_id("graph")).to_be_visible()
    expect(page.get_by_test_id("graph-node")).to_have_count(5)
    if viewport is DESKTOP:  # columns by level, an edge per dependency (inputs' too)
        edges = page.get_by_test_id("graph-edge")
        expect(edges).to_have_count(len(EDGES))
        drawn = {(e.get_attribute("data-from"), e.get_attribute("data-to")) for e in edges.all()}
        assert drawn == EDGES
        x = {t: _left(page, t) for t in ("fetch", "left", "right", "join")}
        assert x["fetch"] < x["left"] == x["right"] < x["join"]
        expect(page.get_by_test_id("graph-level")).to_have_count(0)
    else:  # a list by level, nothing wider than the phone
        levels = page.get_by_test_id("graph-level")
        expect(levels).to_have_count(4)
        expect(levels.nth(1).get_by_test_id("graph-node")).to_have_count(2)
        expect(levels.nth(2)).to_contain_text("after left, right")
        expect(page.get_by_test_id("graph-edge")).to_have_count(0)

    # the graph goes on while the page is open: join's report waits for a person
    join, ship = _node(page, "join"), _node(page, "ship")
    expect(join).to_have_attribute("data-state", "awaiting")
    expect(join).to_contain_text("awaiting approval")
    for task in ("fetch", "left", "right"):
        expect(_node(page, task)).to_have_attribute("data-state", "completed")
    expect(ship).to_have_attribute("data-state", "pending")
    expect(page.get_by_test_id("graph-tally")).to_have_text(
        "3 of 5 completed · 1 awaiting approval"
    )
    detail = page.get_by_test_id("task-detail")  # what needs a person is shown first
    expect(detail).to_contain_text("join both halves")
    expect(detail.get_by_test_id("task-report")).to_have_text("the task is done")
    assert page.evaluate(WIDER_THAN_SCREEN) == []
    expect(detail).not_to_contain_text("null")
    if REFRESH:
        name = "graph-desktop.png" if viewport is DESKTOP else "graph-phone.png"
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)

    detail.get_by_test_id("task-approval").get_by_role("button", name="Approve").click()
    expect(ship).to_have_attribute("data-state", "completed")  # live, no reload
    expect(join).to_have_attribute("data-state", "completed")
    expect(page.get_by_test_id("graph-tally")).to_have_text("5 of 5 completed")
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    expect(detail).to_contain_text("Approved by")
    _folds_as_the_engine_does(page, owner, graph)  # the gate passed
    decided = [
        e for e in owner.get(f"/runs/{graph}/events").json()["events"]
        if e["type"] == "approval.decided"
    ]  # fmt: skip
    assert [(e["data"]["decision"], e["data"]["by"].startswith("user:")) for e in decided] == [
        ("allow", True)
    ]

    # a tap on a node: its report, and its run one tap further
    _node(page, "ship").click()
    expect(detail).to_contain_text("ship it")
    expect(detail.get_by_test_id("task-report")).to_have_text("the task is done")
    child = owner.get(f"/runs/{graph}").json()
    assert child["status"] == "completed"
    detail.get_by_test_id("task-run").click()
    expect(page).to_have_url(f"{server.url}/#/runs/run_" + page.url.rsplit("run_", 1)[1])
    expect(page.get_by_test_id("graph")).to_be_hidden()  # a task's run is not a graph
    expect(page.get_by_role("heading", level=1)).to_contain_text("ship it")
    page.context.close()


def test_a_failed_task_shows_its_error_and_attempts(
    server: LiveServer, owner: httpx.Client, browser: Browser
) -> None:
    plan = {
        "model": "scripted:done.yaml",
        "graph": {
            "tasks": [
                {"id": "count", "objective": "count", "report": {"type": "object"}, "retries": 1},
                {"id": "after", "objective": "use it", "inputs": {"n": "count"}},
            ]
        },
    }
    answer = owner.post("/runs", json={"objective": "count things", "blueprint": plan})
    assert answer.status_code == 201, answer.text
    graph = answer.json()["id"]
    wait_for_status(owner, graph, "paused")  # both attempts replied text, not JSON
    token = owner.headers["Authorization"].split()[1]
    page = _run_page(browser, server, token, DESKTOP, graph)
    count = _node(page, "count")
    expect(count).to_have_attribute("data-state", "failed")
    expect(count).to_contain_text("attempt 2")
    expect(_node(page, "after")).to_have_attribute("data-state", "pending")
    count.click()
    detail = page.get_by_test_id("task-detail")
    expect(detail.get_by_test_id("task-error")).to_contain_text("not JSON")
    expect(detail).to_contain_text("2 attempts")
    expect(detail.get_by_test_id("task-approval")).to_have_count(0)
    _folds_as_the_engine_does(page, owner, graph)
    page.context.close()


def test_the_page_folds_retries_denials_and_a_persons_retry_as_the_engine_does(
    server: LiveServer, owner: httpx.Client, browser: Browser
) -> None:
    plan = {"tasks": [{"id": "a", "objective": "a", "approve": True, "retries": 1},
                      {"id": "b", "objective": "b", "depends_on": ["a"]}]}  # fmt: skip
    steps: list[tuple[str, dict[str, Any]]] = [
        ("graph.planned", {"plan": plan}),
        ("task.started", {"task": "a", "run_id": "r1", "attempt": 1, "objective": "a",
                          "budget_usd": 0.5}),
        ("task.failed", {"task": "a", "run_id": "r1", "attempt": 1, "error": "boom",
                         "retrying": True, "cost_usd": 0.25}),
        ("task.started", {"task": "a", "run_id": "r2", "attempt": 2, "objective": "a"}),
        ("task.completed", {"task": "a", "run_id": "r2", "report": {"rows": 3}, "cost_usd": 0.5}),
        ("approval.requested", {"request_id": "q1", "call_id": "task:a:r2", "name": "task",
                                "expires_at": None,
                                "args": {"task": "a", "run_id": "r2", "report": {"rows": 3}}}),
        ("approval.decided", {"request_id": "q1", "decision": "deny", "by": "user:ann"}),
        ("task.failed", {"task": "a", "run_id": "r2", "attempt": 2, "error": "denied",
                         "retrying": False}),
        ("task.retried", {"task": "a", "by": "user:ann"}),
        ("task.started", {"task": "a", "run_id": "r3", "attempt": 1, "objective": "a"}),
        ("task.completed", {"task": "a", "run_id": "r3", "report": "fine"}),
        ("approval.requested", {"request_id": "q2", "call_id": "task:a:r3", "name": "task",
                                "expires_at": None,
                                "args": {"task": "a", "run_id": "r3", "report": "fine"}}),
    ]  # fmt: skip
    events: list[dict[str, Any]] = [
        {"run_id": "g", "seq": seq, "type": kind, "v": 1, "ts": "2026-12-01T00:00:00+00:00",
         "turn": None, "actor": "system", "data": data}
        for seq, (kind, data) in enumerate(steps, start=1)
    ]  # fmt: skip
    page = browser.new_page()
    page.goto(server.url + "/")
    folded = page.evaluate(FOLD, events)
    state = replay([Event(**e) for e in events])
    for task_id, task in state.tasks.items():
        mine = folded[task_id]
        assert (mine["status"], mine["attempts"], mine["run_id"], mine["runs"]) == (
            task.status,
            task.attempts,
            task.run_id,
            task.runs,
        )
        assert (mine["report"], mine["error"], mine["cost_usd"], mine["budget_usd"]) == (
            task.report,
            task.error,
            task.cost_usd,
            task.budget_usd,
        )
    assert folded["a"]["awaiting"] is True  # the third run's report waits for a person
    assert folded["a"]["runs"] == ["r1", "r2", "r3"]
    assert folded["a"]["cost_usd"] == 0.75
    assert folded["b"]["status"] == "pending"
    page.close()
