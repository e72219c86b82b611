"""Writing a manifest back to disk: a new world for a fork, or a rollback in place.

Content comes from the object store (copied in the kernel, copy-on-write where the
filesystem allows), then modes and modification times are set as recorded, so the
restored files match their snapshot byte for byte and the next scan need not read them.
Folders get their modes last, deepest first, so a read-only folder is filled before it
is closed.

Nothing here follows a link out of the world: the root must be a proper world
(``world_root``), the manifest to restore must be well formed (every path's folder is a
folder in it), and every path is reached through folders checked on disk to be real
folders (``lstat``), never links, whatever the manifests claim.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helix.errors import InvalidObjectError

from ._manifest import Entry
from ._objects import ObjectStore
from ._roots import world_root


@dataclass
class Restored:
    """What a restore changed on disk."""

    restored: list[str] = field(default_factory=list[str])
    removed: list[str] = field(default_factory=list[str])


def materialize(objects: ObjectStore, manifest: Mapping[str, Entry], dest: Path) -> None:
    """Create ``dest`` (which must not exist) holding exactly ``manifest``."""
    dest.mkdir(parents=True)
    restore(objects, {}, manifest, dest)


def restore(
    objects: ObjectStore,
    current: Mapping[str, Entry],
    target: Mapping[str, Entry],
    root: Path,
) -> Restored:
    """Make the world at ``root``, now ``current``, hold ``target`` (ignored paths aside).

    Every object is checked before anything is touched, so a store missing content
    fails with nothing changed.
    """
    place = _Confined(world_root(root))
    _check_shape(target)
    for entry in target.values():
        if not entry.is_dir and not objects.has(entry.hash):
            objects.read(entry.hash)  # raises NotFoundError naming the object
    done = Restored()
    _clear(place, current, target, done)
    for path in sorted(target, key=_depth):
        full = place.reach(path, must=True)
        assert full is not None
        if _put(objects, current.get(path), target[path], full):
            done.restored.append(path)
    for path in sorted((p for p, e in target.items() if e.is_dir), key=_depth, reverse=True):
        before = current.get(path)
        if before is None or before.mode != target[path].mode:
            full = place.reach(path, must=True)
            assert full is not None
            os.chmod(full, stat.S_IMODE(target[path].mode))  # made a real folder by _put
            if before is not None:
                done.restored.append(path)
    done.restored.sort()
    done.removed.sort()
    return done


def _clear(
    place: _Confined, current: Mapping[str, Entry], target: Mapping[str, Entry], done: Restored
) -> None:
    """Remove what the target does not hold (or holds as another type), deepest first."""
    for path in sorted(current, key=_depth, reverse=True):
        entry, wanted = current[path], target.get(path)
        if wanted is None or not _same_type(entry, wanted):
            full = place.reach(path)  # None: behind a link or gone, so not in the world
            if full is not None:
                _remove(full, entry)
                if entry.is_dir:
                    place.forget()
            if wanted is None:
                done.removed.append(path)


def _put(objects: ObjectStore, before: Entry | None, entry: Entry, full: Path) -> bool:
    """Bring one path to ``entry``; whether its content had to be written."""
    same_type = before is not None and _same_type(before, entry)
    if entry.is_dir:
        if not same_type or not _is_folder(full):
            if os.path.lexists(full) and not _is_folder(full):
                os.unlink(full)  # a link or a file where the folder goes: never follow it
            full.mkdir(exist_ok=True)
            os.chmod(full, 0o700)  # its own mode is set once its content is in
        return False
    if same_type and before is not None and before.same_content(entry):
        if before.mtime_ns != entry.mtime_ns and entry.mtime_ns >= 0 and not entry.is_link:
            os.utime(full, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)
        return False
    _write(objects, entry, full, replace=same_type)
    return True


def _same_type(a: Entry, b: Entry) -> bool:
    return a.is_dir == b.is_dir and a.is_link == b.is_link


def _write(objects: ObjectStore, entry: Entry, full: Path, *, replace: bool) -> None:
    if replace or os.path.lexists(full):
        _remove(full, entry)
    if entry.is_link:
        os.symlink(os.fsdecode(objects.read(entry.hash)), full)
        return
    objects.copy_to(entry.hash, full)
    os.chmod(full, stat.S_IMODE(entry.mode))
    if entry.mtime_ns >= 0:
        os.utime(full, ns=(entry.mtime_ns, entry.mtime_ns))


def _remove(full: Path, entry: Entry) -> None:
    try:
        if entry.is_dir and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.unlink(full)
    except FileNotFoundError:
        pass


def _depth(path: str) -> int:
    return path.count("/")


def _is_folder(full: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(full).st_mode)
    except FileNotFoundError:
        return False


def _check_shape(target: Mapping[str, Entry]) -> None:
    """Refuse a manifest with a path whose folder is not a folder of the manifest."""
    for path in target:
        folder = path.rpartition("/")[0]
        if folder and not (folder in target and target[folder].is_dir):
            raise InvalidObjectError(
                f"the manifest to restore is malformed: {folder!r}, the folder of {path!r},"
                " is not a folder in it"
            )


class _Confined:
    """Paths under a world's root, reached only through folders that are real folders.

    Each folder is checked once (``lstat``: a folder, not a link), its parent first, so
    no path handed out goes through a link, whatever the manifests say the disk holds.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real: set[str] = {""}

    def reach(self, path: str, *, must: bool = False) -> Path | None:
        """``root / path`` if its folders are real folders; else ``None`` (or an error)."""
        folder = path.rpartition("/")[0]
        if self._folder(folder):
            return self.root / path
        if must:
            raise InvalidObjectError(
                f"{folder!r} in the world is not a folder on disk (a link, or missing):"
                f" {path!r} is not written through it"
            )
        return None

    def forget(self) -> None:
        """Check folders again (something was removed)."""
        self._real = {""}

    def _folder(self, folder: str) -> bool:
        if folder in self._real:
            return True
        if not self._folder(folder.rpartition("/")[0]):
            return False
        if not _is_folder(self.root / folder):
            return False
        self._real.add(folder)
        return True
