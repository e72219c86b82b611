"""Tool call events, from request to result, and the file changes they cause."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, JsonValue

from ._checks import Digest, WorldPath
from ._payload import Payload


class ToolRequested(Payload):
    """The model asked for a tool call; the gates decide next."""

    TYPE: ClassVar[str] = "tool.requested"

    call_id: str
    name: str
    args: dict[str, JsonValue]
    malformed: str | None = None
    """Why the call's arguments could not be read (Helix's addition; ``args`` is then
    empty): the arguments gate denies such a call, and the model reads why."""
    raw_args: str | None = None
    """The arguments' text as the model sent it, for a malformed call only."""


class ToolStarted(Payload):
    """Every gate allowed the call and it began executing."""

    TYPE: ClassVar[str] = "tool.started"

    call_id: str
    sandbox: str
    """The sandbox tier the call runs in."""
    reason: str | None = None
    """Why that tier (for a tool running in the sandbox: e.g. the strongest this host gives)."""
    origin: str | None = None
    """Where the tool that served the call came from (``mcp:SERVER``,
    ``plugin:NAME@VERSION``); absent for Helix's own tools."""


class ToolCompleted(Payload):
    """The call's result (or its refusal) is recorded."""

    TYPE: ClassVar[str] = "tool.completed"

    call_id: str
    ok: bool
    output: str
    duration_ms: float = Field(ge=0)
    node: str | None = None
    """The cluster node a placed command ran on (its Ray node id); absent: this host."""


class ToolInterrupted(Payload):
    """The call was running when the process died; it has no result."""

    TYPE: ClassVar[str] = "tool.interrupted"

    call_id: str
    reason: str


class FileChanged(Payload):
    """A tool created, modified or deleted a file in the world."""

    TYPE: ClassVar[str] = "file.changed"

    call_id: str
    path: WorldPath
    op: Literal["create", "modify", "delete"]
    before: Digest | None
    """Content hash before the change, ``None`` when the file did not exist."""
    after: Digest | None
    """Content hash after the change, ``None`` when the file was deleted."""
