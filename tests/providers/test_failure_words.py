"""A failed model call always says why: the server's words, or that it gave none."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from helix.errors import ModelCallError, ModelRequestError, ModelUnavailableError
from helix.providers import ModelRequest, RetryingModel, RetryPolicy, Scenario, UserMessage
from helix.providers._registry import open_model
from helix.testing import MockModelServer

REQUEST = ModelRequest(messages=(UserMessage("hi"),))


async def _fails(url: str) -> ModelCallError:
    adapter = open_model("llamacpp:m", env={"LLAMACPP_BASE_URL": url})
    try:
        with pytest.raises(ModelCallError) as caught:
            await adapter.request(REQUEST)
    finally:
        await adapter.aclose()
    return caught.value


@pytest.mark.parametrize(
    ("status", "kind"), [(500, ModelUnavailableError), (400, ModelRequestError)]
)
async def test_an_error_with_an_empty_message_says_the_server_gave_none(
    status: int, kind: type[ModelCallError]
) -> None:
    with MockModelServer(Scenario.of({"error": {"status": status, "message": ""}})) as server:
        error = await _fails(server.openai_base_url)
    assert isinstance(error, kind)
    assert str(error) == f"llamacpp answered {status}: no detail from the server"


class _Fixed(BaseHTTPRequestHandler):
    """Answers every POST with the status and body the server was made with."""

    server: Any

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body, kind = self.server.answer
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fixed() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fixed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/v1"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        # FastAPI's validation error, as llama-cpp-python's server sends one.
        (
            (422, json.dumps({"detail": [{"loc": ["body", "messages", 1, "content"],
                                          "msg": "Input should be a valid string"}]}),
             "application/json"),
            "llamacpp answered 422: body.messages.1.content: Input should be a valid string",
        ),
        ((500, json.dumps({"detail": "model crashed"}), "application/json"),
         "llamacpp answered 500: model crashed"),
        ((404, json.dumps({"error": "model 'm' not found"}), "application/json"),
         "llamacpp answered 404: model 'm' not found"),
        ((502, "Bad Gateway", "text/plain"), "llamacpp answered 502: Bad Gateway"),
        ((500, "", "text/plain"), "llamacpp answered 500: no detail from the server"),
        ((500, "{}", "application/json"), "llamacpp answered 500: no detail from the server"),
    ],
)  # fmt: skip
async def test_the_servers_own_words_are_kept_whatever_their_shape(
    fixed: ThreadingHTTPServer, answer: tuple[int, str, str], said: str
) -> None:
    fixed.answer = answer  # type: ignore[attr-defined]
    error = await _fails(_url(fixed))
    assert str(error) == said


def closed_port() -> int:
    """A port nothing listens on: taken from the system, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_refused_connection_says_why() -> None:
    port = closed_port()
    error = await _fails(f"http://127.0.0.1:{port}/v1")
    assert isinstance(error, ModelUnavailableError)
    said = str(error)
    assert said.startswith(f"llamacpp at http://127.0.0.1:{port}/v1 could not be reached: ")
    assert "refused" in said.lower()  # the cause, not only the SDK's "Connection error."


def test_a_model_error_made_with_no_message_names_its_kind_and_status() -> None:
    error = ModelUnavailableError("", provider="myplugin", status=503)
    assert str(error) == "ModelUnavailableError from myplugin (HTTP 503): no detail given"
    assert str(ModelCallError("  ", provider="p")) == "ModelCallError from p: no detail given"


async def test_each_failed_attempt_reported_carries_words() -> None:
    reported: list[str] = []

    async def hear(failure: Any) -> None:
        reported.append(str(failure.error))

    failing: dict[str, Any] = {"error": {"status": 500, "message": ""}}
    with MockModelServer(Scenario.of(failing, {"text": "ok"})) as server:
        inner = open_model("llamacpp:m", env={"LLAMACPP_BASE_URL": server.openai_base_url})
        policy = RetryPolicy(base_delay_s=0.0, jitter=0.0)
        model = RetryingModel(inner, policy, on_failure=hear)
        try:
            response = await model.request(REQUEST)
        finally:
            await model.aclose()
    assert response.text == "ok"
    assert reported == ["llamacpp answered 500: no detail from the server"]
