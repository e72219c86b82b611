"""A pids cgroup per command: a process budget the kernel enforces, even for root.

``RLIMIT_NPROC`` counts all of a user's processes and does not apply to root at all,
so under root it stops no fork bomb. A cgroup's ``pids.max`` bounds exactly the
command's processes. Helix needs write access to the cgroup tree (root on these
machines); without it, commands run without one and the rlimit is the only brake.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from functools import cache
from pathlib import Path

_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
_PARENT = "helix"


@cache
def pids_parent() -> Path | None:
    """The cgroup under which commands' groups are made, or ``None`` if unavailable."""
    for root in _ROOTS:
        parent = root / _PARENT
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            continue
        if (parent / "pids.max").exists():
            _remove_stale(parent)
            return parent
        with contextlib.suppress(OSError):
            parent.rmdir()
    return None


def _remove_stale(parent: Path) -> None:
    """Remove empty groups left by a Helix that was killed (older than a minute)."""
    cutoff = time.time() - 60
    for group in parent.iterdir():
        with contextlib.suppress(OSError):
            if group.is_dir() and group.stat().st_mtime < cutoff:
                group.rmdir()  # refused while any process is still in it


class PidsCgroup:
    """One command's cgroup: join it in the child, ``close`` kills what is left in it."""

    def __init__(self, parent: Path, limit: int) -> None:
        self.path = parent / uuid.uuid4().hex[:16]
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(limit))
        self._procs = os.open(self.path / "cgroup.procs", os.O_WRONLY)

    @property
    def procs_fd(self) -> int:
        """An open ``cgroup.procs``: the child writes its pid there before it executes."""
        return self._procs

    def close(self) -> None:
        """Kill every process still in the group, then remove it."""
        with contextlib.suppress(OSError):
            os.close(self._procs)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        for _ in range(200):  # killed processes leave the group once they are reaped
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)
