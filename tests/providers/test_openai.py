"""The OpenAI adapter and every OpenAI-compatible preset, against the mock server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helix.providers import ModelAdapter, ModelRequest, Scenario, UserMessage
from helix.providers._provider import OPENAI_COMPATIBLE, PROVIDERS
from helix.providers._registry import open_model
from helix.testing import MockModelServer
from helix.testing.conformance import MakeAdapter, ModelAdapterConformance


def check_openai_payload(body: dict[str, Any], request: ModelRequest) -> None:
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1] == {"role": "user", "content": "Summarise notes.txt"}
    assistant = messages[2]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Reading it."
    (call,) = assistant["tool_calls"]
    assert call["id"] == "call_a"
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": "notes.txt"}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_a", "content": "buy milk"}
    assert messages[4] == {"role": "user", "content": "One line, please."}
    (tool,) = body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "read_file"
    assert tool["function"]["parameters"] == request.tools[0].parameters
    assert body["max_tokens"] == 128
    assert body["temperature"] == 0.25
    assert body["stop"] == ["END"]


class TestOpenAIConformance(ModelAdapterConformance):
    @pytest.fixture
    def make_adapter(self) -> MakeAdapter:
        def make(url: str, key: str) -> ModelAdapter:
            env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": f"{url}/v1"}
            return open_model("openai:gpt-4.1", env=env)

        return make

    def check_payload(self, body: dict[str, Any], request: ModelRequest) -> None:
        check_openai_payload(body, request)


@pytest.fixture(params=OPENAI_COMPATIBLE)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestPresetConformance(ModelAdapterConformance):
    """Each preset, configured only through its own variables."""

    @pytest.fixture
    def make_adapter(self, preset: str) -> MakeAdapter:
        spec = PROVIDERS[preset]

        def make(url: str, key: str) -> ModelAdapter:
            assert spec.base_url_env is not None
            ollama = spec.base_url_env == "OLLAMA_HOST"
            base = url.removeprefix("http://") if ollama else f"{url}/v1"
            env = {spec.base_url_env: base}
            if spec.key_env:
                env[spec.key_env] = key
            return open_model(f"{preset}:some-model", env=env)

        return make

    def check_payload(self, body: dict[str, Any], request: ModelRequest) -> None:
        check_openai_payload(body, request)


async def test_each_preset_reads_its_own_variables(preset: str) -> None:
    spec = PROVIDERS[preset]
    with MockModelServer(Scenario.of({"text": "hi"})) as server:
        assert spec.base_url_env is not None
        url = server.url.removeprefix("http://") if preset == "ollama" else server.openai_base_url
        env = {spec.base_url_env: url}
        if spec.key_env:
            env[spec.key_env] = f"key-for-{preset}"
        adapter = open_model(f"{preset}:m1", env=env)
        try:
            response = await adapter.request(ModelRequest(messages=(UserMessage("x"),)))
        finally:
            await adapter.aclose()
    assert response.text == "hi"
    (sent,) = server.requests
    assert sent.body["model"] == "m1"
    assert adapter.name == f"{preset}:m1"
    if spec.key_env:
        assert sent.api_key == f"key-for-{preset}"


async def test_an_error_inside_a_stream_is_a_model_error() -> None:
    from helix.errors import ModelRateLimitedError

    failing = {"error": {"status": 429, "message": "quota", "mid_stream": True}}
    with MockModelServer(Scenario.of(failing)) as server:
        env = {"OPENAI_API_KEY": "k" * 12, "OPENAI_BASE_URL": server.openai_base_url}
        adapter = open_model("openai:gpt-4.1", env=env)
        try:
            with pytest.raises(ModelRateLimitedError, match="quota"):
                async for _ in adapter.stream(ModelRequest(messages=(UserMessage("x"),))):
                    pass
        finally:
            await adapter.aclose()


@pytest.mark.parametrize("reported", [True, False])
async def test_collect_estimates_usage_a_stream_left_out(reported: bool) -> None:
    from helix.providers import ToolSpec, collect

    reply = {"text": "All done here.", "tool_calls": [{"name": "note", "args": {"x": "yz"}}]}
    request = ModelRequest(
        messages=(UserMessage("Write the note, please."),),
        system="You are terse.",
        tools=(ToolSpec("note", "Writes a note."),),
    )
    with MockModelServer(Scenario.of(reply, reply), stream_usage=reported) as server:
        env = {"OPENAI_API_KEY": "k" * 12, "OPENAI_BASE_URL": server.openai_base_url}
        adapter = open_model("openai:gpt-4.1", env=env)
        try:
            estimated = await collect(adapter.stream(request), "openai", request=request)
            bare = await collect(adapter.stream(request), "openai")
        finally:
            await adapter.aclose()
    assert estimated.text == bare.text == "All done here."
    assert [(c.name, c.args) for c in estimated.tool_calls] == [("note", {"x": "yz"})]
    usage = estimated.usage
    if reported:  # the server's counts, as they are
        assert usage == bare.usage
        assert not usage.estimated
        assert usage.input_tokens > 0
        return
    assert bare.usage.input_tokens == bare.usage.output_tokens == 0  # no request: no guess
    assert usage.estimated
    assert usage.output_tokens == len('All done here.{"x": "yz"}') // 4
    words = "You are terse.Write the note, please.noteWrites a note."
    assert usage.input_tokens > len(words) // 4  # the tool's schema counts too
