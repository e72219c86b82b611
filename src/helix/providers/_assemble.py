"""Assembling streamed deltas into the same response the non-streaming path returns."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from ._scenario import estimate_tokens
from ._types import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    StopReason,
    StreamDelta,
    StreamEnd,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    ToolResult,
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
        stop: StopReason = end.stop_reason
        calls = tuple(
            tool_call(c.id, c.name, c.args_json, stop) for _, c in sorted(self.calls.items())
        )
        return ModelResponse("".join(self.text), calls, end.usage, stop, end.model, latency_ms)


async def collect(
    stream: AsyncIterator[StreamDelta], provider: str, *, request: ModelRequest | None = None
) -> ModelResponse:
    """Consume a stream of deltas and return the response it adds up to.

    Given the ``request`` it answers, a stream that reported no usage (0 tokens in and
    out: its server ignored ``stream_options.include_usage``) gets an estimate, marked
    ``estimated`` (``estimated_usage``), never a silent zero.
    """
    started = time.perf_counter()
    assembler = Assembler(provider)
    async for delta in stream:
        assembler.add(delta)
    response = assembler.response((time.perf_counter() - started) * 1000)
    return response if request is None else estimated_usage(request, response)


def estimated_usage(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """``response`` as it is if it reports usage; else with usage estimated and marked so.

    Input: the request's system prompt, messages (texts, calls' arguments, results) and
    tool specs; output: the reply's text and calls' arguments; four characters a token
    (``estimate_tokens``). A reply that reports any token is left alone.
    """
    usage = response.usage
    if usage.input_tokens or usage.output_tokens:
        return response
    produced = response.text + "".join(_args_text(c) for c in response.tool_calls)
    guess = TokenUsage(
        estimate_tokens(_request_text(request)),
        estimate_tokens(produced),
        usage.cached_tokens,
        estimated=True,
    )
    return replace(response, usage=guess)


def _request_text(request: ModelRequest) -> str:
    parts = [request.system or ""]
    for message in request.messages:
        if isinstance(message, ToolResult):
            parts.append(message.output)
        else:
            parts.append(message.text)
        if isinstance(message, AssistantMessage):
            parts.extend(_args_text(c) for c in message.tool_calls)
    for spec in request.tools:
        parts.append(spec.name + spec.description + json.dumps(spec.parameters))
    return "".join(parts)


def _args_text(call: ToolCall) -> str:
    return call.raw_args if call.raw_args is not None else json.dumps(call.args)


_EXCERPT = 200
"""Characters of malformed arguments quoted back to the model (the log keeps them all)."""


def parse_args(text: str, tool: str) -> tuple[dict[str, object], str | None]:
    """A tool call's JSON arguments, and what is wrong with them (``None``: nothing).

    An empty string means no arguments. Text that is not JSON, or JSON that is not an
    object, gives no arguments and the reason, for the model to read: a malformed
    call is the model's mistake to correct, not a failure of the request.
    """
    if not text.strip():
        return {}, None
    try:
        args = json.loads(text)
    except json.JSONDecodeError as error:
        excerpt = text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
        return {}, f"the arguments of {tool!r} are not JSON ({error}): {excerpt}"
    if not isinstance(args, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean"}.get(type(args), "a number")
        if args is None:
            kind = "null"
        return {}, f"the arguments of {tool!r} are {kind}, not a JSON object"
    return args, None


def tool_call(call_id: str, name: str, text: str, stop: StopReason) -> ToolCall:
    """The call the model sent as ``text``; malformed (see ``ToolCall``) if it does not parse.

    A reply cut off at its token limit (``stop`` ``max_tokens``) says so, the usual
    cause of arguments that end too soon.
    """
    args, malformed = parse_args(text, name)
    if malformed is None:
        return ToolCall(call_id, name, args)
    if stop == "max_tokens":
        malformed += " (the reply was cut off at its max_tokens limit: send less in one call)"
    return ToolCall(call_id, name, {}, malformed=malformed, raw_args=text)


def object_call(call_id: str, name: str, args: object) -> ToolCall:
    """A call whose arguments came already decoded (Anthropic's ``input``, Gemini's ``args``)."""
    if isinstance(args, dict):
        return ToolCall(call_id, name, dict(args))
    text = args if isinstance(args, str) else json.dumps(args)
    return tool_call(call_id, name, text, "tool_calls")


def deltas_of(response: ModelResponse) -> list[StreamDelta]:
    """Return deltas that assemble into ``response`` (for adapters that cannot stream)."""
    deltas: list[StreamDelta] = []
    if response.text:
        deltas.append(TextDelta(response.text))
    for index, call in enumerate(response.tool_calls):
        text = call.raw_args if call.raw_args is not None else json.dumps(call.args)
        deltas.append(ToolCallDelta(index, call.id, call.name, text))
    deltas.append(StreamEnd(response.usage, response.stop_reason, response.model))
    return deltas
