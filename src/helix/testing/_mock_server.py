"""``MockModelServer``: a real HTTP server that plays a scenario in providers' dialects.

It speaks OpenAI Chat Completions (``/v1/chat/completions``), the Anthropic Messages
API (``/v1/messages``) and Gemini (``/v1beta/models/M:generateContent`` and
``:streamGenerateContent``), plain and streamed as server-sent events, and lists models
the way Ollama (``/api/tags``) and OpenAI-compatible servers (``/v1/models``) do. Point an
official SDK at it and nothing in the SDK needs patching::

    with MockModelServer(Scenario.of({"text": "hi"})) as server:
        client = OpenAI(base_url=server.openai_base_url, api_key="test")

Every request is recorded in ``requests`` for assertions. Steps are consumed in order,
whatever the dialect; when they run out the server answers 400 (or starts over, with
``Scenario(repeat=True)``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from helix.providers import Scenario, ScenarioStep

from . import _wire

_GEMINI = re.compile(
    r"^/v1(?:beta|alpha)?/models/([^:/]+):(generateContent|streamGenerateContent)$"
)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    api: str
    """``openai``, ``anthropic``, ``google`` or ``listing``."""
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    stream: bool
    api_key: str | None
    """The credential the client sent, from whichever header its dialect uses."""


class MockModelServer:
    """A scenario-playing model server on 127.0.0.1, in a background thread."""

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        expected_key: str | None = None,
        local_models: list[dict[str, Any]] | None = None,
        port: int = 0,
        stream_usage: bool = True,
    ) -> None:
        """Create the server (``start`` or a ``with`` block runs it).

        Args:
            scenario: The steps to play; an empty scenario answers every call with 400.
            expected_key: When set, any request carrying another credential gets a 401.
            local_models: Entries served by ``/api/tags`` (Ollama's ``models`` list) and,
                by name, ``/v1/models``.
            port: The port to listen on; 0 picks a free one.
            stream_usage: ``False``: an OpenAI stream never ends with usage, even when
                asked (``stream_options.include_usage``), as llama-cpp-python's server.
        """
        self.scenario = scenario or Scenario(steps=[])
        self.expected_key = expected_key
        self.local_models = local_models or []
        self.stream_usage = stream_usage
        self.requests: list[RecordedRequest] = []
        self._cursor = 0
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._midway = threading.Event()
        """Set by ``release``: a held step (``held``) or a reply paused half-way
        (``pause_mid_stream``) goes on."""
        self._httpd = _Server(("127.0.0.1", port), _Handler, self)
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's root URL (Anthropic's base URL)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The base URL for OpenAI-compatible clients (``…/v1``)."""
        return f"{self.url}/v1"

    def start(self) -> Self:
        """Start serving in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def hold(self) -> None:
        """Keep every reply (after its step's ``delay_s``) until ``release``.

        For a test that must act while a call is in flight, however slow the machine:
        it waits for the request, acts, then releases the reply.
        """
        self._open.clear()

    def release(self) -> None:
        """Send the replies ``hold`` kept, and every later one at once.

        A held step (its ``held``) is answered, and a streamed reply paused half-way
        (its step's ``pause_mid_stream``) goes on.
        """
        self._open.set()
        self._midway.set()

    def stop(self) -> None:
        """Stop serving and release the port (replies still held are sent first)."""
        self._open.set()
        self._midway.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scenario ----------------------------------------------------------------------

    def play(self, scenario: Scenario) -> None:
        """Replace the scenario and start it from its first step."""
        with self._lock:
            self.scenario = scenario
            self._cursor = 0

    def _next_step(self) -> tuple[int, ScenarioStep] | None:
        with self._lock:
            steps = self.scenario.steps
            if self._cursor >= len(steps):
                if not (self.scenario.repeat and steps):
                    return None
                self._cursor = 0
            index = self._cursor
            self._cursor += 1
            return index, steps[index]

    @property
    def steps_played(self) -> int:
        """How many steps have been answered so far."""
        return self._cursor


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, mock: MockModelServer) -> None:
        super().__init__(address, handler)
        self.mock = mock


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle's algorithm and the
    # client's delayed ACK that stalls every response by ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests``, not stderr."""

    # -- routing -----------------------------------------------------------------------

    def do_GET(self) -> None:
        """Model listings, as Ollama and OpenAI-compatible servers give them."""
        path = urlsplit(self.path).path
        mock = self.server.mock
        self._record("listing", {}, False)
        if path == "/api/tags":
            self._json(200, {"models": mock.local_models})
        elif path in ("/v1/models", "/models"):
            data = [
                {"id": m["name"], "object": "model", "owned_by": "mock"} for m in mock.local_models
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def do_POST(self) -> None:
        """Model calls in each dialect."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        path = urlsplit(self.path).path
        gemini = _GEMINI.match(path)
        if path.endswith("/chat/completions"):
            self._answer("openai", body, raw, bool(body.get("stream")), body.get("model", ""))
        elif path.endswith("/messages"):
            self._answer("anthropic", body, raw, bool(body.get("stream")), body.get("model", ""))
        elif gemini is not None:
            stream = gemini.group(2) == "streamGenerateContent"
            self._answer("google", body, raw, stream, gemini.group(1))
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    # -- answering ---------------------------------------------------------------------

    def _answer(self, api: str, body: dict[str, Any], raw: bytes, stream: bool, model: str) -> None:
        mock = self.server.mock
        recorded = self._record(api, body, stream)
        if mock.expected_key is not None and recorded.api_key != mock.expected_key:
            self._error(api, 401, "invalid api key", {})
            return
        found = mock._next_step()
        if found is None:
            self._error(api, 400, "the mock scenario has no more steps", {})
            return
        index, step = found
        if step.delay_s:
            time.sleep(step.delay_s)
        if step.held:
            mock._midway.wait()
        mock._open.wait()
        if step.error is not None:
            error = step.error
            if error.mid_stream and stream and api in ("openai", "anthropic"):
                self._stream(_wire.stream_error(api, model, error.status, error.message, step.text))
            else:
                self._error(api, error.status, error.message, error.headers)
            return
        reply = _wire.resolve(step, index, model, raw)
        if not stream:
            whole = {
                "openai": _wire.openai_body,
                "anthropic": _wire.anthropic_body,
                "google": _wire.gemini_body,
            }[api](reply)
            self._json(200, whole)
            return
        if api == "openai":
            asked = bool((body.get("stream_options") or {}).get("include_usage"))
            include_usage = asked and mock.stream_usage
            events = _wire.openai_stream(reply, include_usage)
        elif api == "anthropic":
            events = _wire.anthropic_stream(reply)
        else:
            events = _wire.gemini_stream(reply)
        self._stream(events, _wire.first_text_end(api) if step.pause_mid_stream else None)

    def _record(self, api: str, body: dict[str, Any], stream: bool) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        key = headers.get("x-api-key") or headers.get("x-goog-api-key")
        if key is None and headers.get("authorization", "").lower().startswith("bearer "):
            key = headers["authorization"][7:]
        if key is None:
            keys = parse_qs(urlsplit(self.path).query).get("key")
            key = keys[0] if keys else None
        recorded = RecordedRequest(api, self.command, self.path, headers, body, stream, key)
        with self.server.mock._lock:
            self.server.mock.requests.append(recorded)
        return recorded

    def _error(self, api: str, status: int, message: str, headers: dict[str, str]) -> None:
        body = {
            "openai": _wire.openai_error,
            "anthropic": _wire.anthropic_error,
            "google": _wire.gemini_error,
        }[api](status, message)
        self._json(status, body, headers)

    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[bytes], pause_at: int | None = None) -> None:
        """Send ``events`` as a chunked event stream; at ``pause_at``, wait for ``release``."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for at, event in enumerate(events):
            if at == pause_at:
                self.wfile.flush()
                self.server.mock._midway.wait()
                self.server.mock._midway.clear()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
