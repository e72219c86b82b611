"""Observers on the host's side of a sandbox: they look at the host, never trust the box.

Processes are found through the host's ``/proc`` (a sandboxed process is visible
there whatever namespaces it runs in); a connection is counted by the listener that
accepted it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def processes_mentioning(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (this process excepted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    """SIGKILL each of ``pids`` that still exists."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def wait_gone(marker: str, within_s: float = 3.0) -> list[int]:
    """The processes still mentioning ``marker`` after at most ``within_s`` seconds."""
    for _ in range(int(within_s / 0.05)):
        if not processes_mentioning(marker):
            break
        await asyncio.sleep(0.05)
    return processes_mentioning(marker)


def wait_gone_now(marker: str, within_s: float = 3.0) -> list[int]:
    """``wait_gone`` for callers without an event loop."""
    deadline = time.monotonic() + within_s
    while processes_mentioning(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_mentioning(marker)


def host_sleeper(env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A process on the host, outside any sandbox, for commands to try to reach."""
    return subprocess.Popen(["sleep", "30"], env=env)


class Listener:
    """A TCP server on the host's 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.settimeout(0.1)
        self.port: int = self.socket.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.socket.close()
