"""Export and import: a workspace's memory and artifacts as JSON Lines.

The first line is a header, ``{"helix": "memory", "version": 1, "workspace": W}``;
each other line one memory (``{"kind": "memory", "scope", "text", "tags", "key",
"created_at", "by"}``) or one artifact version (``{"kind": "artifact", "scope",
"name", "version", "media_type", "at", "by", "content_base64"}``). The workspace's
own, and the exporting person's personal ones only when asked.

An import is untrusted input: at most ``MAX_IMPORT_BYTES`` and ``MAX_IMPORT_LINES``,
every line checked (closed objects, the same checks as a person's edit) before
anything is stored, then all stored in one transaction: a bad line is a
``MemoryInputError`` naming it, and nothing is imported. Imported entries belong to
the importing workspace (``workspace``) or the importing person (``personal``),
whoever exported them; they get new ids, and artifact versions are added on top.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from helix.errors import HelixError, MemoryInputError

from ._model import (
    MAX_ARTIFACT_BYTES,
    MAX_TEXT,
    Artifact,
    AuditEntry,
    Memory,
    Scope,
    check_content,
    check_key,
    check_media_type,
    check_name,
    check_tags,
    check_text,
)
from ._service import Memories, Person, new_memory_id

MAX_IMPORT_BYTES = 256 << 20
"""The largest import file (256 MiB)."""
MAX_IMPORT_LINES = 100_000
FORMAT = "memory"


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Header(_Line):
    helix: Literal["memory"]
    version: Literal[1]
    workspace: str | None = None


class _MemoryLine(_Line):
    kind: Literal["memory"]
    scope: Literal["personal", "workspace"]
    text: str = Field(max_length=MAX_TEXT * 2)
    tags: list[str] = Field(default_factory=list, max_length=64)
    key: str | None = None
    created_at: str | None = Field(default=None, max_length=40)
    by: str | None = Field(default=None, max_length=200)


class _ArtifactLine(_Line):
    kind: Literal["artifact"]
    scope: Literal["personal", "workspace"]
    name: str
    version: int | None = None
    media_type: str | None = None
    at: str | None = Field(default=None, max_length=40)
    by: str | None = Field(default=None, max_length=200)
    content_base64: str = Field(max_length=(MAX_ARTIFACT_BYTES * 4) // 3 + 8)


async def export_lines(
    memories: Memories, who: Person, workspace: str, *, personal: bool = False
) -> list[str]:
    """The workspace's memory and artifacts (and ``who``'s own, if ``personal``) as lines."""
    scopes = ["workspace", "personal"] if personal else ["workspace"]
    lines = [json.dumps({"helix": FORMAT, "version": 1, "workspace": workspace})]
    for scope in scopes:
        owners = [memories.owner(who, workspace, scope, write=False)]
        for memory in reversed(await memories.store.search(owners, [], 1_000_000)):
            record: dict[str, object] = {
                "kind": "memory",
                "scope": memory.scope,
                "text": memory.text,
                "tags": memory.tags,
                "key": memory.key,
                "created_at": memory.created_at,
                "by": memory.by,
            }
            lines.append(json.dumps(record, ensure_ascii=False))
        for latest in await memories.store.artifacts(owners):
            for version in range(1, latest.version + 1):
                found = await memories.store.artifact(
                    latest.scope, latest.owner, latest.name, version
                )
                if found is None:
                    continue
                artifact, content = found
                record = {
                    "kind": "artifact",
                    "scope": artifact.scope,
                    "name": artifact.name,
                    "version": artifact.version,
                    "media_type": artifact.media_type,
                    "at": artifact.at,
                    "by": artifact.by,
                    "content_base64": base64.b64encode(content).decode("ascii"),
                }
                lines.append(json.dumps(record))
    return lines


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{where}: {first['msg']}"


async def import_lines(
    memories: Memories, who: Person, workspace: str, data: bytes | str
) -> tuple[int, int]:
    """Check every line of an export, then store them all; (memories, artifact versions)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_IMPORT_BYTES:
        raise MemoryInputError(f"the import has {len(raw)} bytes: at most {MAX_IMPORT_BYTES}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MemoryInputError(f"the import is not UTF-8 text (byte {error.start})") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise MemoryInputError("the import is empty: the first line must be its header")
    if len(lines) > MAX_IMPORT_LINES:
        raise MemoryInputError(f"the import has {len(lines)} lines: at most {MAX_IMPORT_LINES}")
    reader = _Reader(memories, who, workspace)
    for number, line in lines:
        try:
            parsed = json.loads(line)
        except ValueError as error:
            raise MemoryInputError(f"line {number}: not JSON ({error})") from None
        try:
            if number == lines[0][0]:
                _Header.model_validate(parsed)
            else:
                reader.read(parsed)
        except ValidationError as error:
            raise MemoryInputError(f"line {number}: {_problem(error)}") from None
        except binascii.Error as error:
            raise MemoryInputError(f"line {number}: content_base64 is no base64: {error}") from None
        except HelixError as error:
            error.args = (f"line {number}: {error}",)
            raise
    found_memories, found_artifacts, owners = reader.memories, reader.artifacts, reader.owners
    at = reader.at
    await memories.store.load(found_memories, found_artifacts)
    for scope, owner in owners.items():
        await memories.store.audit(
            _audit_entry(who, at, scope, owner, len(found_memories), len(found_artifacts))
        )
    return len(found_memories), len(found_artifacts)


class _Reader:
    """Checks the lines of an import one by one, keeping what they will store."""

    def __init__(self, memories: Memories, who: Person, workspace: str) -> None:
        self.service, self.who, self.workspace = memories, who, workspace
        self.owners: dict[Scope, str] = {}
        self.memories: list[Memory] = []
        self.artifacts: list[tuple[Artifact, bytes]] = []
        self.at = memories.now()

    def owner_of(self, scope: Scope) -> str:
        if scope not in self.owners:
            self.owners[scope] = self.service.owner(self.who, self.workspace, scope, write=True)[1]
        return self.owners[scope]

    def read(self, parsed: object) -> None:
        kind = parsed.get("kind") if isinstance(parsed, dict) else None
        if kind == "memory":
            entry = _MemoryLine.model_validate(parsed)
            memory = Memory(
                id=new_memory_id(),
                scope=entry.scope,
                owner=self.owner_of(entry.scope),
                text=check_text(entry.text),
                tags=check_tags(entry.tags),
                key=check_key(entry.key),
                by=self.who.by,
                created_at=entry.created_at or self.at,
                updated_at=self.at,
            )
            self.memories.append(memory)
        elif kind == "artifact":
            piece = _ArtifactLine.model_validate(parsed)
            content = check_content(base64.b64decode(piece.content_base64, validate=True))
            name = check_name(piece.name)
            artifact = Artifact(
                scope=piece.scope,
                owner=self.owner_of(piece.scope),
                name=name,
                version=0,
                media_type=check_media_type(piece.media_type, name),
                size=len(content),
                sha256=hashlib.sha256(content).hexdigest(),
                by=self.who.by,
                at=self.at,
            )
            self.artifacts.append((artifact, content))
        else:
            raise MemoryInputError('"kind" must be "memory" or "artifact"')


def _audit_entry(
    who: Person, at: str, scope: Scope, owner: str, memories: int, artifacts: int
) -> AuditEntry:
    return AuditEntry(
        at=at,
        by=who.by,
        action="import",
        scope=scope,
        owner=owner,
        target=f"{memories} memories, {artifacts} artifact versions",
    )
