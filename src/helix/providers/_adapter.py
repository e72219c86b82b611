"""The one interface every model adapter implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from ._assemble import deltas_of
from ._types import ModelRequest, ModelResponse, StreamDelta


class ModelAdapter(ABC):
    """Speaks one provider family's wire format.

    ``request`` is the one method an adapter must implement. ``stream`` yields deltas
    that assemble into the same response; the default streams a finished response for
    adapters whose provider cannot stream.
    """

    provider: str
    """The provider's name as in model names (``openai``, ``ollama``, ``anthropic``…)."""
    model: str
    """The model's name at the provider."""
    key_env: str | None = None
    """The environment variable the API key came from, named in errors; ``None`` if none."""

    @property
    def name(self) -> str:
        """The model as ``provider:model``."""
        return f"{self.provider}:{self.model}"

    @abstractmethod
    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request and return the normalised response."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta]:
        """Send one request and yield the response as deltas, ending with ``StreamEnd``."""
        for delta in deltas_of(await self.request(request)):
            yield delta

    async def aclose(self) -> None:  # noqa: B027 (adapters without a client hold nothing)
        """Release the adapter's client."""
