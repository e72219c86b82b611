"""The normalised request and response every adapter speaks, whatever its wire format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, its arguments as JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for, with its arguments parsed.

    A call whose arguments did not parse (not JSON, or JSON that is not an object) is
    still a call: ``args`` is empty, ``malformed`` says what is wrong and ``raw_args``
    keeps the text the model sent. The run tells the model, as it does for arguments
    its schema refuses (docs/engine.md, "When the model gets it wrong").
    """

    id: str
    name: str
    args: dict[str, Any]
    malformed: str | None = None
    """Why the arguments could not be read; ``None``: they were."""
    raw_args: str | None = None
    """The arguments' text as the model sent it, for a malformed call only."""


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the person (or steering) said."""

    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What the model said before, and the calls it asked for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of one call, handed back to the model."""

    call_id: str
    name: str
    output: str
    ok: bool = True
    role: Literal["tool"] = "tool"


ChatMessage = UserMessage | AssistantMessage | ToolResult


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call, in no provider's dialect."""

    messages: tuple[ChatMessage, ...]
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    stop: tuple[str, ...] = ()


StopReason = Literal["end", "tool_calls", "max_tokens", "stop_sequence", "content_filter", "other"]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int | None = None
    """Input tokens served from the provider's cache, when it reports them."""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One model call's answer, in no provider's dialect."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: TokenUsage
    stop_reason: StopReason
    model: str
    """The model as the provider named it in its answer."""
    latency_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call: its id and name when it starts, then JSON fragments."""

    index: int
    id: str | None = None
    name: str | None = None
    args_json: str = ""


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The stream's last word: usage and why it stopped."""

    usage: TokenUsage
    stop_reason: StopReason
    model: str


StreamDelta = TextDelta | ToolCallDelta | StreamEnd
