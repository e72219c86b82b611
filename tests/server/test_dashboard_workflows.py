"""The workflow editor in Chromium: the canvas adds a node and an edge and saves a
version; the chat box's agent run (its model calls ``edit_workflow``) changes the same
workflow; both versions round-trip losslessly. On a phone, the lists are the editor."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from helix.testing import MockModelServer
from helix.workflows import dump, from_canvas, from_data, load_text, to_canvas

from .conftest import (
    DESKTOP,
    MODEL,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    open_dashboard,
    play,
)

FLOW = f"""
name: release
description: Test and ship a change
model: {MODEL}
steps:
  - {{id: tests, objective: Run the tests}}
  - {{id: ship, objective: Tag the release}}
edges:
  - {{from: tests, to: ship}}
"""


def _member(live: LiveServer, admin: Admin) -> tuple[str, httpx.Client]:
    admin.user("ann", password="dashboard-pw", workspace="default", role="member")
    token = live.login("ann", "dashboard-pw")
    client = live.client(token)
    saved = client.put("/workflows/release", json={"text": FLOW, "base_version": 0, "how": "file"})
    assert saved.status_code == 200, saved.text
    return token, client


def _lossless(client: httpx.Client, version: int) -> dict[str, Any]:
    """The version read three ways (JSON, YAML, canvas) is one definition."""
    got: dict[str, Any] = client.get("/workflows/release", params={"version": version}).json()
    canvas = client.get("/workflows/release/canvas", params={"version": version}).json()
    workflow = from_data(got["workflow"])
    assert from_canvas(canvas["canvas"]) == workflow
    assert to_canvas(workflow) == canvas["canvas"]
    assert load_text(canvas["text"]) == workflow
    assert dump(workflow) == canvas["text"]
    return got


def _open_release(page: Page) -> None:
    """The workflow's page, once the first page (the runs) has been drawn."""
    expect(page.get_by_test_id("runs")).to_be_visible()
    page.get_by_test_id("nav-workflows").click()
    page.get_by_test_id("workflows").get_by_text("release").click()


def _drag(page: Page, step: str, dx: int, dy: int) -> None:
    box = page.locator(f"[data-testid=wf-node][data-id={step}]").bounding_box()
    assert box is not None
    x, y = box["x"] + 40, box["y"] + 30
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx / 2, y + dy / 2)
    page.mouse.move(x + dx, y + dy)
    page.mouse.up()


