"""Servers' quirks and ``tool_choice``: what reaches the wire, per preset, per dialect."""

from __future__ import annotations

from typing import Any

import pytest

from helix.providers import (
    AssistantMessage,
    ModelAdapter,
    ModelRequest,
    Quirks,
    Scenario,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from helix.providers._provider import OPENAI_COMPATIBLE, PROVIDERS
from helix.providers._registry import open_model
from helix.testing import MockModelServer
from helix.testing.conformance import KEY

READ_FILE = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
CALL = ToolCall("call_1", "read_file", {"path": "notes.txt"})


def after_a_call(**settings: Any) -> ModelRequest:
    """The second turn of a run: the model's call (no text with it), its result, tools."""
    return ModelRequest(
        messages=(
            UserMessage("Summarise notes.txt"),
            AssistantMessage("", (CALL,)),
            ToolResult("call_1", "read_file", "buy milk"),
        ),
        tools=(READ_FILE,),
        **settings,
    )


def preset_env(preset: str, server: MockModelServer) -> dict[str, str]:
    spec = PROVIDERS[preset]
    assert spec.base_url_env is not None
    ollama = spec.base_url_env == "OLLAMA_HOST"
    url = server.url.removeprefix("http://") if ollama else server.openai_base_url
    env = {spec.base_url_env: url}
    if spec.key_env:
        env[spec.key_env] = KEY
    return env


async def sent_body(model: str, request: ModelRequest) -> Any:
    """The body the mock server received for ``request`` sent through ``model``'s adapter."""
    provider = model.split(":", 1)[0]
    with MockModelServer(Scenario.of({"text": "done"})) as server:
        if provider == "anthropic":
            env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        elif provider == "google":
            env = {"GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": server.url}
        else:
            env = preset_env(provider, server)
        adapter: ModelAdapter = open_model(model, env=env)
        try:
            await adapter.request(request)
        finally:
            await adapter.aclose()
    (sent,) = server.requests
    return sent.body


@pytest.mark.parametrize("preset", ["openai", *OPENAI_COMPATIBLE])
async def test_each_preset_is_sent_tool_choice_and_content_its_server_takes(preset: str) -> None:
    body = await sent_body(f"{preset}:m", after_a_call())
    assert body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]
    assistant = body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["id"] == "call_1"
    quirks = PROVIDERS[preset].quirks
    assert assistant["content"] == (None if quirks.null_content_with_tool_calls else "")


def test_llamacpp_declares_that_its_server_refuses_null_content() -> None:
    # llama-cpp-python's server answers 500 "Input should be a valid string" to null.
    assert PROVIDERS["llamacpp"].quirks == Quirks(null_content_with_tool_calls=False)
    assert PROVIDERS["openai"].quirks == Quirks()


async def test_llamacpp_never_gets_null_content_over_a_whole_history() -> None:
    request = ModelRequest(
        messages=(
            UserMessage("go"),
            AssistantMessage("", (CALL,)),
            ToolResult("call_1", "read_file", "x"),
            AssistantMessage(""),  # an empty reply the run told the model about
            UserMessage("go on"),
        ),
        tools=(READ_FILE,),
    )
    body = await sent_body("llamacpp:m", request)
    assert [m.get("content") for m in body["messages"]] == ["go", "", "x", "go on"]


async def test_an_empty_reply_without_calls_is_left_out_of_the_request() -> None:
    request = ModelRequest(messages=(UserMessage("go"), AssistantMessage(""), UserMessage("on")))
    body = await sent_body("openai:m", request)
    assert body["messages"] == [
        {"role": "user", "content": "go"},
        {"role": "user", "content": "on"},
    ]
    assert "tool_choice" not in body
    assert "tools" not in body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("required", "required"),
        ("none", "none"),
        ("read_file", {"type": "function", "function": {"name": "read_file"}}),
    ],
)
async def test_a_caller_may_ask_for_another_tool_choice(choice: str, wire: Any) -> None:
    body = await sent_body("ollama:m", after_a_call(tool_choice=choice))
    assert body["tool_choice"] == wire


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", None),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("read_file", {"type": "tool", "name": "read_file"}),
    ],
)
async def test_anthropic_is_sent_the_tool_choice_in_its_own_words(choice: str, wire: Any) -> None:
    pytest.importorskip("anthropic")
    body = await sent_body("anthropic:claude-mock-1", after_a_call(tool_choice=choice))
    assert body.get("tool_choice") == wire


@pytest.mark.parametrize(
    ("choice", "mode", "names"),
    [("auto", None, None), ("required", "ANY", None), ("none", "NONE", None),
     ("read_file", "ANY", ["read_file"])],
)  # fmt: skip
async def test_gemini_is_sent_the_tool_choice_as_its_calling_mode(
    choice: str, mode: str | None, names: list[str] | None
) -> None:
    pytest.importorskip("google.genai")
    body = await sent_body("google:gemini-2.5-flash", after_a_call(tool_choice=choice))
    config = body.get("toolConfig", body.get("tool_config"))
    if mode is None:
        assert config is None
        return
    calling = config.get("functionCallingConfig", config.get("function_calling_config"))
    assert calling["mode"] == mode
    assert calling.get("allowedFunctionNames", calling.get("allowed_function_names")) == names


@pytest.mark.parametrize(
    ("tools", "choice", "message"),
    [
        ((), "required", "needs tools"),
        ((READ_FILE,), "write_file", r"'write_file' is none of these \(offered: read_file\)"),
        ((), "read_file", r"offered: no tools"),
        ((READ_FILE,), "AUTO", "must be auto, required, none"),
    ],
)
def test_a_tool_choice_that_cannot_be_met_is_refused_clearly(
    tools: tuple[Any, ...], choice: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ModelRequest(messages=(UserMessage("x"),), tools=tools, tool_choice=choice)


def test_the_adapter_reads_quirks_not_provider_names() -> None:
    from pathlib import Path

    import helix.providers._openai as adapter

    source = Path(adapter.__file__).read_text()
    for name in PROVIDERS:
        if name != "openai":
            assert f'"{name}"' not in source, f"the OpenAI adapter names {name}: use Quirks"
