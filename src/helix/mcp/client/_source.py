"""``McpSource``: one MCP server of a run, as a ``helix.tools.ToolSource``.

Opened with the run's loop: the server is started (a stdio server in the run's
sandbox, an HTTP server through its egress policy), its tools listed, filtered by the
blueprint's allowlist and denylist, and offered as ``SERVER__TOOL`` with facets from
their annotations (the operator's overrides winning). A server that ends is noticed
(``mcp.server.failed``): the call it was answering gets a clear tool error, and the
next call starts it again, up to ``max_restarts`` times. ``list_changed`` makes the
source list the tools again, record ``mcp.tools.changed`` and tell the run, which
takes the new list at its next turn boundary. Closed with the loop (``mcp.server.stopped``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from helix._util import redact
from helix.errors import ToolSourceError
from helix.kernel.events import (
    McpEgressDecided,
    McpServerFailed,
    McpServerStarted,
    McpServerStopped,
    McpToolsChanged,
    Payload,
)
from helix.sandbox import EgressDecision
from helix.tools import SourceHost, ToolContext, ToolDef, ToolResult

from ._callbacks import Callbacks
from ._connection import ServerConnection, recording_hook
from ._spec import McpServerSpec, require_sdk
from ._tools import MAX_TOOLS, result_text, tool_def

MAX_REFUSALS = 32
"""Refused tools of one server named in its events (the rest are left out unnamed)."""
DEATH_GRACE_S = 2.0
"""How long a call that lost its server waits to learn how the server ended."""


class McpSource:
    """The tools of one MCP server, for one run's incarnation (see the module's notes)."""

    def __init__(self, spec: McpServerSpec) -> None:
        """``ConfigError`` (naming the ``mcp`` extra) when the SDK is not installed."""
        require_sdk()
        self.spec = spec
        self._host: SourceHost | None = None
        self._connection: ServerConnection | None = None
        self._tools: list[ToolDef] = []
        self._refused: dict[str, str] = {}
        self._restarts = 0
        self._gave_up: str | None = None
        self._starting = asyncio.Lock()
        self._calls: list[str] = []
        self._refreshes: set[asyncio.Task[None]] = set()
        """Background work: list refreshes, recording a server's end."""
        self._closing = False

    @property
    def name(self) -> str:
        """``mcp:SERVER``."""
        return f"mcp:{self.spec.name}"

    async def open(self, host: SourceHost) -> None:
        """Start the server and take its tools; ``ToolSourceError`` names why it cannot."""
        self._host = host
        self._closing = False
        self._restarts = 0
        self._gave_up = None
        await self._start()

    def tools(self) -> Sequence[ToolDef]:
        """The server's offered tools, as last listed."""
        return list(self._tools)

    async def close(self) -> None:
        """Stop the server (recorded as ``mcp.server.stopped`` if it was running)."""
        self._closing = True
        for task in list(self._refreshes):
            task.cancel()
        connection, self._connection = self._connection, None
        if connection is None:
            return
        running = not connection.ended.is_set()
        await connection.stop()
        if running:
            await self._record(McpServerStopped(server=self.spec.name))

    async def _start(self) -> ServerConnection:
        host = self._require_host()
        try:
            connection = ServerConnection(
                self.spec,
                host,
                Callbacks(self.name, host, self._call_id),
                egress=recording_hook(self.spec.name, host.egress, self._egress),
                secrets=self._secrets(host),
                on_notification=self._notified,
                on_end=self._died,
            )
            await connection.start()
        except ToolSourceError as error:
            reason = self._clean(str(error).removeprefix(f"{self.name}: "))
            await self._record(
                McpServerFailed(server=self.spec.name, reason=reason, restarts=self._restarts)
            )
            raise ToolSourceError(f"{self.name}: {reason}") from None
        self._connection = connection
        self._take(connection.listed)
        info = getattr(connection.info, "server_info", None)
        started = McpServerStarted(
            server=self.spec.name,
            transport="stdio" if self.spec.command is not None else "http",
            target=self._target(),
            tools=[t.name for t in self._tools],
            refused=self._refused,
            server_name=str(getattr(info, "name", "") or "")[:200],
            server_version=str(getattr(info, "version", "") or "")[:100],
            tier=host.sandbox.tier if self.spec.command is not None else None,
            restarts=self._restarts,
        )
        await self._record(started)
        return connection

    async def _ready(self) -> ServerConnection | str:
        """The running connection, restarted if it ended (within limits), or why there is none."""
        async with self._starting:
            connection = self._connection
            if connection is not None and not connection.ended.is_set():
                return connection
            if connection is not None:
                await self._ended(connection)
                await connection.stop()  # its task and transport, already ending
                self._connection = None
            if self._gave_up is not None:
                return f"MCP server {self.spec.name} is stopped: {self._gave_up}"
            self._restarts += 1
            try:
                return await self._start()
            except ToolSourceError as error:
                if self._restarts >= self.spec.max_restarts:
                    await self._give_up(str(error))
                return f"MCP server {self.spec.name} could not be restarted: {error}"

    async def _call(self, tool: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the server's ``tool``: its result, or a tool error that says what happened."""
        connection = await self._ready()
        if isinstance(connection, str):
            return ToolResult(ok=False, output=connection)
        self._calls.append(ctx.call_id)
        try:
            result = await connection.call(tool, args)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if await self._gone(connection):
                await self._ended(connection)
                left = max(self.spec.max_restarts - self._restarts, 0)
                after = (
                    f"it is started again at the next call ({left} restarts left)"
                    if self._gave_up is None
                    else "it is not started again"
                )
                reason = self._clean(connection.reason)
                ended = reason if reason.startswith("exited") else f"went away ({reason})"
                output = f"MCP server {self.spec.name} {ended} during the call to {tool}; {after}"
                return ToolResult(ok=False, output=output)
            why = self._clean(f"{type(error).__name__}: {error}")[:500]
            return ToolResult(ok=False, output=f"MCP server {self.spec.name}: {tool} failed: {why}")
        finally:
            self._calls.remove(ctx.call_id)
        await self._settled()
        text = self._clean(result_text(result, ctx.max_output))
        return ToolResult(ok=not result.is_error, output=text)

    async def _gone(self, connection: ServerConnection) -> bool:
        """After a failed call: whether its server is gone.

        A stdio server's exit is seen; an HTTP server must answer a ping.
        """
        if self.spec.command is not None:
            return await connection.ended_within(DEATH_GRACE_S)
        return not await connection.answers(DEATH_GRACE_S)

    async def _ended(self, connection: ServerConnection) -> None:
        """Record once that ``connection``'s server ended; give up past the restart limit."""
        if connection.reported or self._closing:
            return
        connection.reported = True
        exhausted = self._restarts >= self.spec.max_restarts
        reason = self._clean(connection.reason)
        if exhausted:
            self._gave_up = f"{reason}, and its {self.spec.max_restarts} restarts are used"
        await self._record(
            McpServerFailed(
                server=self.spec.name, reason=reason, restarts=self._restarts, gave_up=exhausted
            )
        )

    async def _give_up(self, reason: str) -> None:
        self._gave_up = reason
        await self._record(
            McpServerFailed(
                server=self.spec.name,
                reason=self._clean(reason),
                restarts=self._restarts,
                gave_up=True,
            )
        )

    def _died(self, connection: ServerConnection) -> None:
        """A stdio server exited on its own: record it now, not at the next call."""
        if self._closing or connection is not self._connection:
            return
        self._track(self._ended(connection))

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    def _notified(self, message: Any) -> None:
        """A server notification: ``tools/list_changed`` starts a refresh."""
        if getattr(message, "method", None) != "notifications/tools/list_changed":
            return
        if self._closing or self._connection is None:
            return
        self._track(self._refresh(self._connection))

    async def _refresh(self, connection: ServerConnection) -> None:
        try:
            listed = await connection.list_tools()
        except Exception:  # the server went away: its end is noticed at the next call
            return
        before = [t.name for t in self._tools]
        self._take(listed)
        after = [t.name for t in self._tools]
        changed = McpToolsChanged(
            server=self.spec.name,
            added=[n for n in after if n not in before],
            removed=[n for n in before if n not in after],
            tools=after,
            refused=self._refused,
        )
        await self._record(changed)
        self._require_host().changed(self.name)

    async def _settled(self) -> None:
        """Wait for refreshes a call set off, so the change is known at the turn's end."""
        if self._refreshes:
            await asyncio.gather(*list(self._refreshes), return_exceptions=True)

    def _take(self, listed: list[Any]) -> None:
        tools: list[ToolDef] = []
        refused: dict[str, str] = {}
        taken: set[str] = set()
        for remote in listed:
            name = str(getattr(remote, "name", ""))[:200]
            if not self.spec.offers(name):
                continue
            if len(tools) >= MAX_TOOLS:
                if len(refused) < MAX_REFUSALS:
                    refused[name] = f"the server offers more than {MAX_TOOLS} tools"
                continue
            made = tool_def(self.spec, remote, self._call)
            if isinstance(made, str):
                if len(refused) < MAX_REFUSALS:
                    refused[name] = made
            elif made.name in taken:
                if len(refused) < MAX_REFUSALS:
                    refused[name] = f"its name {made.name!r} is taken by another of its tools"
            else:
                taken.add(made.name)
                tools.append(made)
        self._tools = tools
        self._refused = refused

    def _call_id(self) -> str | None:
        return self._calls[0] if len(self._calls) == 1 else None

    def _secrets(self, host: SourceHost) -> dict[str, str]:
        declared = self.spec.env if self.spec.command is not None else self.spec.headers
        missing = sorted(secret for secret in declared.values() if secret not in host.env)
        if missing:
            raise ToolSourceError(
                f"{self.name}: the engine's environment has no {', '.join(missing)}"
            )
        return {key: host.env[secret] for key, secret in declared.items()}

    def _clean(self, text: str) -> str:
        """``text`` with the server's secret values masked."""
        host = self._host
        if host is None:
            return text
        declared = self.spec.env if self.spec.command is not None else self.spec.headers
        values = [host.env[s] for s in declared.values() if s in host.env]
        return redact(text, values, scan_env=False) if values else text

    def _target(self) -> str:
        """The program, or the URL without credentials, query or fragment."""
        if self.spec.command is not None:
            return self.spec.command
        parts = urlsplit(self.spec.url or "")
        netloc = parts.hostname or ""
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    async def _egress(self, decision: EgressDecision) -> None:
        await self._record(
            McpEgressDecided(
                server=self.spec.name,
                host=decision.host,
                port=decision.port,
                verdict=decision.verdict,
                reason=decision.reason,
            )
        )

    async def _record(self, payload: Payload) -> None:
        host = self._host
        if host is not None:
            with contextlib.suppress(Exception):  # a run that ended takes no more events
                await host.record(payload)

    def _require_host(self) -> SourceHost:
        if self._host is None:
            raise ToolSourceError(f"{self.name}: not opened")
        return self._host
