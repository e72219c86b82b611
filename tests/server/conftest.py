"""A real ``helix`` server (uvicorn, in a thread) on a real SQLite store, a mock model.

Users are made the way the admin commands make them: straight in the database.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import uvicorn

from helix._util import free_port as free_port
from helix.accounts import Accounts, Hashing, open_accounts
from helix.providers import Scenario
from helix.server import ServerConfig, create_app
from helix.testing import MockModelServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

MODEL = "openai:gpt-4.1"
WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""


class LiveServer:
    """``create_app`` served by uvicorn on a free port, in a thread of its own."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.links: list[str] = []
        self.app = create_app(config, announce=self.links.append)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/api/v1"
        uv = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="websockets-sansio",
            proxy_headers=False,  # as helix serve: the app alone decides whom to believe
        )
        self._server = uvicorn.Server(uv)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def start(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + WAIT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                pytest.fail("the server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(WAIT_S)

    @property
    def bootstrap_token(self) -> str:
        token = self.app.state.helix.bootstrap_token
        assert isinstance(token, str)
        return token

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        return httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=WAIT_S)

    def login(self, username: str, password: str) -> str:
        with self.client() as client:
            answer = client.post("/auth/login", json={"username": username, "password": password})
        assert answer.status_code == 200, answer.text
        token = answer.json()["token"]
        assert isinstance(token, str)
        return token


class Admin:
    """The admin commands' path: accounts changed straight in the database."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url

    def _do(self, action: Any) -> Any:
        async def main() -> Any:
            store = await open_accounts(self.db_url)
            try:
                return await action(Accounts(store, Hashing.cheap()))
            finally:
                await store.close()

        # A thread of its own: the browser tests' Playwright keeps a loop running here.
        with ThreadPoolExecutor(1) as worker:
            return worker.submit(asyncio.run, main()).result()

    def user(
        self, name: str, password: str = "pw-" + "x" * 8, workspace: str | None = None,
        role: str = "member",
    ) -> None:  # fmt: skip
        self._do(lambda a: a.add_user(name, password=password, workspace=workspace, role=role))

    def workspace(self, name: str, owner: str | None = None) -> None:
        self._do(lambda a: a.add_workspace(name, owner=owner))

    def role(self, workspace: str, user: str, role: str) -> None:
        self._do(lambda a: a.set_role(workspace, user, role))

    def api_token(self, user: str) -> str:
        token = self._do(lambda a: a.create_api_token(user))
        assert isinstance(token, str)
        return token

    def secret(self) -> bytes:
        value = self._do(lambda a: a.store.secret("jwt", b"unused"))
        assert isinstance(value, bytes)
        return value


def wait_until(check: Any, what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def event_types(client: httpx.Client, run_id: str) -> list[str]:
    answer = client.get(f"/runs/{run_id}/events", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return [e["type"] for e in answer.json()["events"]]


def wait_for_event(client: httpx.Client, run_id: str, event_type: str) -> None:
    wait_until(lambda: event_type in event_types(client, run_id), event_type)


def wait_for_status(client: httpx.Client, run_id: str, *statuses: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        run: dict[str, Any] = client.get(f"/runs/{run_id}").json()
        return run if run.get("status") in statuses else None

    found: dict[str, Any] = wait_until(check, f"status {statuses}")
    return found


def make_config(tmp_path: Path, model_server: MockModelServer, **overrides: Any) -> ServerConfig:
    home = tmp_path / "home"
    config = ServerConfig(
        db_url=f"sqlite:///{home / 'helix.db'}",
        home=home,
        hashing=Hashing.cheap(),
        env={"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model_server.openai_base_url},
    )
    return replace(config, **overrides)


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
def live(tmp_path: Path, model_server: MockModelServer) -> Iterator[LiveServer]:
    server = LiveServer(make_config(tmp_path, model_server)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def admin(live: LiveServer) -> Admin:
    return Admin(live.config.db_url)


@pytest.fixture
def owner(live: LiveServer) -> Iterator[httpx.Client]:
    """The first owner (signed in through the one-time link), on workspace ``default``."""
    with live.client() as anonymous:
        answer = anonymous.post("/auth/link", json={"token": live.bootstrap_token})
    assert answer.status_code == 200, answer.text
    with live.client(answer.json()["token"]) as client:
        yield client


def play(server: MockModelServer, *steps: dict[str, Any]) -> None:
    server.play(Scenario.of(*steps))


def start_asking_run(client: httpx.Client, server: MockModelServer) -> str:
    """Start a run whose first call (``run_command true``) asks for approval; its id."""
    play(
        server,
        {"text": "Building.", "tool_calls": [{"name": "run_command", "args": {"command": "true"}}]},
        {"text": "Built."},
    )
    run_id: str = client.post("/runs", json={"objective": "build", "model": MODEL}).json()["id"]
    return run_id


CHROMIUM = os.environ.get("HELIX_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium; without it the browser tests fail in CI and skip elsewhere."""
    if not os.access(CHROMIUM, os.X_OK):
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


DASHBOARD_TIMEOUT_MS = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WIDER_THAN_SCREEN = """() => [...document.querySelectorAll("body *")].filter((e) => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && box.right > window.innerWidth + 1;
}).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
"""The elements reaching past the window's right edge (``[]`` when the page fits)."""


def open_dashboard(browser: Browser, url: str, token: str, viewport: dict[str, int]) -> Page:
    """The dashboard at ``url`` signed in with ``token``, in a new context of ``viewport``.

    ``PHONE`` is opened as a mobile device. Close it with ``page.context.close()``.
    """
    context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)  # type: ignore[arg-type]
    context.add_init_script(f"localStorage.setItem('helix.token', {token!r})")
    page = context.new_page()
    page.set_default_timeout(DASHBOARD_TIMEOUT_MS)
    page.goto(f"{url}/#/")
    return page


@pytest.fixture
def browser(chromium: str) -> Iterator[Browser]:
    """A headless Chromium for one test (Playwright's sync API), closed after it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Cli:
    def __init__(self, tmp_path: Path, model_server: MockModelServer) -> None:
        self.home = tmp_path / "home"
        self.tmp = tmp_path
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "OPENAI_"))}
        self.env = {
            **inherited,
            "HELIX_HOME": str(self.home),
            # Runs driven in the server's process: a test about the processes executor
            # (serve's default) says so; the rest start no worker processes.
            "HELIX_EXECUTOR": "local",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": model_server.openai_base_url,
        }
        self.servers: list[subprocess.Popen[bytes]] = []

    def __call__(
        self, *args: str, stdin: str = "", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=WAIT_S,
        )

    def serve(
        self, port: int, *options: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        with open(self.tmp / f"serve-{len(self.servers)}.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "helix", "serve", "--port", str(port), *options],
                env={**self.env, **(env or {})},
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.servers.append(process)
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200:
                    return process
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"helix serve did not start: {self.log(len(self.servers) - 1)}")
            time.sleep(0.05)

    def log(self, index: int) -> str:
        return (self.tmp / f"serve-{index}.log").read_text()

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(WAIT_S)


@pytest.fixture
def cli(tmp_path: Path, model_server: MockModelServer) -> Iterator[Cli]:
    harness = Cli(tmp_path, model_server)
    try:
        yield harness
    finally:
        for process in harness.servers:
            harness.kill(process)
