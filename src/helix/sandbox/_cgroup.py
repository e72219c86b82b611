"""A pids cgroup per running command: a process budget the kernel enforces, even for root.

``RLIMIT_NPROC`` counts all of a user's processes and does not apply to root at all,
so under root it stops no fork bomb. A cgroup's ``pids.max`` bounds exactly the
command's processes. Helix needs write access to the cgroup tree (root on these
machines); without it, commands run without one and the rlimit is the only brake.

Making and removing a cgroup costs milliseconds (removal waits for the kernel), so a
sandbox keeps a small pool: a group is emptied after its command and reused. Group
names start with the owning process's pid, so a Helix that was killed leaves groups
the next one removes.
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
            _remove_orphans(parent)
            return parent
        with contextlib.suppress(OSError):
            parent.rmdir()
    return None


def _remove_orphans(parent: Path) -> None:
    """Remove groups whose owning Helix process is gone (and the processes in them)."""
    for group in parent.iterdir():
        owner = group.name.partition("-")[0]
        if group.is_dir() and owner.isdigit() and not Path(f"/proc/{owner}").exists():
            PidsCgroup(group).remove()


class PidsCgroup:
    """One cgroup: a command joins it by writing ``0`` to ``procs``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, parent: Path, limit: int) -> PidsCgroup:
        """A new group under ``parent`` allowing ``limit`` processes."""
        path = parent / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
        return cls(path)

    @property
    def procs(self) -> Path:
        """The file a process writes ``0`` to in order to join the group."""
        return self.path / "cgroup.procs"

    def sweep(self) -> bool | None:
        """Kill every process in the group: whether it was empty (``None``: it is gone)."""
        try:
            pids = [int(p) for p in self.procs.read_text().split()]
        except OSError:
            return None
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return not pids

    def remove(self) -> None:
        """Empty the group and remove it (waiting for its processes to be gone)."""
        for _ in range(500):
            if self.sweep() is not False:
                break
            time.sleep(0.002)
        for _ in range(500):  # killed processes leave the group once they are reaped
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)


class CgroupPool:
    """Empty groups kept for the next command of one sandbox."""

    def __init__(self, parent: Path, limit: int) -> None:
        self.parent = parent
        self.limit = limit
        self._free: list[PidsCgroup] = []

    def take(self) -> PidsCgroup:
        """A group for one command: a kept one that is empty by now, else a new one."""
        for group in list(self._free):
            emptied = group.sweep()
            if emptied is None:
                self._free.remove(group)
            elif emptied:
                self._free.remove(group)
                return group
        if len(self._free) >= 16:  # stragglers are rare: wait for the oldest
            self._free.pop(0).remove()
        return PidsCgroup.make(self.parent, self.limit)

    def give_back(self, group: PidsCgroup) -> None:
        """Return a group after its command: what is left in it is killed, not waited for.

        The command's PID namespace is already being torn down; its last processes
        leave the group a moment later, and ``take`` reuses it once they have.
        """
        group.sweep()
        self._free.append(group)

    def close(self) -> None:
        """Remove every kept group."""
        while self._free:
            self._free.pop().remove()
