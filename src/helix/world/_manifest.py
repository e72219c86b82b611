"""Manifests (path → content hash, mode, size, mtime) and the deltas between them."""

from __future__ import annotations

import stat
from collections.abc import Mapping
from typing import NamedTuple

from pydantic_core import from_json, to_json

from helix.errors import InvalidObjectError
from helix.kernel.events import WorldEntry, is_digest, path_problem

from ._objects import ObjectStore


class Entry(NamedTuple):
    """One path of a world: its content's SHA-256 (empty for a folder) and its stat."""

    hash: str
    mode: int
    size: int
    mtime_ns: int
    """``-1`` when it was too recent to trust: the next scan hashes the file again."""

    @property
    def is_dir(self) -> bool:
        """Whether the entry is a folder."""
        return stat.S_ISDIR(self.mode)

    @property
    def is_link(self) -> bool:
        """Whether the entry is a symbolic link (its content is the target)."""
        return stat.S_ISLNK(self.mode)

    def same_content(self, other: Entry) -> bool:
        """Same type, content and permissions (times aside)."""
        return self.hash == other.hash and self.mode == other.mode

    def to_event(self) -> WorldEntry:
        """The entry as an event's typed value."""
        return WorldEntry(hash=self.hash, mode=self.mode, size=self.size, mtime_ns=self.mtime_ns)

    @classmethod
    def from_event(cls, data: Mapping[str, object]) -> Entry:
        """An entry from an event's ``data`` (a plain mapping)."""
        return cls(str(data["hash"]), int(data["mode"]), int(data["size"]), int(data["mtime_ns"]))  # type: ignore[call-overload]


Manifest = dict[str, Entry]
"""A world's state: every path (files, links and folders) it holds."""

Delta = dict[str, Entry | None]
"""What changed between two manifests: new entries, or ``None`` for removed paths."""


def delta(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> Delta:
    """The changes that turn ``old`` into ``new`` (times included, so the cache stays true)."""
    changes: Delta = {path: entry for path, entry in new.items() if old.get(path) != entry}
    changes.update({path: None for path in old if path not in new})
    return changes


def apply_delta(manifest: Manifest, changes: Mapping[str, Entry | None]) -> Manifest:
    """Apply ``changes`` to ``manifest`` in place; returns it."""
    for path, entry in changes.items():
        if entry is None:
            manifest.pop(path, None)
        else:
            manifest[path] = entry
    return manifest


def content_delta(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> Delta:
    """Like ``delta`` but blind to times: what a person would call a change."""
    changes: Delta = {
        path: entry
        for path, entry in new.items()
        if (before := old.get(path)) is None or not before.same_content(entry)
    }
    changes.update({path: None for path in old if path not in new})
    return changes


def save_manifest(objects: ObjectStore, manifest: Mapping[str, Entry]) -> tuple[str, int]:
    """Store a whole manifest as an object; returns its digest and the bytes added."""
    rows = {path: list(manifest[path]) for path in sorted(manifest)}
    return objects.put_bytes(to_json(rows))


def load_manifest(objects: ObjectStore, digest: str) -> Manifest:
    """A manifest stored by ``save_manifest``, checked as an event's entries are.

    Any object can be named as a manifest (an imported log chooses its digests), so each
    row is checked: a world path (``path_problem``), a digest or an empty hash, integer
    mode, size and time. ``InvalidObjectError`` names the first row that is not.
    """
    try:
        rows = from_json(objects.read(digest))
    except ValueError:
        rows = None
    if not isinstance(rows, dict):
        raise InvalidObjectError(f"object {digest[:12]}… is not a manifest")
    manifest: Manifest = {}
    for path, row in rows.items():
        problem = path_problem(path)
        if problem is None and not _is_row(row):
            problem = "has a malformed entry"
        if problem is not None:
            raise InvalidObjectError(
                f"object {digest[:12]}… is not a manifest: {path[:200]!r} {problem}"
            )
        manifest[path] = Entry(*row)
    return manifest


def _is_row(row: object) -> bool:
    if not isinstance(row, list) or len(row) != 4:
        return False
    digest, mode, size, mtime = row
    numbers = all(type(n) is int for n in (mode, size, mtime))
    return (digest == "" or is_digest(digest)) and numbers and mode >= 0 and size >= 0


def file_count(manifest: Mapping[str, Entry]) -> int:
    """How many entries are not folders."""
    return sum(1 for entry in manifest.values() if not entry.is_dir)
