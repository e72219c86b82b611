"""``helix bench extension``: what reaching tools beyond Helix's own costs.

* ``mcp_call_overhead`` (``params.transport``: ``stdio``, ``http``): milliseconds per
  call of the test MCP server's ``echo`` made by a real run (a scripted model asks for
  every call in one turn; each passes the gates, is logged as ``tool.requested``,
  ``gate.decided``, ``tool.started``, ``tool.completed`` in SQLite, and is called on
  the server one after another), from the first call's request to the last one's
  result, against the bare ``mcp`` SDK client calling the same tool on the same kind
  of server as many times (the baseline). The stdio server runs in the process tier,
  as the baseline's does (no sandbox), so the figure is Helix's own overhead.

Plugin figures (``plugin_load_ms``, ``reload_to_serving_ms``) are measured by the
plugins' part of this suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helix.kernel.events import parse_iso
from helix.kernel.log import SqliteEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox
from helix.testing import mcp_test_server_argv

from ._figure import Figure
from ._plugins import PluginSizes, plugin_figures

SUITE = "extension"
_PYTHONPATH = str(Path(__file__).resolve().parents[2])
"""Where the test server imports Helix from (this Helix)."""


@dataclass(frozen=True, slots=True)
class ExtensionSizes:
    """How much work each measurement does."""

    calls: int = 200
    plugins: PluginSizes = field(default_factory=PluginSizes)

    @classmethod
    def quick(cls) -> ExtensionSizes:
        """A smoke test's sizes."""
        return cls(calls=5, plugins=PluginSizes.quick())


async def run_extension(
    sizes: ExtensionSizes, *, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure MCP calls over stdio, then over HTTP; then plugins' load and reload."""
    with tempfile.TemporaryDirectory(prefix="helix-bench-extension-", dir=workdir) as folder:
        root = Path(folder)
        argv = mcp_test_server_argv("stdio")
        stdio = {"command": argv[0], "args": argv[1:], "env": {"PYTHONPATH": "PYTHONPATH"}}
        helix_ms = await _through_helix(root / "stdio", stdio, sizes.calls, network=())
        bare_ms = await _bare_stdio(argv, sizes.calls)
        yield _figure("stdio", helix_ms, bare_ms, sizes.calls)
        async with _http_server() as url:
            http = {"url": url}
            helix_ms = await _through_helix(root / "http", http, sizes.calls, ("127.0.0.1",))
            bare_ms = await _bare_http(url, sizes.calls)
        yield _figure("http", helix_ms, bare_ms, sizes.calls)
    for figure in await plugin_figures(sizes.plugins):
        yield figure


def _figure(transport: str, value: float, baseline: float, calls: int) -> Figure:
    params = {"transport": transport, "calls": calls, "tool": "echo"}
    if transport == "stdio":
        params["tier"] = "process"
    return Figure(SUITE, "mcp_call_overhead", value, "ms", params, baseline=baseline)


async def _through_helix(
    root: Path, server: dict[str, Any], calls: int, network: tuple[str, ...]
) -> float:
    """Milliseconds per call of ``echo`` in one turn of a real run."""
    world = root / "world"
    world.mkdir(parents=True)
    asked = [
        {"name": "b__echo", "args": {"text": f"call {i}"}, "id": f"c{i}"} for i in range(calls)
    ]
    scenario = Scenario.of({"text": "", "tool_calls": asked}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="bench")

    store = SqliteEventStore(root / "helix.db")
    box = ProcessSandbox()
    engine = Engine(
        store, home=root, sandbox=box, model_factory=model, env={"PYTHONPATH": _PYTHONPATH}
    )
    # One call after another, as the baseline makes them (a read-only tool would run
    # its calls of one turn at once): the operator says it has no effect instead.
    entry = {"name": "b", **server, "overrides": {"echo": {"read_only": False, "effect": "none"}}}
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:bench",
            "tools": ["read_file"],
            "mcp": [entry],
            "sandbox": {"network": list(network)},
        }
    )
    try:
        record = await engine.create("bench", blueprint=blueprint, world=world, attended=False)
        state = await engine.drive(record.id)
        log = await store.read(record.id)
    finally:
        box.close()
        await store.close()
    completed = [e for e in log if e.type == "tool.completed"]
    if (
        state.status != "completed"
        or len(completed) != calls
        or not all(e.data["ok"] for e in completed)
    ):
        raise RuntimeError(f"the benchmark run did not make its {calls} calls: {state.status}")
    first = next(e for e in log if e.type == "tool.requested")
    spent = parse_iso(completed[-1].ts) - parse_iso(first.ts)
    return spent * 1000 / calls


async def _bare_stdio(argv: list[str], calls: int) -> float:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env={"PYTHONPATH": _PYTHONPATH})
    quiet = await asyncio.to_thread(open, os.devnull, "w")  # the server's stderr
    with quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            return await _time_calls(session, calls)


async def _bare_http(url: str, calls: int) -> float:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        return await _time_calls(session, calls)


async def _time_calls(session: Any, calls: int) -> float:
    started = time.perf_counter()
    for i in range(calls):
        result = await session.call_tool("echo", {"text": f"call {i}"})
        if result.is_error:
            raise RuntimeError(f"the bare client's call failed: {result.content}")
    return (time.perf_counter() - started) * 1000 / calls


@contextlib.asynccontextmanager
async def _http_server() -> AsyncIterator[str]:
    """The test MCP server over HTTP on a free port, for the length of the block; its URL."""
    env = {**os.environ, "PYTHONPATH": _PYTHONPATH}
    process = await asyncio.create_subprocess_exec(
        *mcp_test_server_argv("http"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = (await process.stdout.readline()).decode()
        if not line.startswith("listening on "):
            raise RuntimeError("the test MCP server did not start over HTTP")
        yield f"http://127.0.0.1:{int(line.split()[-1])}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
