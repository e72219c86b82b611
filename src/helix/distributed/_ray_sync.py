"""A world across the cluster by content hash: what travels each way, and taking it back.

The host sends a command's node the world's manifest (path → mode, size, digest, a
link's target) and, for each file's content, a Ray object reference the node fetches
only when its cache lacks that digest. The node returns what the command changed: new
and changed paths (a file's content inline), and removed ones. The host trusts none of
it: ``take_back`` refuses, and reports, every path that is not a normal relative path
(``..``, absolute, a backslash), lies in a hidden path, is not a file, folder or link,
is a link whose target leaves the world, has content that does not match its digest,
or would take the world past its quota; the rest is written through
``helix.world.restore``, which never follows a link (a link where a folder should be is
a conflict, reported and left alone).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from helix.kernel.events import path_problem
from helix.world import Entry, Manifest, ObjectStore, content_delta, restore

Row = tuple[str, int, int, str, str]
"""One path as it travels: ``(path, mode, size, digest, link target)``; a folder's
digest and target are empty, a link's digest is that of its target."""


@dataclass
class Tree:
    """A world walked: its manifest and each link's target (content stays on disk)."""

    manifest: Manifest = field(default_factory=dict[str, Entry])
    targets: dict[str, str] = field(default_factory=dict[str, str])
    skipped: dict[str, str] = field(default_factory=dict[str, str])
    """Path → why it does not travel (a special file, an unsafe name)."""

    def row(self, path: str) -> Row:
        """One path of the manifest as it travels."""
        e = self.manifest[path]
        return (path, e.mode, e.size, e.hash, self.targets.get(path, ""))

    def rows(self) -> list[Row]:
        """The manifest as it travels."""
        return [self.row(path) for path in sorted(self.manifest)]


def digest_of(data: bytes) -> str:
    """The content's SHA-256, as the object store names it."""
    return hashlib.sha256(data).hexdigest()


def _open_regular(path: str | Path, inode: int | None = None) -> int:
    """A descriptor of the regular file at ``path``, never through a link in its last part.

    ``inode``, when given, must be the file's (the one a walk saw): a folder above it
    swapped for a link since then leads to another file, which is refused (``OSError``).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (inode is not None and st.st_ino != inode):
        os.close(fd)
        raise OSError(f"{path} changed while it was read: not sent")
    return fd


def read_regular(path: str | Path, inode: int | None = None) -> bytes:
    """The content of the regular file at ``path`` (see ``_open_regular``)."""
    with os.fdopen(_open_regular(path, inode), "rb") as handle:
        return handle.read()


def _file_digest(path: str) -> str:
    with os.fdopen(_open_regular(path), "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


StatKey = tuple[int, int, int, int]
"""What vouches for a file's content between two walks: (inode, size, mtime, ctime)."""

Known = dict[str, tuple[Entry, StatKey]]
"""Each regular file's entry and the stat key it had when that entry was true."""


