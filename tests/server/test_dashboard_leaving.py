"""Closing a dashboard tab: the server lets its sockets go without a traceback."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
from playwright.sync_api import Browser

from helix.kernel.log import SqliteEventStore
from helix.testing import MockModelServer, run_created, session_events

from .conftest import MODEL, Cli, free_port, play, wait_until


def test_closing_tabs_leaves_no_traceback_in_the_server_log(
    cli: Cli, browser: Browser, model_server: MockModelServer
) -> None:
    step = {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}], "delay_s": 0.2}
    play(model_server, *[step] * 20, {"text": "Done."})
    port = free_port()
    cli.serve(port)

    async def write() -> None:  # a long history: the server is mid-send when the tab goes
        async with SqliteEventStore(cli.home / "helix.db") as store:
            await store.create_run(run_created(), run_id="long")
            events = session_events(150, calls=2, output="x" * 2000)
            await store.append("long", events, expected_seq=1)

    with ThreadPoolExecutor(1) as worker:  # Playwright keeps a loop running here
        worker.submit(asyncio.run, write()).result()
    link = re.search(r"#login=(\S+)", cli.log(0))
    assert link is not None
    base = f"http://127.0.0.1:{port}"
    access = httpx.post(f"{base}/api/v1/auth/link", json={"token": link.group(1)}).json()["token"]
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(f"localStorage.setItem('helix.token', {access!r})")
    owner = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {access}"})
    body = {"objective": "look", "model": MODEL, "auto_approve": True}
    busy = owner.post("/runs", json=body).json()["id"]  # live events while tabs close

    def clients() -> float:
        text = owner.get("/metrics").text
        found = re.search(r"^helix_websocket_clients (\S+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else -1.0

    try:
        for where in ("#/runs/long", "#/", f"#/runs/{busy}", "#/", f"#/runs/{busy}") * 2:
            wait_until(lambda: clients() == 0.0, "the last tab's socket to be let go")
            page = context.new_page()
            page.goto(f"{base}/{where}")
            wait_until(lambda: clients() >= 1.0, "the page's socket to open")
            page.close()  # the tab goes, its WebSocket with it (mid-send on the long run)
        context.close()
        wait_until(lambda: clients() == 0.0, "every closed tab's socket to be let go")
    finally:
        owner.close()
    log = cli.log(0)
    assert "Traceback" not in log, log
    assert "Exception in ASGI application" not in log, log
