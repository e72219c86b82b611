"""Tool sources: tools a run offers beyond Helix's own, from somewhere that can change.

An MCP server, a plugin: each is a ``ToolSource``. The run's loop opens its sources
when it starts (each incarnation: a restarted loop opens them again), offers the
model their tools beside the built-ins, and closes them when it stops. A source whose
tools change (an MCP server's ``list_changed``, a plugin reloaded) says so through
``SourceHost.changed``; the loop takes the new list at the next turn boundary, never
in the middle of a turn. A source's tools are tools like any other (``ToolDef``): they
declare their ``Facets``, and the gates read those, never their names.

What a source may ask of the run goes through the ``SourceHost`` it is opened with:
record an event of its own (``mcp.*``, ``plugin.*``), ask a person a question (an MCP
server's elicitation), or have the run's model answer a prompt (sampling). The
runtime implements the host; a source never imports the runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from helix.kernel.events import Payload
from helix.sandbox import EgressHook, Sandbox

from ._tool import ToolDef


@dataclass(frozen=True, slots=True)
class Elicitation:
    """Something a source asks a person while one of its tools runs (MCP elicitation)."""

    source: str
    """The source asking (``ToolSource.name``)."""
    message: str
    """What the person is asked, as the source wrote it (shown, never obeyed)."""
    schema: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The JSON Schema of the answer's ``content`` (flat object of simple fields);
    empty: a plain yes/no."""
    call_id: str | None = None
    """The tool call during which it was asked, if any."""


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """A person's answer to an ``Elicitation``: MCP's elicitation result."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None
    """The fields, when accepted (valid against the question's schema)."""


@dataclass(frozen=True, slots=True)
class SampleMessage:
    """One message of a sampling request."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True, slots=True)
class SampleRequest:
    """A source asks the run's model to answer a prompt (MCP sampling)."""

    source: str
    messages: tuple[SampleMessage, ...]
    system: str | None = None
    max_tokens: int = 1024
    call_id: str | None = None
    """The tool call during which it was asked, if any."""


@dataclass(frozen=True, slots=True)
class SampleReply:
    """What the run's model answered."""

    text: str
    model: str
    """``provider:model`` that answered."""
    stop_reason: str = "endTurn"


Asker = Callable[[Elicitation], Awaitable[ElicitationAnswer]]
"""Puts a question to a person (as an approval-like request) and waits for the answer."""
Sampler = Callable[[SampleRequest], Awaitable[SampleReply]]
"""Has the run's model answer a prompt, gated and counted against the run's budget."""


@dataclass(frozen=True, slots=True)
class SourceHost:
    """What the run gives a source it opens (the runtime builds it)."""

    run_id: str
    world: Path
    """The run's world, absolute and resolved (an MCP server's only root)."""
    sandbox: Sandbox
    """The run's sandbox tier (a local MCP server runs in it)."""
    env: Mapping[str, str]
    """The engine's environment (named secrets are read from it, never logged)."""
    record: Callable[[Payload], Awaitable[None]]
    """Appends an event of the source's own to the run's log."""
    changed: Callable[[str], None]
    """Says the source's tools changed (give its name); the loop takes the new list at
    the next turn boundary."""
    egress: EgressHook | None = None
    """Decides (and records) each connection the source makes for the run; ``None``:
    no network."""
    ask: Asker | None = None
    """Puts a question to a person; ``None`` where nobody can be asked."""
    sample: Sampler | None = None
    """Has the run's model answer a prompt; ``None`` where the run has no model."""


class ToolSource(Protocol):
    """Tools from outside Helix, opened for one run (see the module's documentation)."""

    @property
    def name(self) -> str:
        """The source's name, unique in a run (``mcp:github``, ``plugin:acme.tools``)."""
        ...

    async def open(self, host: SourceHost) -> None:
        """Start (connect, load): after it, ``tools()`` is the source's current list.

        A source that cannot start raises ``helix.errors.ToolSourceError`` naming what
        failed: the run is not started with tools missing.
        """
        ...

    def tools(self) -> Sequence[ToolDef]:
        """Its tools as they stand (their names unique across the run's tools)."""
        ...

    async def close(self) -> None:
        """Stop (disconnect, end its processes); safe to call twice or after a failed open."""
        ...


def compose_tools(base: Sequence[ToolDef], sources: Sequence[ToolSource]) -> list[ToolDef]:
    """``base`` and every source's tools, in that order; a name already taken is skipped.

    A source cannot shadow a built-in or another source's tool: the first keeps it.
    """
    taken: set[str] = set()
    tools: list[ToolDef] = []
    for definition in [*base, *(t for s in sources for t in s.tools())]:
        if definition.name not in taken:
            taken.add(definition.name)
            tools.append(definition)
    return tools
