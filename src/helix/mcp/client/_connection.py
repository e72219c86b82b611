"""One start of an MCP server: its transport and SDK session, held open in a task of their own.

The SDK's sessions and transports are async context managers that must be entered and
left in one task, so each ``ServerConnection`` runs a task that opens them, says it is
ready, and holds them until it is stopped or the server goes away. A stdio server is
a program started by the run's sandbox (``Sandbox.serve``: in the world, with only
its declared variables, its connections through the run's egress policy); an HTTP
server is reached only once the run's egress policy allows its host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helix.errors import ToolSourceError
from helix.sandbox import EgressDecision, EgressHook, url_host
from helix.tools import SourceHost

from ._callbacks import Callbacks
from ._spec import McpServerSpec

_log = logging.getLogger(__name__)

STDERR_TAIL = 2048
"""Characters of a server's last stderr kept, to say why it failed to start."""


class ServerConnection:
    """The SDK session with one server, from ``start`` until ``stop`` or its end."""

    def __init__(
        self,
        spec: McpServerSpec,
        host: SourceHost,
        callbacks: Callbacks,
        *,
        egress: EgressHook | None,
        secrets: dict[str, str],
        on_notification: Callable[[Any], None],
        on_end: Callable[[ServerConnection], None] = lambda connection: None,
    ) -> None:
        self.spec = spec
        self.host = host
        self.callbacks = callbacks
        self.egress = egress
        self.secrets = secrets
        """Resolved values of the spec's ``env`` (stdio) or ``headers`` (http)."""
        self.on_notification = on_notification
        self.on_end = on_end
        """Told when the server ends on its own (not stopped): its health watch."""
        self.session: Any = None
        self.info: Any = None
        """The server's ``InitializeResult``."""
        self.listed: list[Any] = []
        """Its tools as listed at start (``mcp_types.Tool``)."""
        self.exit_code: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self.reason = ""
        """Why it ended, once it has."""
        self.ended = asyncio.Event()
        self.reported = False
        """Its end was recorded (``mcp.server.failed``)."""
        self._stop = asyncio.Event()
        self._stderr = ""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the transport, initialise, list the tools; ``ToolSourceError`` says why not."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Read even when nobody waits any more (a start that timed out): no warning.
        ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._task = asyncio.create_task(self._hold(ready), name=f"mcp:{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.spec.timeout_s)
        except TimeoutError:
            await self.stop()
            raise ToolSourceError(
                f"mcp:{self.spec.name}: did not answer within {self.spec.timeout_s:g}s"
            ) from None
        except ToolSourceError:
            await self.stop()
            raise
        except Exception as error:
            await self.stop()
            raise ToolSourceError(
                f"mcp:{self.spec.name}: could not start: {self._why(error)}"
            ) from error

    async def stop(self) -> None:
        """End the session and the server (safe to call twice, or after it ended).

        A server still starting is cut off at once; a running one is let go (its
        transport closed, its program given its grace to exit) for up to 10 s.
        """
        self._stop.set()
        if self._task is not None:
            if self.session is None or self.info is None:
                self._task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            if not self._task.done():
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists now (all pages, at most 64)."""
        import mcp_types as types

        tools: list[Any] = []
        cursor: str | None = None
        for _page in range(64):
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await self.session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        """Call a tool; raises if the server ends (or fails to answer in time) first."""
        call = asyncio.ensure_future(
            self.session.call_tool(name, args, read_timeout_seconds=self.spec.timeout_s)
        )
        ended = asyncio.ensure_future(self.ended.wait())
        try:
            await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the call was cancelled (the run stopping): so is the request
            call.cancel()
            raise
        finally:
            ended.cancel()
        if not call.done():
            call.cancel()
            with contextlib.suppress(BaseException):
                await call
            raise ConnectionError(self.reason or "the server ended")
        return call.result()

    async def answers(self, within: float) -> bool:
        """Whether the server answers a ping; if not, the connection is ended (health)."""
        if self.ended.is_set():
            return False
        try:
            await asyncio.wait_for(self.session.send_ping(), within)
        except Exception as error:
            self.reason = f"does not answer: {self._why(error)}"
            await self.stop()
            return False
        return True

    async def ended_within(self, seconds: float) -> bool:
        """Whether the server has ended, waiting up to ``seconds`` for it to."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), seconds)
        return self.ended.is_set()

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        from mcp.client.session import ClientSession
        from mcp_types import Implementation

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = ClientSession(
                    read,
                    write,
                    sampling_callback=self.callbacks.sample,
                    elicitation_callback=self.callbacks.elicit,
                    list_roots_callback=self.callbacks.roots,
                    message_handler=self._message,
                    client_info=Implementation(name="helix", version=_version()),
                )
                self.session = await stack.enter_async_context(session)
                self.info = await session.initialize()
                self.listed = await self.list_tools()
                ready.set_result(None)
                ending = asyncio.ensure_future(self._stop.wait())
                gone = asyncio.ensure_future(self.ended.wait())
                try:
                    await asyncio.wait({ending, gone}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    ending.cancel()
                    gone.cancel()
        except BaseException as error:
            if not self.reason:
                self.reason = self._why(error)
            if not ready.done():
                ready.set_exception(
                    error if isinstance(error, Exception) else ToolSourceError(self.reason)
                )
            if not isinstance(error, Exception):
                raise
        finally:
            if not self.reason:
                self.reason = "stopped"
            self.ended.set()

    async def _message(self, message: Any) -> None:
        if isinstance(message, Exception):
            _log.info("mcp:%s: %s", self.spec.name, message)
            return
        self.on_notification(message)

    def _transport(self) -> contextlib.AbstractAsyncContextManager[tuple[Any, Any]]:
        return self._stdio() if self.spec.command is not None else self._http()

    @contextlib.asynccontextmanager
    async def _stdio(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio

        spec = self.spec
        assert spec.command is not None
        cwd = self.host.world / spec.cwd if spec.cwd else self.host.world
        if not cwd.resolve().is_relative_to(self.host.world):
            raise ToolSourceError(f"mcp:{spec.name}: its cwd leaves the world")
        serving = self.host.sandbox.serve(
            [spec.command, *spec.args],
            cwd=cwd,
            env=self.secrets,
            egress=self.egress,
            read_only=[Path(m) for m in spec.mounts],
        )
        async with serving as process:
            self._process = process
            reading, read = anyio.create_memory_object_stream[Any](16)
            write, writing = anyio.create_memory_object_stream[Any](16)
            jobs = (
                lambda: self._pump_out(process, reading),
                lambda: _pump_in(process, writing),
                lambda: self._drain_stderr(process),
                lambda: self._watch(process),
            )
            async with anyio.create_task_group() as group:
                for job in jobs:
                    group.start_soon(_quietly, job)
                try:
                    yield read, write
                finally:
                    group.cancel_scope.cancel()

    async def _pump_out(self, process: asyncio.subprocess.Process, reading: Any) -> None:
        """The server's stdout, one JSON-RPC message a line, into the session."""
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        assert process.stdout is not None
        async with reading:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:
                    self.reason = "it wrote a message longer than the line limit"
                    break
                if not line:
                    break
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError as error:  # the session reports it and reads on
                    await reading.send(error)
                    continue
                await reading.send(SessionMessage(message))

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        """Read the server's stderr (so it never blocks on it), keeping its tail."""
        assert process.stderr is not None
        while chunk := await process.stderr.read(4096):
            tail = self._stderr + chunk.decode("utf-8", "replace")
            self._stderr = tail[-STDERR_TAIL:]

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """Notice the server's end: its exit code, and the reason it ended."""
        code = await process.wait()
        self.exit_code = code
        stopped = self._stop.is_set()
        if not stopped:
            self.reason = f"exited (code {code})"
        self.ended.set()
        if not stopped:
            self.on_end(self)

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[tuple[Any, Any]]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        spec = self.spec
        assert spec.url is not None
        host, problem = url_host(spec.url)
        if host is None:
            raise ToolSourceError(f"mcp:{spec.name}: {problem}")
        parts = urlsplit(spec.url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        if self.egress is None:
            reason = "the run may reach no host (its sandbox.network is empty)"
            raise ToolSourceError(f"mcp:{spec.name}: {host}:{port} refused: {reason}")
        decision = await self.egress(host, port)
        if decision.verdict != "allow":
            raise ToolSourceError(f"mcp:{spec.name}: {host}:{port} refused: {decision.reason}")
        client = httpx2.AsyncClient(
            headers=self.secrets, timeout=httpx2.Timeout(30, read=300), trust_env=False
        )
        async with client, streamable_http_client(spec.url, http_client=client) as streams:
            yield streams

    def _why(self, error: BaseException) -> str:
        """A one-line reason, with the code and last stderr line of a stdio server that ended."""
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        code = self.exit_code
        if code is None and self._process is not None and (self._process.returncode or 0) >= 0:
            code = self._process.returncode  # it exited on its own before it was watched
        if code is not None:
            why = f"exited (code {code})"
        else:
            why = f"{type(error).__name__}: {error}"[:300]
        tail = self._stderr.strip().splitlines()
        return f"{why}; stderr: {tail[-1][:300]}" if tail else why


async def _pump_in(process: asyncio.subprocess.Process, writing: Any) -> None:
    """The session's messages to the server's stdin, one a line."""
    assert process.stdin is not None
    async with writing:
        async for item in writing:
            text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
            process.stdin.write(text.encode() + b"\n")
            await process.stdin.drain()


async def _quietly(job: Callable[[], Awaitable[None]]) -> None:
    """Run a pipe task; a pipe closing under it is the end of the server, not an error."""
    with contextlib.suppress(Exception):
        await job()


def recording_hook(
    server: str,
    egress: EgressHook | None,
    record: Callable[[EgressDecision], Awaitable[None]],
) -> EgressHook | None:
    """``egress`` recording each host and port's first decision (``mcp.egress.decided``)."""
    if egress is None:
        return None
    decided: dict[tuple[str, int], EgressDecision] = {}

    async def decide(host: str, port: int) -> EgressDecision:
        key = (host.lower(), port)
        if key in decided:
            return decided[key]
        decision = decided[key] = await egress(host, port)
        await record(decision)
        return decision

    return decide


def _version() -> str:
    """Helix's installed version, as the server is told (``clientInfo``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helix-harness")
    except PackageNotFoundError:
        return "dev"
