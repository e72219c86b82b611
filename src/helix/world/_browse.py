"""Looking at a run's world: list its files and read one at any point, diff two points.

This is the service the CLI (``helix files``, ``helix diff``, ``helix compare``) and the
REST routes (``GET /runs/{id}/files``, ``/files/{path}``, ``/diff``) call: each takes a
run id, points and a path as a person typed them, and answers data or a clear error
(``ConfigError`` for a malformed path or point, ``NotFoundError`` for what does not
exist). Nothing here changes the world or the log.
"""

from __future__ import annotations

import asyncio
import difflib
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError, NotFoundError
from helix.kernel.log import EventStore

from ._history import Point, world_at
from ._manifest import Entry, Manifest, content_delta
from ._objects import ObjectStore, open_file
from ._roots import world_root
from ._scan import Scanner

DIFF_MAX_BYTES = 1024 * 1024
"""Files larger than this are marked as changed, with sizes, instead of diffed."""
_SNIFF = 8192
_NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One path of a world listing."""

    path: str
    kind: str
    """``file``, ``dir`` or ``link``."""
    size: int
    mode: int
    """Permission bits."""
    hash: str


def clean_path(path: str | None) -> str:
    """A path relative to the world (``""`` for the whole); ``ConfigError`` if outside it."""
    if path is None or path in ("", ".", "/"):
        return ""
    if "\0" in path:
        raise ConfigError("the path contains a NUL byte")
    if path.startswith("/") or path.startswith("\\"):
        raise ConfigError(f"{path!r} is outside the world: give a path relative to it")
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise ConfigError(f"{path!r} is outside the world: give a path relative to it")
    return "" if normal == "." else normal


class WorldBrowser:
    """Read-only views of runs' worlds over one event store and object store."""

    def __init__(self, store: EventStore, objects: ObjectStore) -> None:
        self.store = store
        self.objects = objects

    async def manifest(self, run_id: str, point: Point) -> Manifest:
        """The world at ``point``; ``now`` reads the run's directory as it is."""
        if point != "now":
            return await world_at(self.store, self.objects, run_id, point)
        root = await self.root(run_id)
        try:
            last = await world_at(self.store, self.objects, run_id, "last")
        except NotFoundError:
            last = {}
        scanner = Scanner(root, None)
        return (await asyncio.to_thread(scanner.scan, last)).manifest

    async def root(self, run_id: str) -> Path:
        """The run's world directory (``world_root``: never ``/``)."""
        record = await self.store.get_run(run_id)
        root = Path(record.world)
        if not await asyncio.to_thread(root.is_dir):
            raise NotFoundError(f"the world of run {run_id!r} ({root}) no longer exists")
        return await asyncio.to_thread(world_root, root)

    async def files(
        self, run_id: str, path: str | None = None, at: Point = "now"
    ) -> list[FileInfo]:
        """Every path at or under ``path`` at ``at``, sorted."""
        where = clean_path(path)
        manifest = await self.manifest(run_id, at)
        inside = where + "/"
        found = [
            _info(p, e)
            for p, e in sorted(manifest.items())
            if not where or p == where or p.startswith(inside)
        ]
        if where and not found:
            raise NotFoundError(f"{where} is not in the world of run {run_id!r} at {_name(at)}")
        return found

    async def read(self, run_id: str, path: str, at: Point = "now") -> bytes:
        """A file's content at ``at``."""
        where = clean_path(path)
        if not where:
            raise ConfigError("name a file: the world itself is a folder")
        manifest = await self.manifest(run_id, at)
        entry = manifest.get(where)
        if entry is None:
            raise NotFoundError(f"{where} is not in the world of run {run_id!r} at {_name(at)}")
        if entry.is_dir:
            raise ConfigError(f"{where} is a folder: list it with files instead")
        if at == "now":
            root = await self.root(run_id)
            return await asyncio.to_thread(_read_now, root / where, entry)
        return await asyncio.to_thread(self.objects.read, entry.hash)

    async def diff(
        self,
        run_id: str,
        start: Point = "start",
        end: Point = "now",
        path: str | None = None,
        *,
        other: str | None = None,
    ) -> str:
        """A unified diff from ``start`` to ``end`` (of ``other``'s world, if given)."""
        where = clean_path(path)
        old = await self.manifest(run_id, start)
        new_run = other or run_id
        new = await self.manifest(new_run, end)
        changes = content_delta(old, new)
        inside = where + "/"
        paths = [p for p in sorted(changes) if not where or p == where or p.startswith(inside)]
        old_root = await self.root(run_id) if start == "now" else None
        new_root = await self.root(new_run) if end == "now" else None
        parts = []
        for p in paths:
            before, after = old.get(p), new.get(p)
            if (before is None or before.is_dir) and (after is None or after.is_dir):
                continue  # folders appear through their files
            old_bytes = await self._content(before, old_root, p)
            new_bytes = await self._content(after, new_root, p)
            parts.append(file_diff(p, before, after, old_bytes, new_bytes))
        return "".join(parts)

    async def _content(self, entry: Entry | None, root: Path | None, path: str) -> bytes:
        if entry is None or entry.is_dir or entry.size > DIFF_MAX_BYTES:
            return b""
        if root is not None:
            return await asyncio.to_thread(_read_now, root / path, entry)
        return await asyncio.to_thread(self.objects.read, entry.hash)


def file_diff(path: str, before: Entry | None, after: Entry | None, old: bytes, new: bytes) -> str:
    """One file's part of a unified diff (git's headers, markers for binary and huge)."""
    if before is not None and before.is_dir:
        before = None
    if after is not None and after.is_dir:
        after = None
    header = [f"diff --helix a/{path} b/{path}\n"]
    if before is None and after is not None:
        header.append(f"new file mode {stat.S_IMODE(after.mode):o}\n")
    elif after is None and before is not None:
        header.append(f"deleted file mode {stat.S_IMODE(before.mode):o}\n")
    elif before is not None and after is not None and before.mode != after.mode:
        header.append(
            f"old mode {stat.S_IMODE(before.mode):o}\nnew mode {stat.S_IMODE(after.mode):o}\n"
        )
    if before is not None and after is not None and before.hash == after.hash:
        return "".join(header)
    old_size = before.size if before else 0
    new_size = after.size if after else 0
    if old_size > DIFF_MAX_BYTES or new_size > DIFF_MAX_BYTES:
        header.append(
            f"Large file a/{path} and b/{path} differ ({old_size} -> {new_size} bytes;"
            f" over the {DIFF_MAX_BYTES}-byte diff limit)\n"
        )
        return "".join(header)
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        header.append(
            f"Binary files a/{path} and b/{path} differ ({old_size} -> {new_size} bytes)\n"
        )
        return "".join(header)
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=f"a/{path}" if before else "/dev/null",
        tofile=f"b/{path}" if after else "/dev/null",
    )
    body = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return "".join(header) + body


def _text(data: bytes) -> str | None:
    if b"\0" in data[:_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_now(full: Path, entry: Entry) -> bytes:
    import errno
    import os

    if entry.is_link:
        return os.fsencode(os.readlink(full))
    try:
        with open_file(full) as data:  # never through a link swapped in since the scan
            return data.read()
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise NotFoundError(f"{full.name} became a link while it was read: look again") from None


def _info(path: str, entry: Entry) -> FileInfo:
    kind = "dir" if entry.is_dir else "link" if entry.is_link else "file"
    return FileInfo(path, kind, entry.size, stat.S_IMODE(entry.mode), entry.hash)


def _name(point: Point) -> str:
    return f"turn {point}" if isinstance(point, int) else point
