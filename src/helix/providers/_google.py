"""Google Gemini ``generateContent``, through the official ``google-genai`` SDK.

The SDK's retries are off, its implicit one-off retry of refused connections with
them (``RetryingModel`` retries, records each failed attempt, and honours
``Retry-After`` the same way for every provider), and so is automatic function
calling: tools run in Helix, never inside the SDK. Gemini sends whole calls with their
arguments as objects, sometimes without ids, so calls without one get an id here.

Gemini 3 rejects a replayed call without its ``thoughtSignature`` (a 400), and
``ToolCall`` has no room for one: the adapter remembers the signatures it received, by
call id, and otherwise sends the validator-skipping value Google documents for calls it
did not sign.
"""

from __future__ import annotations

import importlib.util
import json
import re
import secrets
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from ._adapter import ModelAdapter
from ._assemble import object_call
from ._failures import connection_error, status_error
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
    ToolCall,
    ToolCallDelta,
    ToolResult,
    ToolSpec,
)

_STOP: dict[str | None, StopReason] = {
    "STOP": "end",
    "MAX_TOKENS": "max_tokens",
    **dict.fromkeys(
        ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
         "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"],
        "content_filter",
    ),
}  # fmt: skip

_SKIP_SIGNATURE = b"skip_thought_signature_validator"
_KEPT_SIGNATURES = 1024
"""Enough for any conversation in flight; older ones fall back to the skip value."""


