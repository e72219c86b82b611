"""Knowing what a turn changed without walking the world: Linux inotify on its folders.

A shell command can touch any file, so without help a snapshot after it has to
``lstat`` every path in the world: its cost grows with the world, not with the change.
The watcher asks the kernel instead. It watches every folder of the world (ignored
ones excepted) and, when asked, hands over the paths that changed since it last was.

It only vouches for file changes. When the shape of the tree changes (a folder
created, removed, moved or re-moded), the kernel dropped events (queue overflow), or a
folder could not be watched (the per-user watch limit), it says it lost track, and the
caller walks the world once and starts a new watcher. Where inotify is missing
(another OS, a filesystem without it), ``WorldWatcher.start`` returns ``None`` and
every snapshot walks, as before.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
import sys
from pathlib import Path

from ._ignore import IgnoreRules

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED, _ISDIR = 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW, _EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC

_FILE_EVENTS = _MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
_MASK = _FILE_EVENTS | _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW | _EXCL_UNLINK
_SHAPE = _DELETE_SELF | _MOVE_SELF | _Q_OVERFLOW | _IGNORED
"""Events that mean the watched tree itself changed, or that events were lost."""
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library already loaded in this process, on first use (not at import)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


class WorldWatcher:
    """Which paths of one world changed since the last ``changes()``; see the module."""

    def __init__(self, fd: int, root: Path, rules: IgnoreRules, libc: ctypes.CDLL) -> None:
        self._fd = fd
        self._libc = libc
        self._root = root
        self._rules = rules
        self._folders: dict[int, str] = {}
        """Watch descriptor → the folder's path in the world ("" for the root)."""
        self._changed: set[str] = set()
        self.lost = False
        """True once the watcher can no longer vouch (then: walk, and start anew)."""

    @classmethod
    def start(cls, root: Path) -> WorldWatcher | None:
        """Watch every folder of ``root`` from now on; ``None`` where inotify is missing.

        Start it *before* walking the world: what changes during the walk is then
        reported again rather than missed.
        """
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            return None
        watcher = cls(fd, root, IgnoreRules.for_world(root), libc)
        watcher._watch_tree("", str(root))
        return watcher

    def changes(self) -> set[str] | None:
        """The world paths changed since the last call; ``None`` if it lost track."""
        self._drain()
        if self.lost:
            return None
        changed, self._changed = self._changed, set()
        return changed

    def close(self) -> None:
        """Stop watching (the kernel drops every watch with the descriptor)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _watch_tree(self, rel: str, path: str) -> None:
        pending = [(rel, path)]
        while pending and not self.lost:
            rel, path = pending.pop()
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
            if wd < 0:
                self.lost = True  # the watch limit, most likely: walk every time instead
                return
            self._folders[wd] = rel
            try:
                with os.scandir(path) as entries:
                    for item in entries:
                        child = f"{rel}/{item.name}" if rel else item.name
                        if item.is_dir(follow_symlinks=False) and not self._rules.ignored(
                            child, True
                        ):
                            pending.append((child, item.path))
            except OSError:
                self.lost = True

    def _drain(self) -> None:
        while self._fd >= 0 and not self.lost:
            try:
                buffer = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return
            self._parse(buffer)

    def _parse(self, buffer: bytes) -> None:
        offset = 0
        while offset < len(buffer):
            wd, mask, _cookie, length = _HEADER.unpack_from(buffer, offset)
            offset += _HEADER.size
            name = buffer[offset : offset + length].rstrip(b"\0")
            offset += length
            if mask & _SHAPE or (mask & _ISDIR and mask & (_FILE_EVENTS & ~_MODIFY)):
                self.lost = True  # a folder came, went, moved or changed mode
                return
            folder = self._folders.get(wd)
            if folder is None or not name:
                continue
            decoded = os.fsdecode(name)
            self._changed.add(f"{folder}/{decoded}" if folder else decoded)
