"""The conformance suite every model adapter passes, through its official SDK over HTTP.

Subclass ``ModelAdapterConformance`` (in a module whose class name starts with
``Test``), provide ``make_adapter`` (a fixture returning ``(server_url, api_key) ->
ModelAdapter``) and implement ``check_payload`` for the adapter's dialect. Every test
runs against a real ``MockModelServer``; nothing in the SDK is patched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from helix.errors import (
    ModelAuthError,
    ModelRateLimitedError,
    ModelRequestError,
    ModelUnavailableError,
)
from helix.providers import (
    LOCAL_KEY,
    AssistantMessage,
    ModelAdapter,
    ModelFailure,
    ModelRequest,
    RetryingModel,
    RetryPolicy,
    Scenario,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
    collect,
)
from helix.testing._mock_server import MockModelServer

MakeAdapter = Callable[[str, str], ModelAdapter]
KEY = "sk-test-conformance-0123456789"

READ_FILE = ToolSpec(
    "read_file",
    "Read a file in the world.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def simple_request(text: str = "Say hello.") -> ModelRequest:
    """A one-message request with a system prompt and a tool."""
    return ModelRequest(
        messages=(UserMessage(text),), system="You are terse.", tools=(READ_FILE,), max_tokens=256
    )


def history_request() -> ModelRequest:
    """A request holding every kind of message, and every optional setting."""
    call = ToolCall("call_a", "read_file", {"path": "notes.txt"})
    return ModelRequest(
        messages=(
            UserMessage("Summarise notes.txt"),
            AssistantMessage("Reading it.", (call,)),
            ToolResult("call_a", "read_file", "buy milk"),
            UserMessage("One line, please."),
        ),
        system="You are terse.",
        tools=(READ_FILE,),
        max_tokens=128,
        temperature=0.25,
        stop=("END",),
    )


class _Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class _Failures(list[ModelFailure]):
    """Keeps each failed attempt ``RetryingModel`` reports (its ``on_failure`` hook)."""

    async def __call__(self, failure: ModelFailure) -> None:
        self.append(failure)


class ModelAdapterConformance:
    """What every adapter does the same way. Subclass and provide ``make_adapter``."""

    arguments_as_text: bool = True
    """The dialect carries a call's arguments as text, which may not parse (Gemini's are
    structured values, which cannot be malformed: it sets this to ``False``)."""

    @pytest.fixture
    def server(self) -> Iterator[MockModelServer]:
        """A mock model server on a free port."""
        with MockModelServer() as server:
            yield server

    def check_payload(self, body: dict[str, Any], request: ModelRequest) -> None:
        """Assert the wire body carries everything in ``request`` (dialect-specific)."""
        raise NotImplementedError

    async def _call(
        self, make_adapter: MakeAdapter, server: MockModelServer, request: ModelRequest
    ) -> Any:
        adapter = make_adapter(server.url, KEY)
        try:
            return await adapter.request(request)
        finally:
            await adapter.aclose()

    # -- replies --------------------------------------------------------------------

    async def test_plain_reply(self, make_adapter: MakeAdapter, server: MockModelServer) -> None:
        usage = {"input_tokens": 12, "output_tokens": 3}
        server.play(Scenario.of({"text": "Hello there.", "usage": usage}))
        response = await self._call(make_adapter, server, simple_request())
        assert response.text == "Hello there."
        assert response.tool_calls == ()
        assert response.stop_reason == "end"
        assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
        assert response.latency_ms > 0
        (sent,) = server.requests
        assert sent.api_key in (KEY, LOCAL_KEY)  # local servers take no key
        assert not sent.stream

    async def test_cached_tokens_are_reported(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        usage = {"input_tokens": 100, "output_tokens": 5, "cached_tokens": 80}
        server.play(Scenario.of({"text": "ok", "usage": usage}))
        response = await self._call(make_adapter, server, simple_request())
        assert response.usage.cached_tokens == 80
        assert response.usage.input_tokens == 100  # every input token, cached or not

    async def test_one_tool_call(self, make_adapter: MakeAdapter, server: MockModelServer) -> None:
        call = {"name": "read_file", "args": {"path": "a.txt", "lines": [1, 2]}}
        server.play(Scenario.of({"text": "", "tool_calls": [call]}))
        response = await self._call(make_adapter, server, simple_request())
        (made,) = response.tool_calls
        assert (made.name, made.args) == ("read_file", {"path": "a.txt", "lines": [1, 2]})
        assert made.id
        assert response.stop_reason == "tool_calls"

    async def test_parallel_tool_calls(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        calls = [
            {"name": "read_file", "args": {"path": "a.txt"}, "id": "c1"},
            {"name": "read_file", "args": {"path": "b.txt"}, "id": "c2"},
        ]
        server.play(Scenario.of({"text": "Reading both.", "tool_calls": calls}))
        response = await self._call(make_adapter, server, simple_request())
        assert [(c.id, c.args["path"]) for c in response.tool_calls] == [
            ("c1", "a.txt"),
            ("c2", "b.txt"),
        ]
        assert response.text == "Reading both."

    async def test_request_carries_the_whole_conversation(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        server.play(Scenario.of({"text": "Milk."}))
        request = history_request()
        await self._call(make_adapter, server, request)
        (sent,) = server.requests
        self.check_payload(sent.body, request)

    async def test_malformed_arguments_are_a_call_that_says_so(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        if not self.arguments_as_text:
            pytest.skip("this dialect's arguments are structured values, never malformed")
        step = {
            "text": "Reading.",
            "tool_calls": [
                {"name": "read_file", "raw_args": '{"path": ', "id": "c1"},
                {"name": "read_file", "raw_args": "[1, 2]", "id": "c2"},
                {"name": "read_file", "args": {"path": "a.txt"}, "id": "c3"},
            ],
        }
        server.play(Scenario.of(step, step))
        adapter = make_adapter(server.url, KEY)
        try:
            whole = await adapter.request(simple_request())
            streamed = await collect(adapter.stream(simple_request()), adapter.provider)
        finally:
            await adapter.aclose()
        for response in (whole, streamed):
            cut, listed, fine = response.tool_calls
            assert (cut.args, cut.raw_args) == ({}, '{"path": ')
            assert cut.malformed is not None
            assert "'read_file' are not JSON" in cut.malformed
            assert listed.args == {}
            assert (
                listed.malformed == "the arguments of 'read_file' are an array, not a JSON object"
            )
            assert (fine.args, fine.malformed, fine.raw_args) == ({"path": "a.txt"}, None, None)

    async def test_an_empty_reply_is_a_reply(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        server.play(Scenario.of({"text": ""}, {"text": ""}))
        adapter = make_adapter(server.url, KEY)
        try:
            whole = await adapter.request(simple_request())
            streamed = await collect(adapter.stream(simple_request()), adapter.provider)
        finally:
            await adapter.aclose()
        for response in (whole, streamed):
            assert (response.text, response.tool_calls) == ("", ())

    # -- streaming --------------------------------------------------------------------

    async def test_streaming_assembles_the_same_response(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        step = {
            "text": "A longer answer, so that it arrives in several pieces.",
            "tool_calls": [
                {"name": "read_file", "args": {"path": "a.txt"}, "id": "c1"},
                {"name": "read_file", "args": {"path": "b/c.txt", "n": 3}, "id": "c2"},
            ],
            "usage": {"input_tokens": 40, "output_tokens": 30},
        }
        server.play(Scenario.of(step, step))
        adapter = make_adapter(server.url, KEY)
        try:
            whole = await adapter.request(simple_request())
            pieces = [d async for d in adapter.stream(simple_request())]
        finally:
            await adapter.aclose()
        streamed = await collect(_replay(pieces), adapter.provider)
        assert sum(isinstance(d, TextDelta) for d in pieces) > 1
        assert (streamed.text, streamed.tool_calls, streamed.stop_reason) == (
            whole.text,
            whole.tool_calls,
            whole.stop_reason,
        )
        assert (streamed.usage.input_tokens, streamed.usage.output_tokens) == (
            whole.usage.input_tokens,
            whole.usage.output_tokens,
        )
        assert server.requests[1].stream

    # -- failures ---------------------------------------------------------------------

    async def test_rate_limit_then_success(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        server.play(
            Scenario.of(
                {"error": {"status": 429, "message": "slow down", "headers": {"Retry-After": "2"}}},
                {"text": "Finally."},
            )
        )
        sleeps, failures = _Sleeps(), _Failures()
        model = RetryingModel(make_adapter(server.url, KEY), on_failure=failures, sleep=sleeps)
        try:
            response = await model.request(simple_request())
        finally:
            await model.aclose()
        assert response.text == "Finally."
        assert sleeps.delays == [2.0]
        (failure,) = failures
        assert isinstance(failure.error, ModelRateLimitedError)
        assert (failure.attempt, failure.retry_in_s) == (1, 2.0)
        assert len(server.requests) == 2

    async def test_server_errors_exhaust_retries(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        server.play(Scenario.of({"error": {"status": 503, "message": "overloaded"}}, repeat=True))
        sleeps, failures = _Sleeps(), _Failures()
        policy = RetryPolicy(max_attempts=3, base_delay_s=0.1, jitter=0)
        model = RetryingModel(
            make_adapter(server.url, KEY), policy, on_failure=failures, sleep=sleeps
        )
        try:
            with pytest.raises(ModelUnavailableError, match="503"):
                await model.request(simple_request())
        finally:
            await model.aclose()
        assert len(server.requests) == 3
        assert sleeps.delays == [0.1, 0.2]
        assert [f.retry_in_s for f in failures] == [0.1, 0.2, None]

    async def test_the_same_server_complaint_twice_is_not_sent_a_third_time(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        said = "Invalid schema for function 'read_file': 'path' is not of type 'object'"
        server.play(Scenario.of({"error": {"status": 500, "message": said}}, repeat=True))
        sleeps, failures = _Sleeps(), _Failures()
        policy = RetryPolicy(max_attempts=4, base_delay_s=0.1, jitter=0)
        model = RetryingModel(
            make_adapter(server.url, KEY), policy, on_failure=failures, sleep=sleeps
        )
        try:
            with pytest.raises(ModelRequestError, match="500 twice") as caught:
                await model.request(simple_request())
        finally:
            await model.aclose()
        assert len(server.requests) == 2
        assert sleeps.delays == [0.1]
        assert [(f.attempt, f.retry_in_s) for f in failures] == [(1, 0.1), (2, None)]
        assert str(caught.value).endswith(said)
        assert failures[-1].error is caught.value

    async def test_different_server_complaints_are_retried(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        errors = [{"error": {"status": 500, "message": f"hiccup {n}"}} for n in range(2)]
        server.play(Scenario.of(*errors, {"text": "Fine now."}))
        model = RetryingModel(
            make_adapter(server.url, KEY), RetryPolicy(base_delay_s=0.1, jitter=0), sleep=_Sleeps()
        )
        try:
            response = await model.request(simple_request())
        finally:
            await model.aclose()
        assert response.text == "Fine now."
        assert len(server.requests) == 3

    async def test_bad_key_fails_fast_naming_the_variable(
        self, make_adapter: MakeAdapter, server: MockModelServer
    ) -> None:
        server.expected_key = "the-right-key-000"
        adapter = make_adapter(server.url, KEY)
        model = RetryingModel(adapter, sleep=_Sleeps())
        try:
            with pytest.raises(ModelAuthError) as caught:
                await model.request(simple_request())
        finally:
            await model.aclose()
        assert len(server.requests) == 1
        message = str(caught.value)
        assert "401" in message
        if adapter.key_env is not None:
            assert adapter.key_env in message
        assert KEY not in message

    async def test_unreachable_server(self, make_adapter: MakeAdapter) -> None:
        adapter = make_adapter("http://127.0.0.1:1", KEY)
        try:
            with pytest.raises(ModelUnavailableError, match="could not be reached"):
                await adapter.request(simple_request())
        finally:
            await adapter.aclose()


async def _replay(items: list[Any]) -> Any:
    for item in items:
        yield item
