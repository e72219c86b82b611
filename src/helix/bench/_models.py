"""``helix bench models``: what an adapter adds to a call, against the bare SDK.

Then what Helix adds to a call to a real local server, if one runs (``_local_models``).

Both sides make the same call to the same ``MockModelServer`` through the same
official SDK: the baseline hands the SDK a ready-made provider payload and reads its
response object; the adapter builds that payload from a ``ModelRequest`` and normalises
the answer (and, streaming, assembles the deltas). Rounds alternate between the two so
drift on a busy machine falls on both alike.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from helix.providers import (
    ModelAdapter,
    ModelRequest,
    Scenario,
    ToolSpec,
    UserMessage,
    collect,
    open_model,
)
from helix.testing import MockModelServer

from ._figure import Figure
from ._local_models import LocalSizes, run_local

SUITE = "models"
_KEY = "sk-bench-0000000000"

_TOOL = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
_PROMPT = "Read notes.txt and summarise it in one line."
_REQUEST = ModelRequest(
    messages=(UserMessage(_PROMPT),),
    system="You are terse.",
    tools=(_TOOL,),
    max_tokens=256,
)
_STEP = {
    "text": "Reading the file you asked for, then I will summarise it.",
    "tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}, "id": "call_1"}],
    "usage": {"input_tokens": 120, "output_tokens": 24},
}


@dataclass(frozen=True, slots=True)
class ModelsSizes:
    """How many calls to make."""

    calls: int = 200
    rounds: int = 6
    quick_run: bool = False
    """The local server's figure at its smoke-test sizes too."""

    @classmethod
    def quick(cls) -> ModelsSizes:
        """A smoke test's sizes."""
        return cls(calls=5, rounds=2, quick_run=True)


Call = Callable[[], Awaitable[None]]


async def run_models(sizes: ModelsSizes) -> AsyncIterator[Figure]:
    """Measure adapter overhead for each provider family, plain and streaming."""
    with MockModelServer(Scenario.of(_STEP, repeat=True)) as server:
        for provider in ("openai", "anthropic", "google"):
            adapter = _adapter(provider, server)
            bare = _Bare(provider, server)
            try:
                for stream in (False, True):
                    adapted = _adapter_call(adapter, stream)
                    baseline = bare.call(stream)
                    ours, theirs = await _measure(adapted, baseline, sizes)
                    params = {
                        "provider": provider,
                        "stream": stream,
                        "calls": sizes.calls * sizes.rounds,
                    }
                    yield Figure(
                        SUITE, "adapter_overhead", ours, "ms/call", params, baseline=theirs
                    )
            finally:
                await adapter.aclose()
                await bare.close()
    local = LocalSizes.quick() if sizes.quick_run else LocalSizes()
    async for figure in run_local(local):
        yield figure


async def _measure(adapted: Call, baseline: Call, sizes: ModelsSizes) -> tuple[float, float]:
    """Per-call milliseconds (median over rounds) for the adapter and the bare SDK."""
    for call in (adapted, baseline):  # warm both: connections, imports, caches
        for _ in range(3):
            await call()
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(sizes.rounds):
        for call, samples in ((baseline, theirs), (adapted, ours)):
            started = time.perf_counter()
            for _ in range(sizes.calls):
                await call()
            samples.append((time.perf_counter() - started) * 1000 / sizes.calls)
    return statistics.median(ours), statistics.median(theirs)


def _adapter(provider: str, server: MockModelServer) -> ModelAdapter:
    env = {
        "openai": {"OPENAI_API_KEY": _KEY, "OPENAI_BASE_URL": server.openai_base_url},
        "anthropic": {"ANTHROPIC_API_KEY": _KEY, "ANTHROPIC_BASE_URL": server.url},
        "google": {"GEMINI_API_KEY": _KEY, "GOOGLE_GEMINI_BASE_URL": server.url},
    }[provider]
    model = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "google": "gemini-2.5-flash"}
    return open_model(f"{provider}:{model[provider]}", env=env)


def _adapter_call(adapter: ModelAdapter, stream: bool) -> Call:
    async def plain() -> None:
        await adapter.request(_REQUEST)

    async def streamed() -> None:
        await collect(adapter.stream(_REQUEST), adapter.provider)

    return streamed if stream else plain


class _Bare:
    """The same call through the bare SDK, its payload prepared once, outside the timing."""

    def __init__(self, provider: str, server: MockModelServer) -> None:
        self.provider = provider
        self._client: Any
        if provider == "openai":
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(api_key=_KEY, base_url=server.openai_base_url, max_retries=0)
        elif provider == "anthropic":
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(api_key=_KEY, base_url=server.url, max_retries=0)
        else:
            from google import genai
            from google.genai import types

            self._client = genai.Client(
                api_key=_KEY, http_options=types.HttpOptions(base_url=server.url)
            )

    def call(self, stream: bool) -> Call:
        """The bare SDK call for this provider."""
        build = {"openai": self._openai, "anthropic": self._anthropic, "google": self._google}
        return build[self.provider](stream)

    def _openai(self, stream: bool) -> Call:
        payload: dict[str, Any] = {
            "model": "gpt-4.1",
            "max_tokens": 256,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": _PROMPT},
            ],
            "tools": [{"type": "function", "function": {"name": "read_file",
                       "description": "Read a file.", "parameters": _TOOL.parameters}}],
        }  # fmt: skip

        async def call() -> None:
            if stream:
                chunks = await self._client.chat.completions.create(
                    **payload, stream=True, stream_options={"include_usage": True}
                )
                async for chunk in chunks:
                    for choice in chunk.choices:
                        _ = choice.delta.content, choice.delta.tool_calls
                return
            done = await self._client.chat.completions.create(**payload)
            _ = [json.loads(c.function.arguments) for c in done.choices[0].message.tool_calls or ()]

        return call

    def _anthropic(self, stream: bool) -> Call:
        payload: dict[str, Any] = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 256,
            "system": "You are terse.",
            "messages": [{"role": "user", "content": _PROMPT}],
            "tools": [{"name": "read_file", "description": "Read a file.",
                       "input_schema": _TOOL.parameters}],
        }  # fmt: skip

        async def call() -> None:
            if stream:
                events = await self._client.messages.create(**payload, stream=True)
                async for event in events:
                    _ = event.type
                return
            done = await self._client.messages.create(**payload)
            _ = list(done.content)

        return call

    def _google(self, stream: bool) -> Call:
        from google.genai import types

        config = types.GenerateContentConfig(
            system_instruction="You are terse.",
            max_output_tokens=256,
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name="read_file", description="Read a file.",
                parameters_json_schema=_TOOL.parameters)])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )  # fmt: skip
        models = self._client.aio.models

        async def call() -> None:
            if stream:
                chunks = await models.generate_content_stream(
                    model="gemini-2.5-flash", contents=_PROMPT, config=config
                )
                async for chunk in chunks:
                    for candidate in chunk.candidates or ():
                        _ = [part.text for part in candidate.content.parts or ()]
                return
            done = await models.generate_content(
                model="gemini-2.5-flash", contents=_PROMPT, config=config
            )
            _ = done.function_calls

        return call

    async def close(self) -> None:
        if self.provider in ("openai", "anthropic"):
            await self._client.close()
