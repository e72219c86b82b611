"""The two transports: stdio (one client, the process that started us) and streamable HTTP.

Over HTTP every request needs ``Authorization: Bearer TOKEN`` (compared in constant
time); anything else is a 401 with ``{"error": {"code": "unauthorized", …}}`` before
the MCP layer sees it. The listening socket is bound by the caller (``bind``), so
``--http 0`` can say which port it got before serving. SIGINT and SIGTERM stop serving
gracefully, so the caller closes its door afterwards (runs stay as their logs say).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin and stdout until it closes stdin.

    SIGTERM ends it as closing stdin does: the caller's cleanup runs.
    """
    from mcp.server.stdio import stdio_server

    task = asyncio.current_task()
    assert task is not None
    terminated: list[bool] = []

    def stop() -> None:
        terminated.append(True)
        task.cancel()

    try:
        with _on_sigterm(stop):
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    except asyncio.CancelledError:
        if not terminated:
            raise
        task.uncancel()


@contextlib.contextmanager
def _on_sigterm(stop: Callable[[], None]) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one); ``OSError`` if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """The MCP endpoint's URL on this socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


async def serve_http(server: Server[Any], sock: socket.socket, *, token: str | None) -> None:
    """Serve streamable HTTP at ``/mcp`` on ``sock`` until SIGINT or SIGTERM.

    ``token``: the bearer token every request must carry; ``None``: no auth (the caller
    allows that on a loopback address only).
    """
    import uvicorn

    host = sock.getsockname()[0]
    app: App = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if token is not None:
        app = BearerGuard(app, token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", proxy_headers=False)
    await _graceful_server(config).serve(sockets=[sock])


class BearerGuard:
    """ASGI: let through only HTTP requests that carry the bearer token."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            await _unauthorized(send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = bytes(value).partition(b" ")
                if scheme.lower() != b"bearer":
                    return False
                return hmac.compare_digest(given.strip(), self._token)
        return False


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {"error": {"code": "unauthorized", "message": "a valid bearer token is required"}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _graceful_server(config: Any) -> Any:
    """Uvicorn's server, stopping on SIGINT/SIGTERM without re-raising them afterwards.

    uvicorn re-raises a caught signal once it has shut down, which would kill this
    process before the caller closes its door; here the caller's cleanup runs instead.
    """
    import uvicorn

    class GracefulServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

    return GracefulServer(config)
