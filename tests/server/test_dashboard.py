"""The dashboard in a real browser (Debian's Chromium, headless), against a real server."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"
TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)


_CSP_WATCH = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
"""
"""Collects what the page's Content-Security-Policy blocked (nothing, if it fits)."""


def _sign_in(page: Page, live: LiveServer, username: str, password: str) -> None:
    page.goto(live.url + "/")
    page.get_by_placeholder("Username").fill(username)
    page.get_by_placeholder("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("new-run")).to_be_visible(timeout=TIMEOUT_MS)


def test_a_run_from_the_browser_approved_steered_and_finished(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("dana", password="dashboard-pw")
    play(
        model_server,
        {
            "text": "I will build it.",
            "tool_calls": [{"name": "run_command", "args": {"command": "touch built.txt"}}],
            "delay_s": 0.5,
        },
        {"text": "Checking.", "tool_calls": [{"name": "list_files", "args": {}}], "held": True},
        {"text": "All done: built and checked."},
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(_CSP_WATCH)
    _sign_in(page, live, "dana", "dashboard-pw")

    form = page.get_by_test_id("new-run")
    form.get_by_placeholder("What should the agent do?").fill("build the project")
    form.get_by_placeholder("Model, e.g. openai:gpt-4.1").fill(MODEL)
    form.get_by_placeholder("Budget USD").fill("2")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"#/runs/run_"))
    run_id = page.url.rsplit("/", 1)[1]

    talk = page.get_by_test_id("conversation")
    expect(talk.get_by_test_id("agent-said").first).to_contain_text("I will build it.")  # live
    approval = talk.get_by_test_id("approval")
    expect(approval.get_by_text("Approve run_command?")).to_be_visible()
    expect(approval.get_by_test_id("approval-command")).to_have_text("touch built.txt")
    approval.get_by_role("button", name="Allow").click()
    expect(talk.get_by_test_id("decided").first).to_contain_text("Allowed by user:dana")
    expect(page.get_by_role("button", name="Allow")).to_have_count(0)

    steer = page.get_by_test_id("steer")
    steer.get_by_placeholder("Tell the agent something…").fill("keep it short")
    steer.get_by_role("button", name="Send").click()
    expect(talk.get_by_test_id("person-said")).to_contain_text("keep it short")
    model_server.release()  # the steer came while the run still ran

    expect(page.get_by_test_id("status").first).to_have_text("completed")
    expect(page.get_by_test_id("outcome")).to_contain_text("All done")  # the answer, on top
    expect(page.get_by_test_id("cost")).to_contain_text("of $2.0000")
    expect(talk.get_by_test_id("gates").first).to_be_visible()
    meter = page.get_by_test_id("meter").bounding_box()
    assert meter is not None
    assert meter["height"] >= 6  # was 0 px tall
    assert page.locator(".meter span").evaluate("e => e.style.width").endswith("%")
    assert page.evaluate("window.cspViolations") == []  # the policy lets the whole app work
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "run-desktop.png"), full_page=True)

    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    token = page.evaluate("localStorage.getItem('helix.token')")
    phone.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    small = phone.new_page()
    small.set_default_timeout(TIMEOUT_MS)
    small.goto(f"{live.url}/#/runs/{run_id}")
    expect(small.get_by_test_id("status").first).to_have_text("completed")
    expect(small.get_by_test_id("outcome")).to_contain_text("All done")
    small.get_by_test_id("tab-events").click()  # the raw log, for debugging
    expect(small.get_by_test_id("timeline").locator('[data-type="run.completed"]')).to_be_visible()
    width = small.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing forces sideways scrolling on a phone
    small.screenshot(path=str(ARTIFACTS / "run-phone.png"), full_page=True)
    assert (ARTIFACTS / "run-phone.png").stat().st_size > 0
    phone.close()


def test_fork_from_a_turn_and_the_runs_list(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("fay", password="dashboard-pw")
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Finished."},
        {"text": "Finished the fork."},
    )
    page = browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    _sign_in(page, live, "fay", "dashboard-pw")
    form = page.get_by_test_id("new-run")
    form.get_by_placeholder("What should the agent do?").fill("look around")
    form.get_by_placeholder("Model, e.g. openai:gpt-4.1").fill(MODEL)
    form.get_by_role("button", name="Start").click()
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    parent_url = page.url
    page.get_by_test_id("tab-events").click()
    page.get_by_test_id("fork").first.click()
    page.get_by_test_id("fork-dialog").get_by_role("button", name="Fork").click()
    expect(page).not_to_have_url(parent_url)
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    expect(page.get_by_role("link", name="parent")).to_be_visible()

    page.goto(live.url + "/#/")
    runs = page.get_by_test_id("runs")
    expect(runs.locator("li")).to_have_count(2)
    page.get_by_label("Status").select_option("completed")
    expect(runs.locator("li")).to_have_count(2)


def test_a_wrong_password_is_explained(live: LiveServer, browser: Browser) -> None:
    page = browser.new_page()
    page.goto(live.url + "/")
    page.get_by_placeholder("Username").fill("nobody")
    page.get_by_placeholder("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("login-error")).to_have_text("wrong username or password")


def test_the_first_start_link_signs_in(live: LiveServer, browser: Browser) -> None:
    page = browser.new_page()
    page.goto(live.links[0].replace(live.config.public_url, live.url))
    expect(page.get_by_test_id("new-run")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#who")).to_have_text("admin")


def test_the_world_browsed_diffed_and_rolled_back_from_the_run_page(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("wren", password="dashboard-pw")
    write = {"name": "write_file", "args": {"path": "notes/plan.md", "content": "step one\n"}}
    play(model_server, {"text": "Writing.", "tool_calls": [write]}, {"text": "Planned."})
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    page.set_default_timeout(TIMEOUT_MS)
    _sign_in(page, live, "wren", "dashboard-pw")
    form = page.get_by_test_id("new-run")
    form.get_by_placeholder("What should the agent do?").fill("write a plan")
    form.get_by_placeholder("Model, e.g. openai:gpt-4.1").fill(MODEL)
    form.get_by_role("button", name="Start").click()
    expect(page.get_by_test_id("status").first).to_have_text("completed")

    world = page.get_by_test_id("world")
    page.get_by_test_id("tab-world").click()
    page.get_by_role("button", name="Files").click()
    expect(world).to_contain_text("notes/plan.md")
    world.get_by_role("button", name="notes/plan.md").click()
    expect(page.get_by_test_id("file")).to_have_text("step one\n")
    page.get_by_role("button", name="Diff from start").click()
    expect(page.get_by_test_id("diff")).to_contain_text("+step one")

    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Roll back").click()
    expect(page.get_by_test_id("rolled-back")).to_contain_text("Rolled back to turn 0")
    page.get_by_role("button", name="Files").click()
    expect(world).to_contain_text("The world is empty here.")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "run-world-phone.png"), full_page=True)
