"""The host side of a 9P share: paths opened component by component, never followed.

``HostTree`` holds an ``O_PATH`` descriptor of the share's root; every path the guest
names is a tuple of single components under it, opened one at a time with
``O_PATH | O_NOFOLLOW`` relative to its parent's descriptor, so a symlink anywhere in
the world is never traversed by the host (opening through one fails with
``ENOTDIR``; the final component, a symlink, is opened as itself). No joined host
path reaches a syscall. ``QidMap`` turns ``(st_dev, st_ino)`` into the qid paths the
guest sees, inode numbers of other file systems kept apart (QEMU's
``multidevs=remap``). ``listing`` is a directory's entries in the order of stable
cookies (a keyed hash of each name), so a Treaddir offset means the same thing after
the directory changed or the share was restored in another process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._ninep_wire import QTDIR, QTFILE, QTSYMLINK, Qid

NAME_MAX = 255
_PATH = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = _PATH | os.O_DIRECTORY
_ACCESS = os.O_ACCMODE
# Flags a guest may ask for when it opens (Tlopen) or creates (Tlcreate) a file: the
# access mode and these. O_PATH, O_NOATIME, O_DIRECT, FASYNC, O_TMPFILE and anything
# unknown are dropped; O_NOFOLLOW, O_NONBLOCK, O_NOCTTY and O_CLOEXEC are always added.
_OPEN_SAFE = os.O_APPEND | os.O_TRUNC | os.O_DIRECTORY | os.O_NONBLOCK | os.O_DSYNC | os.O_SYNC
_CREATE_SAFE = _OPEN_SAFE | os.O_EXCL
ALWAYS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
REOPEN_DROP = os.O_TRUNC | os.O_EXCL | os.O_CREAT
"""What a fid reopened after a restore must not do again."""
MODE_BITS = 0o1777
"""Permission bits a guest may set: no setuid or setgid on a host file."""

DT_FIFO, DT_CHR, DT_DIR, DT_BLK, DT_REG, DT_LNK, DT_SOCK = 1, 2, 4, 6, 8, 10, 12
_DT_OF_MODE = {
    stat.S_IFIFO: DT_FIFO,
    stat.S_IFCHR: DT_CHR,
    stat.S_IFDIR: DT_DIR,
    stat.S_IFBLK: DT_BLK,
    stat.S_IFREG: DT_REG,
    stat.S_IFLNK: DT_LNK,
    stat.S_IFSOCK: DT_SOCK,
}


def refuse(code: int) -> OSError:
    """An error that goes back to the guest as ``Rlerror(code)``."""
    return OSError(code, os.strerror(code))


def is_component(name: object) -> bool:
    """A single path component: a non-empty str, no '/', no NUL, not '.' or '..'."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
        and len(name.encode("utf-8", "surrogateescape")) <= NAME_MAX
    )


def check_name(name: str) -> str:
    """``name`` if it names one entry of a directory, else ``EINVAL``."""
    if not is_component(name):
        raise refuse(errno.ENAMETOOLONG if len(name) > NAME_MAX else errno.EINVAL)
    return name


def open_flags(flags: int, *, create: bool) -> int:
    """The host flags for a guest's Linux open flags: safe ones kept, O_NOFOLLOW added."""
    safe = _CREATE_SAFE if create else _OPEN_SAFE
    kept = (flags & _ACCESS) | (flags & safe) | ALWAYS
    if (flags & _ACCESS) == _ACCESS:
        raise refuse(errno.EINVAL)
    return kept | os.O_CREAT if create else kept


def writes(flags: int) -> bool:
    """Whether open flags write (the access mode, or O_TRUNC)."""
    return (flags & _ACCESS) != os.O_RDONLY or bool(flags & os.O_TRUNC)


def qid_type(mode: int) -> int:
    """The qid type of a file mode: directory, symlink, or plain file."""
    if stat.S_ISDIR(mode):
        return QTDIR
    if stat.S_ISLNK(mode):
        return QTSYMLINK
    return QTFILE


class QidMap:
    """Qid paths unique per ``(st_dev, st_ino)``: a device index in the top 16 bits.

    Device 0 is the root's; others get the next index when first seen. An inode
    number wider than 48 bits, or a 32768th device, gets a keyed hash with the top
    bit set instead. ``devices`` (in index order) is kept with a checkpoint so a
    restored share hands the guest the same qids.
    """

    def __init__(self, root_dev: int, devices: Sequence[int] = (), key: bytes = b"") -> None:
        self._key = key
        self._index: dict[int, int] = {root_dev: 0}
        for dev in devices[1:]:
            self._index.setdefault(dev, len(self._index))

    @property
    def devices(self) -> list[int]:
        """The devices seen, in index order."""
        return sorted(self._index, key=self._index.__getitem__)

    def path(self, dev: int, ino: int) -> int:
        """The qid path of one inode."""
        index = self._index.get(dev)
        if index is None:
            index = self._index[dev] = len(self._index)
        if index < 0x8000 and ino < 1 << 48:
            return index << 48 | ino
        digest = hashlib.blake2b(f"{dev}:{ino}".encode(), key=self._key, digest_size=8)
        return int.from_bytes(digest.digest(), "little") | 1 << 63

    def qid(self, st: os.stat_result) -> Qid:
        """The qid of a stat result (version 0: the guest's caching is the mount's)."""
        return Qid(qid_type(st.st_mode), 0, self.path(st.st_dev, st.st_ino))


