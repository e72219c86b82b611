"""Model call events."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ._payload import Payload


class ToolCall(BaseModel):
    """One tool call a model asked for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    args: dict[str, JsonValue]


class Usage(BaseModel):
    """Tokens one model call consumed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    """Input tokens served from the provider's cache, when it reports them."""


class ModelRequested(Payload):
    """A model call was sent."""

    TYPE: ClassVar[str] = "model.requested"

    provider: str
    model: str
    role: str | None = Field(default=None, max_length=32)
    """Which kind of call this is (Helix's addition): ``main`` (the run's own turns),
    ``planner``, ``worker``, ``judge`` (docs/models.md#roles); ``None`` (older logs):
    ``main``."""


class ModelResponded(Payload):
    """A model call returned."""

    TYPE: ClassVar[str] = "model.responded"

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list[ToolCall])
    usage: Usage
    cost_usd: float | None = Field(ge=0)
    """``None`` when the model's price is unknown (never guessed)."""
    latency_ms: float = Field(ge=0)
    role: str | None = Field(default=None, max_length=32)
    """The call's role, as its ``model.requested`` says (Helix's addition; ``None``:
    ``main``)."""
    provider: str | None = None
    """The provider of the model that answered (Helix's addition): a fallback chain's
    later model when the first failed; ``None`` (older logs): the requested one."""
    model: str | None = None
    """The model that answered, at its provider (with ``provider``)."""


class ModelFailed(Payload):
    """One attempt of a model call failed."""

    TYPE: ClassVar[str] = "model.failed"

    error: str
    attempt: int = Field(ge=1)
    retry_in_s: float | None = Field(ge=0)
    """Seconds until the next attempt, or ``None`` when no retry follows."""
