"""``helix mcp serve`` as its clients see it: a real process, the ``mcp`` SDK's client.

Each test gets a HELIX_HOME of its own; runs use a scripted model whose first call
(``run_command``) the gates ask a person about. Nothing sleeps for time: a test waits
for events through the server's own long poll (``run_events`` with ``wait_s``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import live, model_server  # noqa: F401  (fixtures, re-exported)

WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""
TOKEN = "mcp-test-token-" + "x" * 16

SCENARIO = """\
- text: Building.
  tool_calls:
    - name: run_command
      args: {command: "touch built"}
- text: Built.
"""


class Here:
    """A HELIX_HOME, a world folder and a scenario; runs ``helix`` commands on them."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "helix-home"  # not "home": a live server of the test has that
        self.world = tmp_path / "world"
        self.world.mkdir()
        self.scenario = tmp_path / "build.yaml"
        self.scenario.write_text(SCENARIO)
        self.model = f"scripted:{self.scenario}"
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "OPENAI_"))}
        self.env = {**inherited, "HELIX_HOME": str(self.home), "HELIX_USER": "pat"}
        self.processes: list[subprocess.Popen[str]] = []

    def helix(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            capture_output=True, text=True, env={**self.env, **(env or {})}, timeout=WAIT_S,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def stdio(self, *options: str, env: dict[str, str] | None = None) -> Any:
        """The parameters the SDK's client spawns ``helix mcp serve`` with, over stdio."""
        from mcp import StdioServerParameters

        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "helix", "mcp", "serve", *options],
            env={**self.env, **(env or {})},
        )

    def serve_http(
        self, *options: str, env: dict[str, str] | None = None
    ) -> tuple[str, subprocess.Popen[str]]:
        """Start ``helix mcp serve --http 0``; its URL (read from its banner) and process."""
        process = subprocess.Popen(
            [sys.executable, "-m", "helix", "mcp", "serve", "--http", "0", *options],
            env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.processes.append(process)
        assert process.stderr is not None
        banner = process.stderr.readline()  # blocks until it is printed, or the process ends
        found = re.search(r"(http://\S+/mcp)", banner)
        assert found is not None, banner + process.stderr.read()
        return found.group(1), process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(WAIT_S)
            if process.stderr is not None:
                process.stderr.close()


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Here]:
    harness = Here(tmp_path)
    try:
        yield harness
    finally:
        harness.stop()


@asynccontextmanager
async def http_client(url: str, token: str | None = TOKEN) -> AsyncIterator[Any]:
    """The SDK's client over streamable HTTP, sending ``token`` as a bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT_S) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call that must succeed; its structured answer."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    answer: dict[str, Any] = result.structured_content
    return answer


async def refused(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, str]:
    """A tool call that must fail as an error result; its ``{code, message}``."""
    result = await client.call_tool(name, arguments)
    assert result.is_error, result.content
    error: dict[str, str] = result.structured_content["error"]
    assert result.content[0].text == f"{error['code']}: {error['message']}"
    return error


async def events_until(
    client: Any, run_id: str, *statuses: str, after: int = -1
) -> tuple[list[dict[str, Any]], str]:
    """Read the run's events (long-polling) until it is in one of ``statuses``."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + WAIT_S
    while True:
        page = await call(client, "run_events", {"run_id": run_id, "after": after, "wait_s": 5})
        seen += page["events"]
        after = page["next_after"]
        if page["status"] in statuses and not page["more"]:
            return seen, page["status"]
        if time.monotonic() > deadline:
            pytest.fail(f"run {run_id} never reached {statuses}: {page['status']}")
