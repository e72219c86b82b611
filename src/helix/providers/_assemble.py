"""Assembling streamed deltas into the same response the non-streaming path returns."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from helix.errors import ModelRequestError

from ._types import (
    ModelResponse,
    StopReason,
    StreamDelta,
    StreamEnd,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    args_json: str = ""


@dataclass
class Assembler:
    """Folds deltas into a ``ModelResponse``."""

    provider: str
    text: list[str] = field(default_factory=list[str])
    calls: dict[int, _PartialCall] = field(default_factory=dict[int, _PartialCall])
    end: StreamEnd | None = None

    def add(self, delta: StreamDelta) -> None:
        """Fold one delta in."""
        if isinstance(delta, TextDelta):
            self.text.append(delta.text)
        elif isinstance(delta, ToolCallDelta):
            call = self.calls.setdefault(delta.index, _PartialCall())
            call.id = delta.id or call.id
            call.name = delta.name or call.name
            call.args_json += delta.args_json
        else:
            self.end = delta

    def response(self, latency_ms: float) -> ModelResponse:
        """Return the assembled response (the stream must have ended)."""
        end = self.end or StreamEnd(TokenUsage(), "other", "")
        calls = tuple(
            ToolCall(c.id, c.name, parse_args(c.args_json, self.provider, c.name))
            for _, c in sorted(self.calls.items())
        )
        stop: StopReason = end.stop_reason
        return ModelResponse("".join(self.text), calls, end.usage, stop, end.model, latency_ms)


async def collect(stream: AsyncIterator[StreamDelta], provider: str) -> ModelResponse:
    """Consume a stream of deltas and return the response it adds up to."""
    started = time.perf_counter()
    assembler = Assembler(provider)
    async for delta in stream:
        assembler.add(delta)
    return assembler.response((time.perf_counter() - started) * 1000)


def parse_args(text: str, provider: str, tool: str) -> dict[str, object]:
    """Parse a tool call's JSON arguments; an empty string means no arguments."""
    if not text.strip():
        return {}
    try:
        args = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelRequestError(
            f"{provider} returned malformed arguments for tool {tool!r}: {error}",
            provider=provider,
        ) from None
    if not isinstance(args, dict):
        raise ModelRequestError(
            f"{provider} returned non-object arguments for tool {tool!r}", provider=provider
        )
    return args


def deltas_of(response: ModelResponse) -> list[StreamDelta]:
    """Return deltas that assemble into ``response`` (for adapters that cannot stream)."""
    deltas: list[StreamDelta] = []
    if response.text:
        deltas.append(TextDelta(response.text))
    for index, call in enumerate(response.tool_calls):
        deltas.append(ToolCallDelta(index, call.id, call.name, json.dumps(call.args)))
    deltas.append(StreamEnd(response.usage, response.stop_reason, response.model))
    return deltas
