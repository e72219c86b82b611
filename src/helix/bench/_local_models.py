"""``local_call_overhead``: what Helix adds to a call to a real local model server.

Both sides ask the same server the same question: the baseline posts a ready-made
Chat Completions body with one long-lived ``httpx`` client and reads the JSON; Helix's
side is what a run calls (``build_model``: the OpenAI adapter behind its retries) with a
``ModelRequest``. The reply is a few tokens at temperature 0, so the server does the
same work for both. Calls alternate, and the figure is the median of each pair's
difference: ``value`` is the milliseconds Helix adds to a call, ``baseline`` the bare
call's milliseconds, so ``ratio`` is the share Helix adds.

The server is the llama.cpp preset's address (``LLAMACPP_BASE_URL``, else
``http://localhost:8080/v1``); with none answering there, the figure is not measured
and stderr says how to start one.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass

import httpx

from helix.providers import PROVIDERS, ModelRequest, UserMessage, build_model

from ._figure import Figure

SUITE = "models"
_SYSTEM = "You answer in one word."
_PROMPT = "Name a colour."
_MAX_TOKENS = 4


@dataclass(frozen=True, slots=True)
class LocalSizes:
    """How many calls each round makes, and how many rounds."""

    calls: int = 20
    rounds: int = 5

    @classmethod
    def quick(cls) -> LocalSizes:
        """A smoke test's sizes."""
        return cls(calls=3, rounds=2)


Call = Callable[[], Awaitable[None]]


def local_base_url(env: Mapping[str, str]) -> str:
    """Where the llama.cpp preset looks for its server (its own resolution of the address)."""
    return (PROVIDERS["llamacpp"].connect(env).base_url or "").rstrip("/")


async def run_local(
    sizes: LocalSizes, env: Mapping[str, str] | None = None
) -> AsyncIterator[Figure]:
    """Measure ``local_call_overhead`` against the llama.cpp server, if one answers."""
    env = os.environ if env is None else env
    base_url = local_base_url(env)
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as bare:
        model_id = await _served_model(bare)
        if model_id is None:
            print(
                f"note: no llama.cpp server answers at {base_url}: local_call_overhead not"
                " measured (start one, e.g. llama-server -m MODEL.gguf --port 8080, or set"
                " LLAMACPP_BASE_URL)",
                file=sys.stderr,
            )
            return
        body = {
            "model": model_id,
            "messages": [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": _PROMPT},
            ],
            "max_tokens": _MAX_TOKENS,
            "temperature": 0.0,
        }

        async def baseline() -> None:
            answer = await bare.post("/chat/completions", json=body)
            answer.raise_for_status()
            _ = answer.json()["choices"][0]["message"]

        model = build_model(f"llamacpp:{model_id}", env={**env, "LLAMACPP_BASE_URL": base_url})
        request = ModelRequest(
            messages=(UserMessage(_PROMPT),),
            system=_SYSTEM,
            max_tokens=_MAX_TOKENS,
            temperature=0.0,
        )

        async def helix() -> None:
            await model.request(request)

        try:
            added, theirs = await _measure(helix, baseline, sizes)
        finally:
            await model.aclose()
    params = {"provider": "llamacpp", "model": model_id, "calls": sizes.calls * sizes.rounds}
    yield Figure(SUITE, "local_call_overhead", added, "ms/call", params, baseline=theirs)


async def _served_model(client: httpx.AsyncClient) -> str | None:
    """The first model the server lists, or ``None`` when nothing answers."""
    try:
        answer = await client.get("/models", timeout=5)
        answer.raise_for_status()
        listed = answer.json().get("data") or []
    except (httpx.HTTPError, ValueError):
        return None
    names = [str(m["id"]) for m in listed if isinstance(m, dict) and m.get("id")]
    return names[0] if names else None


async def _measure(ours: Call, theirs: Call, sizes: LocalSizes) -> tuple[float, float]:
    """Milliseconds Helix adds per call, and the bare request's per call (medians).

    Calls alternate one by one, so a pair shares the machine's state of the moment: the
    figure is the median of the pairs' differences (a server reply varies far more than
    what either client adds to it).
    """
    for call in (ours, theirs):  # warm both: connections, the server's caches
        for _ in range(3):
            await call()
    added: list[float] = []
    bare: list[float] = []
    for index in range(sizes.calls * sizes.rounds):
        first, second = (ours, theirs) if index % 2 else (theirs, ours)
        took = {}
        for call in (first, second):
            started = time.perf_counter()
            await call()
            took[call] = (time.perf_counter() - started) * 1000
        added.append(took[ours] - took[theirs])
        bare.append(took[theirs])
    return statistics.median(added), statistics.median(bare)
