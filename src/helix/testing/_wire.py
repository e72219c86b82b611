"""Scenario steps in each provider's wire format, as the mock server sends them.

Shapes follow the providers' public API references: OpenAI Chat Completions,
Anthropic Messages, and Gemini ``generateContent``, each plain and streamed (SSE).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from helix.providers import ScenarioStep, estimate_tokens


@dataclass(frozen=True, slots=True)
class Reply:
    """A step resolved for one request: ids made up, usage estimated if not given."""

    model: str
    text: str
    calls: list[tuple[str, str, str]]
    """``(id, name, arguments)``: the arguments as JSON text, or a step's ``raw_args``."""
    input_tokens: int
    output_tokens: int
    cached_tokens: int | None


def resolve(step: ScenarioStep, index: int, model: str, request_body: bytes) -> Reply:
    """Turn a step into the reply to one request."""
    calls = [
        (c.id or f"call_{index}_{n}", c.name, c.arguments_text())
        for n, c in enumerate(step.tool_calls)
    ]
    if step.usage is not None:
        usage = step.usage
        return Reply(
            model, step.text, calls, usage.input_tokens, usage.output_tokens, usage.cached_tokens
        )
    produced = step.text + "".join(args for _, _, args in calls)
    return Reply(
        model,
        step.text,
        calls,
        estimate_tokens(request_body.decode("utf-8", "replace")),
        estimate_tokens(produced),
        None,
    )


def _decoded(text: str) -> Any:
    """Arguments for a dialect that sends them as JSON values: decoded, else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# -- OpenAI Chat Completions ------------------------------------------------------------


def _openai_usage(reply: Reply) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def openai_body(reply: Reply) -> dict[str, Any]:
    """A whole ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            for cid, name, args in reply.calls
        ]
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _openai_usage(reply),
    }


def openai_stream(reply: Reply, include_usage: bool) -> list[bytes]:
    """``chat.completion.chunk`` events, ending with ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": reply.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in _pieces(reply.text)]
    for index, (cid, name, args) in enumerate(reply.calls):
        start = {"index": index, "id": cid, "type": "function",
                 "function": {"name": name, "arguments": ""}}  # fmt: skip
        out.append(chunk({"tool_calls": [start]}))
        for piece in _pieces(args):
            fragment = {"index": index, "function": {"arguments": piece}}
            out.append(chunk({"tool_calls": [fragment]}))
    out.append(chunk({}, "tool_calls" if reply.calls else "stop"))
    if include_usage:
        out.append(
            sse(
                {
                    "id": "chatcmpl-mock",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": reply.model,
                    "choices": [],
                    "usage": _openai_usage(reply),
                }
            )
        )
    out.append(b"data: [DONE]\n\n")
    return out


def openai_error(status: int, message: str) -> dict[str, Any]:
    """The error body OpenAI-compatible servers send."""
    kind = {401: "invalid_request_error", 429: "rate_limit_error"}.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


# -- Anthropic Messages -------------------------------------------------------------------


def _anthropic_usage(reply: Reply) -> dict[str, Any]:
    # Anthropic counts cache reads apart: its input_tokens are the uncached ones.
    usage: dict[str, Any] = {
        "input_tokens": reply.input_tokens - (reply.cached_tokens or 0),
        "output_tokens": reply.output_tokens,
    }
    if reply.cached_tokens is not None:
        usage["cache_read_input_tokens"] = reply.cached_tokens
    return usage


def anthropic_body(reply: Reply) -> dict[str, Any]:
    """A whole ``message`` object."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    content += [
        {"type": "tool_use", "id": cid, "name": name, "input": _decoded(args)}
        for cid, name, args in reply.calls
    ]
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def anthropic_stream(reply: Reply) -> list[bytes]:
    """``message_start`` … ``message_stop`` events."""
    start = anthropic_body(reply) | {"content": [], "stop_reason": None}
    start["usage"] = {**_anthropic_usage(reply), "output_tokens": 1}
    out = [sse({"type": "message_start", "message": start}, "message_start")]
    index = 0
    if reply.text:
        block = {"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}}  # fmt: skip
        out.append(sse(block, "content_block_start"))
        for piece in _pieces(reply.text):
            delta = {"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": piece}}  # fmt: skip
            out.append(sse(delta, "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for offset, (cid, name, args) in enumerate(reply.calls):
        at = index + offset
        use = {"type": "tool_use", "id": cid, "name": name, "input": {}}
        block = {"type": "content_block_start", "index": at, "content_block": use}
        out.append(sse(block, "content_block_start"))
        for piece in _pieces(args):
            delta = {"type": "content_block_delta", "index": at,
                     "delta": {"type": "input_json_delta", "partial_json": piece}}  # fmt: skip
            out.append(sse(delta, "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": at}, "content_block_stop"))
    stop = "tool_use" if reply.calls else "end_turn"
    out.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
            "message_delta",
        )
    )
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    """The error body of the Messages API."""
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


# -- Gemini generateContent ------------------------------------------------------------------


def _gemini_usage(reply: Reply) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "promptTokenCount": reply.input_tokens,
        "candidatesTokenCount": reply.output_tokens,
        "totalTokenCount": reply.input_tokens + reply.output_tokens,
    }
    if reply.cached_tokens is not None:
        usage["cachedContentTokenCount"] = reply.cached_tokens
    return usage


def gemini_body(reply: Reply, text: str | None = None, calls: bool = True) -> dict[str, Any]:
    """A whole ``GenerateContentResponse``."""
    parts: list[dict[str, Any]] = []
    shown = reply.text if text is None else text
    if shown:
        parts.append({"text": shown})
    if calls:
        parts += [
            {"functionCall": {"id": cid, "name": name, "args": _decoded(args)}}
            for cid, name, args in reply.calls
        ]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _gemini_usage(reply),
        "modelVersion": reply.model,
    }


def gemini_stream(reply: Reply) -> list[bytes]:
    """``GenerateContentResponse`` chunks: text pieces, then the calls and usage."""
    pieces = _pieces(reply.text)
    out = []
    for piece in pieces[:-1]:
        body = gemini_body(reply, piece, calls=False)
        body["candidates"][0].pop("finishReason")
        out.append(sse(body))
    out.append(sse(gemini_body(reply, pieces[-1] if pieces else "", calls=True)))
    return out


def gemini_error(status: int, message: str) -> dict[str, Any]:
    """The error body of the Gemini API."""
    kind = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        503: "UNAVAILABLE",
    }.get(status, "INTERNAL")
    return {"error": {"code": status, "message": message, "status": kind}}


def first_text_end(api: str) -> int:
    """How many events of a streamed reply bring its first piece of text (and no more)."""
    return {"openai": 2, "anthropic": 3}.get(api, 1)


def stream_error(api: str, model: str, status: int, message: str, text: str = "") -> list[bytes]:
    """A stream that starts well (``text`` in pieces), then carries an error event."""
    reply = Reply(model, text, [], 1, 1, None)
    pieces = len(_pieces(text)) if text else 0
    if api == "openai":
        return [*openai_stream(reply, False)[: 1 + pieces], sse(openai_error(status, message))]
    started = anthropic_stream(reply)[: 1 + (1 + pieces if text else 0)]
    return [*started, sse(anthropic_error(status, message), "error")]
