"""An engine used as a library: a model object and a tool of the caller's, neither awaiting."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import (
    ModelAdapter,
    ModelRequest,
    ModelResponse,
    TokenUsage,
    ToolCall,
    register_provider,
    unregister_provider,
)
from helix.runtime import Blueprint, Engine
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext, ToolResult, builtin_registry, tool

ORDER: list[str] = []
"""Which model answered, in the order the answers were given (all runs of a test)."""


class Ticker(ModelAdapter):
    """Asks for ``tick`` on every turn until turn ``turns`` (``None``: forever); never awaits.

    The turn is read from the request (one tool result per turn before), so a new
    instance (a new incarnation, another ``step``) carries on where the log is.
    """

    def __init__(self, model: str, turns: int | None) -> None:
        self.provider, self.model = "inproc", model
        self.turns = turns
        self.calls = 0
        self.seen: list[str] = []
        """The last message of each request (a tool's output, or what a person said)."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        ORDER.append(self.model)
        usage = TokenUsage(10, 5)
        last = request.messages[-1]
        self.seen.append(str(getattr(last, "output", None) or getattr(last, "text", "")))
        turn = 1 + sum(1 for m in request.messages if hasattr(m, "call_id"))
        if self.turns is not None and turn >= self.turns:
            return ModelResponse("done", (), usage, "end", self.model)
        call = ToolCall(f"c{turn}", "tick", {})
        return ModelResponse(f"turn {self.calls}", (call,), usage, "tool_calls", self.model)


@tool(read_only=True, idempotent=True, effect="none")
async def tick(ctx: ToolContext) -> ToolResult:
    """Count one (never awaits)."""
    return ToolResult(ok=True, output="tick")


@contextmanager
def inproc_provider(turns: int | None = 5) -> Iterator[dict[str, Ticker]]:
    """Register ``inproc:NAME`` → a ``Ticker``; yields the models opened, by name."""
    opened: dict[str, Ticker] = {}

    def open_ticker(name: str) -> ModelAdapter:
        model = opened[name] = Ticker(name, turns)
        return model

    ORDER.clear()
    register_provider("inproc", open_ticker)
    try:
        yield opened
    finally:
        unregister_provider("inproc")


@contextmanager
def library_engine(
    home: Path, store: EventStore | None = None, **options: object
) -> Iterator[Engine]:
    tools = builtin_registry()
    tools.register(tick)
    box = ProcessSandbox()
    try:
        yield Engine(
            store or MemoryEventStore(),
            home=home,
            tools=tools,
            sandbox=box,
            env={},
            **options,  # type: ignore[arg-type]
        )
    finally:
        box.close()


BLUEPRINT = Blueprint.model_validate(
    {"tools": ["tick"], "approvals": {"rules": [{"tool": "*", "action": "allow"}]}}
)