def _stat_key(st: os.stat_result) -> StatKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def walk(
    root: Path,
    *,
    known: Mapping[str, tuple[Entry, StatKey]] | None = None,
    hidden: Sequence[Path] = (),
) -> tuple[Tree, Known]:
    """Every folder, file and link under ``root``, never following a link.

    A file whose stat key is the one ``known`` holds keeps its entry unread; others
    are hashed. Returns the tree and what the next walk may take as ``known``.
    Paths in ``hidden`` (and what they hold) are left out.
    """
    tree = Tree()
    now: Known = {}
    masked = {os.path.abspath(p) for p in hidden}
    pending = [("", str(root))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for item in entries:
                rel = prefix + item.name
                if item.path in masked:
                    continue
                if path_problem(rel) is not None:
                    tree.skipped[rel] = "not a name a world path may have"
                    continue
                st = item.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    tree.manifest[rel] = Entry("", st.st_mode, 0, -1)
                    pending.append((rel + "/", item.path))
                elif stat.S_ISLNK(st.st_mode):
                    target = os.readlink(item.path)
                    tree.targets[rel] = target
                    data = os.fsencode(target)
                    tree.manifest[rel] = Entry(digest_of(data), st.st_mode, len(data), -1)
                elif stat.S_ISREG(st.st_mode):
                    key = _stat_key(st)
                    before = known.get(rel) if known is not None else None
                    if before is not None and before[1] == key and before[0].mode == st.st_mode:
                        entry = before[0]
                    else:
                        entry = Entry(_file_digest(item.path), st.st_mode, st.st_size, -1)
                    tree.manifest[rel] = entry
                    now[rel] = (entry, key)
                else:
                    tree.skipped[rel] = "a special file (not a file, folder or link)"
    return tree, now


def written(root: Path, manifest: Mapping[str, Entry]) -> Known:
    """``known`` for a world just written to hold ``manifest``, without reading content.

    Each regular file there holds its entry's content (it was written from it), so
    only its stat key is taken; a path that is not a regular file is left out.
    """
    found: Known = {}
    for path, entry in manifest.items():
        if entry.is_dir or entry.is_link:
            continue
        try:
            st = os.lstat(root / path)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[path] = (entry, _stat_key(st))
    return found


def changes(sent: Mapping[str, Entry], now: Tree) -> tuple[list[Row], list[str]]:
    """What the command changed: new or changed rows, and removed paths."""
    found = content_delta(sent, now.manifest)
    changed = [now.row(p) for p, e in sorted(found.items()) if e is not None]
    removed = sorted(p for p, e in found.items() if e is None)
    return changed, removed


@dataclass
class Taken:
    """What the host wrote back, and what it refused (path → why)."""

    written: list[str] = field(default_factory=list[str])
    removed: list[str] = field(default_factory=list[str])
    refused: dict[str, str] = field(default_factory=dict[str, str])

    def notes(self, limit: int = 20) -> list[str]:
        """One line per refused path (the first ``limit``), for the command's output."""
        lines = [f"refused {path!r}: {why}" for path, why in sorted(self.refused.items())]
        if len(lines) > limit:
            lines = [*lines[:limit], f"… and {len(lines) - limit} more refused"]
        return lines


def _inside(path: str, target: str) -> bool:
    """Whether a link at ``path`` to ``target`` stays inside the world (read as text)."""
    if not target or target.startswith("/") or "\\" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return joined != ".." and not joined.startswith("../") and joined != "."


def _hidden(path: str, root: Path, hidden: Iterable[Path]) -> bool:
    full = Path(os.path.abspath(root / path))
    return any(full == h or full.is_relative_to(h) for h in hidden)


def _check_row(
    row: object, contents: Mapping[str, bytes], root: Path, hidden: Sequence[Path]
) -> tuple[str, Entry, bytes | None] | str:
    """The row as an entry (and its content), or why it is refused."""
    if not (isinstance(row, tuple) and len(row) == 5):
        return "not a manifest row"
    path, mode, size, digest, target = row
    if not isinstance(path, str) or (problem := path_problem(path)) is not None:
        return f"not a world path ({problem or 'not text'})"
    if not (isinstance(mode, int) and isinstance(size, int) and isinstance(digest, str)):
        return "a malformed entry"
    if _hidden(path, root, hidden):
        return "a path hidden from commands"
    clean = stat.S_IFMT(mode) | (mode & 0o777)  # no set-id or sticky bits come back
    if stat.S_ISDIR(mode):
        return path, Entry("", clean, 0, -1), None
    if stat.S_ISLNK(mode):
        if not isinstance(target, str) or not _inside(path, target):
            return f"a link to {str(target)[:200]!r}, outside the world: not followed"
        data = os.fsencode(target)
        return path, Entry(digest_of(data), clean, len(data), -1), data
    if not stat.S_ISREG(mode):
        return "a special file (not a file, folder or link)"
    content = contents.get(digest)
    if not isinstance(content, bytes) or len(content) != size or digest_of(content) != digest:
        return "its content does not match its digest"
    return path, Entry(digest, clean, size, -1), content


def take_back(
    root: Path,
    sent: Mapping[str, Entry],
    changed: object,
    removed: object,
    contents: object,
    *,
    hidden: Sequence[Path] = (),
    max_bytes: int | None = None,
) -> Taken:
    """Write a node's changes into the world at ``root`` (sent as ``sent``), safely."""
    taken = Taken()
    blobs = contents if isinstance(contents, dict) else {}
    hidden = [Path(os.path.abspath(h)) for h in hidden]
    accepted: dict[str, tuple[Entry, bytes | None]] = {}
    added = 0
    for row in changed if isinstance(changed, list) else []:
        checked = _check_row(row, blobs, root, hidden)
        if isinstance(checked, str):
            name = row[0] if isinstance(row, tuple) and row and isinstance(row[0], str) else "?"
            taken.refused[name[:300]] = checked
            continue
        path, entry, data = checked
        if data is not None and not entry.is_link:
            added += entry.size
            if max_bytes is not None and added > max_bytes:
                taken.refused[path] = (
                    f"{entry.size} bytes would take the world past its quota of"
                    f" {max_bytes / (1 << 20):.1f} MiB (sandbox.world_mb)"
                )
                continue
        accepted[path] = (entry, data)
    gone = [
        p
        for p in (removed if isinstance(removed, list) else [])
        if isinstance(p, str) and p in sent and not _hidden(p, root, hidden)
    ]
    # Every accepted path's folder must be a folder that stays (sent, or accepted).
    for path in sorted(accepted):
        folder = path.rpartition("/")[0]
        if folder and not (
            (folder in accepted and accepted[folder][0].is_dir)
            or (folder not in accepted and folder in sent and sent[folder].is_dir)
        ):
            taken.refused[path] = "its folder is not a folder the world keeps"
            del accepted[path]
    gone = [p for p in gone if p not in accepted]
    _write(root, sent, accepted, gone, taken)
    return taken


def _folders(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


def _write(
    root: Path,
    sent: Mapping[str, Entry],
    accepted: Mapping[str, tuple[Entry, bytes | None]],
    gone: Sequence[str],
    taken: Taken,
) -> None:
    """Bring the paths that changed to their new state with ``restore`` (nothing else)."""
    if not accepted and not gone:
        return
    current: Manifest = {}
    target: Manifest = {}
    for path in [*accepted, *gone]:
        for folder in _folders(path):
            if folder in sent:
                current[folder] = sent[folder]
            target[folder] = accepted[folder][0] if folder in accepted else sent[folder]
    for path in gone:
        current[path] = sent[path]
    for path, (entry, _data) in accepted.items():
        if path in sent:
            current[path] = sent[path]
        target[path] = entry
    scratch = Path(tempfile.mkdtemp(prefix="helix-take-back-"))
    try:
        objects = ObjectStore(scratch)
        for _entry, data in accepted.values():
            if data is not None:
                objects.put_bytes(data)
        done = restore(objects, current, target, root)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    taken.written = [p for p in done.restored if p in accepted]
    taken.removed = [p for p in done.removed if p in gone]
    for path, why in done.conflicts.items():
        taken.refused[path] = why
