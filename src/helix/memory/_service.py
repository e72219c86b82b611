"""``Memories``: the operations every surface shares, with who may do what, over one store.

Who may (checked here, for the door and for runs' tools alike):

- ``personal`` memory is its person's alone: nobody else reads or writes it, not an
  owner or an admin of any workspace. A run started by no person (``system``: an
  automation, a child run) has no personal memory (``MemoryDeniedError``).
- ``workspace`` memory is read by every member, viewers too, and written by members
  who may act (owners, admins, members): a viewer's write is ``MemoryDeniedError``.
- To anyone not a member, a workspace's memory does not exist (``MemoryNotFoundError``).

Changes made through the door are kept in the store's audit trail (who, when, what);
a run's reads and writes are events in its own log (the tools make them).
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from helix.errors import MemoryDeniedError, MemoryInputError, MemoryNotFoundError
from helix.kernel.events import person_of

from ._model import (
    MAX_RECALL,
    Artifact,
    AuditEntry,
    Memory,
    Scope,
    check_content,
    check_key,
    check_media_type,
    check_name,
    check_query,
    check_scope,
    check_tags,
    check_text,
    search_words,
)
from ._store import MemoryStore, Owners

ACTING_ROLES = frozenset({"owner", "admin", "member"})
"""The roles that may write workspace memory (``viewer`` only reads)."""


@dataclass(frozen=True, slots=True)
class Person:
    """Who asks: a user (``None``: a run nobody started) and their workspace roles."""

    user: str | None
    roles: Mapping[str, str] | None
    """Workspace → role; ``None``: every workspace, as its owner (a one-person door)."""
    by: str
    """What a change records as its author: ``user:NAME`` or ``run:ID``."""

    @classmethod
    def of_actor(cls, actor: str, roles: Mapping[str, str] | None) -> Person:
        """The person an actor (``user:NAME``; anything else: no person) names."""
        return cls(user=person_of(actor), roles=roles, by=actor)

    def role(self, workspace: str) -> str | None:
        """The role in ``workspace`` (``None``: not a member)."""
        if self.roles is None:
            return "owner"
        return self.roles.get(workspace)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_memory_id() -> str:
    """A fresh memory id: ``mem_`` and 16 hex digits."""
    return "mem_" + secrets.token_hex(8)


class Memories:
    """The memory of people and workspaces over ``store`` (``now`` gives a change's time)."""

    def __init__(self, store: MemoryStore, *, now: Callable[[], str] = _now) -> None:
        self.store = store
        self.now = now

    def owner(self, who: Person, workspace: str, scope: str, *, write: bool) -> tuple[Scope, str]:
        """The (scope, owner) ``who`` reads (or writes) as ``scope`` in ``workspace``."""
        checked = check_scope(scope)
        if checked == "personal":
            if who.user is None:
                raise MemoryDeniedError(
                    "this run was started by no person, so it has no personal memory:"
                    " use scope workspace"
                )
            return checked, who.user
        role = who.role(workspace)
        if role is None:
            raise MemoryNotFoundError(f"no workspace {workspace!r}")
        if write and role not in ACTING_ROLES:
            raise MemoryDeniedError(
                f"a {role} cannot write workspace memory (workspace {workspace!r}): it reads only"
            )
        return checked, workspace

    def readable(self, who: Person, workspace: str, scope: str | None) -> Owners:
        """Where ``who`` reads in ``workspace``: one scope, or (``None``) every one they may."""
        if scope is not None:
            return [self.owner(who, workspace, scope, write=False)]
        owners: Owners = [self.owner(who, workspace, "workspace", write=False)]
        if who.user is not None:
            owners.insert(0, ("personal", who.user))
        return owners

    async def remember(
        self,
        who: Person,
        workspace: str,
        scope: str,
        text: str,
        *,
        tags: builtins.list[str] | None = None,
        key: str | None = None,
        audit: bool = True,
    ) -> tuple[Memory, bool]:
        """Store a memory (replacing the one with the same ``key``); and whether it replaced."""
        kind, owner = self.owner(who, workspace, scope, write=True)
        at = self.now()
        memory = Memory(
            id=new_memory_id(),
            scope=kind,
            owner=owner,
            text=check_text(text),
            tags=check_tags(tags),
            key=check_key(key),
            by=who.by,
            created_at=at,
            updated_at=at,
        )
        stored, replaced = await self.store.put(memory)
        if audit:
            await self._audit(who, "remember", stored.scope, owner, stored.id)
        return stored, replaced

    async def recall(
        self,
        who: Person,
        workspace: str,
        query: str = "",
        *,
        scope: str | None = None,
        limit: int = 10,
    ) -> builtins.list[Memory]:
        """Memories holding every word of ``query``, best first (no words: the latest)."""
        owners = self.readable(who, workspace, scope)
        words = search_words(check_query(query))
        return await self.store.search(owners, words, max(1, min(limit, MAX_RECALL)))

    async def list(
        self, who: Person, workspace: str, *, scope: str | None = None, limit: int = 200
    ) -> builtins.list[Memory]:
        """The latest memories ``who`` may read (one scope, or both), newest first."""
        return await self.store.search(self.readable(who, workspace, scope), [], limit)

    async def get(
        self, who: Person, workspace: str, memory_id: str, *, write: bool = False
    ) -> Memory:
        """The memory, if ``who`` may read (or write) it; ``MemoryNotFoundError`` if not."""
        found = await self.store.get(memory_id)
        if found is None or not self._sees(who, workspace, found):
            raise MemoryNotFoundError(f"no memory {memory_id!r}")
        if write:
            self.owner(who, workspace, found.scope, write=True)
        return found

    def _sees(self, who: Person, workspace: str, memory: Memory) -> bool:
        if memory.scope == "personal":
            return who.user is not None and memory.owner == who.user
        return memory.owner == workspace and who.role(workspace) is not None

    async def update(
        self,
        who: Person,
        workspace: str,
        memory_id: str,
        *,
        text: str | None = None,
        tags: builtins.list[str] | None = None,
    ) -> Memory:
        """Change a memory's text and/or tags."""
        found = await self.get(who, workspace, memory_id, write=True)
        new_text = check_text(text) if text is not None else found.text
        new_tags = check_tags(tags) if tags is not None else found.tags
        updated = await self.store.update(
            memory_id, text=new_text, tags=new_tags, by=who.by, at=self.now()
        )
        if updated is None:
            raise MemoryNotFoundError(f"no memory {memory_id!r}")
        await self._audit(who, "update", found.scope, found.owner, memory_id)
        return updated

    async def forget(self, who: Person, workspace: str, memory_id: str) -> Memory:
        """Delete a memory; the memory it was."""
        found = await self.get(who, workspace, memory_id, write=True)
        await self.store.delete(memory_id)
        await self._audit(who, "forget", found.scope, found.owner, memory_id)
        return found

    async def save_artifact(
        self,
        who: Person,
        workspace: str,
        scope: str,
        name: str,
        content: bytes,
        *,
        media_type: str | None = None,
        audit: bool = True,
    ) -> Artifact:
        """Store ``content`` as the artifact's next version."""
        kind, owner = self.owner(who, workspace, scope, write=True)
        checked = check_name(name)
        data = check_content(content)
        artifact = Artifact(
            scope=kind,
            owner=owner,
            name=checked,
            version=0,
            media_type=check_media_type(media_type, checked),
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            by=who.by,
            at=self.now(),
        )
        stored = await self.store.add_artifact(artifact, data)
        if audit:
            await self._audit(who, "save_artifact", kind, owner, checked)
        return stored

    async def artifact(
        self,
        who: Person,
        workspace: str,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
    ) -> tuple[Artifact, bytes]:
        """An artifact's version (default: the latest) and its bytes.

        With no scope: the person's own first, then the workspace's.
        """
        check_name(name)
        if version is not None and not 1 <= version < 2**31:
            raise MemoryInputError(f"invalid version {version}: 1 or more")
        for kind, owner in self.readable(who, workspace, scope):
            found = await self.store.artifact(kind, owner, name, version)
            if found is not None:
                return found
        which = f" version {version}" if version is not None else ""
        raise MemoryNotFoundError(f"no artifact {name!r}{which}")

    async def artifacts(
        self, who: Person, workspace: str, *, scope: str | None = None
    ) -> builtins.list[Artifact]:
        """The latest version of each artifact ``who`` may read."""
        return await self.store.artifacts(self.readable(who, workspace, scope))

    async def delete_artifact(self, who: Person, workspace: str, scope: str, name: str) -> int:
        """Delete every version of an artifact; how many there were."""
        kind, owner = self.owner(who, workspace, scope, write=True)
        count = await self.store.delete_artifact(kind, owner, check_name(name))
        if count == 0:
            raise MemoryNotFoundError(f"no artifact {name!r} in the {scope} scope")
        await self._audit(who, "delete_artifact", kind, owner, name)
        return count

    async def audit_trail(
        self, who: Person, workspace: str, *, scope: str | None = None
    ) -> builtins.list[AuditEntry]:
        """The latest changes people made through the door, newest first."""
        return await self.store.audit_trail(self.readable(who, workspace, scope))

    async def _audit(self, who: Person, action: str, scope: Scope, owner: str, target: str) -> None:
        entry = AuditEntry(
            at=self.now(), by=who.by, action=action, scope=scope, owner=owner, target=target
        )
        await self.store.audit(entry)
