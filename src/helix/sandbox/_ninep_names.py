"""The 9P requests on names: walk, and making, linking, renaming, removing entries.

Every name a request carries must be one component (``check_name``: no '/', no NUL,
not '.' or '..'); only Twalk takes '..', and it never climbs above the share's root.
A walk opens each component with ``O_PATH | O_NOFOLLOW`` relative to the one before
it (``HostTree``), so walking through a symlink fails (``ENOTDIR``): the guest's
kernel reads the link (Treadlink) and walks its target itself. Symlinks are made
with whatever target the guest gives (the host never follows one); Tmknod makes
regular files and FIFOs only. Files are the server's user's: the guest's gid is
ignored.
"""

from __future__ import annotations

import errno
import os
import stat

from ._ninep_core import Body, ShareCore
from ._ninep_fids import Fid
from ._ninep_fs import MODE_BITS, check_name, qid_type, refuse
from ._ninep_wire import AT_REMOVEDIR, MAX_WALK, QTDIR, Qid, Reader, encode_string, walk_reply

_PATH_MAX = 4095


class NameOps(ShareCore):
    """Twalk, Tmkdir, Tsymlink, Tmknod, Treadlink, Tlink, the renames and removes."""

    def t_walk(self, r: Reader) -> Body:
        """Walk names from a fid; a new fid at the end only if every name was walked."""
        number, new, count = r.u32(), r.u32(), r.u16()
        if count > MAX_WALK:
            raise refuse(errno.EINVAL)
        names = [r.string() for _ in range(count)]
        r.end()
        fid = self.fid(number)
        if new != number and new in self.fids:
            raise refuse(errno.EINVAL)
        if new == number and fid.fd is not None and count:
            raise refuse(errno.EINVAL)
        path, qids = fid.path, list[Qid]()
        try:
            for name in names:
                path = self._step(path, name, qids[-1] if qids else None)
                qids.append(self.qid_at(path))
        except OSError:
            if not qids:
                raise
        if len(qids) == count:
            if new == number:
                fid.path, fid.entries = path, None
            else:
                self.fids[new] = Fid(path)
        return walk_reply(qids)

    def _step(self, path: tuple[str, ...], name: str, here: Qid | None) -> tuple[str, ...]:
        if name != "..":
            return (*path, check_name(name))
        kind = here.type if here is not None else qid_type(self.tree.lstat(path).st_mode)
        if kind != QTDIR:
            raise refuse(errno.ENOTDIR)
        return path[:-1]

    def t_mkdir(self, r: Reader) -> Body:
        """Make a directory: Rmkdir qid."""
        fid, name, mode, _gid = self.fid_of(r), r.string(), r.u32(), r.u32()
        r.end()
        self.mutating()
        check_name(name)
        with self.tree.opened(fid.path, directory=True) as parent:
            os.mkdir(name, mode & MODE_BITS, dir_fd=parent)
            return self._qid_in(parent, name)

    def t_symlink(self, r: Reader) -> Body:
        """Make a symlink with the guest's target (never followed here): Rsymlink qid."""
        fid, name, target, _gid = self.fid_of(r), r.string(), r.string(), r.u32()
        r.end()
        self.mutating()
        check_name(name)
        if not target:
            raise refuse(errno.ENOENT)
        if len(target.encode("utf-8", "surrogateescape")) > _PATH_MAX:
            raise refuse(errno.ENAMETOOLONG)
        with self.tree.opened(fid.path, directory=True) as parent:
            os.symlink(target, name, dir_fd=parent)
            return self._qid_in(parent, name)

    def t_mknod(self, r: Reader) -> Body:
        """Make a regular file or a FIFO (a device or socket: EPERM): Rmknod qid."""
        fid, name, mode = self.fid_of(r), r.string(), r.u32()
        _major, _minor, _gid = r.u32(), r.u32(), r.u32()
        r.end()
        self.mutating()
        check_name(name)
        kind = stat.S_IFMT(mode) or stat.S_IFREG
        if kind not in (stat.S_IFREG, stat.S_IFIFO):
            raise refuse(errno.EPERM)
        with self.tree.opened(fid.path, directory=True) as parent:
            os.mknod(name, kind | (mode & MODE_BITS), dir_fd=parent)
            return self._qid_in(parent, name)

    def t_readlink(self, r: Reader) -> Body:
        """A symlink's target: Rreadlink target[s]."""
        fid = self.fid_of(r)
        r.end()
        with self.tree.at(fid.path) as (parent, name):
            return encode_string(os.readlink(name, dir_fd=parent))

    def t_link(self, r: Reader) -> Body:
        """A hard link in a directory to the fid's file (a symlink linked as itself)."""
        directory, fid, name = self.fid_of(r), self.fid_of(r), r.string()
        r.end()
        self.mutating()
        check_name(name)
        with (
            self.tree.at(fid.path) as (src_dir, src_name),
            self.tree.opened(directory.path, directory=True) as dst_dir,
        ):
            os.link(src_name, name, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
        return b""

    def t_rename(self, r: Reader) -> Body:
        """Move the fid's file to a name in another directory; fids under it follow."""
        fid, directory, name = self.fid_of(r), self.fid_of(r), r.string()
        r.end()
        self.mutating()
        check_name(name)
        if not fid.path:
            raise refuse(errno.EBUSY)
        self._move(fid.path, (*directory.path, name))
        return b""

    def t_renameat(self, r: Reader) -> Body:
        """Move a name in one directory to a name in another."""
        old_dir, old_name = self.fid_of(r), r.string()
        new_dir, new_name = self.fid_of(r), r.string()
        r.end()
        self.mutating()
        self._move((*old_dir.path, check_name(old_name)), (*new_dir.path, check_name(new_name)))
        return b""

    def _move(self, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        with (
            self.tree.at(old) as (src_dir, src_name),
            self.tree.at(new) as (dst_dir, dst_name),
        ):
            os.rename(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
        self.renamed(old, new)

    def t_unlinkat(self, r: Reader) -> Body:
        """Remove a name from a directory (a directory with AT_REMOVEDIR)."""
        fid, name, flags = self.fid_of(r), r.string(), r.u32()
        r.end()
        self.mutating()
        check_name(name)
        if flags & ~AT_REMOVEDIR:
            raise refuse(errno.EINVAL)
        with self.tree.opened(fid.path, directory=True) as parent:
            if flags & AT_REMOVEDIR:
                os.rmdir(name, dir_fd=parent)
            else:
                os.unlink(name, dir_fd=parent)
        return b""

    def t_remove(self, r: Reader) -> Body:
        """Remove the fid's file; the fid is clunked whether or not that worked."""
        number = r.u32()
        try:
            r.end()
            fid = self.fid(number)
            self.mutating()
            if not fid.path:
                raise refuse(errno.EBUSY)
            with self.tree.at(fid.path) as (parent, name):
                if stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
                    os.rmdir(name, dir_fd=parent)
                else:
                    os.unlink(name, dir_fd=parent)
        finally:
            gone = self.fids.pop(number, None)
            if gone is not None:
                gone.close()
        return b""

    def _qid_in(self, parent: int, name: str) -> bytes:
        return self.qids.qid(os.stat(name, dir_fd=parent, follow_symlinks=False)).pack()
