"""Runs as work in a real browser: a folder and a blueprint for a new run, a fork with a
message, two branches compared and one kept, a finished run stepped through, and the ways
in after a sign-in link fails; at desktop and phone sizes."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

TIMEOUT_MS = 20_000
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


def _context(browser: Browser, size: str, token: str | None = None) -> BrowserContext:
    width, height = SIZES[size]
    context = browser.new_context(
        viewport={"width": width, "height": height}, is_mobile=size == "phone"
    )
    context.set_default_timeout(TIMEOUT_MS)
    if token is not None:
        context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    return context


def _fits(page: Page) -> None:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"the page is {wide}px wider than the viewport"


def _events(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/runs/{run_id}/events", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


@pytest.mark.parametrize("size", SIZES)
def test_a_run_started_in_a_chosen_folder_reads_its_files_on_turn_1(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, browser: Browser,
    size: str,
) -> None:  # fmt: skip
    folder = live.config.worlds / "default" / "project"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("the plan: ship it\n")
    (live.config.worlds / "default" / "other").mkdir()
    play(
        model_server,
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
        {"text": "It says to ship it."},
    )
    token = owner.headers["Authorization"].split()[1]
    page = _context(browser, size, token).new_page()
    page.goto(live.url + "/#/")
    form = page.get_by_test_id("new-run")
    expect(form.get_by_label("Folder", exact=True)).to_contain_text("Folder project")
    form.get_by_placeholder("What should the agent do?").fill("read the notes")
    form.get_by_placeholder("Model, e.g. openai:gpt-4.1").fill(MODEL)
    form.get_by_label("Folder", exact=True).select_option("project")
    form.get_by_text("Approve every tool call automatically").click()
    _fits(page)
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"#/runs/run_"))
    run_id = page.url.rsplit("/", 1)[1]
    wait_for_status(owner, run_id, "completed")
    events = _events(owner, run_id)
    read = next(e for e in events if e["type"] == "tool.completed")
    assert read["turn"] == 1
    assert read["data"]["ok"] is True  # turn 1's read_file found the file
    assert "the plan: ship it" in read["data"]["output"]
    assert owner.get(f"/runs/{run_id}").json()["world"] == str(folder)
    _fits(page)


@pytest.mark.parametrize("size", SIZES)
def test_a_new_named_folder_and_a_stored_blueprint(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, browser: Browser,
    size: str,
) -> None:  # fmt: skip
    blueprint = {"model": MODEL, "tools": ["list_files", "read_file"], "system": "Look only."}
    assert owner.put("/workspaces/default/blueprints/looker", json=blueprint).status_code == 200
    play(model_server, {"text": "Nothing to see."})
    token = owner.headers["Authorization"].split()[1]
    page = _context(browser, size, token).new_page()
    page.goto(live.url + "/#/")
    form = page.get_by_test_id("new-run")
    form.get_by_placeholder("What should the agent do?").fill("look")
    form.get_by_label("Blueprint").select_option("looker")  # its model: none needed here
    form.get_by_label("Folder", exact=True).select_option("+")
    form.get_by_label("New folder name").fill("../escape")
    form.get_by_role("button", name="Start").click()
    expect(page).not_to_have_url(re.compile(r"#/runs/"))  # the browser refuses the name
    form.get_by_label("New folder name").fill("fresh")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"#/runs/run_"))
    run = wait_for_status(owner, page.url.rsplit("/", 1)[1], "completed")
    assert run["blueprint"] == "looker"
    assert run["world"] == str(live.config.worlds / "default" / "fresh")
    assert owner.get("/workspaces/default/worlds").json() == {"worlds": ["fresh"]}
    _fits(page)


@pytest.mark.parametrize("size", SIZES)
def test_fork_with_a_message_compare_and_keep(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, browser: Browser,
    size: str,
) -> None:  # fmt: skip
    write = {"name": "write_file", "args": {"path": "fork.txt", "content": "from the fork\n"}}
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Finished."},
        {"text": "Writing.", "tool_calls": [write]},
        {"text": "Finished the fork."},
    )
    body = {"objective": "look around", "model": MODEL, "auto_approve": True}
    parent = owner.post("/runs", json=body).json()["id"]
    wait_for_status(owner, parent, "completed")
    token = owner.headers["Authorization"].split()[1]
    page = _context(browser, size, token).new_page()
    page.goto(f"{live.url}/#/runs/{parent}")
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    events_tab = page.get_by_test_id("tab-events")  # where the run page keeps its events
    if events_tab.count():
        events_tab.click()
    page.get_by_test_id("fork").first.click()
    dialog = page.get_by_test_id("fork-dialog")
    expect(dialog).to_be_visible()
    _fits(page)
    dialog.get_by_label("Fork from turn").select_option("1")
    dialog.get_by_label("Message for the fork").fill("now write fork.txt")
    dialog.get_by_role("button", name="Fork").click()
    expect(page).not_to_have_url(re.compile(parent))
    fork = page.url.rsplit("/", 1)[1]
    wait_for_status(owner, fork, "completed")  # the comparison reads both outcomes once
    expect(page.get_by_test_id("compare-link")).to_be_visible()  # the fork's own page
    forked = next(e for e in _events(owner, fork) if e["type"] == "run.forked")
    assert forked["data"]["message"] == "now write fork.txt"
    assert forked["data"]["turn"] == 1

    page.get_by_test_id("compare-link").click()
    expect(page).to_have_url(re.compile(rf"#/compare/{parent}/{fork}"))
    branches = page.get_by_test_id("branch")
    expect(branches).to_have_count(2)
    expect(branches.nth(0).get_by_test_id("outcome")).to_have_text("Finished.")
    expect(branches.nth(1).get_by_test_id("outcome")).to_have_text("Finished the fork.")
    expect(page.get_by_test_id("compare-diff")).to_contain_text("+from the fork")
    _fits(page)
    page.once("dialog", lambda asked: asked.dismiss())  # cancelled: nothing is kept
    branches.nth(1).get_by_role("button", name="Keep this branch").click()
    expect(page.get_by_test_id("kept")).to_be_empty()
    page.once("dialog", lambda asked: asked.accept())
    branches.nth(1).get_by_role("button", name="Keep this branch").click()
    expect(page.get_by_test_id("kept")).to_contain_text(f"Kept {fork}")
    page.goto(f"{live.url}/#/runs/{parent}")  # the parent's page leads to its forks too
    page.get_by_test_id("compare-fork").filter(has_text=fork).click()
    expect(page).to_have_url(re.compile(rf"#/compare/{parent}/{fork}"))
    expect(page.get_by_test_id("branch")).to_have_count(2)
    kept = owner.get(f"/runs/{parent}/files/fork.txt")
    assert kept.status_code == 200
    assert kept.text == "from the fork\n"


@pytest.mark.parametrize("size", SIZES)
def test_the_step_player_moves_turn_by_turn_with_the_world_of_each(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer, browser: Browser,
    size: str,
) -> None:  # fmt: skip
    first = {"name": "write_file", "args": {"path": "a.txt", "content": "one\n"}}
    second = {"name": "write_file", "args": {"path": "b.txt", "content": "two\n"}}
    play(
        model_server,
        {"text": "Writing a.", "tool_calls": [first]},
        {"text": "Writing b.", "tool_calls": [second]},
        {"text": "Both written."},
    )
    body = {"objective": "write two files", "model": MODEL, "auto_approve": True}
    run_id = owner.post("/runs", json=body).json()["id"]
    wait_for_status(owner, run_id, "completed")
    token = owner.headers["Authorization"].split()[1]
    page = _context(browser, size, token).new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    page.get_by_test_id("player-link").click()
    expect(page.get_by_test_id("player-turn")).to_have_text("Turn 1 of 3")
    expect(page.get_by_test_id("player-events")).to_contain_text("Writing a.")
    expect(page.get_by_test_id("player-files")).to_have_text(re.compile(r"^a\.txt 4 B$"))
    expect(page.get_by_test_id("player-diff")).to_contain_text("+one")
    expect(page.get_by_role("button", name="Previous turn")).to_be_disabled()
    _fits(page)
    page.get_by_role("button", name="Next turn").click()
    expect(page.get_by_test_id("player-turn")).to_have_text("Turn 2 of 3")
    expect(page.get_by_test_id("player-events")).to_contain_text("Writing b.")
    expect(page.get_by_test_id("player-files")).to_contain_text("b.txt")
    expect(page.get_by_test_id("player-diff")).to_contain_text("+two")
    expect(page.get_by_test_id("player-diff")).not_to_contain_text("+one")
    page.get_by_role("button", name="Next turn").click()
    expect(page.get_by_test_id("player-turn")).to_have_text("Turn 3 of 3")
    expect(page.get_by_test_id("player-events")).to_contain_text("Both written.")
    expect(page.get_by_test_id("player-diff")).to_have_text("No file changed in this turn.")
    expect(page.get_by_role("button", name="Next turn")).to_be_disabled()
    _fits(page)


@pytest.mark.parametrize("size", SIZES)
def test_a_used_link_leads_in_and_an_admin_sets_a_password(
    live: LiveServer, admin: Admin, browser: Browser, size: str
) -> None:
    link = f"{live.url}/#login={live.bootstrap_token}"
    page = _context(browser, size).new_page()
    page.goto(link)  # the first use: signed in as the admin, who has no password
    card = page.get_by_test_id("set-password")
    expect(card).to_be_visible()
    expect(page.get_by_test_id("new-run")).to_be_visible()
    _fits(page)
    card.get_by_label("New password", exact=True).fill("short")
    card.get_by_label("New password again").fill("short")
    card.get_by_role("button", name="Set password").click()  # the browser refuses it
    expect(page.get_by_test_id("password-set")).to_have_count(0)
    card.get_by_label("New password", exact=True).fill("admin-password-1")
    card.get_by_label("New password again").fill("admin-password-2")
    card.get_by_role("button", name="Set password").click()
    expect(page.get_by_test_id("password-error")).to_have_text("the two passwords differ")
    card.get_by_label("New password again").fill("admin-password-1")
    card.get_by_role("button", name="Set password").click()
    expect(page.get_by_test_id("password-set")).to_have_text("Your password is set.")
    page.reload()  # the new session's token was kept: still signed in, no card now
    expect(page.get_by_test_id("new-run")).to_be_visible()
    expect(page.get_by_test_id("set-password")).to_have_count(0)
    assert live.login("admin", "admin-password-1")

    other = _context(browser, size).new_page()
    other.goto(link)  # the same link again: used
    failed = other.get_by_test_id("link-failed")
    expect(failed).to_contain_text("this login link was used already or has expired")
    expect(failed).to_contain_text("helix tokens create")
    expect(other.get_by_test_id("login")).to_be_visible()
    _fits(other)
    failed.get_by_label("API token").fill("not-a-token")
    failed.get_by_role("button", name="Sign in with a token").click()
    expect(other.get_by_test_id("token-error")).to_contain_text("not valid")
    failed.get_by_label("API token").fill(admin.api_token("admin"))
    failed.get_by_role("button", name="Sign in with a token").click()
    expect(other.get_by_test_id("new-run")).to_be_visible()
    expect(other.locator("#who")).to_have_text("admin")
    expect(other.get_by_test_id("set-password")).to_have_count(0)  # a password is set


def test_a_used_link_then_a_password_sign_in(
    live: LiveServer, admin: Admin, browser: Browser
) -> None:
    admin.user("eli", password="eli-password")
    page = _context(browser, "phone").new_page()
    page.goto(f"{live.url}/#login=no-such-token")
    expect(page.get_by_test_id("link-failed")).to_be_visible()
    page.get_by_placeholder("Username").fill("eli")
    page.get_by_placeholder("Password").fill("eli-password")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_test_id("new-run")).to_be_visible()
    expect(page.get_by_test_id("set-password")).to_have_count(0)
