"""``remember``, ``recall``, ``save_artifact``, ``open_artifact``: memory across runs.

The tools only know the ``MemoryDoor`` interface: whoever built the engine (a server,
an embedded ``LocalApi``) supplies one per run (``Engine(memory=…)``), bound to the
run's person (its ``run.created`` actor ``user:NAME``; none for ``system``) and its
workspace, and it checks who may read and write what (``helix.memory``). A tools
layer that imported the store would invert the layers.

Each call's read or write is reported as a ``memory.*`` event (``ToolResult.events``),
logged right after its ``tool.completed``. Facets, as the gates read them: ``recall``
only reads (``effect="none"``); ``remember`` and ``save_artifact`` change what outlives
the run, outside the world and beyond rollback (``effect="external"``: asked about by
default); ``open_artifact`` writes the world path it is given (``paths={"path":
"write"}``, revertible like ``write_file``, counted by the world's quota).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from helix.kernel.events import (
    MemoryArtifactOpened,
    MemoryArtifactSaved,
    MemoryRecalled,
    MemoryRemembered,
)

from ._files import (
    Refused,
    _existing_file,
    _refuse_shared,
    _store,
    guarded,
    in_world,
    relative,
    sha256,
)
from ._quota import WorldQuota
from ._tool import FileChange, ToolContext, ToolResult, tool

MemoryScopeArg = Literal["personal", "workspace"]
MAX_ARTIFACT_READ = 10 << 20
"""The most bytes ``save_artifact`` reads from a world file (the store's cap, 10 MiB)."""
_SHOWN = 64 * 1024


@dataclass(frozen=True, slots=True)
class RememberedItem:
    """A memory as a run sees it."""

    id: str
    scope: MemoryScopeArg
    owner: str
    text: str
    tags: tuple[str, ...] = ()
    key: str | None = None
    replaced: bool = False


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    """One version of an artifact; ``content`` when it was opened."""

    scope: MemoryScopeArg
    owner: str
    name: str
    version: int
    media_type: str
    size: int
    sha256: str
    content: bytes | None = None


class MemoryDoor(Protocol):
    """One run's memory: its person's (``personal``) and its workspace's (``workspace``).

    ``scope=None``: for a write, the person's own if the run has a person, else the
    workspace's; for a read, both (the person's first). Refusals are ``HelixError``s
    saying why (a viewer writing workspace memory, a run with no person).
    """

    async def remember(
        self, text: str, *, scope: MemoryScopeArg | None, tags: list[str], key: str | None
    ) -> RememberedItem:
        """Store a memory."""
        ...

    async def recall(
        self, query: str, *, scope: MemoryScopeArg | None, limit: int
    ) -> tuple[list[MemoryScopeArg], list[RememberedItem]]:
        """The scopes searched and the memories found, best first."""
        ...

    async def save_artifact(
        self, name: str, content: bytes, *, scope: MemoryScopeArg | None, media_type: str | None
    ) -> StoredArtifact:
        """Store a new version of a named artifact."""
        ...

    async def open_artifact(
        self, name: str, *, scope: MemoryScopeArg | None, version: int | None
    ) -> StoredArtifact:
        """An artifact's version (default: the latest), with its content."""
        ...


_UNAVAILABLE = ToolResult(ok=False, output="memory is not available to this run")


@tool(effect="external")
async def remember(
    ctx: ToolContext,
    text: str,
    scope: MemoryScopeArg | None = None,
    tags: list[str] | None = None,
    key: str | None = None,
) -> ToolResult:
    """Remember a short note for later runs.

    `scope`: `personal` (only the person who started this run sees it) or `workspace`
    (every member of the workspace); default: personal, or workspace for a run no
    person started. `tags`: words to file it under. `key`: a name for it; remembering
    again with the same key replaces the old note.
    """
    if ctx.memory is None:
        return _UNAVAILABLE
    item = await ctx.memory.remember(text, scope=scope, tags=list(tags or []), key=key)
    event = MemoryRemembered(
        call_id=ctx.call_id,
        id=item.id,
        scope=item.scope,
        owner=item.owner,
        key=item.key,
        tags=list(item.tags),
        chars=len(item.text),
        replaced=item.replaced,
    )
    verb = "replaced" if item.replaced else "remembered"
    return ToolResult(ok=True, output=f"{verb} {item.id} ({item.scope})", events=(event,))


@tool(read_only=True, idempotent=True, effect="none")
async def recall(
    ctx: ToolContext, query: str = "", scope: MemoryScopeArg | None = None, limit: int = 10
) -> ToolResult:
    """Search remembered notes by words (all of them must match), best match first.

    `query`: plain words (an empty query lists the latest notes). `scope`: `personal`
    or `workspace`; default: both. `limit`: at most this many (up to 50).
    """
    if ctx.memory is None:
        return _UNAVAILABLE
    scopes, found = await ctx.memory.recall(query, scope=scope, limit=limit)
    event = MemoryRecalled(
        call_id=ctx.call_id, query=query, scopes=list(scopes), ids=[m.id for m in found]
    )
    if not found:
        return ToolResult(ok=True, output="nothing remembered matches", events=(event,))
    lines = []
    for item in found:
        tags = f" [{', '.join(item.tags)}]" if item.tags else ""
        key = f" key={item.key}" if item.key else ""
        lines.append(f"- {item.id} ({item.scope}{key}){tags}: {item.text}")
    return ToolResult(ok=True, output="\n".join(lines)[:_SHOWN], events=(event,))


def _read_world_file(world: Path, path: str) -> bytes:
    target = _existing_file(world, path)
    _refuse_shared(target, path)
    with target.open("rb") as file:
        data = file.read(MAX_ARTIFACT_READ + 1)
    if len(data) > MAX_ARTIFACT_READ:
        raise Refused(f"{path} is larger than an artifact may be (10 MiB)")
    return data


@tool(effect="external", paths={"path": "read"})
async def save_artifact(
    ctx: ToolContext,
    name: str,
    path: str | None = None,
    content: str | None = None,
    scope: MemoryScopeArg | None = None,
    media_type: str | None = None,
) -> ToolResult:
    """Keep a file as a named artifact for later runs (each save is a new version).

    Give `path` (a file in the world) or `content` (text), one of them. `name`: a
    plain file name (no folders). `scope`: as for remember. `media_type`: e.g.
    `text/markdown` (default: guessed from the name).
    """
    if ctx.memory is None:
        return _UNAVAILABLE
    if (path is None) == (content is None):
        return ToolResult(ok=False, output="give path (a file in the world) or content, one")
    if path is not None:
        data: list[bytes] = []

        def read() -> ToolResult:
            data.append(_read_world_file(ctx.world, path))
            return ToolResult(ok=True, output="")

        read_result = await guarded(path, read)
        if not read_result.ok:
            return read_result
        body = data[0]
    else:
        body = (content or "").encode("utf-8")
    door = ctx.memory
    saved = await door.save_artifact(name, body, scope=scope, media_type=media_type)
    event = MemoryArtifactSaved(
        call_id=ctx.call_id,
        scope=saved.scope,
        owner=saved.owner,
        name=saved.name,
        version=saved.version,
        media_type=saved.media_type,
        size=saved.size,
        sha256=saved.sha256,
    )
    output = f"saved {saved.name} version {saved.version} ({saved.size} bytes, {saved.scope})"
    return ToolResult(ok=True, output=output, events=(event,))


def _write_world_file(
    world: Path, path: str, data: bytes, quota: WorldQuota | None
) -> tuple[str, FileChange | None]:
    target = in_world(world, path)
    if target.is_dir():
        raise Refused(f"{path} is a directory: give a file path to write")
    before = sha256(target.read_bytes()) if target.exists() else None
    name = relative(world, target)
    after = sha256(data)
    if before == after:
        return name, None
    held = quota.admit(target, len(data), name) if quota is not None else 0
    target.parent.mkdir(parents=True, exist_ok=True)
    _store(target, data)
    if quota is not None:
        quota.wrote(target, held)
    op: Literal["create", "modify"] = "create" if before is None else "modify"
    return name, FileChange(path=name, op=op, before=before, after=after)


@tool(effect="world", reports_changes=True, paths={"path": "write"})
async def open_artifact(
    ctx: ToolContext,
    name: str,
    scope: MemoryScopeArg | None = None,
    path: str | None = None,
    version: int | None = None,
) -> ToolResult:
    """Open a saved artifact: write it into the world at `path`, or show it as text.

    `scope`: `personal` or `workspace`; default: the person's own first, then the
    workspace's. `version`: default the latest. Without `path`, a text artifact's
    content is returned (binary ones need a path).
    """
    if ctx.memory is None:
        return _UNAVAILABLE
    found = await ctx.memory.open_artifact(name, scope=scope, version=version)
    data = found.content or b""
    written: list[tuple[str, FileChange | None]] = []
    if path is not None:

        def write() -> ToolResult:
            written.append(_write_world_file(ctx.world, path, data, ctx.world_quota))
            return ToolResult(ok=True, output="")

        result = await guarded(path, write)
        if not result.ok:
            return result
    event = MemoryArtifactOpened(
        call_id=ctx.call_id,
        scope=found.scope,
        owner=found.owner,
        name=found.name,
        version=found.version,
        sha256=found.sha256,
        path=written[0][0] if written else None,
    )
    about = f"{found.name} version {found.version} ({found.size} bytes, {found.scope})"
    if written:
        where, change = written[0]
        files = (change,) if change is not None else ()
        return ToolResult(ok=True, output=f"wrote {about} to {where}", files=files, events=(event,))
    if b"\x00" in data[:8192]:
        return ToolResult(ok=False, output=f"{about} is binary: give a path to write it to")
    text = data.decode("utf-8", "replace")
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + f"\n[cut at {_SHOWN} characters: give a path to get it whole]"
    return ToolResult(ok=True, output=f"{about}:\n{text}", events=(event,))


MEMORY_TOOLS = (remember, recall, save_artifact, open_artifact)
"""The memory tools an engine with a ``memory=`` seam offers."""
