"""The Anthropic Messages adapter, against the mock server."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest

from helix.errors import MissingKeyError, ModelUnavailableError
from helix.providers import (
    AssistantMessage,
    ModelAdapter,
    ModelRequest,
    Scenario,
    StreamEnd,
    TokenUsage,
    ToolCall,
    ToolResult,
    UserMessage,
    collect,
)
from helix.providers._anthropic import AnthropicAdapter
from helix.providers._provider import PROVIDERS
from helix.providers._registry import open_model
from helix.providers._retry import ModelFailure, RetryingModel
from helix.testing import MockModelServer
from helix.testing.conformance import (
    KEY,
    MakeAdapter,
    ModelAdapterConformance,
    simple_request,
)

# Not a real model: the SDK warns about the ones in its deprecation table (claude-sonnet-4-5
# among them), and that table grows with every release.
MODEL = "claude-mock-1"


def _open(url: str, key: str = KEY) -> ModelAdapter:
    # Anthropic's base URL is the server root: the SDK adds /v1/messages itself.
    return open_model(
        f"anthropic:{MODEL}", env={"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": url}
    )


class TestAnthropicConformance(ModelAdapterConformance):
    @pytest.fixture
    def make_adapter(self) -> MakeAdapter:
        return _open

    def check_payload(self, body: dict[str, Any], request: ModelRequest) -> None:
        assert body["model"] == MODEL
        assert body["system"] == "You are terse."
        messages = body["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert messages[0]["content"] == [{"type": "text", "text": "Summarise notes.txt"}]
        assert messages[1]["content"] == [
            {"type": "text", "text": "Reading it."},
            {
                "type": "tool_use",
                "id": "call_a",
                "name": "read_file",
                "input": {"path": "notes.txt"},
            },
        ]
        # The result and the text after it are one user turn, the result first.
        assert messages[2]["content"] == [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "buy milk"},
            {"type": "text", "text": "One line, please."},
        ]
        (tool,) = body["tools"]
        assert tool == {
            "name": "read_file",
            "description": "Read a file in the world.",
            "input_schema": request.tools[0].parameters,
        }
        assert body["max_tokens"] == 128
        assert body["stop_sequences"] == ["END"]
        # API version 2026-10-21, which SDK 2.x sends, rejects every sampling parameter.
        assert request.temperature == 0.25
        assert "temperature" not in body


async def test_failed_results_are_errors_and_one_round_is_one_turn() -> None:
    calls = (ToolCall("c1", "read_file", {"path": "a"}), ToolCall("c2", "read_file", {"path": "b"}))
    request = ModelRequest(
        messages=(
            UserMessage("Read a and b."),
            AssistantMessage("", calls),
            ToolResult("c1", "read_file", "no such file: a", ok=False),
            ToolResult("c2", "read_file", "bee"),
        )
    )
    with MockModelServer(Scenario.of({"text": "a is missing."})) as server:
        adapter = _open(server.url)
        try:
            await adapter.request(request)
        finally:
            await adapter.aclose()
    (sent,) = server.requests
    _, assistant, results = sent.body["messages"]
    assert assistant["content"] == [  # no empty text block before the calls
        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "c2", "name": "read_file", "input": {"path": "b"}},
    ]
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": "no such file: a",
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "c2", "content": "bee"},
        ],
    }


class _Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.mark.parametrize("streamed", [False, True])
async def test_overloaded_is_retried_as_unavailable(streamed: bool) -> None:
    overloaded = {"error": {"status": 529, "message": "Overloaded"}}
    failures: list[ModelFailure] = []

    async def record(failure: ModelFailure) -> None:
        failures.append(failure)

    with MockModelServer(Scenario.of(overloaded, {"text": "Back."})) as server:
        model = RetryingModel(_open(server.url), on_failure=record, sleep=_Sleeps())
        try:
            if streamed:
                response = await collect(model.stream(simple_request()), model.provider)
            else:
                response = await model.request(simple_request())
        finally:
            await model.aclose()
    assert response.text == "Back."
    (failure,) = failures
    assert isinstance(failure.error, ModelUnavailableError)
    assert failure.error.status == 529
    assert "Overloaded" in str(failure.error)
    assert failure.retry_in_s is not None
    assert len(server.requests) == 2


async def test_an_error_event_inside_a_stream_keeps_its_meaning() -> None:
    def sse(event: str, data: dict[str, Any]) -> bytes:
        return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()

    usage = {"input_tokens": 5, "output_tokens": 1}
    message = {"id": "m1", "type": "message", "role": "assistant", "model": MODEL, "content": []}
    start = {"type": "message_start", "message": message | {"usage": usage}}
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = sse("message_start", start) + sse("error", error)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    connection = PROVIDERS["anthropic"].connect({"ANTHROPIC_API_KEY": KEY})
    adapter = AnthropicAdapter(connection, MODEL)
    await adapter.aclose()
    # The answer arrives with status 200, so only the event's type says it was overload.
    adapter._client = anthropic.AsyncAnthropic(
        api_key=KEY,
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)),
    )
    try:
        with pytest.raises(ModelUnavailableError, match="529: Overloaded") as caught:
            async for _ in adapter.stream(simple_request()):
                pass
    finally:
        await adapter.aclose()
    assert caught.value.retryable


async def test_streamed_usage_reports_cached_tokens() -> None:
    usage = {"input_tokens": 100, "output_tokens": 7, "cached_tokens": 80}
    call = {"name": "read_file", "args": {}, "id": "t1"}
    with MockModelServer(Scenario.of({"tool_calls": [call], "usage": usage})) as server:
        adapter = _open(server.url)
        try:
            deltas = [d async for d in adapter.stream(simple_request())]
        finally:
            await adapter.aclose()
    end = deltas[-1]
    assert isinstance(end, StreamEnd)
    assert end.usage == TokenUsage(100, 7, 80)  # all input tokens, 80 of them cached
    assert (end.stop_reason, end.model) == ("tool_calls", MODEL)
    response = await collect(_replay(deltas), adapter.provider)
    assert [(c.id, c.name, c.args) for c in response.tool_calls] == [("t1", "read_file", {})]


def test_a_missing_key_names_its_variable() -> None:
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY") as caught:
        open_model(f"anthropic:{MODEL}", env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    assert caught.value.variable == "ANTHROPIC_API_KEY"


async def _replay(items: list[Any]) -> Any:
    for item in items:
        yield item
