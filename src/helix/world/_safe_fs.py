"""Writing inside a world without ever following a link out of it.

Every writer of a world (a restore, a fork's new world, a kept branch) goes through a
``WorldDir``: paths are opened one component at a time from the world's root with
``O_NOFOLLOW | O_DIRECTORY`` (``openat``), and every change is made relative to the
folder opened that way (``mkdirat``, ``unlinkat``, ``renameat``, ``symlinkat``, an fd
walk for trees). A symbolic link, or anything but a folder, where a folder is expected
raises ``Blocked`` naming the path: it is never entered. Files are never written in
place: new content goes to a new file beside the old one, which is then renamed over
it, so a hard link to a file elsewhere keeps its content, and a link is replaced, not
followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A folder opened to work in (``*at`` calls), not to read: no read permission needed."""
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMPORARY_PREFIX = ".helix-restore-"
"""New content is written under this name beside its destination, then renamed."""


class Blocked(Exception):
    """Something other than a folder stands where a folder is expected."""

    def __init__(self, path: str, found: str) -> None:
        super().__init__(f"{path}: {found}")
        self.path = path
        self.found = found
        """What stands there: ``a symbolic link to 'T'``, ``a file``…"""


def describe(st: os.stat_result | None, target: str | None = None) -> str:
    """What a path holds, in words (for conflicts)."""
    if st is None:
        return "nothing"
    if stat.S_ISLNK(st.st_mode):
        return f"a symbolic link to {target!r}" if target is not None else "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISREG(st.st_mode):
        return "a file"
    return "a special file"


class WorldDir:
    """A world's root, opened once; folders under it opened without following links.

    The last folder opened is kept (paths come sorted, so siblings share it); close
    the ``WorldDir`` (or use it as a context manager) to release both descriptors.
    """

    def __init__(self, root: Path) -> None:
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._cached: tuple[str, int] | None = None

    def __enter__(self) -> WorldDir:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the descriptors."""
        self._forget()
        os.close(self.root_fd)

    def folder(self, rel: str) -> int:
        """A descriptor of the folder ``rel`` (``""``: the root); ``Blocked`` if not one.

        ``FileNotFoundError`` when a component is missing. The descriptor belongs to
        this object: do not close it.
        """
        if not rel:
            return self.root_fd
        if self._cached is not None and self._cached[0] == rel:
            return self._cached[1]
        self._forget()
        fd = os.dup(self.root_fd)
        try:
            done: list[str] = []
            for name in rel.split("/"):
                inner = _open_folder(fd, name, "/".join([*done, name]))
                os.close(fd)
                fd = inner
                done.append(name)
        except BaseException:
            os.close(fd)
            raise
        self._cached = (rel, fd)
        return fd

    def parent(self, rel: str) -> tuple[int, str]:
        """The folder holding ``rel`` (opened as ``folder`` does) and ``rel``'s name."""
        head, _, name = rel.rpartition("/")
        return self.folder(head), name

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s own status (a link's, not its target's); ``None`` if nothing is there."""
        fd, name = self.parent(rel)
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def what(self, rel: str) -> str:
        """What stands at ``rel``, in words."""
        fd, name = self.parent(rel)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return "nothing"
        target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else None
        return describe(st, target)

    def mkdir(self, rel: str) -> None:
        """Create the folder ``rel``, mode 0700 (its own is set once its content is in)."""
        fd, name = self.parent(rel)
        os.mkdir(name, 0o700, dir_fd=fd)

    def chmod_folder(self, rel: str, mode: int) -> None:
        """Set the mode of the folder ``rel`` itself (``Blocked`` if it is not one).

        The change is made through a descriptor of the very folder opened, so the name
        being swapped for a link meanwhile changes nothing elsewhere.
        """
        parent, name = self.parent(rel)
        try:
            fd = _open_folder(parent, name, rel, os.O_RDONLY)
        except PermissionError:  # a folder we may not read: through its path descriptor
            fd = _open_folder(parent, name, rel)
            try:
                os.chmod(f"/proc/self/fd/{fd}", mode)
            finally:
                os.close(fd)
            return
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def remove(self, rel: str) -> None:
        """Remove ``rel``: a folder with everything in it (walked by descriptor), else it.

        A link is removed, never followed; nothing there is not an error.
        """
        fd, name = self.parent(rel)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            self._forget_under(rel)
            shutil.rmtree(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)

    def touch(self, rel: str, mtime_ns: int) -> bool:
        """Set a lone regular file's times; ``False`` (nothing done) if ``rel`` is not one.

        A link, or a file with other hard links (which may live outside the world),
        is not touched: the caller replaces it instead.
        """
        fd, name = self.parent(rel)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False
        os.utime(name, ns=(mtime_ns, mtime_ns), dir_fd=fd, follow_symlinks=False)
        return True

    def replace_file(self, rel: str, fill: Callable[[int], None], mode: int, mtime_ns: int) -> None:
        """Make ``rel`` a new file, ``fill``ed through its descriptor, with ``mode``.

        Written under a temporary name in the same folder, then renamed over ``rel``:
        whatever stood there (a file, a hard link, a symbolic link) is replaced, never
        written through. ``IsADirectoryError`` if a folder stands there.
        """
        fd, name = self.parent(rel)
        temporary = TEMPORARY_PREFIX + secrets.token_hex(6)
        out = os.open(temporary, _NEW_FILE, 0o600, dir_fd=fd)
        try:
            try:
                fill(out)
                os.fchmod(out, mode)
                if mtime_ns >= 0:
                    os.utime(out, ns=(mtime_ns, mtime_ns))
            finally:
                os.close(out)
            os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise

    def replace_link(self, rel: str, target: str, mtime_ns: int) -> None:
        """Make ``rel`` a symbolic link to ``target`` (created aside, renamed over ``rel``)."""
        fd, name = self.parent(rel)
        temporary = TEMPORARY_PREFIX + secrets.token_hex(6)
        os.symlink(target, temporary, dir_fd=fd)
        try:
            if mtime_ns >= 0:
                os.utime(temporary, ns=(mtime_ns, mtime_ns), dir_fd=fd, follow_symlinks=False)
            os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise

    def _forget(self) -> None:
        if self._cached is not None:
            os.close(self._cached[1])
            self._cached = None

    def _forget_under(self, rel: str) -> None:
        if self._cached is not None and (
            self._cached[0] == rel or self._cached[0].startswith(rel + "/")
        ):
            self._forget()


def _open_folder(fd: int, name: str, path: str, access: int = os.O_PATH) -> int:
    """Open the folder ``name`` in ``fd`` without following a link; ``Blocked`` if not one."""
    try:
        return os.open(name, _DIR_FLAGS & ~os.O_PATH | access, dir_fd=fd)
    except OSError as error:
        if error.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else None
    except OSError:
        raise Blocked(path, "something that cannot be opened") from None
    raise Blocked(path, describe(st, target))
