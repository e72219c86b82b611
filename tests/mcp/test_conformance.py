"""MCP servers' tools pass the conformance suite every tool source passes: the test
server's (over stdio, in the process tier) and the published ``mcp-server-time``'s,
each opened through the ``McpSource`` a run gets them from (once per class: a server
takes a moment to start, and the checks share its world)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from helix.mcp.client import McpServerSpec, McpSource
from helix.sandbox import ProcessSandbox
from helix.testing.conformance import ToolConformance, ToolSample
from helix.tools import ToolDef

from .conftest import MOUNTS, SRC, stdio_server


class _OpenedOnce(ToolConformance):
    """One world, sandbox and opened MCP source for the whole class."""

    spec: dict[str, Any] = {}

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        return tmp_path_factory.mktemp("world").resolve()

    @pytest.fixture(scope="class")
    @classmethod
    def sandbox(cls) -> Iterator[ProcessSandbox]:
        box = ProcessSandbox()
        yield box
        box.close()

    @pytest_asyncio.fixture(scope="class", loop_scope="class")
    @classmethod
    async def tools(  # type: ignore[override]
        cls, world: Path, sandbox: ProcessSandbox
    ) -> AsyncIterator[Sequence[ToolDef]]:
        source = McpSource(McpServerSpec.model_validate(cls.spec))
        # the variable the test server's spec reads its Python path from
        host = dataclasses.replace(cls.host_for(world, sandbox), env={"HELIX_SRC": SRC})
        await source.open(host)
        yield source.tools()
        await source.close()


@pytest.mark.asyncio(loop_scope="class")
class TestTestServer(_OpenedOnce):
    spec = stdio_server(tools=["echo", "inspect", "delete_item"])
    samples = {
        "t__echo": ToolSample(args={"text": "hello"}),
        "t__inspect": ToolSample(args={"probe": "missing"}),
        "t__delete_item": ToolSample(
            args={"name": "one"},
            failing={"name": "no/such/folder"},  # the server cannot open the marker file
        ),
    }


@pytest.mark.asyncio(loop_scope="class")
class TestTimeServer(_OpenedOnce):
    spec = {
        "name": "time",
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        "mounts": MOUNTS,
    }
    samples = {
        "time__get_current_time": ToolSample(
            args={"timezone": "Europe/Paris"}, failing={"timezone": "Nowhere/Atlantis"}
        ),
        "time__convert_time": ToolSample(
            args={"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            failing={"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"},
        ),
    }
