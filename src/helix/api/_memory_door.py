"""Memory through the one door: ``MemoryOperations`` (part of ``HelixApi``) and ``LocalApi``'s side.

A person's own memory (``personal``) and a workspace's (``workspace``): list and search,
remember, edit, forget; artifacts: list, get, save, delete; export and import as JSON
Lines. Who may do what is ``helix.memory``'s (the same rules as for runs' tools): a
viewer reads workspace memory and writes none, nobody reads another's personal memory,
a workspace one is not a member of does not exist. Changes through the door are kept in
the store's audit trail. ``HttpApi``'s side is in ``_memory_http.py``.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeAlias

from pydantic import BaseModel

from helix.errors import ConfigError, NotFoundError

if TYPE_CHECKING:
    from helix.memory import Artifact, AuditEntry, Memories, Memory, Person

MemorySource: TypeAlias = "Memories | Callable[[], Awaitable[Memories]]"
"""The memory service, or a function opening it when first needed."""


class MemoryImported(BaseModel):
    """What an import stored."""

    memories: int
    artifacts: int
    """Artifact versions."""


class MemoryOperations(Protocol):
    """What a client can do with memory and artifacts (``HelixApi`` includes it).

    ``scope``: ``personal`` (the caller's own) or ``workspace``; for a read, ``None``
    is both. ``workspace``: default the door's.
    """

    async def memories(
        self,
        *,
        scope: str | None = None,
        query: str | None = None,
        limit: int = 50,
        workspace: str | None = None,
    ) -> list[Memory]:
        """Memories, newest first; with ``query``, those holding every word, best first."""
        ...

    async def memory(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """One memory; ``MemoryNotFoundError`` if there is none the caller may read."""
        ...

    async def remember(
        self,
        text: str,
        *,
        scope: str = "personal",
        tags: list[str] | None = None,
        key: str | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Store a memory (one with the same ``key`` in the scope is replaced)."""
        ...

    async def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: list[str] | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Change a memory's text and/or tags."""
        ...

    async def forget(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """Delete a memory; the memory it was."""
        ...

    async def artifacts(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> list[Artifact]:
        """The latest version of each artifact, by scope and name."""
        ...

    async def artifact(
        self,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
        workspace: str | None = None,
    ) -> tuple[Artifact, bytes]:
        """A version (default: the latest) and its bytes; no scope: personal first."""
        ...

    async def save_artifact(
        self,
        name: str,
        content: bytes,
        *,
        scope: str = "personal",
        media_type: str | None = None,
        workspace: str | None = None,
    ) -> Artifact:
        """Store ``content`` (at most 10 MiB) as the artifact's next version."""
        ...

    async def delete_artifact(
        self, name: str, *, scope: str = "personal", workspace: str | None = None
    ) -> int:
        """Delete every version of an artifact; how many there were."""
        ...

    async def export_memory(self, *, personal: bool = False, workspace: str | None = None) -> str:
        """The workspace's memory and artifacts as JSON Lines (docs/memory.md).

        The caller's own too, if ``personal``.
        """
        ...

    async def import_memory(
        self, data: bytes | str, *, workspace: str | None = None
    ) -> MemoryImported:
        """Store an export's entries here: all of them, or (a bad line) none."""
        ...

    async def memory_audit(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> list[AuditEntry]:
        """The latest changes people made through the door, newest first."""
        ...


class LocalMemory:
    """``LocalApi``'s memory operations (a mixin: it uses the API's actor and workspaces)."""

    if TYPE_CHECKING:
        actor: str
        workspace: str
        visible: frozenset[str] | None
        roles: Mapping[str, str] | None

    _memory_source: MemorySource | None = None
    _memory_service: Memories | None = None

    async def _memories(self) -> Memories:
        if self._memory_service is None:
            source = self._memory_source
            if source is None:
                raise ConfigError("this door has no memory store (give LocalApi memory=)")
            from helix.memory import Memories

            self._memory_service = source if isinstance(source, Memories) else await source()
        return self._memory_service

    def _person(self, workspace: str | None) -> tuple[Person, str]:
        from helix.memory import Person

        chosen = workspace or self.workspace
        if self.visible is not None and chosen not in self.visible:
            raise NotFoundError(f"no workspace {chosen!r}")
        roles = self.roles
        if roles is None and self.visible is not None:
            roles = dict.fromkeys(self.visible, "member")
        return Person.of_actor(self.actor, roles), chosen

    async def memories(
        self,
        *,
        scope: str | None = None,
        query: str | None = None,
        limit: int = 50,
        workspace: str | None = None,
    ) -> builtins.list[Memory]:
        """Memories (``MemoryOperations.memories``)."""
        who, where = self._person(workspace)
        service = await self._memories()
        if query:
            return await service.recall(who, where, query, scope=scope, limit=limit)
        return await service.list(who, where, scope=scope, limit=limit)

    async def memory(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """One memory (``MemoryOperations.memory``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).get(who, where, memory_id)

    async def remember(
        self,
        text: str,
        *,
        scope: str = "personal",
        tags: builtins.list[str] | None = None,
        key: str | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Store a memory (``MemoryOperations.remember``)."""
        who, where = self._person(workspace)
        service = await self._memories()
        return (await service.remember(who, where, scope, text, tags=tags, key=key))[0]

    async def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: builtins.list[str] | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Edit a memory (``MemoryOperations.update_memory``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).update(who, where, memory_id, text=text, tags=tags)

    async def forget(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """Delete a memory (``MemoryOperations.forget``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).forget(who, where, memory_id)

    async def artifacts(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[Artifact]:
        """Artifacts (``MemoryOperations.artifacts``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).artifacts(who, where, scope=scope)

    async def artifact(
        self,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
        workspace: str | None = None,
    ) -> tuple[Artifact, bytes]:
        """An artifact's bytes (``MemoryOperations.artifact``)."""
        who, where = self._person(workspace)
        service = await self._memories()
        return await service.artifact(who, where, name, scope=scope, version=version)

    async def save_artifact(
        self,
        name: str,
        content: bytes,
        *,
        scope: str = "personal",
        media_type: str | None = None,
        workspace: str | None = None,
    ) -> Artifact:
        """Store an artifact version (``MemoryOperations.save_artifact``)."""
        who, where = self._person(workspace)
        service = await self._memories()
        return await service.save_artifact(who, where, scope, name, content, media_type=media_type)

    async def delete_artifact(
        self, name: str, *, scope: str = "personal", workspace: str | None = None
    ) -> int:
        """Delete an artifact (``MemoryOperations.delete_artifact``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).delete_artifact(who, where, scope, name)

    async def export_memory(self, *, personal: bool = False, workspace: str | None = None) -> str:
        """JSON Lines (``MemoryOperations.export_memory``)."""
        from helix.memory import export_lines

        who, where = self._person(workspace)
        lines = await export_lines(await self._memories(), who, where, personal=personal)
        return "".join(line + "\n" for line in lines)

    async def import_memory(
        self, data: bytes | str, *, workspace: str | None = None
    ) -> MemoryImported:
        """Store an export (``MemoryOperations.import_memory``)."""
        from helix.memory import import_lines

        who, where = self._person(workspace)
        memories, artifacts = await import_lines(await self._memories(), who, where, data)
        return MemoryImported(memories=memories, artifacts=artifacts)

    async def memory_audit(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[AuditEntry]:
        """The door's changes (``MemoryOperations.memory_audit``)."""
        who, where = self._person(workspace)
        return await (await self._memories()).audit_trail(who, where, scope=scope)
