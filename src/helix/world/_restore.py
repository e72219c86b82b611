"""Writing a manifest back to disk: a new world for a fork, or a rollback in place.

Content comes from the object store (copied in the kernel, copy-on-write where the
filesystem allows), then modes and modification times are set as recorded, so the
restored files match their snapshot byte for byte and the next scan need not read them.
Folders get their modes last, deepest first, so a read-only folder is filled before it
is closed.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._manifest import Entry
from ._objects import ObjectStore


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
    for entry in target.values():
        if not entry.is_dir and not objects.has(entry.hash):
            objects.read(entry.hash)  # raises NotFoundError naming the object
    done = Restored()
    # Remove what the target does not hold (or holds as another type), deepest first.
    for path in sorted(current, key=_depth, reverse=True):
        entry, wanted = current[path], target.get(path)
        if wanted is None or not _same_type(entry, wanted):
            _remove(root / path, entry)
            if wanted is None:
                done.removed.append(path)
    for path in sorted(target, key=_depth):
        if _put(objects, current.get(path), target[path], root / path):
            done.restored.append(path)
    for path in sorted((p for p, e in target.items() if e.is_dir), key=_depth, reverse=True):
        before = current.get(path)
        if before is None or before.mode != target[path].mode:
            os.chmod(root / path, stat.S_IMODE(target[path].mode))
            if before is not None:
                done.restored.append(path)
    done.restored.sort()
    done.removed.sort()
    return done


def _put(objects: ObjectStore, before: Entry | None, entry: Entry, full: Path) -> bool:
    """Bring one path to ``entry``; whether its content had to be written."""
    same_type = before is not None and _same_type(before, entry)
    if entry.is_dir:
        if not same_type:
            full.mkdir(exist_ok=True)
            os.chmod(full, 0o700)  # its own mode is set once its content is in
        return False
    if same_type and before is not None and before.same_content(entry):
        if before.mtime_ns != entry.mtime_ns and entry.mtime_ns >= 0 and not entry.is_link:
            os.utime(full, ns=(entry.mtime_ns, entry.mtime_ns))
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
