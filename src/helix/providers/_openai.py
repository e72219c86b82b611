"""OpenAI Chat Completions, through the official ``openai`` SDK.

Chat Completions is the dialect every OpenAI-compatible server speaks (Ollama,
llama.cpp's server, vLLM, LM Studio, OpenRouter, Groq, …), so this one adapter serves
all the presets; where a preset's server parts from OpenAI's API, its ``Quirks``
(``_provider.py``) shape the request. The SDK's own retries are off: ``RetryingModel``
retries, records each failed attempt, and honours ``Retry-After`` the same way for every
provider.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from ._adapter import ModelAdapter
from ._assemble import tool_call
from ._failures import SdkFailures
from ._provider import Connection
from ._sdk import require
from ._types import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    StopReason,
    StreamDelta,
    StreamEnd,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    ToolChoice,
    ToolResult,
)

_STOP: dict[str | None, StopReason] = {
    "stop": "end",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


class OpenAIChatAdapter(ModelAdapter):
    """Chat Completions for ``openai`` and every OpenAI-compatible preset."""

    def __init__(self, connection: Connection, model: str, *, timeout: float = 120.0) -> None:
        openai = require("openai", "openai")
        self.provider = connection.provider
        self.model = model
        self.key_env = connection.key_env
        self._connection = connection
        self._errors = openai
        self._client = openai.AsyncOpenAI(
            api_key=connection.api_key,
            base_url=connection.base_url,
            max_retries=0,
            timeout=timeout,
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one Chat Completions request."""
        started = time.perf_counter()
        async with self._failures():
            completion = await self._client.chat.completions.create(**self._payload(request))
        choice = completion.choices[0]
        message = choice.message
        stop = _STOP.get(choice.finish_reason, "other")
        calls = tuple(
            tool_call(c.id, c.function.name, c.function.arguments or "", stop)
            for c in message.tool_calls or ()
            if c.type == "function"
        )
        return ModelResponse(
            text=message.content or "",
            tool_calls=calls,
            usage=_usage(completion.usage),
            stop_reason=stop,
            model=completion.model or self.model,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream one request: text and tool-call deltas, then usage."""
        payload = self._payload(request)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        finish: str | None = None
        usage = TokenUsage()
        model = self.model
        async with self._failures():
            chunks = await self._client.chat.completions.create(**payload)
            async for chunk in chunks:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        yield TextDelta(delta.content)
                    for call in delta.tool_calls or ():
                        function = call.function
                        yield ToolCallDelta(
                            call.index,
                            call.id,
                            function.name if function else None,
                            (function.arguments or "") if function else "",
                        )
                    finish = choice.finish_reason or finish
        yield StreamEnd(usage, _STOP.get(finish, "other"), model)

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()

    def _payload(self, request: ModelRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                if not message.text and not message.tool_calls:
                    continue  # the API refuses an assistant turn with neither (an empty reply)
                entry: dict[str, Any] = {"role": "assistant", "content": self._content(message)}
                if message.tool_calls:
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.args)},
                        }
                        for c in message.tool_calls
                    ]
                messages.append(entry)
            elif isinstance(message, ToolResult):
                messages.append(
                    {"role": "tool", "tool_call_id": message.call_id, "content": message.output}
                )
            else:
                messages.append({"role": "user", "content": message.text})
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
        }
        if request.tools:
            payload["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
            payload["tool_choice"] = _tool_choice(request.tool_choice)
        if request.temperature is not None:
            payload["temperature"] = request.temperature
        if request.stop:
            payload["stop"] = list(request.stop)
        return payload

    def _content(self, message: AssistantMessage) -> str | None:
        """The text; with none, null beside tool calls (``""`` where the server wants it)."""
        if message.text or not message.tool_calls:
            return message.text
        return None if self._connection.quirks.null_content_with_tool_calls else ""

    def _failures(self) -> SdkFailures:
        return SdkFailures(self._errors, self._connection)


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    """``auto``, ``required`` and ``none`` as they are; a tool's name as OpenAI names one."""
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _usage(usage: Any) -> TokenUsage:
    if usage is None:
        return TokenUsage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return TokenUsage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached)
