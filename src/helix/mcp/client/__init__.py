"""The MCP client: an MCP server's tools as a run's tool source (docs/mcp.md).

A blueprint declares servers (``mcp:``, ``McpServerSpec``); the engine opens one
``McpSource`` per server for each run. The ``mcp`` SDK (the ``helix-harness[mcp]``
extra) is imported only when a server is started.
"""

from ._source import McpSource as McpSource
from ._spec import McpServerSpec as McpServerSpec
from ._spec import McpToolOverride as McpToolOverride
from ._spec import require_sdk as require_sdk
from ._tools import run_name as run_name

__all__ = ["McpServerSpec", "McpSource", "McpToolOverride", "require_sdk", "run_name"]
