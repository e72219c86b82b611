"""Helix as an MCP server: ``helix mcp serve`` (docs/mcp-server.md).

Runs, their events, approvals, steering, control and worlds as MCP tools and resources,
all through ``helix.api``: on the local store, or against a ``helix serve``. What a
client may do beyond reading and steering (answer approvals, auto-approve) is the
person's choice, made when they start it (``McpServePolicy``).
"""

from ._server import build_mcp_server as build_mcp_server
from ._tools import TOOLS as TOOLS
from ._tools import HelixTool as HelixTool
from ._tools import McpServePolicy as McpServePolicy
from ._transport import BearerGuard as BearerGuard
from ._transport import bind as bind
from ._transport import serve_http as serve_http
from ._transport import serve_stdio as serve_stdio
from ._transport import url_of as url_of

__all__ = [
    "TOOLS",
    "BearerGuard",
    "HelixTool",
    "McpServePolicy",
    "bind",
    "build_mcp_server",
    "serve_http",
    "serve_stdio",
    "url_of",
]
