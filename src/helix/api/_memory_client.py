"""The SDK's memory operations: ``AsyncClient``'s and ``Client``'s (``MemoryOperations``')."""

from __future__ import annotations

import builtins
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from helix.memory import Artifact, AuditEntry, Memory

    from ._async_client import AsyncClient
    from ._memory_door import MemoryImported
    from ._protocol import HelixApi

T = TypeVar("T")


class AsyncClientMemory:
    """``AsyncClient``'s memory operations, documented on ``MemoryOperations``."""

    if TYPE_CHECKING:

        @property
        def api(self) -> HelixApi: ...

    async def memories(
        self,
        *,
        scope: str | None = None,
        query: str | None = None,
        limit: int = 50,
        workspace: str | None = None,
    ) -> builtins.list[Memory]:
        """Memories, newest first; with ``query``, those holding every word, best first."""
        return await self.api.memories(scope=scope, query=query, limit=limit, workspace=workspace)

    async def memory(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """One memory; ``MemoryNotFoundError`` if there is none the caller may read."""
        return await self.api.memory(memory_id, workspace=workspace)

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
        return await self.api.remember(text, scope=scope, tags=tags, key=key, workspace=workspace)

    async def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: list[str] | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Change a memory's text and/or tags."""
        return await self.api.update_memory(memory_id, text=text, tags=tags, workspace=workspace)

    async def forget(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """Delete a memory; the memory it was."""
        return await self.api.forget(memory_id, workspace=workspace)

    async def artifacts(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[Artifact]:
        """The latest version of each artifact, by scope and name."""
        return await self.api.artifacts(scope=scope, workspace=workspace)

    async def artifact(
        self,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
        workspace: str | None = None,
    ) -> tuple[Artifact, bytes]:
        """A version (default: the latest) and its bytes; no scope: personal first."""
        return await self.api.artifact(name, scope=scope, version=version, workspace=workspace)

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
        return await self.api.save_artifact(
            name, content, scope=scope, media_type=media_type, workspace=workspace
        )

    async def delete_artifact(
        self, name: str, *, scope: str = "personal", workspace: str | None = None
    ) -> int:
        """Delete every version of an artifact; how many there were."""
        return await self.api.delete_artifact(name, scope=scope, workspace=workspace)

    async def export_memory(self, *, personal: bool = False, workspace: str | None = None) -> str:
        """The workspace's memory and artifacts as JSON Lines (docs/memory.md)."""
        return await self.api.export_memory(personal=personal, workspace=workspace)

    async def import_memory(
        self, data: bytes | str, *, workspace: str | None = None
    ) -> MemoryImported:
        """Store an export's entries here: all of them, or (a bad line) none."""
        return await self.api.import_memory(data, workspace=workspace)

    async def memory_audit(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[AuditEntry]:
        """The latest changes people made through the door, newest first."""
        return await self.api.memory_audit(scope=scope, workspace=workspace)


class ClientMemory:
    """``Client``'s memory operations (``AsyncClient``'s, without ``await``)."""

    if TYPE_CHECKING:
        _async: AsyncClient

        def _call(self, coroutine: Coroutine[Any, Any, T]) -> T: ...

    def memories(
        self,
        *,
        scope: str | None = None,
        query: str | None = None,
        limit: int = 50,
        workspace: str | None = None,
    ) -> builtins.list[Memory]:
        """Memories, newest first; with ``query``, those holding every word, best first."""
        return self._call(
            self._async.memories(scope=scope, query=query, limit=limit, workspace=workspace)
        )

    def memory(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """One memory; ``MemoryNotFoundError`` if there is none the caller may read."""
        return self._call(self._async.memory(memory_id, workspace=workspace))

    def remember(
        self,
        text: str,
        *,
        scope: str = "personal",
        tags: list[str] | None = None,
        key: str | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Store a memory (one with the same ``key`` in the scope is replaced)."""
        return self._call(
            self._async.remember(text, scope=scope, tags=tags, key=key, workspace=workspace)
        )

    def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: list[str] | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Change a memory's text and/or tags."""
        return self._call(
            self._async.update_memory(memory_id, text=text, tags=tags, workspace=workspace)
        )

    def forget(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """Delete a memory; the memory it was."""
        return self._call(self._async.forget(memory_id, workspace=workspace))

    def artifacts(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[Artifact]:
        """The latest version of each artifact, by scope and name."""
        return self._call(self._async.artifacts(scope=scope, workspace=workspace))

    def artifact(
        self,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
        workspace: str | None = None,
    ) -> tuple[Artifact, bytes]:
        """A version (default: the latest) and its bytes; no scope: personal first."""
        return self._call(
            self._async.artifact(name, scope=scope, version=version, workspace=workspace)
        )

    def save_artifact(
        self,
        name: str,
        content: bytes,
        *,
        scope: str = "personal",
        media_type: str | None = None,
        workspace: str | None = None,
    ) -> Artifact:
        """Store ``content`` (at most 10 MiB) as the artifact's next version."""
        return self._call(
            self._async.save_artifact(
                name, content, scope=scope, media_type=media_type, workspace=workspace
            )
        )

    def delete_artifact(
        self, name: str, *, scope: str = "personal", workspace: str | None = None
    ) -> int:
        """Delete every version of an artifact; how many there were."""
        return self._call(self._async.delete_artifact(name, scope=scope, workspace=workspace))

    def export_memory(self, *, personal: bool = False, workspace: str | None = None) -> str:
        """The workspace's memory and artifacts as JSON Lines (docs/memory.md)."""
        return self._call(self._async.export_memory(personal=personal, workspace=workspace))

    def import_memory(self, data: bytes | str, *, workspace: str | None = None) -> MemoryImported:
        """Store an export's entries here: all of them, or (a bad line) none."""
        return self._call(self._async.import_memory(data, workspace=workspace))

    def memory_audit(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[AuditEntry]:
        """The latest changes people made through the door, newest first."""
        return self._call(self._async.memory_audit(scope=scope, workspace=workspace))
