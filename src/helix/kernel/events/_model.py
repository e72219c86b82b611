"""Model call events."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ._payload import Payload


class ToolCall(BaseModel):
    """One tool call a model asked for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    args: dict[str, JsonValue]
    malformed: str | None = None
    """Why the arguments could not be read (not JSON, or not an object), Helix's
    addition: ``args`` is then empty and ``raw_args`` holds the text the model sent;
    ``None`` (and absent, in older logs): they were read."""
    raw_args: str | None = None
    """The arguments' text as the model sent it, for a malformed call only."""


class Usage(BaseModel):
    """Tokens one model call consumed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    """Input tokens served from the provider's cache, when it reports them."""
    estimated: bool = False
    """The counts are Helix's estimate (a streamed reply whose server reported no usage),
    not the provider's (Helix's addition; absent in older logs: ``False``)."""


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


MistakeKind = Literal[
    "malformed_arguments", "unknown_tool", "invalid_arguments", "empty_reply", "no_tool_call"
]
"""What went wrong in a model's reply: a call whose arguments do not parse, a call of a
tool the run does not have, arguments the tool's schema refuses, a reply with no text
and no call, or no call of the tool a forced tool choice asked for (a reply of text
only, or a call of another tool than the one named)."""


class ModelRejected(Payload):
    """A model's reply went wrong, and the model is told so (Helix's addition).

    One per call rejected for the model's mistake (after its ``tool.completed``, whose
    output is what the model reads), or one for a reply that is wrong as a whole (an
    empty one, or text only where a tool call was forced: after its
    ``model.responded``), in which case ``message`` is what the model is told, as a
    user message, on its next call. ``mistakes`` counts the consecutive replies that
    went wrong, this one included; at ``limit`` the run pauses between turns
    (``run.paused``, reason ``model_errors``).
    """

    TYPE: ClassVar[str] = "model.rejected"

    reason: MistakeKind
    detail: str
    """What was wrong, in words (the gate's reason for a call)."""
    call_id: str | None = None
    """The call rejected; ``None``: the reply as a whole."""
    message: str | None = None
    """For a reply rejected as a whole: what the model is told on its next call."""
    mistakes: int = Field(ge=1)
    limit: int | None = Field(default=None, ge=1)
    """The blueprint's ``model_errors.pause_after``; ``None``: the run never pauses for it."""
