"""What ``helix cluster up`` leaves behind: a state file, and the processes it names.

The file (``HELIX_HOME/cluster/state.json``, mode 0600 in a 0700 folder) holds the
cluster's address, its token and the ``ray start --block`` processes started, each
with its start time, so ``down`` stops exactly those (a pid reused by another program
since is not touched). It is read as untrusted: a symlink, a file of another user or
one others may read or write is refused, and every field is checked.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from helix._util import proc_stat
from helix._util import start_ticks as start_ticks
from helix.errors import ConfigError

STATE_FILE = "state.json"
_MAX_BYTES = 65536
_ADDRESS = re.compile(r"[A-Za-z0-9.-]{1,253}:[0-9]{1,5}")


@dataclass(frozen=True, slots=True)
class ClusterProcess:
    """One ``ray start --block`` process: a node of the cluster (``head``, ``worker-1``)."""

    name: str
    pid: int
    started: int
    """The process's start time (clock ticks after boot, ``/proc/PID/stat``): with the
    pid, it names the process; a pid reused later has another start time."""
    labels: dict[str, str] = field(default_factory=dict)
    log: str = ""
    """Where its output goes."""


@dataclass(frozen=True, slots=True)
class LocalCluster:
    """A cluster ``helix cluster up`` started: its address, token and processes."""

    address: str
    """The head's GCS address, ``HOST:PORT`` (what ``--ray-address`` takes)."""
    token: str
    processes: tuple[ClusterProcess, ...]

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"LocalCluster(address={self.address!r}, token='***', nodes={len(self.processes)})"


def cluster_dir(home: Path) -> Path:
    """The folder of the cluster's state and logs (made 0700 if missing)."""
    folder = home / "cluster"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def write_state(home: Path, cluster: LocalCluster) -> Path:
    """Write the state file (0600, replacing any) and return its path."""
    folder = cluster_dir(home)
    body = {
        "address": cluster.address,
        "token": cluster.token,
        "processes": [
            {"name": p.name, "pid": p.pid, "started": p.started, "labels": p.labels, "log": p.log}
            for p in cluster.processes
        ],
    }
    temporary = folder / f".{STATE_FILE}.{os.getpid()}"
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(body, out)
    final = folder / STATE_FILE
    os.replace(temporary, final)
    return final


def remove_state(home: Path) -> None:
    """Delete the state file (nothing if there is none)."""
    (home / "cluster" / STATE_FILE).unlink(missing_ok=True)


def read_state(home: Path) -> LocalCluster | None:
    """The cluster the state file names, or ``None`` if there is no file.

    ``ConfigError`` for a file not to be trusted (a symlink, another owner, readable
    or writable by others, not a regular file, too large) or that does not parse.
    """
    path = home / "cluster" / STATE_FILE
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:  # ELOOP: a symlink
        raise ConfigError(f"refusing the cluster state file {path}: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as opened:
        info = os.fstat(opened.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"refusing the cluster state file {path}: not a regular file")
        if info.st_uid != os.getuid():
            raise ConfigError(f"refusing the cluster state file {path}: another user owns it")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"refusing the cluster state file {path}: others may read or write it"
                f" (mode {stat.S_IMODE(info.st_mode):o}, want 600)"
            )
        raw = opened.read(_MAX_BYTES + 1)
    if len(raw) > _MAX_BYTES:
        raise ConfigError(f"refusing the cluster state file {path}: too large")
    try:
        return _parse(json.loads(raw))
    except (ValueError, TypeError, KeyError) as error:
        raise ConfigError(f"the cluster state file {path} is damaged: {error}") from None


def _parse(body: object) -> LocalCluster:
    if not isinstance(body, dict):
        raise ValueError("not an object")
    address, token, processes = body["address"], body["token"], body["processes"]
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        raise ValueError("address is not HOST:PORT")
    if not isinstance(token, str) or not token or any(c.isspace() for c in token):
        raise ValueError("token is not a token")
    if not isinstance(processes, list) or len(processes) > 1000:
        raise ValueError("processes is not a list")
    found: list[ClusterProcess] = []
    for item in processes:
        name, pid, started = item["name"], item["pid"], item["started"]
        labels, log = item.get("labels", {}), item.get("log", "")
        if not isinstance(name, str) or not isinstance(log, str):
            raise ValueError("a process's name or log is not text")
        if type(pid) is not int or pid <= 1 or type(started) is not int or started < 0:
            raise ValueError("a process's pid or start time is not a number")
        if not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
        ):
            raise ValueError("a process's labels are not text")
        found.append(ClusterProcess(name, pid, started, dict(labels), log))
    return LocalCluster(address, token, tuple(found))


# -- processes ---------------------------------------------------------------------------


def running(process: ClusterProcess) -> bool:
    """Whether the process the state names runs on: same pid, same start time."""
    return start_ticks(process.pid) == process.started


def alive(process: ClusterProcess) -> bool:
    """Whether the process the state names still runs, and is a ``ray start``.

    Same pid, same start time, and Ray's start command: a state file can name no other
    program to be stopped.
    """
    if not running(process):
        return False
    try:
        words = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"ray.scripts.scripts" in words and b"start" in words


def descendants(pids: set[int]) -> set[int]:
    """Every live process below ``pids`` (children, their children, …)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = proc_stat(int(entry)) if entry.isdigit() else None
        if fields is not None and len(fields) > 1:
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    pending = list(pids)
    while pending:
        for child in parents.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found