def test_the_canvas_adds_a_node_and_an_edge_then_the_chat_changes_the_same_workflow(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    token, client = _member(live, admin)
    page = open_dashboard(browser, live.url, token, DESKTOP)
    _open_release(page)
    expect(page.get_by_test_id("wf-node")).to_have_count(2)
    expect(page.get_by_test_id("wf-version")).to_have_text("v1")

    # the canvas: add a node (the form), connect it by clicking two nodes, drag one, save
    add = page.get_by_test_id("wf-add")
    add.locator("input[name=id]").fill("docs")
    add.locator("textarea[name=objective]").fill("Write the release notes")
    page.get_by_test_id("wf-add-step").click()
    expect(page.get_by_test_id("wf-node")).to_have_count(3)
    page.locator("[data-testid=wf-node][data-id=tests] [data-testid=wf-link]").click()
    page.locator("[data-testid=wf-node][data-id=docs]").click()
    expect(page.locator("line[data-edge='tests->docs']")).to_have_count(1)
    _drag(page, "ship", 30, 140)
    page.get_by_test_id("wf-save").click()
    expect(page.get_by_test_id("wf-version")).to_have_text("v2")
    expect(page.get_by_test_id("workflow-notice")).to_contain_text("added step docs")

    second = _lossless(client, 2)
    assert (second["how"], second["by"]) == ("canvas", "user:ann")
    definition = from_data(second["workflow"])
    assert definition.step("docs").objective == "Write the release notes"
    assert definition.after("tests") == ["docs", "ship"]
    assert definition.layout["ship"].y > definition.layout["docs"].y - 200  # it was moved
    assert "ship" in definition.layout

    # the chat box: its run's model calls edit_workflow on the version the canvas saved
    review = {"id": "review", "objective": "Review the diff"}
    operations = [{"op": "add_step", "after": "tests", "step": review}]
    args = {"workflow": "release", "operations": operations, "base_version": 2}
    call = {"name": "edit_workflow", "args": args}
    play(model_server, {"text": "", "tool_calls": [call]}, {"text": "Added a review step."})
    chat = page.get_by_test_id("wf-chat")
    chat.locator("textarea").fill("add a review step after tests")
    chat.get_by_role("button", name="Ask").click()
    expect(page.get_by_test_id("wf-version")).to_have_text("v3")
    expect(page.locator("[data-testid=wf-node][data-id=review]")).to_be_visible()
    expect(page.get_by_test_id("workflow-notice")).to_contain_text("Edited by the chat")
    expect(page.get_by_test_id("wf-history").locator("li").first).to_contain_text("chat · run:")

    third = _lossless(client, 3)
    assert third["how"] == "chat"
    edited = from_data(third["workflow"])
    assert edited.after("tests") == ["review"]
    assert edited.after("review") == ["docs", "ship"]
    assert edited.step("docs") == definition.step("docs")  # the canvas's edit kept
    assert edited.layout == definition.layout
    page.context.close()
    client.close()


def test_a_stale_canvas_save_says_so_and_saves_nothing(
    live: LiveServer, admin: Admin, browser: Browser
) -> None:
    token, client = _member(live, admin)
    page = open_dashboard(browser, live.url, token, DESKTOP)
    _open_release(page)
    expect(page.get_by_test_id("wf-node")).to_have_count(2)
    move = {"op": "move", "step": "ship", "x": 5, "y": 5}
    moved = client.post("/workflows/release/edit", json={"operations": [move]})
    assert moved.status_code == 200, moved.text
    _drag(page, "tests", 40, 40)
    page.get_by_test_id("wf-save").click()
    expect(page.get_by_test_id("workflow-error")).to_contain_text("version 2 is the latest")
    assert client.get("/workflows/release").json()["version"] == 2
    page.context.close()
    client.close()


@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"])
def test_on_a_phone_the_lists_edit_the_workflow(
    live: LiveServer, admin: Admin, browser: Browser, viewport: dict[str, int]
) -> None:
    token, client = _member(live, admin)
    page = open_dashboard(browser, live.url, token, viewport)
    _open_release(page)
    expect(page.get_by_test_id("wf-step")).to_have_count(2)
    expect(page.get_by_test_id("wf-board")).to_be_hidden()
    expect(page.get_by_test_id("wf-yaml")).to_contain_text("objective: Run the tests")
    assert page.evaluate(WIDER_THAN_SCREEN) == []

    add = page.get_by_test_id("wf-add")
    add.locator("input[name=id]").fill("lint")
    add.locator("select[name=after]").select_option("tests")
    add.locator("textarea[name=objective]").fill("Lint the code")
    page.get_by_test_id("wf-add-step").click()
    lint = page.locator("[data-testid=wf-step][data-id=lint]")
    lint.get_by_test_id("wf-connect-to").select_option("ship")
    form = lint.get_by_test_id("wf-step-form")  # a new step opens with its fields
    expect(form).to_be_visible()
    form.locator("input[name=retries]").fill("2")
    form.get_by_test_id("wf-apply").click()
    assert page.evaluate(WIDER_THAN_SCREEN) == []
    page.get_by_test_id("wf-save").click()
    expect(page.get_by_test_id("wf-version")).to_have_text("v2")
    saved = from_data(client.get("/workflows/release").json()["workflow"])
    assert saved.before("lint") == ["tests"]
    assert saved.after("lint") == ["ship"]
    assert saved.step("lint").retries == 2
    page.context.close()
    client.close()
