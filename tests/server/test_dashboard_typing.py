"""The run page shows the agent's reply as it is written, in Chromium, on a phone.

A real server and the mock model server, which pauses the streamed reply after its
first piece: the page shows that much in a typing bubble (the reply is not in the log
yet), then, released, the reply's own block replaces the bubble.
"""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import (
    DASHBOARD_TIMEOUT_MS,
    MODEL,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    open_dashboard,
    play,
)

WORDS = "The check passed: here is the whole answer, written word by word on the page."


def test_the_reply_being_written_shows_in_a_typing_bubble_on_a_phone(
    live: LiveServer, admin: Admin, model_server: MockModelServer, browser: Browser
) -> None:
    admin.user("tess", password="dashboard-pw")
    token = live.login("tess", "dashboard-pw")
    expect.set_options(timeout=DASHBOARD_TIMEOUT_MS)
    call = {"name": "run_command", "args": {"command": "true"}}
    play(
        model_server,
        {"text": "Checking.", "tool_calls": [call]},
        {"text": WORDS, "pause_mid_stream": True},
    )
    with live.client(token) as client:
        answer = client.post("/runs", json={"objective": "check", "model": MODEL})
        assert answer.status_code == 201, answer.text
        run_id = answer.json()["id"]
    page = open_dashboard(browser, live.url, token, PHONE)
    page.goto(f"{live.url}/#/runs/{run_id}")
    bar = page.get_by_test_id("approvals")
    bar.get_by_role("button", name="Allow").click()  # its events came over the socket: watched

    typing = page.get_by_test_id("agent-typing")
    expect(typing).to_be_visible()
    expect(typing).to_contain_text(WORDS[:8])  # the first piece, and no more yet
    expect(typing).to_contain_text("turn 2")
    assert WORDS not in typing.inner_text()
    said = page.get_by_test_id("conversation").get_by_test_id("agent-said")
    expect(said).to_have_count(1)  # "Checking." only: the reply is not logged yet
    assert page.evaluate(WIDER_THAN_SCREEN) == []

    model_server.release()
    expect(page.get_by_test_id("status").first).to_have_text("completed")
    expect(typing).to_be_hidden()
    expect(said.last).to_contain_text(WORDS)
    expect(page.get_by_test_id("outcome")).to_contain_text(WORDS)
    page.context.close()
