"""One driver per run: a lock file per run that the operating system releases on death.

``fcntl.flock`` on ``HELIX_HOME/locks/RUN.lock``: released when the holder closes it or
its process dies (``kill -9`` included), so a crashed driver never blocks a resume.
"""

from __future__ import annotations

import fcntl
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helix.errors import RunStateError


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
        """Hold the run's driver lock; ``RunStateError`` if another driver holds it."""
        with open(self.folder / f"{run_id}.lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunStateError(f"run {run_id!r} is being driven by another process") from None
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def held(self, run_id: str) -> bool:
        """Whether some driver holds the run's lock right now."""
        try:
            with self.hold(run_id):
                return False
        except RunStateError:
            return True
