"""The world's quota: a cap on the disk space a run's world may take.

The world is measured as ``du`` measures a folder: the blocks allocated to everything
under it (files, folders, links; ignored paths and ``.git`` included), each inode once
however many hard links it has, symlinks never followed. Measuring walks the world, so
it is done when something that may have changed anything ran (``run_command``) or the
figure is unknown; the file tools account for their own writes.

The quota cannot stop a command midway (``RLIMIT_FSIZE`` bounds one file): the world
is measured after each command, and while it is over its cap, tools that may write
anything are refused and file writes that would grow the world are refused, until the
world is back under (files shortened or emptied with ``write_file``, or space freed by
a person).
"""

from __future__ import annotations

import heapq
import os
import stat
import threading
from pathlib import Path

MIB = 1 << 20
_BLOCK = 4096
"""File writes are estimated in blocks of this size before they happen."""
_LARGEST = 3


class QuotaExceeded(Exception):
    """A write the world's quota does not allow; the message is shown to the model."""


class WorldQuota:
    """The cap on one run's world, and its usage when last measured (thread-safe)."""

    def __init__(self, root: Path, limit_bytes: int, *, setting: str = "sandbox.world_mb") -> None:
        self.root = root
        self.limit_bytes = limit_bytes
        self.setting = setting
        self.used: int | None = None
        """Bytes the world took when last measured or written; ``None``: not yet known."""
        self.largest: list[tuple[int, str]] = []
        """The largest files at the last measure: (bytes, path relative to the world)."""
        self._lock = threading.Lock()

    def measure(self) -> int:
        """Walk the world now; the bytes it takes (blocking: call it in a thread)."""
        used, largest = _disk_usage(self.root)
        with self._lock:
            self.used, self.largest = used, largest
        return used

    def over(self, *, fresh: bool = False) -> str | None:
        """Why the world is over its quota, or ``None`` if it is not.

        Measures when the usage is unknown, when ``fresh``, or when the last figure is
        over (someone may have freed space since).
        """
        used = self.used
        if used is None or fresh or used > self.limit_bytes:
            used = self.measure()
        if used <= self.limit_bytes:
            return None
        return self.describe()

    def describe(self) -> str:
        """The world's state against its quota, and what may be done (one paragraph)."""
        used = self.used or 0
        largest = ", ".join(f"{path} ({_mib(size)})" for size, path in self.largest)
        return (
            f"the world is over its quota: it takes {_mib(used)} on disk, more than the"
            f" {_mib(self.limit_bytes)} allowed ({self.setting})"
            + (f"; its largest files: {largest}" if largest else "")
            + ". Until it is back under, run_command and writes that grow the world are"
            " refused: shorten or empty files with write_file, or ask a person to free space."
        )

    def admit(self, target: Path, size: int, name: str) -> int:
        """Check that writing ``size`` bytes to ``target`` (``name`` in the world) fits.

        Returns the blocks ``target`` takes now, for ``wrote``. ``QuotaExceeded`` if the
        write would grow a world past (or already over) its cap; a write that does not
        grow it is always allowed.
        """
        if self.used is None:
            self.measure()
        now = _allocated(target)
        after = -(-size // _BLOCK) * _BLOCK
        with self._lock:
            used = self.used or 0
        projected = used - now + after
        if after > now and projected > self.limit_bytes:
            raise QuotaExceeded(
                f"refused: writing {size} bytes to {name} would take the world to"
                f" {_mib(projected)} on disk, past its quota of {_mib(self.limit_bytes)}"
                f" ({self.setting}); it takes {_mib(used)} now. Shorten or empty files"
                " with write_file to make room, or ask a person to free space."
            )
        return now

    def wrote(self, target: Path, before: int) -> None:
        """Account for a write to ``target``, which took ``before`` bytes until then."""
        after = _allocated(target)
        with self._lock:
            if self.used is not None:
                self.used = max(0, self.used - before + after)


def _allocated(path: Path) -> int:
    try:
        return os.lstat(path).st_blocks * 512
    except OSError:
        return 0


def _disk_usage(root: Path) -> tuple[int, list[tuple[int, str]]]:
    """Bytes allocated under ``root`` (``du -s``) and its largest files."""
    total = 0
    seen: set[tuple[int, int]] = set()
    largest: list[tuple[int, str]] = []
    pending = [("", str(root))]
    while pending:
        prefix, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) in seen:
                    continue
                seen.add((info.st_dev, info.st_ino))
            size = info.st_blocks * 512
            total += size
            rel = prefix + entry.name
            if stat.S_ISDIR(info.st_mode):
                pending.append((rel + "/", entry.path))
            elif stat.S_ISREG(info.st_mode):
                item = (size, rel)
                if len(largest) < _LARGEST:
                    heapq.heappush(largest, item)
                elif item > largest[0]:
                    heapq.heapreplace(largest, item)
    return total, sorted(largest, reverse=True)


def _mib(size: int) -> str:
    return f"{size / MIB:,.1f} MiB"
