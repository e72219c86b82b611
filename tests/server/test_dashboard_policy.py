"""The run page's "what would this policy have done" view, in headless Chromium on a phone."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play
from .test_dashboard import _CSP_WATCH, ARTIFACTS, TIMEOUT_MS, _sign_in

ASK_WRITES = "approvals:\n  rules: [{tool: write_file, action: ask}]"


def test_a_pasted_or_uploaded_policy_shows_the_calls_it_would_change(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser, tmp_path: Path
) -> None:
    admin.user("pia", password="dashboard-pw")
    write = {"name": "write_file", "args": {"path": "notes/plan.md", "content": "step one\n"}}
    listing = {"name": "list_files", "args": {}}
    play(model_server, {"text": "Writing.", "tool_calls": [write, listing]}, {"text": "Planned."})
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)  # a phone
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(_CSP_WATCH)
    _sign_in(page, live, "pia", "dashboard-pw")
    form = page.get_by_test_id("new-run")
    form.get_by_placeholder("What should the agent do?").fill("write a plan")
    form.get_by_placeholder("Model, e.g. openai:gpt-4.1").fill(MODEL)
    form.get_by_role("button", name="Start").click()
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    events = page.get_by_test_id("stats").get_by_text("Events").inner_text()

    page.get_by_test_id("tab-policy").click()
    replay = page.get_by_test_id("policy-replay")
    page.get_by_test_id("policy-text").fill(ASK_WRITES)
    replay.get_by_role("button", name="Replay").click()
    expect(page.get_by_test_id("policy-summary")).to_have_text(
        "2 calls judged: 1 stricter, 0 looser"
    )
    (difference,) = page.get_by_test_id("policy-difference").all()
    expect(difference).to_contain_text("write_file")
    expect(difference).to_contain_text("Logged: allow, ran")
    expect(difference).to_contain_text("Would: ask (approval)")
    expect(difference).to_contain_text("notes/plan.md")

    # An uploaded file: its format is read from its name.
    policy = tmp_path / "ceiling.toml"
    policy.write_text("[policy]\ndeny_tools = ['write_file', 'list_files']\n")
    page.get_by_test_id("policy-file").set_input_files(str(policy))
    expect(page.get_by_test_id("policy-text")).to_have_value(policy.read_text())
    replay.get_by_role("button", name="Replay").click()
    expect(page.get_by_test_id("policy-summary")).to_have_text(
        "2 calls judged: 2 stricter, 0 looser"
    )
    expect(page.get_by_test_id("policy-difference").first).to_contain_text("deny (ceiling)")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing forces sideways scrolling on a phone
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "policy-replay-phone.png"), full_page=True)

    page.get_by_test_id("policy-text").fill("policy: {deny_tool: [write_file]}")
    page.get_by_role("combobox", name="Format").select_option("yaml")
    replay.get_by_role("button", name="Replay").click()
    expect(page.get_by_test_id("policy-error")).to_contain_text("policy.deny_tool: unknown field")
    expect(page.get_by_test_id("policy-result")).to_be_empty()
    # Judging wrote nothing: the run has as many events as before.
    assert page.get_by_test_id("stats").get_by_text("Events").inner_text() == events
    assert page.evaluate("window.cspViolations") == []
