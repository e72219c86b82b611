"""The Gemini adapter, through the official ``google-genai`` SDK, against the mock server."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from helix.errors import MissingKeyError, ModelRateLimitedError
from helix.providers import (
    AssistantMessage,
    ModelAdapter,
    ModelRequest,
    Scenario,
    ToolCall,
    ToolResult,
    UserMessage,
    collect,
)
from helix.providers._registry import open_model
from helix.providers._retry import ModelFailure, RetryingModel
from helix.testing import MockModelServer
from helix.testing.conformance import (
    KEY,
    MakeAdapter,
    ModelAdapterConformance,
    simple_request,
)

MODEL = "google:gemini-2.5-flash"


def google(url: str, key: str, model: str = MODEL) -> ModelAdapter:
    return open_model(model, env={"GEMINI_API_KEY": key, "GOOGLE_GEMINI_BASE_URL": url})


def declared_schema(declaration: dict[str, Any]) -> Any:
    # The SDK sends this one field under its Python (snake_case) name; the API takes both.
    return declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))


class TestGoogleConformance(ModelAdapterConformance):
    arguments_as_text = False  # Gemini's arguments are a structured value

    @pytest.fixture
    def make_adapter(self) -> MakeAdapter:
        return google

    def check_payload(self, body: dict[str, Any], request: ModelRequest) -> None:
        assert body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
        user, model, results, last = body["contents"]
        assert user == {"role": "user", "parts": [{"text": "Summarise notes.txt"}]}
        assert model["role"] == "model"
        text, call = model["parts"]
        assert text == {"text": "Reading it."}
        assert call["functionCall"] == {
            "id": "call_a",
            "name": "read_file",
            "args": {"path": "notes.txt"},
        }
        assert results == {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_a",
                        "name": "read_file",
                        "response": {"output": "buy milk"},
                    }
                }
            ],
        }
        assert last == {"role": "user", "parts": [{"text": "One line, please."}]}
        (tool,) = body["tools"]
        (declaration,) = tool["functionDeclarations"]
        assert declaration["name"] == "read_file"
        assert declaration["description"] == request.tools[0].description
        assert declared_schema(declaration) == request.tools[0].parameters
        generation = body["generationConfig"]
        assert generation["maxOutputTokens"] == 128
        assert generation["temperature"] == 0.25
        assert generation["stopSequences"] == ["END"]
        assert "automaticFunctionCalling" not in body  # the SDK's own setting stays local


async def call(adapter: ModelAdapter, request: ModelRequest) -> Any:
    try:
        return await adapter.request(request)
    finally:
        await adapter.aclose()


async def test_a_failed_tool_result_is_sent_as_an_error() -> None:
    calls = (ToolCall("c1", "read_file", {"path": "a"}), ToolCall("c2", "read_file", {"path": "b"}))
    request = ModelRequest(
        messages=(
            UserMessage("Read both."),
            AssistantMessage("", calls),
            ToolResult("c1", "read_file", "alpha"),
            ToolResult("c2", "read_file", "no such file: b", ok=False),
        )
    )
    with MockModelServer(Scenario.of({"text": "b is missing"})) as server:
        response = await call(google(server.url, KEY), request)
    assert response.text == "b is missing"
    (sent,) = server.requests
    _, model, results = sent.body["contents"]
    assert [p["functionCall"]["id"] for p in model["parts"]] == ["c1", "c2"]
    assert results["role"] == "user"
    assert [p["functionResponse"] for p in results["parts"]] == [
        {"id": "c1", "name": "read_file", "response": {"output": "alpha"}},
        {"id": "c2", "name": "read_file", "response": {"error": "no such file: b"}},
    ]


async def test_a_rate_limit_is_retried_after_the_time_asked() -> None:
    scenario = Scenario.of(
        {"error": {"status": 429, "message": "quota", "headers": {"Retry-After": "3"}}},
        {"text": "done"},
    )
    delays: list[float] = []
    failures: list[ModelFailure] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    async def record(failure: ModelFailure) -> None:
        failures.append(failure)

    with MockModelServer(scenario) as server:
        model = RetryingModel(google(server.url, KEY), on_failure=record, sleep=sleep)
        response = await call(model, simple_request())
    assert response.text == "done"
    assert delays == [3.0]
    (failure,) = failures
    assert isinstance(failure.error, ModelRateLimitedError)
    assert failure.error.retry_after == 3.0
    assert "quota" in str(failure.error)
    assert len(server.requests) == 2  # the SDK did not retry on its own


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(MissingKeyError, match="GEMINI_API_KEY"):
        open_model(MODEL, env={})


class FixedGemini:
    """A server that answers every Gemini call with one body, as real Gemini may answer:
    calls without ids, carrying a thought signature (the mock server always adds ids)."""

    SIGNATURE = b"opaque-signature"

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        reply = {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Reading."},
                            {
                                "functionCall": {"name": "read_file", "args": {"path": "a"}},
                                "thoughtSignature": base64.b64encode(self.SIGNATURE).decode(),
                            },
                            {"functionCall": {"name": "read_file", "args": {"path": "b"}}},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 4,
                "thoughtsTokenCount": 6,
            },
        }
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                bodies.append(json.loads(self.rfile.read(length)))
                stream = "streamGenerateContent" in self.path
                data = (f"data: {json.dumps(reply)}\n\n" if stream else json.dumps(reply)).encode()
                self.send_response(200)
                self.send_header(
                    "Content-Type", "text/event-stream" if stream else "application/json"
                )
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FixedGemini:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


async def test_calls_without_ids_get_distinct_ids_and_keep_their_signatures() -> None:
    with FixedGemini() as server:
        adapter = google(server.url, KEY, "google:gemini-3-flash-preview")
        try:
            first = await adapter.request(simple_request())
            streamed = await collect(adapter.stream(simple_request()), adapter.provider)
            replay = ModelRequest(
                messages=(
                    UserMessage("Read a and b."),
                    AssistantMessage(first.text, first.tool_calls),
                    *(ToolResult(c.id, c.name, "text") for c in first.tool_calls),
                )
            )
            await adapter.request(replay)
        finally:
            await adapter.aclose()
    ids = [c.id for c in (*first.tool_calls, *streamed.tool_calls)]
    assert len(set(ids)) == 4
    assert [c.args for c in streamed.tool_calls] == [c.args for c in first.tool_calls]
    assert (first.text, first.stop_reason) == ("Reading.", "tool_calls")
    assert (streamed.text, streamed.stop_reason) == ("Reading.", "tool_calls")
    assert (first.usage.input_tokens, first.usage.output_tokens) == (10, 10)  # thinking counts
    assert streamed.usage == first.usage
    parts = server.bodies[2]["contents"][1]["parts"]
    assert [p["functionCall"]["id"] for p in parts[1:]] == [c.id for c in first.tool_calls]
    assert base64.b64decode(parts[1]["thoughtSignature"]) == FixedGemini.SIGNATURE
    assert "thoughtSignature" not in parts[2]


async def test_gemini_3_replays_get_a_thought_signature() -> None:
    call_a = ToolCall("call_a", "read_file", {"path": "a"})
    call_b = ToolCall("call_b", "read_file", {"path": "b"})
    request = ModelRequest(
        messages=(
            UserMessage("Read a and b."),
            AssistantMessage("", (call_a, call_b)),
            ToolResult("call_a", "read_file", "alpha"),
            ToolResult("call_b", "read_file", "beta"),
        )
    )
    with MockModelServer(Scenario.of({"text": "ok"}, {"text": "ok"})) as server:
        await call(google(server.url, KEY, "google:gemini-3-flash-preview"), request)
        await call(google(server.url, KEY, "google:gemini-2.5-flash"), request)
    three, two = (r.body["contents"][1]["parts"] for r in server.requests)
    assert base64.b64decode(three[0]["thoughtSignature"]) == b"skip_thought_signature_validator"
    assert "thoughtSignature" not in three[1]  # only a step's first call carries one
    assert all("thoughtSignature" not in p for p in two)
