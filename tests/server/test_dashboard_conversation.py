"""The run page as a conversation, in Chromium at desktop and phone sizes, on a real server.

Set ``HELIX_REFRESH_SCREENSHOTS=1`` to also rewrite ``docs/screenshots/run-desktop.png``
(a conversation) and ``docs/screenshots/run-phone.png`` (a wrapped approval):

    HELIX_REFRESH_SCREENSHOTS=1 pytest tests/server/test_dashboard_conversation.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, expect

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
REFRESH = os.environ.get("HELIX_REFRESH_SCREENSHOTS") == "1"
TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)

LONG_COMMAND = (
    "echo "
    + " ".join(f"src/helix/server/static/module-{i}/conversation.js" for i in range(8))
    + " && printf '%s\\n' "
    + "x" * 240
)
"""A command longer than any phone is wide, with a 240-character word in it."""

LIST = {"name": "list_files", "args": {}}

TOO_WIDE = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.right > width + 0.5 || box.left < -0.5))
      wide.push(`${el.tagName}.${el.className} ${Math.round(box.left)}..${Math.round(box.right)}`);
  }
  if (document.documentElement.scrollWidth > width)
    wide.push(`document ${document.documentElement.scrollWidth}`);
  return wide;
}"""
"""Every element wider than the viewport (or off its left edge); the page if it scrolls sideways."""

NEWEST_IN_VIEW = """() => {
  const blocks = document.querySelectorAll("[data-testid=conversation] > .block");
  const box = blocks[blocks.length - 1].getBoundingClientRect();
  return box.top < innerHeight && box.bottom > 0;
}"""
"""Whether the conversation's newest block is on screen. Waited for (``wait_for_function``),
not read once: on a loaded machine the scroll to it may come a frame after the block."""


def _signed_in(browser: Browser, token: str, width: int, height: int) -> BrowserContext:
    phone = width < 600
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone)
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    context.add_init_script(
        "window.cspViolations = []; document.addEventListener('securitypolicyviolation',"
        " (e) => window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));"
    )
    context.set_default_timeout(TIMEOUT_MS)
    return context


def _too_wide(page: Page, *widths: int) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for width in widths:
        page.set_viewport_size({"width": width, "height": 844})
        wide = page.evaluate(TOO_WIDE)
        if wide:
            found[width] = wide
    return found


def _start(live: LiveServer, token: str, objective: str) -> str:
    with live.client(token) as client:
        answer = client.post("/runs", json={"objective": objective, "model": MODEL})
        assert answer.status_code == 201, answer.text
        run_id: str = answer.json()["id"]
    return run_id


