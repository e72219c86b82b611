"""One driver per run: a lock file per run that the operating system releases on death.

``fcntl.flock`` on ``HELIX_HOME/locks/RUN.lock``: released when the holder closes it or
its process dies (``kill -9`` included), so a crashed driver never blocks a resume.

A driver holds the lock exclusively. Anyone may ask whether a run is driven (``helix
runs`` asks for every active run it lists) without getting in a driver's way: on Linux
the driver also holds an open-file-description write lock on the file, which the
question only *looks at* (``F_OFD_GETLK`` takes nothing). Elsewhere the question takes
a shared lock for an instant, and a driver starting at that instant tells it from a
driver (a shared holder is an asker: it tries again) rather than giving up. Here
because the runtime drives and the API only asks: reading runs loads no engine.
"""

from __future__ import annotations

import fcntl
import functools
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_OFD = hasattr(fcntl, "F_OFD_GETLK") and hasattr(fcntl, "F_OFD_SETLK")
_FLOCK = "hhqqi4x"
"""``struct flock`` on Linux: type, whence, start, len (0: to the end), pid."""
_TRIES = 1000
"""How often a starting driver tries again while only askers hold the lock (each holds
it for a few microseconds, so more than a couple of tries means thousands of askers)."""


class LockHeld(Exception):
    """Another driver holds the run's lock (the runtime says so as a ``RunStateError``)."""


class DriverLocks:
    """The driver locks of the runs under one ``HELIX_HOME``."""

    def __init__(self, home: Path) -> None:
        self.home = home

    @functools.cached_property
    def folder(self) -> Path:
        """``HELIX_HOME/locks``, made once (a thousand runs may start at once)."""
        folder = self.home / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @contextmanager
    def hold(self, run_id: str) -> Iterator[None]:
        """Hold the run's driver lock; ``LockHeld`` if another driver holds it."""
        with open(self.folder / f"{run_id}.lock", "a+") as handle:
            _take(handle.fileno(), run_id)
            if _OFD:  # what askers look at; released with the file, as the flock is
                whole = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
                fcntl.fcntl(handle, fcntl.F_OFD_SETLK, whole)
            try:
                yield
            finally:
                if _OFD:  # first, so the next driver never meets it
                    free = struct.pack(_FLOCK, fcntl.F_UNLCK, os.SEEK_SET, 0, 0, 0)
                    fcntl.fcntl(handle, fcntl.F_OFD_SETLK, free)
                fcntl.flock(handle, fcntl.LOCK_UN)

    def held(self, run_id: str) -> bool:
        """Whether some driver holds the run's lock right now (makes no file)."""
        try:
            fd = os.open(self.home / "locks" / f"{run_id}.lock", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # no lock file: never driven under this home
            return False
        try:
            if _OFD:
                asked = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0)
                found = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, asked)
                kind: int = struct.unpack(_FLOCK, found)[0]
                return kind != fcntl.F_UNLCK
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing releases the shared lock
        return False


def _take(fd: int, run_id: str) -> None:
    """Lock exclusively, unless a driver (an exclusive holder) has it."""
    for _ in range(_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        try:  # a shared lock is taken only if no driver holds an exclusive one
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            break
        fcntl.flock(fd, fcntl.LOCK_UN)  # only askers: try again
    raise LockHeld(run_id)
