"""Retries and fallback, around adapters that fail on cue (the scripted model)."""

from __future__ import annotations

import random

import pytest

from helix.errors import (
    ModelAuthError,
    ModelRateLimitedError,
    ModelRequestError,
    ModelUnavailableError,
)
from helix.providers import ModelRequest, Scenario, UserMessage, collect
from helix.providers._fallback import FallbackModel
from helix.providers._retry import ModelFailure, RetryingModel, RetryPolicy
from helix.providers._scripted import ScriptedModel

REQUEST = ModelRequest(messages=(UserMessage("hi"),))


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def error(status: int, **headers: str) -> dict[str, object]:
    return {"error": {"status": status, "message": f"status {status}", "headers": headers}}


def scripted(*steps: dict[str, object], label: str = "s") -> ScriptedModel:
    return ScriptedModel(Scenario.of(*steps), label=label)


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.25)
    rng = random.Random(7)
    delays = [policy.delay(n, None, rng) for n in range(1, 6)]
    for attempt, delay in enumerate(delays, start=1):
        nominal = min(2 ** (attempt - 1), 5.0)
        assert nominal * 0.75 <= delay <= nominal * 1.25
    assert policy.delay(1, 3.0, rng) == 3.0  # Retry-After wins
    assert policy.delay(1, 99.0, rng) == 5.0  # but never past the cap


async def test_retries_then_succeeds_and_reports_each_failure() -> None:
    sleeps = Sleeps()
    failures: list[ModelFailure] = []

    async def record(failure: ModelFailure) -> None:
        failures.append(failure)

    model = RetryingModel(
        scripted(error(503), error(429, **{"Retry-After": "1.5"}), {"text": "ok"}),
        RetryPolicy(base_delay_s=0.5, jitter=0),
        on_failure=record,
        sleep=sleeps,
    )
    response = await model.request(REQUEST)
    assert response.text == "ok"
    assert sleeps.delays == [0.5, 1.5]
    assert [type(f.error) for f in failures] == [ModelUnavailableError, ModelRateLimitedError]
    assert [(f.attempt, f.retry_in_s, f.model) for f in failures] == [
        (1, 0.5, "scripted:s"),
        (2, 1.5, "scripted:s"),
    ]


@pytest.mark.parametrize(("status", "kind"), [(400, ModelRequestError), (401, ModelAuthError),
                                              (403, ModelAuthError)])  # fmt: skip
async def test_client_errors_fail_fast(status: int, kind: type[Exception]) -> None:
    sleeps = Sleeps()
    model = RetryingModel(scripted(error(status), {"text": "never"}), sleep=sleeps)
    with pytest.raises(kind):
        await model.request(REQUEST)
    assert sleeps.delays == []


async def test_streams_are_retried_before_the_first_delta() -> None:
    model = RetryingModel(scripted(error(500), {"text": "streamed"}), sleep=Sleeps())
    response = await collect(model.stream(REQUEST), "scripted")
    assert response.text == "streamed"


async def test_fallback_moves_on_after_retries_are_exhausted() -> None:
    failing = RetryingModel(
        scripted(error(500), error(500), label="a"), RetryPolicy(max_attempts=2), sleep=Sleeps()
    )
    chain = FallbackModel([failing, scripted({"text": "from b"}, label="b")])
    assert chain.name == "scripted:a | scripted:b"
    response = await chain.request(REQUEST)
    assert response.text == "from b"


async def test_fallback_reports_every_failure_when_all_fail() -> None:
    chain = FallbackModel([scripted(error(500), label="a"), scripted(error(429), label="b")])
    with pytest.raises(ModelRateLimitedError, match=r"scripted:a: .*500.*scripted:b: .*429"):
        await chain.request(REQUEST)


async def test_fallback_does_not_hide_a_bad_key() -> None:
    chain = FallbackModel([scripted(error(401), label="a"), scripted({"text": "b"}, label="b")])
    with pytest.raises(ModelAuthError):
        await chain.request(REQUEST)


async def test_fallback_streams_from_the_first_model_that_answers() -> None:
    chain = FallbackModel([scripted(error(503), label="a"), scripted({"text": "b"}, label="b")])
    response = await collect(chain.stream(REQUEST), "scripted")
    assert response.text == "b"