def test_a_run_reads_as_a_conversation_with_a_wrapped_approval_on_a_phone(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("ines", password="dashboard-pw")
    token = live.login("ines", "dashboard-pw")
    write = {"name": "write_file", "args": {"path": "notes/plan.md", "content": "step one\n"}}
    play(
        model_server,
        {"text": "I will write the plan first.", "tool_calls": [write]},
        {
            "text": "Now the long command.",
            "tool_calls": [{"name": "run_command", "args": {"command": LONG_COMMAND}}],
        },
        {"text": "Checking.", "tool_calls": [{"name": "list_files", "args": {}}], "delay_s": 1.0},
        {"text": "All done: the plan is written.", "held": True},  # after the scroll up
    )
    run_id = _start(live, token, "write the plan, then run the long command")

    desktop = _signed_in(browser, token, 1280, 800)
    page = desktop.new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    talk = page.get_by_test_id("conversation")
    expect(talk.get_by_test_id("agent-said").first).to_contain_text("I will write the plan first.")
    written = talk.get_by_test_id("call").first
    expect(written).to_contain_text("write_file")
    expect(written.get_by_test_id("gates")).to_contain_text("✓")  # every gate allowed: one mark
    expect(written.get_by_test_id("file-change")).to_contain_text("+step one")  # inline diff
    ask = talk.get_by_test_id("approval")
    expect(ask.get_by_test_id("approval-command")).to_have_text(LONG_COMMAND)  # never cut
    asking = talk.get_by_test_id("call").nth(1)
    expect(asking.get_by_test_id("gates")).to_contain_text("ask")  # expanded, with the reason
    expect(page.get_by_test_id("control-pause")).to_be_enabled()
    expect(page.get_by_test_id("control-resume")).to_be_disabled()
    expect(page.get_by_test_id("control-cancel")).to_be_enabled()
    assert page.evaluate(TOO_WIDE) == []

    phone = _signed_in(browser, token, 390, 844)
    small = phone.new_page()
    small.goto(f"{live.url}/#/runs/{run_id}")
    bar = small.get_by_test_id("approvals")
    expect(bar.get_by_test_id("approval-command")).to_have_text(LONG_COMMAND)
    command = bar.get_by_test_id("approval-command")
    wrapped = command.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert wrapped  # wrapped in its box, not scrolled sideways
    allow = bar.get_by_role("button", name="Allow")
    box = allow.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= 844  # within a thumb's reach
    assert box["y"] > 844 / 2
    assert _too_wide(small, 390, 360) == {}
    small.set_viewport_size({"width": 390, "height": 844})
    if REFRESH:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        small.screenshot(path=str(SCREENSHOTS / "run-phone.png"))

    allow.click()  # approving from the phone's bar
    expect(small.get_by_role("button", name="Allow")).to_have_count(0)
    expect(small.get_by_test_id("terminal").first).to_contain_text("xxxxxxxx")  # its output
    expect(small.get_by_test_id("conversation").get_by_text("Checking.")).to_be_visible()
    small.wait_for_function(NEWEST_IN_VIEW)  # follow mode: the newest block is on screen

    small.evaluate("window.scrollTo({ top: 0, behavior: 'instant' })")  # a scroll up pauses it
    expect(small.get_by_test_id("jump-latest")).to_be_visible()
    model_server.release()
    expect(small.get_by_test_id("status").first).to_have_text("completed")
    expect(small.get_by_test_id("outcome")).to_contain_text("All done: the plan is written.")
    assert small.evaluate("window.scrollY") < 50  # new blocks did not pull the page down
    small.get_by_test_id("jump-latest").click()
    small.wait_for_function(NEWEST_IN_VIEW)
    expect(small.get_by_test_id("jump-latest")).to_be_hidden()

    for control in ("pause", "resume", "cancel"):  # nothing applies to a completed run
        expect(small.get_by_test_id(f"control-{control}")).to_be_disabled()
    expect(small.get_by_test_id("steer").get_by_role("button", name="Send")).to_be_disabled()
    small.goto(f"{live.url}/#/")
    expect(small.get_by_test_id("runs").locator("li")).to_have_count(1)
    assert _too_wide(small, 390, 360) == {}
    expect(page.get_by_test_id("outcome")).to_contain_text("All done: the plan is written.")
    expect(page.get_by_test_id("conversation").get_by_test_id("terminal")).to_be_visible()
    if REFRESH:  # the whole conversation, its answer on top
        page.evaluate("window.scrollTo({ top: 0, behavior: 'instant' })")
        page.screenshot(path=str(SCREENSHOTS / "run-desktop.png"), full_page=True)
    assert page.evaluate("window.cspViolations") == []
    assert small.evaluate("window.cspViolations") == []
    desktop.close()
    phone.close()


def test_new_activity_is_in_view_after_send_and_cancel_asks_first(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("otto", password="dashboard-pw")
    token = live.login("otto", "dashboard-pw")
    play(
        model_server,
        *[{"text": f"Step {i}: looking.", "tool_calls": [LIST]} for i in range(1, 7)],
        {
            "text": "One more thing.",
            "tool_calls": [{"name": "run_command", "args": {"command": "rm -rf build"}}],
        },
        {"text": "Stopped."},
    )
    run_id = _start(live, token, "look around, then clean up")
    context = _signed_in(browser, token, 1280, 800)
    page = context.new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    expect(page.get_by_test_id("approval")).to_be_visible()
    page.wait_for_function(NEWEST_IN_VIEW)

    steer = page.get_by_test_id("steer")
    steer.get_by_placeholder("Tell the agent something…").fill("do not delete anything")
    steer.get_by_role("button", name="Send").click()
    expect(page.get_by_test_id("person-said")).to_contain_text("do not delete anything")
    page.wait_for_function(NEWEST_IN_VIEW)  # what was sent is on screen

    page.get_by_test_id("control-pause").click()
    expect(page.get_by_test_id("status").first).to_have_text("paused")
    expect(page.get_by_test_id("control-resume")).to_be_enabled()
    expect(page.get_by_test_id("control-pause")).to_be_disabled()
    expect(page.get_by_test_id("steer").get_by_role("button", name="Send")).to_be_enabled()

    asked: list[str] = []

    def dismiss(dialog: object) -> None:
        asked.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()  # type: ignore[attr-defined]

    page.once("dialog", dismiss)
    page.get_by_test_id("control-cancel").click()
    assert asked
    assert "Cancel this run?" in asked[0]
    expect(page.get_by_test_id("status").first).to_have_text("paused")  # not cancelled
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("control-cancel").click()
    expect(page.get_by_test_id("status").first).to_have_text("cancelled")
    expect(page.get_by_test_id("outcome")).to_contain_text("cancelled by user:otto")
    for control in ("pause", "resume", "cancel"):
        expect(page.get_by_test_id(f"control-{control}")).to_be_disabled()
    context.close()


def test_the_dashboard_is_installable(live: LiveServer, browser: Browser) -> None:
    with live.client() as client:
        base = live.url
        manifest = client.get(f"{base}/manifest.webmanifest")
        assert manifest.status_code == 200
        assert manifest.headers["content-type"].startswith("application/manifest+json")
        data = json.loads(manifest.text)
        assert data["display"] == "standalone"
        assert data["name"] == "Helix"
        assert data["theme_color"].startswith("#")
        sizes = {icon["sizes"] for icon in data["icons"]}
        assert {"192x192", "512x512", "any"} <= sizes
        for icon in data["icons"]:
            served = client.get(f"{base}/{icon['src']}")
            assert served.status_code == 200, icon
            assert served.headers["content-type"].startswith(icon["type"])
            if icon["type"] == "image/png":
                assert served.content.startswith(b"\x89PNG")
    page = browser.new_page()
    page.add_init_script(
        "window.cspViolations = []; document.addEventListener('securitypolicyviolation',"
        " (e) => window.cspViolations.push(e.violatedDirective));"
    )
    page.goto(live.url + "/")
    assert page.locator("link[rel=manifest]").get_attribute("href") == "manifest.webmanifest"
    icons = page.locator("link[rel=icon]")
    expect(icons).to_have_count(2)
    for href in icons.evaluate_all("links => links.map((l) => l.href)"):
        assert page.request.get(href).status == 200
    expect(page.get_by_placeholder("Username")).to_be_visible()
    assert page.evaluate("window.cspViolations") == []


def test_failures_say_why(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("pia", password="dashboard-pw")
    token = live.login("pia", "dashboard-pw")
    outside = {"name": "read_file", "args": {"path": "../../etc/passwd"}}
    play(model_server, {"text": "Reading.", "tool_calls": [outside]}, {"text": "Could not."})
    run_id = _start(live, token, "read a file outside")
    with live.client(token) as client:
        wait_for_status(client, run_id, "completed", "failed")
    context = _signed_in(browser, token, 390, 844)
    page = context.new_page()
    page.goto(f"{live.url}/#/runs/{run_id}")
    call = page.get_by_test_id("call").first
    expect(call).to_have_attribute("data-state", "denied")
    expect(call.get_by_test_id("gates")).to_contain_text("deny")  # expanded with its reasons
    assert _too_wide(page, 390, 360) == {}

    reason = "this model's context is too small for the request " + "(details) " * 20
    play(model_server, {"error": {"status": 400, "message": reason}})
    failed = _start(live, token, "fail on the first model call")
    page.goto(f"{live.url}/#/runs/{failed}")
    expect(page.get_by_test_id("status").first).to_have_text("failed")
    expect(page.get_by_test_id("outcome")).to_contain_text("(details) " * 19)  # whole
    talk = page.get_by_test_id("conversation")
    expect(talk.locator('[data-type="model.failed"]')).to_contain_text("context is too small")
    expect(talk.locator('[data-type="run.failed"]')).to_contain_text("(details) " * 19)
    assert _too_wide(page, 390, 360) == {}
    context.close()


FOLD = """async (events) => {
  const { Transcript } = await import("/transcript.js");
  const transcript = new Transcript();
  events.forEach((event, seq) => transcript.add({ seq, turn: 1, ...event }));
  return { status: transcript.status, ending: transcript.ending && transcript.ending.text,
    blocks: transcript.blocks.map((b) => ({ kind: b.kind, text: b.text, state: b.state,
      verdict: b.verdict, reasons: b.reasons, exitCode: b.exitCode,
      gates: b.gates && b.gates.length })) };
}"""
"""The page's own fold (static/transcript.js) of the given events, as plain data."""


def test_the_fold_of_events_into_blocks(live: LiveServer, browser: Browser) -> None:
    def call(call_id: str, *gates: tuple[str, str, str]) -> list[dict[str, Any]]:
        data = {"call_id": call_id, "name": "run_command", "args": {"command": "make"}}
        requested: dict[str, Any] = {"type": "tool.requested", "data": data}
        return [requested] + [
            {
                "type": "gate.decided",
                "data": {"call_id": call_id, "gate": g, "verdict": v, "reason": r},
            }
            for g, v, r in gates
        ]

    allow = [("ceiling", "allow", "within"), ("commands", "allow", "fine")]
    events = [
        {
            "type": "run.created",
            "data": {"objective": "build", "model": MODEL, "budget": {"usd": 1}},
        },
        {"type": "model.responded", "data": {"text": "Building.", "usage": {}}},
        *call("c1", *allow),
        {
            "type": "tool.completed",
            "data": {"call_id": "c1", "ok": False, "output": "no\n[exit code 2]"},
        },
        {
            "type": "supervisor.restarted",
            "data": {"component": "sandbox", "attempt": 2, "reason": "the container exited"},
        },
        *call("c2", *allow, ("boundary", "deny", "outside the world")),
        {"type": "run.failed", "data": {"error": "the model refused: " + "why " * 50}},
    ]
    page = browser.new_page()
    page.goto(live.url + "/")
    folded = page.evaluate(FOLD, events)
    kinds = [(b["kind"], b.get("text") or b.get("state")) for b in folded["blocks"]]
    assert kinds == [
        ("note", "build"),
        ("said", "Building."),
        ("call", "error"),
        ("note", "sandbox restarted (attempt 2): the container exited"),
        ("call", "denied"),
        ("note", "the model refused: " + "why " * 50),
    ]
    first, second = folded["blocks"][2], folded["blocks"][4]
    assert first["exitCode"] == 2
    assert first["verdict"] == "allow"
    assert first["gates"] == 2  # one card, its gates folded in
    assert second["verdict"] == "deny"
    assert second["reasons"] == ["boundary: outside the world"]
    assert folded["status"] == "failed"
    assert folded["ending"] == "the model refused: " + "why " * 50


def test_the_models_mistakes_fold_into_notes_with_their_count(
    live: LiveServer, browser: Browser
) -> None:
    raw = '{"path": "a.txt", "con'
    requested = {"call_id": "c1", "name": "write_file", "args": {}, "raw_args": raw,
                 "malformed": "not JSON"}  # fmt: skip
    denied = {"call_id": "c1", "gate": "arguments", "verdict": "deny",
              "reason": "malformed arguments: not JSON"}  # fmt: skip
    rejected = {"reason": "malformed_arguments", "detail": "not JSON", "call_id": "c1",
                "message": None, "mistakes": 4, "limit": 5}  # fmt: skip
    empty = {**rejected, "reason": "empty_reply", "detail": "no text", "call_id": None,
             "mistakes": 5}  # fmt: skip
    forced = {**empty, "reason": "no_tool_call", "detail": "text only", "limit": None}
    paused = {"reason": "model_errors", "detail": "the model's last 5 replies went wrong"}
    events = [
        {"type": "tool.requested", "data": requested},
        {"type": "gate.decided", "data": denied},
        {"type": "tool.completed", "data": {"call_id": "c1", "ok": False, "output": "denied"}},
        {"type": "model.rejected", "data": rejected},
        {"type": "model.rejected", "data": empty},
        {"type": "model.rejected", "data": forced},
        {"type": "run.paused", "data": paused},
    ]
    page = browser.new_page()
    page.goto(live.url + "/")
    folded = page.evaluate(FOLD, events)
    assert [(b["kind"], b.get("text") or b.get("state")) for b in folded["blocks"]] == [
        ("call", "denied"),
        ("note", "the model's reply was malformed: not JSON (told the model; 4 of 5)"),
        ("note", "the model's reply was empty: no text (told the model; 5 of 5)"),
        (
            "note",
            "the model did not make the tool call it was asked for: text only (told the"
            " model; 5 in a row)",
        ),
        ("note", "paused (model_errors: the model's last 5 replies went wrong)"),
    ]
    summary = page.evaluate(
        """async (events) => {
          const { Transcript } = await import("/transcript.js");
          const transcript = new Transcript();
          events.forEach((event, seq) => transcript.add({ seq, turn: 1, ...event }));
          return transcript.blocks[0].summary;
        }""",
        events,
    )
    assert summary == raw  # the text the model sent, not the empty arguments
    assert folded["status"] == "paused"


def test_a_placed_command_shows_the_node_it_ran_on(
    live: LiveServer, admin: Admin, browser: Browser
) -> None:
    """``tool.completed.node`` (a command on a Ray node) is shown under the call (imported log)."""
    admin.user("nia", password="dashboard-pw")
    token = live.login("nia", "dashboard-pw")
    run = "run_placed00000000000000001"
    node = "dc8bd3d28f874e7d6cba1b14e164c16c54342c0e9db69c80beadf7b0"
    created = {"objective": "o", "model": MODEL, "world": "w", "budget": None, "parent": None}
    at = "2026-12-01T00:00:0{}.000000Z"
    asked = {"call_id": "t1c0", "name": "run_command", "args": {"command": "nvidia-smi"}}
    reason = "on a Ray node (labels gpu=yes), in its bubblewrap"
    started = {"call_id": "t1c0", "sandbox": "bwrap", "reason": reason}
    output = "GPU 0\n[exit code 0]"
    done = {"call_id": "t1c0", "ok": True, "output": output, "duration_ms": 5, "node": node}
    events: list[tuple[str, int | None, str, dict[str, Any]]] = [
        ("run.created", None, "user:nia", created),
        ("tool.requested", 1, "agent", asked),
        ("tool.started", 1, "system", started),
        ("tool.completed", 1, "system", done),
    ]
    lines = [
        {"run_id": run, "seq": seq, "type": kind, "v": 2 if kind == "run.created" else 1,
         "ts": at.format(seq), "turn": turn, "actor": actor, "data": data}
        for seq, (kind, turn, actor, data) in enumerate(events)
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
    expect(page.get_by_text("ran on node dc8bd3d28f87")).to_be_visible()
    page.close()
