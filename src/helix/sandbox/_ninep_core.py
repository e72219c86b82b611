"""What every 9P request handler of a share works with: the tree, the fids, the qids.

``ShareCore`` is the state one ``NinepShare`` holds and the checks its handlers
share: a fid looked up (``EBADF`` if unknown, ``ESTALE`` if restored without its
file), a mutation refused on a read-only share (``EROFS``), a file's own stat (from
its open descriptor, else from its path, never following a symlink), and the fids'
paths kept right after a rename. The handlers are ``_ninep_files`` (open, read,
write, attributes) and ``_ninep_names`` (walk and the operations on names).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ._ninep_fids import MAX_MSIZE, Fid
from ._ninep_fs import HostTree, QidMap, refuse
from ._ninep_wire import Qid, Reader

Body = bytes | tuple[bytes, ...]
"""A reply's body: bytes, or parts written one after another (Rread's data)."""


class ShareCore:
    """The state of one share and the checks its handlers have in common."""

    def __init__(
        self, root: Path, *, read_only: bool, key: bytes, devices: Sequence[int] = ()
    ) -> None:
        self.read_only = read_only
        self.tree = HostTree(root)
        self.key = key
        self.qids = QidMap(self.tree.dev, devices, key)
        self.fids: dict[int, Fid] = {}
        self.msize = MAX_MSIZE

    def close_fids(self) -> None:
        """Close every fid's descriptor and forget them all."""
        for fid in self.fids.values():
            fid.close()
        self.fids.clear()

    def drop(self, number: int) -> None:
        """Forget a fid (Tclunk, and Tremove whether or not it removed)."""
        found = self.fids.pop(number, None)
        if found is None:
            raise refuse(errno.EBADF)
        found.close()

    def fid(self, number: int) -> Fid:
        """The fid ``number``: ``EBADF`` when there is none, ``ESTALE`` when its file went."""
        found = self.fids.get(number)
        if found is None:
            raise refuse(errno.EBADF)
        if found.stale:
            raise refuse(errno.ESTALE)
        return found

    def fid_of(self, r: Reader) -> Fid:
        """The fid named by the next field of ``r``."""
        return self.fid(r.u32())

    def mutating(self) -> None:
        """Refuse a change on a read-only share."""
        if self.read_only:
            raise refuse(errno.EROFS)

    def stat(self, fid: Fid) -> os.stat_result:
        """The fid's file's own stat: through its open descriptor, else by its path."""
        if fid.fd is not None:
            return os.fstat(fid.fd)
        return self.tree.lstat(fid.path)

    def qid_at(self, path: Sequence[str]) -> Qid:
        """The qid of the file at ``path``."""
        return self.qids.qid(self.tree.lstat(path))

    def directory(self, fid: Fid) -> tuple[str, ...]:
        """The fid's path, checked to be a directory (``ENOTDIR``)."""
        if not stat.S_ISDIR(self.stat(fid).st_mode):
            raise refuse(errno.ENOTDIR)
        return fid.path

    def renamed(self, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        """Point every fid under ``old`` at the same place under ``new``."""
        depth = len(old)
        for fid in self.fids.values():
            if fid.path[:depth] == old:
                fid.path = new + fid.path[depth:]
                fid.entries = None
