"""Reading a world directory into a manifest, hashing only what may have changed.

A file whose size, mtime and mode match the previous manifest's entry keeps that
entry's hash without being read (git's index does the same), so a scan costs one
``lstat`` per path plus the bytes of the files that changed. A file modified too close
to the scan to trust its mtime (filesystem clocks are coarse) is recorded with mtime
``-1``, so the next scan reads it again.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helix.kernel.events import path_problem

from ._ignore import IgnoreRules
from ._manifest import Delta, Entry, Manifest
from ._objects import ObjectStore, open_file
from ._roots import world_root
from ._safe_fs import Blocked, WorldDir

DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024
"""Files larger than this are left out of snapshots (a ``world.file_skipped`` says so)."""

RACY_NS = 100_000_000
"""Modified within this long before the scan: the mtime cannot vouch for the content."""


@dataclass
class ScanResult:
    """A world's manifest, and what reading it cost and left out."""

    manifest: Manifest
    bytes_added: int = 0
    skipped: dict[str, tuple[int, str]] = field(default_factory=dict[str, tuple[int, str]])
    """Path → (size, reason) of files left out: ``too_large``, ``not_regular``, or
    ``unsafe_name`` (a name with a backslash: no event may carry it as a world path)."""
    removed: set[str] = field(default_factory=set[str])
    """For ``refresh``: paths that are gone (``manifest`` then holds only what changed)."""

    def changes(self, previous: Mapping[str, Entry]) -> Delta:
        """A ``refresh``'s result as a delta against ``previous``."""
        found: Delta = {p: e for p, e in self.manifest.items() if previous.get(p) != e}
        found.update({p: None for p in self.removed if p in previous})
        return found


class Scanner:
    """Scans one world directory (its ignore rules are read once per scan)."""

    def __init__(
        self,
        root: Path,
        objects: ObjectStore | None,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.root = root
        self.objects = objects
        """Where new content is stored; ``None`` only hashes (to look, not to record)."""
        self.max_file_bytes = max_file_bytes

    def scan(self, previous: Mapping[str, Entry]) -> ScanResult:
        """The whole world, reusing ``previous``'s hashes for unchanged files."""
        root = world_root(self.root)
        rules = IgnoreRules.for_world(root)
        result = ScanResult({})
        since = time.time_ns() - RACY_NS
        pending = [("", str(root))]
        check_files = rules.applies_to_files
        found = result.manifest
        while pending:
            prefix, folder = pending.pop()
            with os.scandir(folder) as entries:
                for item in entries:
                    rel = prefix + item.name
                    if "\\" in item.name:
                        size = item.stat(follow_symlinks=False).st_size
                        result.skipped[rel] = (size, "unsafe_name")
                        continue
                    if item.is_dir(follow_symlinks=False):
                        if not rules.ignored(rel, True):
                            found[rel] = Entry("", item.stat(follow_symlinks=False).st_mode, 0, 0)
                            pending.append((rel + "/", item.path))
                        continue
                    if check_files and rules.ignored(rel, False):
                        continue
                    st = item.stat(follow_symlinks=False)
                    before = previous.get(rel)
                    # The common case inline: unchanged size, mtime and mode vouch for it.
                    if (
                        before is not None
                        and before.mtime_ns == st.st_mtime_ns
                        and before.size == st.st_size
                        and before.mode == st.st_mode
                    ):
                        found[rel] = before
                    else:
                        self._record(result, rel, item.path, st, before, since)
        return result

    def refresh(self, previous: Mapping[str, Entry], paths: Iterable[str]) -> ScanResult:
        """Only ``paths`` (and their folders) read again; ``manifest`` holds the changes.

        Costs what those paths cost, whatever the size of the world: ``previous`` is
        neither copied nor walked (except to forget what lay under a vanished path).
        """
        root = world_root(self.root)
        rules = IgnoreRules.for_world(root)
        result = ScanResult({})
        since = time.time_ns() - RACY_NS
        with WorldDir(root) as world:
            for rel in sorted(set(paths)):
                if path_problem(rel) is not None or rules.ignored_with_parents(rel, False):
                    continue  # not a world path (a watcher's name with a backslash): a walk says
                try:
                    # Its folders opened without following links: a path under a link
                    # is not in the world (a walk records the link itself).
                    st = world.lstat(rel)
                except (Blocked, FileNotFoundError, NotADirectoryError):
                    st = None
                if st is None:
                    result.removed.add(rel)
                    continue
                if stat.S_ISDIR(st.st_mode):
                    continue  # a folder where a file was: only a full scan can say what is in it
                self._folders(root, previous, result.manifest, rel)
                full = os.path.join(root, rel)
                self._record(result, rel, full, st, previous.get(rel), since)
        if result.removed:
            gone = tuple(p + "/" for p in result.removed)
            result.removed.update(p for p in previous if p.startswith(gone))
        return result

    def _record(
        self,
        result: ScanResult,
        rel: str,
        full: str,
        st: os.stat_result,
        before: Entry | None,
        since: int,
    ) -> None:
        mode, size, mtime = st.st_mode, st.st_size, st.st_mtime_ns
        if (
            before is not None
            and before.mtime_ns == mtime
            and before.size == size
            and before.mode == mode
        ):
            result.manifest[rel] = before
            return
        if stat.S_ISLNK(mode):
            target = os.fsencode(os.readlink(full))
            digest, added = self._store_bytes(target)
        elif not stat.S_ISREG(mode):
            result.skipped[rel] = (size, "not_regular")
            result.removed.add(rel)
            return
        elif size > self.max_file_bytes:
            result.skipped[rel] = (size, "too_large")
            result.removed.add(rel)
            return
        else:
            try:
                digest, added = self._store_file(Path(full), size)
            except FileNotFoundError:
                return  # deleted while we looked
            except OSError as error:
                if error.errno != errno.ELOOP:
                    raise
                return  # swapped for a link while we looked: the next walk records it
        result.bytes_added += added
        result.manifest[rel] = Entry(digest, mode, size, -1 if mtime >= since else mtime)

    def _store_bytes(self, data: bytes) -> tuple[str, int]:
        if self.objects is not None:
            return self.objects.put_bytes(data)
        return hashlib.sha256(data).hexdigest(), 0

    def _store_file(self, path: Path, size: int) -> tuple[str, int]:
        if self.objects is not None:
            return self.objects.put_file(path, size)
        with open_file(path) as data:
            return hashlib.file_digest(data, "sha256").hexdigest(), 0

    def _folders(
        self, root: Path, previous: Mapping[str, Entry], found: Manifest, rel: str
    ) -> None:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            known = previous.get(folder)
            if (known is None or not known.is_dir) and folder not in found:
                st = os.lstat(os.path.join(root, folder))
                found[folder] = Entry("", st.st_mode, 0, 0)
