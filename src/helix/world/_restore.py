"""Writing a manifest back to disk: a new world for a fork, or a rollback in place.

Content comes from the object store (copied in the kernel, copy-on-write where the
filesystem allows), then modes and modification times are set as recorded, so the
restored files match their snapshot byte for byte and the next scan need not read them.
Folders get their modes last, deepest first, so a read-only folder is filled before it
is closed.

Nothing here follows a link (``_safe_fs.WorldDir``): folders are opened from the root
without following links, files and links are created aside and renamed into place. What
the disk holds is checked, whatever the manifests (or today's ignore rules) say: a link
or a file where a folder must be is a *conflict*, reported and left as it is, and
nothing is written under it. A manifest to restore must be well formed (every path's
folder is a folder in it), and the root a proper world (``world_root``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helix.errors import InvalidObjectError

from ._manifest import Entry, Manifest
from ._objects import ObjectStore
from ._roots import world_root
from ._safe_fs import Blocked, WorldDir


@dataclass
class Restored:
    """What a restore changed on disk, and what it could not."""

    restored: list[str] = field(default_factory=list[str])
    removed: list[str] = field(default_factory=list[str])
    conflicts: dict[str, str] = field(default_factory=dict[str, str])
    """Path → what stands there and what was left undone (nothing under it is touched)."""

    def held(self, target: Mapping[str, Entry]) -> Manifest:
        """``target`` without the paths a conflict kept out: what the world now holds."""
        return {p: e for p, e in target.items() if not _under(self.conflicts, p)}


def materialize(objects: ObjectStore, manifest: Mapping[str, Entry], dest: Path) -> Restored:
    """Create ``dest`` (which must not exist) holding ``manifest``, as far as it can."""
    dest.mkdir(parents=True)
    return restore(objects, {}, manifest, dest)


def restore(
    objects: ObjectStore,
    current: Mapping[str, Entry],
    target: Mapping[str, Entry],
    root: Path,
) -> Restored:
    """Make the world at ``root``, recorded as ``current``, hold ``target``.

    Only paths ``current`` records are removed (so ignored ones are left alone); every
    path ``target`` holds is written, a file or link standing there replaced, never
    written through. Every object is checked before anything is touched, so a store
    missing content fails with nothing changed.
    """
    root = world_root(root)
    _check_shape(target)
    for entry in target.values():
        if not entry.is_dir and not objects.has(entry.hash):
            objects.read(entry.hash)  # raises NotFoundError naming the object
    done = Restored()
    with WorldDir(root) as world:
        _remove_stale(world, current, target, done)
        for path in sorted(target):  # a folder before what it holds
            if not _under(done.conflicts, path):
                _put(objects, world, current.get(path), target[path], path, done)
        _set_folder_modes(world, current, target, done)
    done.restored.sort()
    done.removed.sort()
    return done


def _remove_stale(
    world: WorldDir, current: Mapping[str, Entry], target: Mapping[str, Entry], done: Restored
) -> None:
    """Remove what the target does not hold (or holds as another type), deepest first."""
    for path in sorted(current, reverse=True):
        entry, wanted = current[path], target.get(path)
        if (wanted is not None and _same_type(entry, wanted)) or _under(done.conflicts, path):
            continue
        try:
            st = world.lstat(path)
            if st is not None and stat.S_ISDIR(st.st_mode) and not entry.is_dir:
                done.conflicts[path] = (
                    "a folder the last snapshot did not record stands where a file was:"
                    " left as it is"
                )
                continue
            if st is not None:
                world.remove(path)
        except Blocked as blocked:
            done.conflicts[blocked.path] = (
                f"{blocked.found} stands where a folder was recorded: nothing under it is removed"
            )
            continue
        except FileNotFoundError:
            pass  # its folder is gone already
        if wanted is None:
            done.removed.append(path)


def _put(
    objects: ObjectStore,
    world: WorldDir,
    before: Entry | None,
    entry: Entry,
    path: str,
    done: Restored,
) -> None:
    """Bring one path to ``entry``."""
    same_type = before is not None and _same_type(before, entry)
    try:
        if entry.is_dir:
            st = world.lstat(path)
            if st is None:
                world.mkdir(path)  # its own mode is set once its content is in
            elif not stat.S_ISDIR(st.st_mode):
                raise Blocked(path, world.what(path))
            return
        if same_type and before is not None and before.same_content(entry):
            if before.mtime_ns == entry.mtime_ns or entry.mtime_ns < 0 or entry.is_link:
                return
            if world.touch(path, entry.mtime_ns):
                return
            # Not a lone file any more (hard-linked, or a link): replaced below.
        _write(objects, world, entry, path)
        done.restored.append(path)
    except Blocked as blocked:
        done.conflicts[blocked.path] = (
            f"{blocked.found} stands where a folder is to be restored: left as it is,"
            " and nothing under it is written"
        )
    except IsADirectoryError:
        kind = "link" if entry.is_link else "file"
        done.conflicts[path] = (
            f"a folder the last snapshot did not record stands where a {kind} is to be"
            " restored: left as it is"
        )
    except FileNotFoundError:
        done.conflicts[path] = "its folder is missing: not written"


def _set_folder_modes(
    world: WorldDir, current: Mapping[str, Entry], target: Mapping[str, Entry], done: Restored
) -> None:
    """Folders' recorded modes, deepest first (a read-only folder is closed last)."""
    for path in sorted((p for p, e in target.items() if e.is_dir), reverse=True):
        before, wanted = current.get(path), target[path]
        if _under(done.conflicts, path) or (before is not None and before.mode == wanted.mode):
            continue
        try:
            world.chmod_folder(path, stat.S_IMODE(wanted.mode))
        except Blocked as blocked:
            done.conflicts[blocked.path] = f"{blocked.found} stands where a folder was restored"
            continue
        if before is not None:
            done.restored.append(path)


def _write(objects: ObjectStore, world: WorldDir, entry: Entry, path: str) -> None:
    if entry.is_link:
        world.replace_link(path, os.fsdecode(objects.read(entry.hash)), entry.mtime_ns)
        return
    world.replace_file(
        path,
        lambda fd: objects.copy_into(entry.hash, fd),
        stat.S_IMODE(entry.mode),
        entry.mtime_ns,
    )


def _same_type(a: Entry, b: Entry) -> bool:
    return a.is_dir == b.is_dir and a.is_link == b.is_link


def _under(conflicts: Mapping[str, str], path: str) -> bool:
    """Whether ``path`` or a folder above it is a conflict."""
    if not conflicts:
        return False
    if path in conflicts:
        return True
    parts = path.split("/")
    return any("/".join(parts[:depth]) in conflicts for depth in range(1, len(parts)))


def _check_shape(target: Mapping[str, Entry]) -> None:
    """Refuse a manifest with a path whose folder is not a folder of the manifest."""
    for path in target:
        folder = path.rpartition("/")[0]
        if folder and not (folder in target and target[folder].is_dir):
            raise InvalidObjectError(
                f"the manifest to restore is malformed: {folder!r}, the folder of {path!r},"
                " is not a folder in it"
            )
