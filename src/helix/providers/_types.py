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

ToolChoice = str
"""Whether the model may, must or must not call a tool: ``"auto"`` (it decides),
``"required"`` (it must call one), ``"none"`` (it must not), or the name of one of the
offered tools (it must call that one)."""

TOOL_CHOICES = ("auto", "required", "none")
"""The ``ToolChoice`` words; anything else names a tool."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call, in no provider's dialect."""

    messages: tuple[ChatMessage, ...]
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    tool_choice: ToolChoice = "auto"
    """``"auto"``, ``"required"``, ``"none"`` or an offered tool's name (``ToolChoice``);
    sent only when tools are offered. ``ValueError`` for a name not offered, or for
    ``"required"`` with no tools."""

    def __post_init__(self) -> None:
        choice = self.tool_choice
        names = [t.name for t in self.tools]
        if choice == "required" and not names:
            raise ValueError("tool_choice 'required' needs tools to choose from; none offered")
        if choice not in TOOL_CHOICES and choice not in names:
            offered = ", ".join(names) or "no tools"
            raise ValueError(
                f"tool_choice must be auto, required, none or an offered tool's name;"
                f" {choice!r} is none of these (offered: {offered})"
            )


StopReason = Literal["end", "tool_calls", "max_tokens", "stop_sequence", "content_filter", "other"]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int | None = None
    """Input tokens served from the provider's cache, when it reports them."""
    estimated: bool = False
    """The counts are Helix's estimate, not the provider's: a stream that ended without
    usage (its server ignored ``stream_options.include_usage``; see ``collect``)."""


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
