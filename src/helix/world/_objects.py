"""A content-addressed object store shared by every run under ``HELIX_HOME``.

Each object is a file named by the SHA-256 of its bytes (``objects/ab/cdef…``), written
to a temporary name and renamed into place, so a reader never sees half an object and
identical content is stored once whichever run, turn or file it came from. Objects are
read-only once written; worlds get copies (in-kernel, copy-on-write where the
filesystem can) and never share an inode with the store.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path

from helix.errors import InvalidObjectError, NotFoundError
from helix.kernel.events import is_digest

_SMALL = 1 << 20
"""Files up to this size are read whole; larger ones are streamed."""
_CHUNK = 1 << 20


class ObjectStore:
    """Content-addressed bytes under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: set[str] = set()

    def path(self, digest: str) -> Path:
        """Where the object with this digest lives (whether or not it exists).

        ``InvalidObjectError`` unless ``digest`` is 64 lowercase hex digits: nothing
        else is joined into a path, so no name can reach outside the store.
        """
        if not is_digest(digest):
            raise InvalidObjectError(
                f"{str(digest)[:80]!r} is not an object's name (a SHA-256 digest: 64 lowercase"
                " hex digits)"
            )
        return self.root / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """Whether the object is stored."""
        return os.path.exists(self.path(digest))

    def read(self, digest: str) -> bytes:
        """The object's bytes; ``NotFoundError`` if it is missing."""
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"object {digest[:12]}… is missing from the store") from None

    def put_bytes(self, data: bytes) -> tuple[str, int]:
        """Store ``data``; returns its digest and the bytes this added (0 if known)."""
        digest = hashlib.sha256(data).hexdigest()
        if self.has(digest):
            return digest, 0
        fd, temporary = self._temporary(digest)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        self._commit(temporary, digest)
        return digest, len(data)

    def put_file(self, source: Path, size: int) -> tuple[str, int]:
        """Store a file's content; returns its digest and the bytes this added.

        ``source`` is opened without following a link (``OSError`` ``ELOOP`` if it is one).
        """
        if size <= _SMALL:
            with open_file(source) as data:
                return self.put_bytes(data.read())
        hasher = hashlib.sha256()
        fd, temporary = self._temporary("large")
        written = 0
        try:
            with open_file(source) as data, os.fdopen(fd, "wb") as out:
                while chunk := data.read(_CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
        except BaseException:
            os.unlink(temporary)
            raise
        digest = hasher.hexdigest()
        if self.has(digest):
            os.unlink(temporary)
            return digest, 0
        self._commit(temporary, digest)
        return digest, written

    def copy_to(self, digest: str, dest: Path) -> None:
        """Write the object's content to ``dest`` (a new file), copy-on-write if possible."""
        self.path(digest)  # a name that is no digest is refused before anything is made
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            self.copy_into(digest, fd)
        finally:
            os.close(fd)

    def copy_into(self, digest: str, target: int) -> None:
        """Write the object's content into the open, empty file ``target``."""
        try:
            source = os.open(self.path(digest), os.O_RDONLY)
        except FileNotFoundError:
            raise NotFoundError(f"object {digest[:12]}… is missing from the store") from None
        try:
            _copy_range(source, target, os.fstat(source).st_size)
        finally:
            os.close(source)

    def _temporary(self, hint: str) -> tuple[int, str]:
        folder = self.root / "tmp"
        if "tmp" not in self._made:
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add("tmp")
        return tempfile.mkstemp(dir=folder, prefix=hint[:8])

    def _commit(self, temporary: str, digest: str) -> None:
        prefix = digest[:2]
        if prefix not in self._made:
            (self.root / prefix).mkdir(parents=True, exist_ok=True)
            self._made.add(prefix)
        os.chmod(temporary, 0o444)
        os.replace(temporary, self.path(digest))


def open_file(path: Path) -> io.BufferedReader:
    """``path`` opened for reading, refusing to follow a link in its last component."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")


def _copy_range(source: int, target: int, size: int) -> None:
    """Copy in the kernel (a reflink on filesystems that share extents), else by reads."""
    left = size
    try:
        while left > 0:
            copied = os.copy_file_range(source, target, left)
            if copied == 0:
                break
            left -= copied
        return
    except OSError:
        os.lseek(source, 0, os.SEEK_SET)
        os.lseek(target, 0, os.SEEK_SET)
        os.ftruncate(target, 0)
    while chunk := os.read(source, _CHUNK):
        os.write(target, chunk)
