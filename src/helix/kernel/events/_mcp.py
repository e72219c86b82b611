"""Events of a run's MCP servers: started, stopped, failed, tools changed, connections.

An MCP server's tool calls are ``tool.*`` events like any other (their ``tool.started``
names ``origin: mcp:SERVER``); these record the servers themselves. None carries a
secret: a server's environment and headers are named in its blueprint, never logged.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ._payload import Payload


class McpServerStarted(Payload):
    """An MCP server of the run answered and listed its tools."""

    TYPE: ClassVar[str] = "mcp.server.started"

    server: str
    """Its name in the blueprint (its tools are ``SERVER__TOOL``)."""
    transport: Literal["stdio", "http"]
    target: str
    """The program it runs (stdio) or its URL without query or credentials (http)."""
    tools: list[str]
    """The tools offered to the model, by their names in the run."""
    refused: dict[str, str] = Field(default_factory=dict[str, str])
    """Tools of the server left out, by their names on the server, and why (a schema
    that is not a bounded JSON object schema, a name taken, too many tools)."""
    server_name: str = ""
    """What the server calls itself (its ``serverInfo``), as it says (not trusted)."""
    server_version: str = ""
    tier: str | None = None
    """The sandbox tier a stdio server runs in."""
    restarts: int = Field(default=0, ge=0)
    """How many times it was restarted in this incarnation of the run (0: first start)."""


class McpServerStopped(Payload):
    """An MCP server was stopped as the run's loop stopped."""

    TYPE: ClassVar[str] = "mcp.server.stopped"

    server: str


class McpServerFailed(Payload):
    """An MCP server could not be started, or died, or was refused a connection."""

    TYPE: ClassVar[str] = "mcp.server.failed"

    server: str
    reason: str
    restarts: int = Field(default=0, ge=0)
    """Restarts used so far in this incarnation of the run."""
    gave_up: bool = False
    """Its restart limit is reached: its tools answer with an error until the run ends."""


class McpToolsChanged(Payload):
    """An MCP server said its tools changed; the run offers the new list from the next turn."""

    TYPE: ClassVar[str] = "mcp.tools.changed"

    server: str
    added: list[str]
    removed: list[str]
    tools: list[str]
    """The server's tools offered now, by their names in the run."""
    refused: dict[str, str] = Field(default_factory=dict[str, str])
    """Tools of the server left out now, and why (as in ``mcp.server.started``)."""


class McpEgressDecided(Payload):
    """A connection an MCP server (or Helix, reaching an HTTP server) asked for, decided.

    Each host and port is recorded once per server start: repeats reuse the decision.
    """

    TYPE: ClassVar[str] = "mcp.egress.decided"

    server: str
    host: str
    port: int
    verdict: Literal["allow", "deny"]
    reason: str
