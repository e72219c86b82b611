"""The world's files as the pack's tools read and write them: never through a link.

Paths are resolved against the world and refused outside it; walking skips links and
the folders no one edits (``.git``, virtual environments, caches); a file is opened
with ``O_NOFOLLOW`` and written by a new file renamed over it, so a link put where a
file was is never followed, and a hard-linked file is never written through.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

MAX_FILE_BYTES = 2 * 1024 * 1024
"""A larger file is skipped by search and refactors."""
MAX_FILES = 20_000
"""Files walked at most by one call."""
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "build",
        "dist",
    }
)


class Declined(Exception):
    """A call the tool will not carry out; the message is shown to the model."""


def in_world(world: Path, path: str) -> Path:
    """``path`` (relative to the world) as an absolute path in it; ``Declined`` outside it."""
    if "\0" in path:
        raise Declined(f"invalid path {path!r}")
    target = (world / path).resolve()
    if target != world and not target.is_relative_to(world):
        raise Declined(f"{path!r} is outside the world: give paths relative to it")
    return target


def relative(world: Path, target: Path) -> str:
    """``target`` relative to the world, ``/``-separated."""
    return target.relative_to(world).as_posix() or "."


def python_files(world: Path, under: Path) -> Iterator[Path]:
    """The ``.py`` files at or under ``under`` (a file or a folder), links skipped."""
    if under.is_file():
        if under.suffix == ".py" and not under.is_symlink():
            yield under
        return
    count = 0
    for folder, dirs, files in os.walk(under, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith(".helix"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(folder) / name
            if path.is_symlink():
                continue
            count += 1
            if count > MAX_FILES:
                return
            yield path


def read_text(path: Path) -> str | None:
    """A regular file's UTF-8 text, read without following a link; ``None`` if it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        data = file.read(MAX_FILE_BYTES + 1)
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_bytes(path: Path, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of a regular file, not through a link; ``None`` if not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        return file.read(limit + 1)


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path`` and rename it over ``path``."""
    mode = stat.S_IMODE(path.lstat().st_mode)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".helix-")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode("utf-8"))
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def sha256(text: str) -> str:
    """The SHA-256 of ``text``'s UTF-8 bytes (as ``FileChange`` records hashes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