class HostTree:
    """The root of one share and the component-by-component opening of paths in it."""

    def __init__(self, root: Path) -> None:
        self.fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.dev = os.fstat(self.fd).st_dev

    def close(self) -> None:
        """Let go of the root."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @contextlib.contextmanager
    def opened(self, path: Sequence[str], *, directory: bool = False) -> Iterator[int]:
        """An ``O_PATH`` descriptor of ``path`` (a symlink as itself), closed after."""
        fd = self._open(path, directory=directory)
        try:
            yield fd
        finally:
            if fd != self.fd:
                os.close(fd)

    @contextlib.contextmanager
    def at(self, path: Sequence[str]) -> Iterator[tuple[int, str]]:
        """``(directory descriptor, name)`` for the "at" syscalls; the root is ``"."``."""
        if not path:
            yield self.fd, "."
            return
        with self.opened(path[:-1], directory=True) as parent:
            yield parent, path[-1]

    def _open(self, path: Sequence[str], *, directory: bool) -> int:
        fd = self.fd
        try:
            for i, name in enumerate(path):
                last = i == len(path) - 1
                flags = _DIR if directory or not last else _PATH
                child = os.open(name, flags, dir_fd=fd)
                if fd != self.fd:
                    os.close(fd)
                fd = child
        except BaseException:
            if fd != self.fd:
                os.close(fd)
            raise
        return fd

    def lstat(self, path: Sequence[str]) -> os.stat_result:
        """The file's own stat (a symlink's, not its target's)."""
        with self.at(path) as (parent, name):
            return os.stat(name, dir_fd=parent, follow_symlinks=False)

    def open_file(self, path: Sequence[str], flags: int, mode: int = 0) -> int:
        """A real descriptor of a regular file or directory, opened with ``flags``.

        A symlink gives ``ELOOP`` (O_NOFOLLOW); a FIFO, socket or device is refused
        before it is opened (and checked again after), so the host never blocks on a
        FIFO or touches a device the world holds.
        """
        with self.at(path) as (parent, name):
            if not flags & os.O_CREAT or not flags & os.O_EXCL:
                with contextlib.suppress(FileNotFoundError):
                    _check_openable(os.stat(name, dir_fd=parent, follow_symlinks=False))
            fd = os.open(name, flags, mode & MODE_BITS, dir_fd=parent)
        try:
            _check_openable(os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
        return fd


def _check_openable(st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise refuse(errno.ELOOP)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise refuse(errno.EOPNOTSUPP)


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One directory entry as Rreaddir sends it."""

    cookie: int
    name: bytes
    qid: Qid
    kind: int


def cookie(key: bytes, name: bytes) -> int:
    """A name's stable Treaddir offset: 1 for '.', 2 for '..', else a keyed hash (>= 3)."""
    if name == b".":
        return 1
    if name == b"..":
        return 2
    digest = hashlib.blake2b(name, key=key, digest_size=8).digest()
    return int.from_bytes(digest, "little") % ((1 << 63) - 3) + 3


def listing(fd: int, qids: QidMap, key: bytes, self_st: os.stat_result, up: Qid) -> list[DirEntry]:
    """The entries of the open directory ``fd``, '.' and '..' first, in cookie order."""
    entries = [
        DirEntry(1, b".", qids.qid(self_st), DT_DIR),
        DirEntry(2, b"..", up, DT_DIR),
    ]
    dev = self_st.st_dev
    with os.scandir(fd) as scan:
        for item in scan:
            if item.is_symlink():
                kind, qtype = DT_LNK, QTSYMLINK
            elif item.is_dir(follow_symlinks=False):
                kind, qtype = DT_DIR, QTDIR
            elif item.is_file(follow_symlinks=False):
                kind, qtype = DT_REG, QTFILE
            else:
                try:
                    mode = item.stat(follow_symlinks=False).st_mode
                except FileNotFoundError:
                    continue
                kind, qtype = _DT_OF_MODE.get(stat.S_IFMT(mode), 0), QTFILE
            name = os.fsencode(item.name)
            qid = Qid(qtype, 0, qids.path(dev, item.inode()))
            entries.append(DirEntry(cookie(key, name), name, qid, kind))
    entries[2:] = sorted(entries[2:], key=lambda e: e.cookie)
    return entries
