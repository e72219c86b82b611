"""Retries with exponential backoff and jitter, honouring ``Retry-After``.

Only failures that may pass (429, 5xx, timeouts, refused connections) are retried;
a 400, 401 or 403 fails at once. Each failed attempt is reported to ``on_failure``, which
is how the run engine records ``model.failed``. A stream is retried only if it failed
before its first delta: after that, the caller has already seen part of the answer.

A server error that repeats itself word for word is taken for what it most likely is,
the request's own fault (a schema the server cannot digest, say), not an outage: when
two attempts in a row fail with the same 5xx status and the same complaint in the error
body, there is no third (``repeated``). Overload and gateway statuses (502, 503, 504,
529) say the same words every time while they last, so they are retried as before.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from helix.errors import ModelCallError, ModelRequestError

from ._adapter import ModelAdapter
from ._types import ModelRequest, ModelResponse, StreamDelta


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    max_attempts: int = 4
    """Attempts in all, the first included."""
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: float = 0.25
    """The delay varies by up to this fraction either way, so clients do not stampede."""

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.max_delay_s)
        backoff = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return backoff * (1 + rng.uniform(-self.jitter, self.jitter))


@dataclass(frozen=True, slots=True)
class ModelFailure:
    """One failed attempt, as ``on_failure`` hears of it."""

    model: str
    error: ModelCallError
    attempt: int
    retry_in_s: float | None
    """Seconds until the next attempt, or ``None`` when this was the last."""


FailureHook = Callable[[ModelFailure], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]

PASSING_STATUSES = frozenset({502, 503, 504, 529})
"""Server errors that say the same words every time and still pass: overload, gateways."""


def repeated(previous: ModelCallError | None, error: ModelCallError) -> ModelRequestError | None:
    """The error to fail with when ``error`` repeats ``previous``'s server complaint, else ``None``.

    Same 5xx status (not one of ``PASSING_STATUSES``), same non-empty complaint from the
    server's error body: the request itself is most likely what the server cannot take.
    """
    status, complaint = error.status, error.complaint
    if previous is None or status is None or complaint is None:
        return None
    if status < 500 or status in PASSING_STATUSES:
        return None
    if previous.status != status or previous.complaint != complaint:
        return None
    return ModelRequestError(
        f"{error.provider} answered {status} twice with the same complaint, so the request"
        f" itself is most likely at fault and was not sent again: {complaint}",
        provider=error.provider,
        status=status,
        complaint=complaint,
    )


class RetryingModel(ModelAdapter):
    """Wraps an adapter with retries; the same interface, the same answers."""

    def __init__(
        self,
        inner: ModelAdapter,
        policy: RetryPolicy | None = None,
        *,
        on_failure: FailureHook | None = None,
        sleep: Sleep = asyncio.sleep,
        seed: int | None = None,
    ) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.key_env = inner.key_env
        self.policy = policy or RetryPolicy()
        self._on_failure = on_failure
        self._sleep = sleep
        self._rng = random.Random(seed)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send the request, retrying what may pass."""
        attempt = 1
        previous: ModelCallError | None = None
        while True:
            try:
                return await self.inner.request(request)
            except ModelCallError as error:
                await self._after_failure(error, attempt, previous)
                previous = error
            attempt += 1

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream the request, retrying what fails before the first delta."""
        attempt = 1
        previous: ModelCallError | None = None
        while True:
            started = False
            try:
                async for delta in self.inner.stream(request):
                    started = True
                    yield delta
                return
            except ModelCallError as error:
                if started:
                    await self._report(error, attempt, None)
                    raise
                await self._after_failure(error, attempt, previous)
                previous = error
            attempt += 1

    async def _after_failure(
        self, error: ModelCallError, attempt: int, previous: ModelCallError | None
    ) -> None:
        """Report the failure; wait before the next attempt, or raise if there is none."""
        same = repeated(previous, error)
        if same is not None:
            await self._report(same, attempt, None)
            raise same from error
        if not error.retryable or attempt >= self.policy.max_attempts:
            await self._report(error, attempt, None)
            raise error
        delay = self.policy.delay(attempt, error.retry_after, self._rng)
        await self._report(error, attempt, delay)
        await self._sleep(delay)

    async def _report(self, error: ModelCallError, attempt: int, retry_in: float | None) -> None:
        if self._on_failure is not None:
            await self._on_failure(ModelFailure(self.name, error, attempt, retry_in))

    async def aclose(self) -> None:
        """Close the wrapped adapter."""
        await self.inner.aclose()
