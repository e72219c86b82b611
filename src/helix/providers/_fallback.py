"""A fallback chain: when one model's retries are exhausted, the next one answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from helix.errors import ModelAuthError, ModelCallError

from ._adapter import ModelAdapter
from ._types import ModelRequest, ModelResponse, StreamDelta


class FallbackModel(ModelAdapter):
    """Tries each model in order; the first answer wins.

    It moves on after any call failure but a refused key, and when every model has
    failed it raises the last failure, its message listing what each one said. A key
    problem is a configuration the person must fix, not an outage to route around:
    falling back would hide it.
    """

    def __init__(self, models: Sequence[ModelAdapter]) -> None:
        if not models:
            raise ValueError("a fallback chain needs at least one model")
        self.models = list(models)
        self.provider = self.models[0].provider
        self.model = self.models[0].model
        self.answered_by: ModelAdapter | None = None
        """The model whose answer the last call returned (``None`` before any answer)."""

    @property
    def name(self) -> str:
        """The chain's models, ``a | b | c``."""
        return " | ".join(m.name for m in self.models)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Ask each model in turn until one answers."""
        failures: list[str] = []
        for index, model in enumerate(self.models):
            try:
                response = await model.request(request)
            except ModelAuthError:
                raise
            except ModelCallError as error:
                failures.append(f"{model.name}: {error}")
                if index == len(self.models) - 1:
                    raise type(error)(
                        "every model in the fallback chain failed: " + "; ".join(failures),
                        provider=error.provider,
                        status=error.status,
                        retry_after=error.retry_after,
                    ) from error
            else:
                self.answered_by = model
                return response
        raise AssertionError("unreachable")  # pragma: no cover

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Stream from the first model that starts answering."""
        failures: list[str] = []
        for index, model in enumerate(self.models):
            started = False
            try:
                async for delta in model.stream(request):
                    if not started:
                        self.answered_by = model
                    started = True
                    yield delta
                return
            except ModelAuthError:
                raise
            except ModelCallError as error:
                if started or index == len(self.models) - 1:
                    raise
                failures.append(f"{model.name}: {error}")

    async def aclose(self) -> None:
        """Close every model in the chain."""
        for model in self.models:
            await model.aclose()
