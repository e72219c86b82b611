"""The 9P requests on a fid's file: open, create, read, write, attributes, listing.

Each handler takes a request's body (a ``Reader`` past the header) and gives the
reply's body; an ``OSError`` it raises goes back as ``Rlerror`` with its errno. A
file is opened only as a regular file or directory, with ``O_NOFOLLOW`` (a symlink
gives ``ELOOP``): see ``HostTree.open_file``. Attributes change through the file's
own descriptor or an "at" call with ``follow_symlinks=False``; a chmod goes through
the ``O_PATH`` descriptor of a file checked not to be a symlink, so no call follows
one. Reads and writes are ``pread``/``pwrite`` on the fid's descriptor, capped at
the negotiated msize.
"""

from __future__ import annotations

import bisect
import errno
import os
import stat
import time

from ._ninep_core import Body, ShareCore
from ._ninep_fids import Fid
from ._ninep_fs import (
    ALWAYS,
    MODE_BITS,
    REOPEN_DROP,
    check_name,
    listing,
    open_flags,
    refuse,
    writes,
)
from ._ninep_wire import (
    GETATTR_BASIC,
    LOCK_SUCCESS,
    LOCK_TYPE_UNLCK,
    READ_OVERHEAD,
    SETATTR_ATIME,
    SETATTR_ATIME_SET,
    SETATTR_GID,
    SETATTR_MODE,
    SETATTR_MTIME,
    SETATTR_MTIME_SET,
    SETATTR_SIZE,
    SETATTR_UID,
    Reader,
    dirent,
    dirent_size,
    encode_string,
    getattr_reply,
    statfs_reply,
    u8,
    u32,
    u64,
)

V9FS_MAGIC = 0x01021997
_MAX_OFFSET = (1 << 63) - 1
_U64 = (1 << 64) - 1
_NS = 1_000_000_000


def _opened(fid: Fid) -> int:
    if fid.fd is None:
        raise refuse(errno.EBADF)
    return fid.fd


def _offset(value: int) -> int:
    if value > _MAX_OFFSET:
        raise refuse(errno.EINVAL)
    return value


def _split_ns(ns: int) -> tuple[int, int]:
    sec, nsec = divmod(ns, _NS)
    return sec & _U64, nsec


