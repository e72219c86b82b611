"""The memory store: memories, artifact versions and the door's audit trail, by scope.

A memory or an artifact belongs to a scope and an owner: (``personal``, a user's name)
or (``workspace``, a workspace's name). The store checks no permission (the service
does, ``_service.py``); it keeps rows and answers searches. It lives in the database
``HELIX_DB`` names, in tables of its own (SQLite with FTS5, PostgreSQL with its full
text search); every backend passes the one conformance suite in ``tests/memory``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ._model import Artifact, AuditEntry, Memory, Scope

Owners = list[tuple[Scope, str]]
"""The (scope, owner) pairs a listing or a search looks in."""


class MemoryStore(ABC):
    """Memories (searchable), artifact versions (with their bytes), an audit trail."""

    @abstractmethod
    async def put(self, memory: Memory) -> tuple[Memory, bool]:
        """Store a new memory; with a ``key`` already in its scope, replace that one.

        Returns the stored memory (a replaced one keeps its id and ``created_at``) and
        whether one was replaced.
        """

    @abstractmethod
    async def load(self, memories: list[Memory], artifacts: list[tuple[Artifact, bytes]]) -> None:
        """Store all of them in one transaction (an import): all, or none on an error."""

    @abstractmethod
    async def update(
        self, memory_id: str, *, text: str, tags: list[str], by: str, at: str
    ) -> Memory | None:
        """Change a memory's text and tags; ``None`` if there is no such memory."""

    @abstractmethod
    async def get(self, memory_id: str) -> Memory | None:
        """The memory with that id, if any."""

    @abstractmethod
    async def delete(self, memory_id: str) -> bool:
        """Delete a memory; whether there was one."""

    @abstractmethod
    async def search(self, owners: Owners, words: list[str], limit: int) -> list[Memory]:
        """Memories of ``owners`` holding every word, best first (``rank`` set).

        With no words: the latest first.
        """

    @abstractmethod
    async def add_artifact(self, artifact: Artifact, content: bytes) -> Artifact:
        """Store the next version of the named artifact (its ``version`` is set here)."""

    @abstractmethod
    async def artifact(
        self, scope: Scope, owner: str, name: str, version: int | None = None
    ) -> tuple[Artifact, bytes] | None:
        """That version (``None``: the latest) and its bytes, if there is one."""

    @abstractmethod
    async def artifacts(self, owners: Owners) -> list[Artifact]:
        """The latest version of each artifact of ``owners``, by scope and name."""

    @abstractmethod
    async def delete_artifact(self, scope: Scope, owner: str, name: str) -> int:
        """Delete every version of the artifact; how many there were."""

    @abstractmethod
    async def audit(self, entry: AuditEntry) -> None:
        """Record a change a person made through the door."""

    @abstractmethod
    async def audit_trail(self, owners: Owners, limit: int = 100) -> list[AuditEntry]:
        """The latest changes to ``owners``' memory, newest first."""

    async def close(self) -> None:  # noqa: B027 (a no-op unless the backend holds resources)
        """Release the connection."""
