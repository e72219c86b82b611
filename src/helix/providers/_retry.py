"""Retries with exponential backoff and jitter, honouring ``Retry-After``.

Only failures that may pass (429, 5xx, timeouts, refused connections) are retried;
a 400, 401 or 403 fails at once. Each failed attempt is reported to ``on_failure``, which
is how the run engine records ``model.failed``. A stream is retried only if it failed
before its first delta: after that, the caller has already seen part of the answer.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from helix.errors import ModelCallError

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
        while True:
            try:
                return await self.inner.request(request)
            except ModelCallError as error:
                await self._after_failure(error, attempt)
            attempt += 1

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream the request, retrying what fails before the first delta."""
        attempt = 1
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
                await self._after_failure(error, attempt)
            attempt += 1

    async def _after_failure(self, error: ModelCallError, attempt: int) -> None:
        """Report the failure; wait before the next attempt, or re-raise if there is none."""
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
