"""Anthropic Messages, through the official ``anthropic`` SDK.

The Messages API wants user and assistant turns to alternate and carries tool results
inside a user turn, so the results of one round of calls, and any user text after them,
travel as one user message. The SDK's own retries are off: ``RetryingModel`` retries,
records each failed attempt, and honours ``Retry-After`` the same way for every provider.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._adapter import ModelAdapter
from ._assemble import object_call
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
    ToolResult,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import (
        MessageParam,
        RawMessageStreamEvent,
        TextBlockParam,
        ToolChoiceParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
    )
    from anthropic.types.message_create_params import MessageCreateParamsBase

_STOP: dict[str | None, StopReason] = {
    "end_turn": "end",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filter",
}


# An error event inside a streamed answer arrives after a 200, so its type is all that
# says which failure it is (and whether a retry may help).
class AnthropicAdapter(ModelAdapter):
    """The Messages API, for ``anthropic`` models."""

    def __init__(self, connection: Connection, model: str, *, timeout: float = 120.0) -> None:
        anthropic = require("anthropic", "anthropic")
        self.provider = connection.provider
        self.model = model
        self.key_env = connection.key_env
        self._connection = connection
        self._errors = anthropic
        self._client: AsyncAnthropic = anthropic.AsyncAnthropic(
            api_key=connection.api_key,
            base_url=connection.base_url,
            max_retries=0,
            timeout=timeout,
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one Messages request."""
        started = time.perf_counter()
        async with self._failures():
            message = await self._client.messages.create(**self._payload(request))
        text = "".join(block.text for block in message.content if block.type == "text")
        calls = tuple(
            object_call(block.id, block.name, block.input)
            for block in message.content
            if block.type == "tool_use"
        )
        usage = message.usage
        return ModelResponse(
            text=text,
            tool_calls=calls,
            usage=_usage(
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
            ),
            stop_reason=_STOP.get(message.stop_reason, "other"),
            model=message.model or self.model,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream one request: text and tool-call deltas, then usage."""
        # The raw events, not the SDK's ``messages.stream`` helper, which builds the whole
        # message as it goes: deltas are passed on as they arrive and nothing is kept.
        state = _StreamState(self.model)
        async with self._failures():
            events = await self._client.messages.create(**self._payload(request), stream=True)
            async with events:  # closes the connection if the caller stops early
                async for event in events:
                    for delta in state.feed(event):
                        yield delta
        yield state.end()

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()

    def _payload(self, request: ModelRequest) -> MessageCreateParamsBase:
        payload: MessageCreateParamsBase = {
            "model": self.model,
            "messages": _messages(request),
            "max_tokens": request.max_tokens,
        }
        if request.system:
            payload["system"] = request.system
        if request.tools:
            payload["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
            if request.tool_choice != "auto":  # the API's own default
                payload["tool_choice"] = _tool_choice(request.tool_choice)
        # ``request.temperature`` is not sent: the API version this SDK speaks (2026-10-21)
        # answers 400 to any sampling parameter, at any value, for every model.
        if request.stop:
            payload["stop_sequences"] = list(request.stop)
        return payload

    def _failures(self) -> SdkFailures:
        return SdkFailures(self._errors, self._connection)


def _tool_choice(choice: str) -> ToolChoiceParam:
    """``required`` is Anthropic's ``any``; a tool's name is ``{"type": "tool", ...}``."""
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "tool", "name": choice}


def _messages(request: ModelRequest) -> list[MessageParam]:
    messages: list[MessageParam] = []
    user: list[TextBlockParam | ToolResultBlockParam] = []  # the user turn being gathered
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            if user:
                messages.append({"role": "user", "content": user})
                user = []
            said: list[TextBlockParam | ToolUseBlockParam] = [*_text(message.text)]
            said += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}
                for c in message.tool_calls
            ]
            if said:  # the API rejects a turn without content
                messages.append({"role": "assistant", "content": said})
        elif isinstance(message, ToolResult):
            result: ToolResultBlockParam = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.output,
            }
            if not message.ok:
                result["is_error"] = True
            user.append(result)
        else:
            user += _text(message.text)
    if user:
        messages.append({"role": "user", "content": user})
    return messages


def _text(text: str) -> list[TextBlockParam]:
    # No block for empty text: the API rejects an empty text block.
    return [{"type": "text", "text": text}] if text else []


@dataclass
class _StreamState:
    """What a stream has said so far that its last delta must carry."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int | None = None
    cache_writes: int | None = None
    stop: str | None = None
    tools: dict[int, int] = field(default_factory=dict[int, int])
    """Content block index to the call's ordinal among the ``tool_use`` blocks."""

    def feed(self, event: RawMessageStreamEvent) -> list[StreamDelta]:
        """Turn one event into the deltas it makes (none for bookkeeping events)."""
        if event.type == "message_start":
            self.model = event.message.model or self.model
            usage = event.message.usage
            self.input_tokens, self.output_tokens = usage.input_tokens, usage.output_tokens
            self.cached_tokens = usage.cache_read_input_tokens
            self.cache_writes = usage.cache_creation_input_tokens
        elif event.type == "message_delta":
            self.stop = event.delta.stop_reason or self.stop
            final = event.usage  # cumulative, so a count it carries replaces the earlier one
            self.output_tokens = final.output_tokens
            if final.input_tokens is not None:
                self.input_tokens = final.input_tokens
            if final.cache_read_input_tokens is not None:
                self.cached_tokens = final.cache_read_input_tokens
            if final.cache_creation_input_tokens is not None:
                self.cache_writes = final.cache_creation_input_tokens
        elif event.type == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            self.tools[event.index] = len(self.tools)
            return [ToolCallDelta(self.tools[event.index], block.id, block.name)]
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta" and delta.text:
                return [TextDelta(delta.text)]
            if delta.type == "input_json_delta" and event.index in self.tools:
                return [ToolCallDelta(self.tools[event.index], args_json=delta.partial_json)]
        return []

    def end(self) -> StreamEnd:
        """Make the stream's last delta: usage, why it stopped, the model."""
        usage = _usage(self.input_tokens, self.output_tokens, self.cached_tokens, self.cache_writes)
        return StreamEnd(usage, _STOP.get(self.stop, "other"), self.model)


def _usage(fresh: int, output: int, reads: int | None, writes: int | None) -> TokenUsage:
    """Normalise usage: Anthropic counts cache reads and writes apart from input tokens.

    Helix's ``input_tokens`` is every input token, cached or not (as OpenAI and Gemini
    count them, and as the price list expects).
    """
    return TokenUsage(fresh + (reads or 0) + (writes or 0), output, reads)
