"""One suite, two doors: every test runs against ``LocalApi`` and ``HttpApi``.

``local``: ``helix.AsyncClient`` embedded on a SQLite store under a fresh ``HELIX_HOME``.
``http``: ``helix.AsyncClient`` against a real server (uvicorn in a thread, on a free
port, as tests/server/conftest.py starts it), signed in as its first owner. Both reach
the same kind of mock model server through ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix import AsyncClient
from helix.api import HelixApi, LocalApi, RunEvent
from helix.providers import Scenario
from helix.runtime import ReplyHub
from helix.testing import MockModelServer
from tests.server.conftest import LiveServer, make_config

MODEL = "openai:gpt-4.1"


@dataclass
class Door:
    """How a test reaches Helix: the kind, and what a client needs to open it."""

    kind: str
    home: Path
    env: dict[str, str]
    url: str | None = None
    token: str | None = None
    live: LiveServer | None = None

    def client(self) -> AsyncClient:
        if self.url is not None:
            return AsyncClient(self.url, token=self.token)
        return AsyncClient(env=self.env, user="tester")

    def reply_hub(self, api: HelixApi) -> ReplyHub:
        """Where the runs behind ``api`` (this door's) stream: the server's, or its own."""
        if self.live is not None:
            hub: ReplyHub = self.live.app.state.helix.replies
            return hub
        assert isinstance(api, LocalApi)
        assert api.reply_hub is not None
        return api.reply_hub


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


def _owner_token(live: LiveServer) -> str:
    with live.client() as anonymous:
        answer = anonymous.post("/auth/link", json={"token": live.bootstrap_token})
    assert answer.status_code == 200, answer.text
    token = answer.json()["token"]
    assert isinstance(token, str)
    return token


@contextmanager
def open_door(kind: str, tmp_path: Path, model_server: MockModelServer) -> Iterator[Door]:
    home = tmp_path / "home"
    env = {
        "HELIX_HOME": str(home),
        "HELIX_DB": f"sqlite:///{home / 'helix.db'}",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": model_server.openai_base_url,
    }
    if kind == "local":
        yield Door("local", home, env)
        return
    live = LiveServer(make_config(tmp_path, model_server)).start()
    try:
        yield Door("http", live.config.home, env, live.url, _owner_token(live), live)
    finally:
        live.stop()


@pytest.fixture(params=["local", "http"])
def door(
    request: pytest.FixtureRequest, tmp_path: Path, model_server: MockModelServer
) -> Iterator[Door]:
    with open_door(request.param, tmp_path, model_server) as opened:
        yield opened


@pytest.fixture
def server_door(tmp_path: Path, model_server: MockModelServer) -> Iterator[Door]:
    with open_door("http", tmp_path, model_server) as opened:
        yield opened


@pytest.fixture
async def client(door: Door) -> AsyncIterator[AsyncClient]:
    async with door.client() as opened:
        yield opened


def play(server: MockModelServer, *steps: dict[str, Any]) -> None:
    server.play(Scenario.of(*steps))


async def follow(client: AsyncClient, run_id: str, after: int = -1) -> list[RunEvent]:
    """Every event of the run to its end, as the live stream gives them."""
    return [event async for event in client.events(run_id, after=after, follow=True)]


def raw_client(door: Door) -> httpx.Client:
    assert door.url is not None
    headers = {"Authorization": f"Bearer {door.token}"}
    return httpx.Client(base_url=f"{door.url}/api/v1", headers=headers, timeout=60)
