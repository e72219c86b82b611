"""``RunMemory``: one run's ``MemoryDoor``, bound to its person and its workspace.

The run acts for the person in its ``run.created`` actor (``user:NAME``), with that
person's role in the run's workspace, read afresh at each call (a person made a
viewer since the run started writes no more). A run no person started (``system``:
an automation, a child run) has no personal memory and writes the workspace's as a
member would. Writes are recorded as made by ``run:ID``; the run's log has the events.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from helix.kernel.events import person_of
from helix.tools import MemoryScopeArg, RememberedItem, StoredArtifact

from ._model import Artifact, Memory
from ._service import Memories, Person

RoleOf = Callable[[str, str], Awaitable[str | None]]
"""(user, workspace) → the user's role there (``None``: not a member)."""
MemoriesSource = Memories | Callable[[], Awaitable[Memories]]
"""The memory service, or a function opening it when a run first uses its memory."""


def _item(memory: Memory, replaced: bool = False) -> RememberedItem:
    return RememberedItem(
        id=memory.id,
        scope=memory.scope,
        owner=memory.owner,
        text=memory.text,
        tags=tuple(memory.tags),
        key=memory.key,
        replaced=replaced,
    )


def _stored(artifact: Artifact, content: bytes | None = None) -> StoredArtifact:
    return StoredArtifact(
        scope=artifact.scope,
        owner=artifact.owner,
        name=artifact.name,
        version=artifact.version,
        media_type=artifact.media_type,
        size=artifact.size,
        sha256=artifact.sha256,
        content=content,
    )


class RunMemory:
    """The memory one run reads and writes (``helix.tools.MemoryDoor``)."""

    def __init__(
        self,
        memories: MemoriesSource,
        *,
        workspace: str,
        run_id: str,
        actor: str,
        role_of: RoleOf | None = None,
    ) -> None:
        """Bind the run's memory; ``role_of`` gives its person's role.

        Default: the owner of every workspace, as an embedded door with one person has it.
        ``memories`` may be a function opening the service (a command line opens its
        tables only once a run uses a memory tool).
        """
        self._source = memories
        self._workspace = workspace
        self._run_id = run_id
        self._user = person_of(actor)
        self._role_of = role_of

    async def _service(self) -> Memories:
        if not isinstance(self._source, Memories):
            self._source = await self._source()
        return self._source

    async def _who(self) -> Person:
        roles: Mapping[str, str] | None
        if self._user is None:
            roles = {self._workspace: "member"}
        elif self._role_of is None:
            roles = None
        else:
            role = await self._role_of(self._user, self._workspace)
            roles = {} if role is None else {self._workspace: role}
        return Person(user=self._user, roles=roles, by=f"run:{self._run_id}")

    def _write_scope(self, scope: MemoryScopeArg | None) -> MemoryScopeArg:
        if scope is not None:
            return scope
        return "personal" if self._user is not None else "workspace"

    async def remember(
        self, text: str, *, scope: MemoryScopeArg | None, tags: list[str], key: str | None
    ) -> RememberedItem:
        """Store a memory (``MemoryDoor.remember``)."""
        who = await self._who()
        stored, replaced = await (await self._service()).remember(
            who, self._workspace, self._write_scope(scope), text, tags=tags, key=key, audit=False
        )
        return _item(stored, replaced)

    async def recall(
        self, query: str, *, scope: MemoryScopeArg | None, limit: int
    ) -> tuple[list[MemoryScopeArg], list[RememberedItem]]:
        """Search (``MemoryDoor.recall``)."""
        who = await self._who()
        scopes = [
            kind for kind, _owner in (await self._service()).readable(who, self._workspace, scope)
        ]
        found = await (await self._service()).recall(
            who, self._workspace, query, scope=scope, limit=limit
        )
        return scopes, [_item(memory) for memory in found]

    async def save_artifact(
        self, name: str, content: bytes, *, scope: MemoryScopeArg | None, media_type: str | None
    ) -> StoredArtifact:
        """Store an artifact's next version (``MemoryDoor.save_artifact``)."""
        who = await self._who()
        saved = await (await self._service()).save_artifact(
            who,
            self._workspace,
            self._write_scope(scope),
            name,
            content,
            media_type=media_type,
            audit=False,
        )
        return _stored(saved)

    async def open_artifact(
        self, name: str, *, scope: MemoryScopeArg | None, version: int | None
    ) -> StoredArtifact:
        """An artifact's version with its bytes (``MemoryDoor.open_artifact``)."""
        who = await self._who()
        found, content = await (await self._service()).artifact(
            who, self._workspace, name, scope=scope, version=version
        )
        return _stored(found, content)