class GoogleAdapter(ModelAdapter):
    """Gemini through the Gemini Developer API (or a server speaking its dialect)."""

    def __init__(self, connection: Connection, model: str, *, timeout: float = 120.0) -> None:
        genai = require("google.genai", "google")
        self.provider = connection.provider
        self.model = model
        self.key_env = connection.key_env
        self._connection = connection
        self._types: Any = genai.types
        self._errors: Any = require("google.genai.errors", "google")
        options: dict[str, Any] = {"timeout": int(timeout * 1000)}  # in milliseconds
        if importlib.util.find_spec("aiohttp") is not None:
            # With aiohttp the SDK quietly retries refused connections unless told not to;
            # telling it costs a retry wrapper around every call, so only when needed.
            options["retry_options"] = self._types.HttpRetryOptions(attempts=1)
        if connection.base_url is not None:
            options["base_url"] = connection.base_url
        self._client: Any = genai.Client(
            api_key=connection.api_key, http_options=self._types.HttpOptions(**options)
        )
        self._signatures: dict[str, bytes] = {}
        self._no_auto_calls = self._types.AutomaticFunctionCallingConfig(disable=True)
        self._last_tools: tuple[tuple[ToolSpec, ...], list[Any]] | None = None
        self._last_config: tuple[tuple[Any, ...], tuple[ToolSpec, ...], Any] | None = None
        version = re.search(r"gemini-(\d+)", model)
        self._needs_signature = "gemini" in model and not (version and int(version[1]) < 3)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one ``generateContent`` request."""
        started = time.perf_counter()
        with self._failures():
            reply = await self._client.aio.models.generate_content(**self._payload(request))
        texts, calls, finish = self._read(reply, secrets.token_hex(4), 0)
        return ModelResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=_usage(reply.usage_metadata),
            stop_reason=_stop(finish, bool(calls)),
            model=reply.model_version or self.model,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream one request: text pieces and whole tool calls, then usage."""
        payload = self._payload(request)
        token = secrets.token_hex(4)
        called = 0
        finish: str | None = None
        usage = TokenUsage()
        model = self.model
        with self._failures():
            chunks = await self._client.aio.models.generate_content_stream(**payload)
            async for chunk in chunks:
                model = chunk.model_version or model
                if chunk.usage_metadata is not None:
                    usage = _usage(chunk.usage_metadata)
                texts, calls, reason = self._read(chunk, token, called)
                finish = reason or finish
                for text in texts:
                    yield TextDelta(text)
                for call in calls:
                    yield ToolCallDelta(called, call.id, call.name, json.dumps(call.args))
                    called += 1
        yield StreamEnd(usage, _stop(finish, called > 0), model)

    async def aclose(self) -> None:
        """Close the SDK's HTTP clients (it opens a synchronous one too)."""
        await self._client.aio.aclose()
        self._client.close()

    def _read(
        self, reply: Any, token: str, first: int
    ) -> tuple[list[str], list[ToolCall], str | None]:
        """Text, calls and finish reason of a reply's first candidate (or of one chunk)."""
        if not reply.candidates:
            feedback = reply.prompt_feedback
            blocked = feedback is not None and feedback.block_reason is not None
            return [], [], "SAFETY" if blocked else None
        candidate = reply.candidates[0]
        texts: list[str] = []
        calls: list[ToolCall] = []
        parts = candidate.content.parts if candidate.content is not None else None
        for part in parts or ():
            function = part.function_call
            if function is not None:
                # Numbered across the whole reply, so every chunk's calls get distinct ids.
                call_id = function.id or f"call_{token}_{first + len(calls)}"
                if part.thought_signature:
                    self._remember(call_id, part.thought_signature)
                calls.append(object_call(call_id, function.name or "", function.args or {}))
            elif part.text and not part.thought:
                texts.append(part.text)
        reason = candidate.finish_reason
        return texts, calls, getattr(reason, "value", reason)

    def _remember(self, call_id: str, signature: bytes) -> None:
        self._signatures[call_id] = signature
        if len(self._signatures) > _KEPT_SIGNATURES:
            del self._signatures[next(iter(self._signatures))]

    def _payload(self, request: ModelRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "contents": self._contents(request),
            "config": self._config(request),
        }

    def _config(self, request: ModelRequest) -> Any:
        """The request's settings; a run repeats them every turn, so keep the last."""
        key = (
            request.system, request.max_tokens, request.temperature, request.stop,
            request.tool_choice,
        )  # fmt: skip
        if (
            self._last_config is not None
            and self._last_config[0] == key
            and (self._last_config[1] is request.tools)
        ):
            return self._last_config[2]
        config = self._types.GenerateContentConfig(
            system_instruction=request.system or None,
            max_output_tokens=request.max_tokens,
            temperature=request.temperature,
            stop_sequences=list(request.stop) or None,
            automatic_function_calling=self._no_auto_calls,
            tools=self._tools(request.tools) if request.tools else None,
            tool_config=self._tool_config(request) if request.tools else None,
        )
        self._last_config = (key, request.tools, config)
        return config

    def _tool_config(self, request: ModelRequest) -> Any:
        """``tool_choice`` as Gemini's calling mode (``auto`` is its default: none sent)."""
        choice = request.tool_choice
        if choice == "auto":
            return None
        mode = {"required": "ANY", "none": "NONE"}.get(choice, "ANY")
        named = None if choice in ("required", "none") else [choice]
        calling = self._types.FunctionCallingConfig(mode=mode, allowed_function_names=named)
        return self._types.ToolConfig(function_calling_config=calling)

    def _tools(self, tools: tuple[ToolSpec, ...]) -> list[Any]:
        """Gemini's tool list; a run passes the same tools every turn, so keep the last."""
        if self._last_tools is not None and self._last_tools[0] is tools:
            return self._last_tools[1]
        types = self._types
        declarations = [
            types.FunctionDeclaration(
                name=t.name, description=t.description, parameters_json_schema=t.parameters
            )
            for t in tools
        ]
        converted = [types.Tool(function_declarations=declarations)]
        self._last_tools = (tools, converted)
        return converted

    def _contents(self, request: ModelRequest) -> list[dict[str, Any]]:
        # Plain dicts, not the SDK's models: it validates either, and dicts cost less.
        contents: list[dict[str, Any]] = []
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
                for n, call in enumerate(message.tool_calls):
                    signature = self._signatures.get(call.id)
                    if signature is None and n == 0 and self._needs_signature:
                        signature = _SKIP_SIGNATURE  # only a step's first call carries one
                    part: dict[str, Any] = {
                        "function_call": {"id": call.id, "name": call.name, "args": call.args}
                    }
                    if signature is not None:
                        part["thought_signature"] = signature
                    parts.append(part)
                if parts:  # Gemini rejects a turn without parts
                    contents.append({"role": "model", "parts": parts})
            elif isinstance(message, ToolResult):
                answer = {"output" if message.ok else "error": message.output}
                response = {"id": message.call_id, "name": message.name, "response": answer}
                last = contents[-1] if contents else None
                # One turn answers all of a step's calls, as Gemini expects.
                if last is not None and "function_response" in last["parts"][-1]:
                    last["parts"].append({"function_response": response})
                else:
                    contents.append({"role": "user", "parts": [{"function_response": response}]})
            else:
                contents.append({"role": "user", "parts": [{"text": message.text}]})
        return contents

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """Map the SDK's exceptions (and its HTTP library's) to Helix's."""
        try:
            yield
        except self._errors.APIError as error:
            response = getattr(error, "response", None)
            headers = getattr(response, "headers", None) or {}
            message = error.message or str(error)
            said = bool(error.message)
            raise status_error(
                self._connection, error.code or 0, message, dict(headers), said=said
            ) from None
        except _transport_errors() as error:  # refused, reset, timed out
            raise connection_error(self._connection, error) from None


def _transport_errors() -> tuple[type[BaseException], ...]:
    # The SDK sends through httpx2, httpx or aiohttp, whichever it found (and so loaded).
    found: list[type[BaseException]] = [TimeoutError]
    for module, name in (("httpx2", "TransportError"), ("httpx", "TransportError"),
                         ("aiohttp", "ClientError")):  # fmt: skip
        kind = getattr(sys.modules.get(module), name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append(kind)
    return tuple(found)


def _stop(finish: str | None, called: bool) -> StopReason:
    if called and finish in (None, "STOP"):
        return "tool_calls"
    return _STOP.get(finish, "other")


def _usage(meta: Any) -> TokenUsage:
    if meta is None:
        return TokenUsage()
    # Thinking is billed as output but not counted in candidates_token_count.
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    return TokenUsage(meta.prompt_token_count or 0, output, meta.cached_content_token_count)
