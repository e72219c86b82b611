"""World events: snapshots of the run's directory, rollbacks, kept branches, effects.

A snapshot event holds only what changed since the previous one (or names a stored
manifest to start again from), so the world's state at any point is a fold of these
events over the content-addressed object store (``helix.world``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ._checks import Digest, EntryHash, ReportedPath, WorldPath
from ._payload import Payload


class WorldEntry(BaseModel):
    """One path of a world manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hash: EntryHash
    """SHA-256 of the content (a symlink's: of its target); empty for a directory."""
    mode: int = Field(ge=0)
    """``st_mode``: the file type and permission bits."""
    size: int = Field(ge=0)
    mtime_ns: int
    """Modification time when hashed; ``-1`` when too recent to trust for reuse."""


class WorldSnapshotted(Payload):
    """The world's state was recorded (at run start, a turn boundary, or before a rollback).

    Helix's addition. Appended before the ``turn.ended`` of its turn, so a fork at that
    boundary sees it.
    """

    TYPE: ClassVar[str] = "world.snapshotted"

    turn: int = Field(ge=0)
    base: Digest | None = None
    """A manifest in the object store to start again from; ``None``: continue the last."""
    changes: dict[WorldPath, WorldEntry | None] = Field(
        default_factory=dict[WorldPath, WorldEntry | None]
    )
    """Paths added or changed (their new entry) or removed (``None``)."""
    files: int = Field(ge=0)
    """Entries in the world after this snapshot."""
    bytes_added: int = Field(ge=0)
    """Bytes this snapshot added to the object store (content not already there)."""
    scanned: bool
    """Whether the whole world was walked, or only the paths tools reported writing."""


class WorldFileSkipped(Payload):
    """A file was left out of the world's snapshots (Helix's addition)."""

    TYPE: ClassVar[str] = "world.file_skipped"

    path: ReportedPath
    size: int = Field(ge=0)
    reason: str
    """``too_large`` (over the per-file limit), ``not_regular`` (a socket, a device…) or
    ``unsafe_name`` (a name with a backslash, which no world path may hold)."""
    limit: int | None = None


class EffectOutcome(BaseModel):
    """What happened to one tool call's effect when a run was rolled back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    call_id: str
    tool: str
    detail: str


class WorldConflict(BaseModel):
    """A path a rollback or keep left as it was, and why (nothing under it was touched)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    detail: str
    """What stands there, e.g. ``a symbolic link to '/srv' stands where a folder is to be
    restored: left as it is, and nothing under it is written``."""


class WorldRolledBack(Payload):
    """The world was restored to an earlier snapshot; the log itself is untouched."""

    TYPE: ClassVar[str] = "world.rolled_back"

    to_turn: int = Field(ge=0)
    """The turn whose snapshot was restored (0: the run's start)."""
    manifest: Digest
    """The restored manifest, in the object store: the world's state from here on."""
    restored: list[WorldPath]
    """Paths written back (created again, or given their old content or mode)."""
    removed: list[WorldPath]
    """Paths that did not exist at that point and were deleted."""
    reverted: list[EffectOutcome] = Field(default_factory=list[EffectOutcome])
    """Calls whose effects were in the world, undone by the restore."""
    compensated: list[EffectOutcome] = Field(default_factory=list[EffectOutcome])
    dropped: list[EffectOutcome] = Field(default_factory=list[EffectOutcome])
    """Withheld effects that will now never happen."""
    cannot_undo: list[EffectOutcome] = Field(default_factory=list[EffectOutcome])
    conflicts: list[WorldConflict] = Field(default_factory=list[WorldConflict])
    """Paths the restore would have had to write through a link (or into a non-folder):
    left as they were; ``manifest`` leaves them out."""
    by: str


class WorldKept(Payload):
    """A branch's world was promoted into the original directory (Helix's addition).

    Recorded on the kept branch and on the run that owns the original directory.
    """

    TYPE: ClassVar[str] = "world.kept"

    branch: str
    """The run whose world was kept."""
    target: str
    """The directory that received it."""
    manifest: Digest
    """The kept world's manifest, in the object store."""
    world_changed: bool
    """True on the run whose directory now holds the branch's world."""
    conflicts: list[WorldConflict] = Field(default_factory=list[WorldConflict])
    """Paths of the directory left as they were (as for ``world.rolled_back``)."""
    by: str


class EffectRecorded(Payload):
    """A tool call's effect outside the world, for rollback or commit (Helix's addition)."""

    TYPE: ClassVar[str] = "effect.recorded"

    call_id: str
    tool: str
    kind: Literal["withheld", "compensable", "irreversible"]
    """``withheld``: queued, happens on commit; ``compensable``: done, undone on rollback;
    ``irreversible``: done, and no rollback can take it back (it is reported)."""
    args: dict[str, JsonValue]
    """What the tool's perform or undo hook needs."""
    summary: str


class EffectSettled(Payload):
    """A recorded effect was performed, compensated, or dropped (Helix's addition)."""

    TYPE: ClassVar[str] = "effect.settled"

    call_id: str
    outcome: Literal["performed", "compensated", "dropped", "failed"]
    detail: str
