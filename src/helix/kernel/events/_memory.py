"""The memory events: what a run's memory tools read and wrote (docs/memory.md).

``remember``, ``recall``, ``save_artifact`` and ``open_artifact`` calls, in people's
and workspaces' memory.

Each is appended right after its call's ``tool.completed``. They change nothing a run's
state holds (the memory lives in its own store): their fold is a no-op, the log is the
record. A recall keeps its query and the ids it returned, not the texts.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ._payload import Payload

MemoryScope = Literal["personal", "workspace"]


class MemoryRemembered(Payload):
    """A call stored a memory (or replaced the one with its ``key``)."""

    TYPE: ClassVar[str] = "memory.remembered"

    call_id: str
    id: str
    scope: MemoryScope
    owner: str
    """The user (``personal``) or the workspace (``workspace``)."""
    key: str | None = None
    tags: list[str] = Field(default_factory=list)
    chars: int = Field(ge=0)
    replaced: bool = False


class MemoryRecalled(Payload):
    """A call searched memory: the query, the scopes read, the ids returned (best first)."""

    TYPE: ClassVar[str] = "memory.recalled"

    call_id: str
    query: str
    scopes: list[MemoryScope]
    ids: list[str]


class MemoryArtifactSaved(Payload):
    """A call stored a version of a named artifact."""

    TYPE: ClassVar[str] = "memory.artifact_saved"

    call_id: str
    scope: MemoryScope
    owner: str
    name: str
    version: int = Field(ge=1)
    media_type: str
    size: int = Field(ge=0)
    sha256: str


class MemoryArtifactOpened(Payload):
    """A call read a version of an artifact (into the world at ``path``, or as text)."""

    TYPE: ClassVar[str] = "memory.artifact_opened"

    call_id: str
    scope: MemoryScope
    owner: str
    name: str
    version: int = Field(ge=1)
    sha256: str
    path: str | None = None
    """Where in the world it was written; ``None``: returned to the model as text."""


MEMORY_PAYLOADS: tuple[type[Payload], ...] = (
    MemoryRemembered,
    MemoryRecalled,
    MemoryArtifactSaved,
    MemoryArtifactOpened,
)
"""The events a tool's result may carry (``ToolResult.events``): the runtime logs these only."""