class FileOps(ShareCore):
    """Tlopen, Tlcreate, Tread, Twrite, Tgetattr, Tsetattr, Treaddir and the rest."""

    def t_lopen(self, r: Reader) -> Body:
        """Open the fid's file: Rlopen qid[13] iounit[4]."""
        fid, flags = self.fid_of(r), r.u32()
        r.end()
        if fid.fd is not None:
            raise refuse(errno.EINVAL)
        host = open_flags(flags, create=False)
        if writes(host):
            self.mutating()
        fid.fd = self.tree.open_file(fid.path, host)
        fid.flags = host & ~REOPEN_DROP
        return self.qids.qid(os.fstat(fid.fd)).pack() + u32(0)

    def t_lcreate(self, r: Reader) -> Body:
        """Create and open a file in the fid's directory; the fid becomes the file."""
        fid, name, flags, mode, _gid = self.fid_of(r), r.string(), r.u32(), r.u32(), r.u32()
        r.end()
        self.mutating()
        check_name(name)
        if fid.fd is not None:
            raise refuse(errno.EINVAL)
        host = open_flags(flags, create=True)
        path = (*fid.path, name)
        fd = self.tree.open_file(path, host, mode)
        fid.path, fid.fd, fid.flags = path, fd, host & ~REOPEN_DROP
        return self.qids.qid(os.fstat(fd)).pack() + u32(0)

    def t_read(self, r: Reader) -> Body:
        """Read from the open fid at an offset: Rread count[4] data."""
        fid, offset, count = self.fid_of(r), r.u64(), r.u32()
        r.end()
        fd = _opened(fid)
        data = os.pread(fd, min(count, self.msize - READ_OVERHEAD), _offset(offset))
        return u32(len(data)), data

    def t_write(self, r: Reader) -> Body:
        """Write to the open fid at an offset: Rwrite count[4]."""
        fid, offset, data = self.fid_of(r), r.u64(), r.data()
        r.end()
        self.mutating()
        return u32(os.pwrite(_opened(fid), data, _offset(offset)))

    def t_getattr(self, r: Reader) -> Body:
        """The file's attributes (the basic set, whatever was asked)."""
        fid, _mask = self.fid_of(r), r.u64()
        r.end()
        st = self.stat(fid)
        fields = (
            st.st_mode,
            st.st_uid,
            st.st_gid,
            st.st_nlink,
            st.st_rdev,
            st.st_size,
            st.st_blksize,
            st.st_blocks,
            *_split_ns(st.st_atime_ns),
            *_split_ns(st.st_mtime_ns),
            *_split_ns(st.st_ctime_ns),
            0,
            0,
            0,
            0,
        )
        return getattr_reply(GETATTR_BASIC, self.qids.qid(st), fields)

    def t_setattr(self, r: Reader) -> Body:
        """Change mode, owner, size or times: mode first, size last (as QEMU)."""
        fid, valid, mode, uid, gid = self.fid_of(r), r.u32(), r.u32(), r.u32(), r.u32()
        size, times = r.u64(), (r.u64(), r.u64(), r.u64(), r.u64())
        r.end()
        self.mutating()
        if valid & SETATTR_MODE:
            self._chmod(fid, mode & MODE_BITS)
        if valid & (SETATTR_ATIME | SETATTR_MTIME):
            self._utime(fid, valid, times)
        if valid & (SETATTR_UID | SETATTR_GID):
            new_uid = uid if valid & SETATTR_UID else -1
            new_gid = gid if valid & SETATTR_GID else -1
            with self.tree.at(fid.path) as (parent, name):
                os.chown(name, new_uid, new_gid, dir_fd=parent, follow_symlinks=False)
        if valid & SETATTR_SIZE:
            self._truncate(fid, _offset(size))
        return b""

    def _chmod(self, fid: Fid, mode: int) -> None:
        if fid.fd is not None:
            os.fchmod(fid.fd, mode)
            return
        with self.tree.opened(fid.path) as fd:
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise refuse(errno.EOPNOTSUPP)
            # The magic link names the inode the O_PATH descriptor holds, not a symlink.
            os.chmod(f"/proc/self/fd/{fd}", mode)

    def _utime(self, fid: Fid, valid: int, times: tuple[int, int, int, int]) -> None:
        now_both = not valid & (SETATTR_ATIME_SET | SETATTR_MTIME_SET)
        with self.tree.at(fid.path) as (parent, name):
            if now_both and valid & SETATTR_ATIME and valid & SETATTR_MTIME:
                os.utime(name, dir_fd=parent, follow_symlinks=False)
                return
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            now = None
            atime, mtime = st.st_atime_ns, st.st_mtime_ns
            if valid & SETATTR_ATIME:
                now = now if now is not None else time.time_ns()
                atime = _ns(times[0], times[1]) if valid & SETATTR_ATIME_SET else now
            if valid & SETATTR_MTIME:
                now = now if now is not None else time.time_ns()
                mtime = _ns(times[2], times[3]) if valid & SETATTR_MTIME_SET else now
            os.utime(name, ns=(atime, mtime), dir_fd=parent, follow_symlinks=False)

    def _truncate(self, fid: Fid, size: int) -> None:
        if fid.fd is not None and fid.flags is not None and writes(fid.flags):
            os.ftruncate(fid.fd, size)
            return
        fd = self.tree.open_file(fid.path, os.O_WRONLY | ALWAYS)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def t_fsync(self, r: Reader) -> Body:
        """Flush the open fid's file to its disk."""
        fid, datasync = self.fid_of(r), r.u32()
        r.end()
        fd = _opened(fid)
        if datasync:
            os.fdatasync(fd)
        else:
            os.fsync(fd)
        return b""

    def t_readdir(self, r: Reader) -> Body:
        """Entries after ``offset`` (a cookie), as many as fit in ``count``."""
        fid, offset, count = self.fid_of(r), r.u64(), r.u32()
        r.end()
        fd = _opened(fid)
        if offset == 0 or fid.entries is None:
            here = os.fstat(fd)
            if not stat.S_ISDIR(here.st_mode):
                raise refuse(errno.ENOTDIR)
            up = self.qid_at(fid.path[:-1]) if fid.path else self.qids.qid(here)
            fid.entries = listing(fd, self.qids, self.key, here, up)
        entries = fid.entries
        room = min(count, self.msize - READ_OVERHEAD)
        parts: list[bytes] = []
        used = 0
        for entry in entries[bisect.bisect_right(entries, offset, key=lambda e: e.cookie) :]:
            size = dirent_size(entry.name)
            if used + size > room:
                if not parts:
                    raise refuse(errno.EINVAL)
                break
            parts.append(dirent(entry.qid, entry.cookie, entry.kind, entry.name))
            used += size
        return u32(used), *parts

    def t_statfs(self, r: Reader) -> Body:
        """The file system of the share's root."""
        self.fid_of(r)
        r.end()
        st = os.fstatvfs(self.tree.fd)
        return statfs_reply(
            (
                V9FS_MAGIC,
                st.f_frsize,
                st.f_blocks,
                st.f_bfree,
                st.f_bavail,
                st.f_files,
                st.f_ffree,
                st.f_fsid & _U64,
                st.f_namemax,
            )
        )

    def t_lock(self, r: Reader) -> Body:
        """A POSIX lock: always granted (the guest's kernel is the only client)."""
        self.fid_of(r)
        r.u8(), r.u32(), r.u64(), r.u64(), r.u32(), r.string()
        r.end()
        return u8(LOCK_SUCCESS)

    def t_getlock(self, r: Reader) -> Body:
        """Whether a lock would conflict: never (F_UNLCK), the range echoed."""
        self.fid_of(r)
        _kind, start, length, proc_id, client = r.u8(), r.u64(), r.u64(), r.u32(), r.string()
        r.end()
        return u8(LOCK_TYPE_UNLCK) + u64(start) + u64(length) + u32(proc_id) + encode_string(client)

    def t_xattrwalk(self, r: Reader) -> Body:
        """Extended attributes are not served: none to read, no list."""
        self.fid_of(r)
        r.u32()
        name = r.string()
        r.end()
        raise refuse(errno.ENODATA if name else errno.EOPNOTSUPP)

    def t_xattrcreate(self, r: Reader) -> Body:
        """Extended attributes cannot be set."""
        raise refuse(errno.EOPNOTSUPP)


def _ns(sec: int, nsec: int) -> int:
    if sec >= 1 << 63:
        sec -= 1 << 64
    if nsec >= _NS:
        raise refuse(errno.EINVAL)
    return sec * _NS + nsec
