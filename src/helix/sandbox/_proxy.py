"""The filtering egress proxy: HTTP and ``CONNECT``, run by Helix outside the sandbox.

A command reaches the network only through this proxy: every connection it attempts
names a host, which the run's ``EgressHook`` allows or refuses (and records). Plain
HTTP requests must use the absolute form (``GET http://host/path``) and are forwarded
with ``Connection: close``, so one client connection can never be reused for a second,
unchecked host; HTTPS goes through ``CONNECT host:443`` and is relayed as opaque bytes.

Each command gets its own listening socket (a channel), so every decision knows which
call it belongs to; the proxy itself is made once per sandbox, when a command first
needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import uuid
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from ._egress import EgressHook

_MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024
_CONNECT_TIMEOUT_S = 15.0
_HOP_BY_HOP = (b"proxy-connection", b"connection", b"keep-alive", b"proxy-authorization")


def proxy_environment(url: str) -> dict[str, str]:
    """The variables that point common clients (curl, pip, Python, git) at ``url``."""
    names = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
    return {name: url for name in names} | {"no_proxy": "", "NO_PROXY": ""}


class EgressProxy:
    """Opens per-command channels (TCP or Unix socket) that filter through a hook."""

    def __init__(self) -> None:
        self._folder: Path | None = None

    def folder(self) -> Path:
        """A private directory for Unix sockets, removed with the proxy."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="helix-proxy-"))
            self._folder.chmod(0o700)
            weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)
        return self._folder

    @contextlib.asynccontextmanager
    async def tcp_channel(self, hook: EgressHook, host: str = "127.0.0.1") -> AsyncIterator[int]:
        """Listen on a free port of ``host`` for one command; yields the port."""
        connections: dict[asyncio.StreamWriter, asyncio.Task[None]] = {}
        server = await asyncio.start_server(lambda r, w: _serve(r, w, hook, connections), host, 0)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            await _shut(server, connections)

    @contextlib.asynccontextmanager
    async def unix_channel(self, hook: EgressHook) -> AsyncIterator[Path]:
        """Listen on a fresh Unix socket for one command; yields its path."""
        connections: dict[asyncio.StreamWriter, asyncio.Task[None]] = {}
        path = self.folder() / f"{uuid.uuid4().hex[:16]}.sock"
        server = await asyncio.start_unix_server(
            lambda r, w: _serve(r, w, hook, connections), str(path)
        )
        try:
            yield path
        finally:
            await _shut(server, connections)
            path.unlink(missing_ok=True)


async def _shut(
    server: asyncio.Server, connections: dict[asyncio.StreamWriter, asyncio.Task[None]]
) -> None:
    server.close()
    handlers = list(connections.values())
    for writer, handler in list(connections.items()):  # the command is over: so are these
        writer.close()
        handler.cancel()
    await asyncio.gather(*handlers, return_exceptions=True)
    await server.wait_closed()


async def _serve(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    hook: EgressHook,
    connections: dict[asyncio.StreamWriter, asyncio.Task[None]],
) -> None:
    handler = asyncio.current_task()
    assert handler is not None
    connections[writer] = handler
    try:
        await _handle(reader, writer, hook)
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        pass  # a broken or malformed client connection concerns only that client
    except asyncio.CancelledError:
        pass  # the channel closed under it (its command has ended): nothing to report
    finally:
        connections.pop(writer, None)
        writer.close()


async def _handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hook: EgressHook
) -> None:
    head = await _read_head(reader)
    if head is None:
        return await _answer(writer, 400, "the request head is malformed or too long")
    request_line, _, rest = head.partition(b"\r\n")
    parts = request_line.split(b" ")
    if len(parts) != 3:
        return await _answer(writer, 400, "malformed request line")
    method, target, version = parts
    if method == b"CONNECT":
        host, port = _split_authority(target.decode("latin-1"), default_port=443)
        tunnel = True
    elif target.lower().startswith(b"http://"):
        authority, _, path = target[7:].partition(b"/")
        host, port = _split_authority(authority.decode("latin-1"), default_port=80)
        request_line = b" ".join((method, b"/" + path, version))
        tunnel = False
    else:
        return await _answer(
            writer, 400, "use an absolute http:// URL or CONNECT through the proxy"
        )
    if host is None:
        return await _answer(writer, 400, "the request names no valid host and port")
    decision = await hook(host, port)
    if decision.verdict != "allow":
        return await _answer(writer, 403, f"helix egress: {decision.reason}")
    try:
        upstream_reader, upstream_writer = await asyncio.wait_for(
            asyncio.open_connection(decision.host, port), _CONNECT_TIMEOUT_S
        )
    except (OSError, TimeoutError) as error:
        return await _answer(writer, 502, f"helix egress: cannot reach {host}:{port}: {error}")
    try:
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream_writer.write(request_line + b"\r\n" + _forwarded_headers(rest))
        await writer.drain()
        async with asyncio.TaskGroup() as relay:
            relay.create_task(_pipe(reader, upstream_writer))
            relay.create_task(_pipe(upstream_reader, writer))
    finally:
        upstream_writer.close()


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        data = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.LimitOverrunError, asyncio.IncompleteReadError):
        return None
    return data if len(data) <= _MAX_HEAD else None


def _split_authority(authority: str, *, default_port: int) -> tuple[str | None, int]:
    """``host`` and ``port`` of ``host[:port]`` (``[v6]:port`` too); ``None`` if malformed."""
    if "@" in authority or not authority:
        return None, 0  # credentials in the authority hide the real host from readers
    host, port_text = authority, ""
    if authority.startswith("["):
        host, _, after = authority[1:].partition("]")
        port_text = after[1:] if after.startswith(":") else ""
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    try:
        port = int(port_text) if port_text else default_port
    except ValueError:
        return None, 0
    if not host or not 0 < port < 65536:
        return None, 0
    return host, port


def _forwarded_headers(rest: bytes) -> bytes:
    """The client's headers minus hop-by-hop ones, plus ``Connection: close``."""
    lines = [line for line in rest.split(b"\r\n") if line]
    kept = [line for line in lines if line.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
    return b"".join(line + b"\r\n" for line in kept) + b"Connection: close\r\n\r\n"


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        sink.close()


async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    reasons = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}
    body = (message + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {reasons[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
