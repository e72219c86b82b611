"""Model calls as log events, and spend summed across runs per provider and blueprint."""

from __future__ import annotations

import pytest

from helix.errors import ModelRateLimitedError
from helix.kernel.events import ModelRequested, NewEvent, RunCreated, TurnStarted
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import spend
from helix.providers import (
    ModelFailure,
    ModelResponse,
    PriceBook,
    TokenUsage,
    ToolCall,
    failed_event,
    responded_event,
)


def test_responses_and_failures_become_events() -> None:
    response = ModelResponse(
        "hi", (ToolCall("c1", "read_file", {"path": "a"}),), TokenUsage(100, 10, 40), "tool_calls",
        "gpt-4.1", 12.5,
    )  # fmt: skip
    event = responded_event(response, 0.002)
    assert event.model_dump() == {
        "text": "hi",
        "tool_calls": [
            {
                "id": "c1",
                "name": "read_file",
                "args": {"path": "a"},
                "malformed": None,
                "raw_args": None,
            }
        ],
        "usage": {
            "input_tokens": 100,
            "output_tokens": 10,
            "cached_tokens": 40,
            "estimated": False,
        },
        "cost_usd": 0.002,
        "latency_ms": 12.5,
        "role": None,
        "provider": None,
        "model": None,
    }
    error = ModelRateLimitedError("openai answered 429: slow down", provider="openai", status=429)
    failure = failed_event(ModelFailure("openai:gpt-4.1", error, 2, 1.5))
    assert (failure.error, failure.attempt, failure.retry_in_s) == (str(error), 2, 1.5)


async def test_spend_per_provider_model_and_blueprint() -> None:
    book = PriceBook()
    calls = [
        ("openai", "gpt-4.1", TokenUsage(1000, 100)),
        ("anthropic", "claude-sonnet-4-5", TokenUsage(2000, 50)),
        ("openai", "gpt-4.1", TokenUsage(500, 20)),
        ("acme", "mystery", TokenUsage(10, 10)),
    ]
    async with MemoryEventStore() as store:
        for blueprint, (provider, model, usage) in zip(
            ["coder", "coder", "writer", "writer"], calls, strict=True
        ):
            created = RunCreated(objective="o", model=f"{provider}:{model}", world="/w",
                                 blueprint=blueprint)  # fmt: skip
            run = await store.create_run(created)
            response = ModelResponse("ok", (), usage, "end", model, 1.0)
            await store.append(
                run.id,
                [
                    NewEvent(TurnStarted(turn=1), turn=1),
                    NewEvent(ModelRequested(provider=provider, model=model), turn=1),
                    NewEvent(responded_event(response, book.cost(provider, model, usage)), turn=1),
                ],
                expected_seq=1,
            )
        report = await spend(store)
    prices = [book.cost(p, m, u) or 0.0 for p, m, u in calls]
    assert report.runs == 4
    assert report.by_provider["openai"].cost_usd == pytest.approx(prices[0] + prices[2])
    assert report.by_provider["openai"].input_tokens == 1500
    assert report.by_provider["anthropic"].cost_usd == pytest.approx(prices[1])
    assert report.by_provider["acme"].unpriced_calls == 1
    assert report.by_model["openai:gpt-4.1"].output_tokens == 120
    assert report.by_blueprint["coder"].cost_usd == pytest.approx(prices[0] + prices[1])
    assert report.by_blueprint["writer"].cost_usd == pytest.approx(prices[2])
    assert report.total.cost_usd == pytest.approx(sum(prices))
