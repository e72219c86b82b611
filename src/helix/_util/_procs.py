"""What ``/proc`` says of a process: its stat fields and when it started."""

from __future__ import annotations

import os
from pathlib import Path


def proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command (state, parent, …).

    ``None`` if the process is gone or a zombie.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "PID (COMMAND) STATE …": the command may hold spaces and parentheses.
    fields = text[text.rfind(")") + 2 :].split()
    return None if not fields or fields[0] == "Z" else fields


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (ticks after boot); ``None`` if it is gone or a zombie."""
    fields = proc_stat(pid)
    return None if fields is None else int(fields[19])


def boot_time() -> float:
    """When this machine booted (seconds since the epoch, whole: ``/proc/stat``'s btime)."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


def process_mark(pid: int | None = None) -> str:
    """``PID.TICKS``: this process (or ``pid``), told apart from a later one given its pid.

    Written beside what a process leaves on the host (a container's label, a state
    folder), so that another process can tell, with ``process_gone``, that it has ended.
    """
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{start_ticks(pid)}"


def process_gone(mark: str) -> bool:
    """Whether the process ``mark`` (``process_mark``'s) names has ended.

    Its pid is gone, a zombie, or another process's now (another start time). ``False``
    for a mark not made by ``process_mark``: what it names is nobody's to judge here.
    """
    pid_text, _, ticks_text = mark.strip().partition(".")
    if not (pid_text.isdigit() and ticks_text.isdigit()):
        return False
    return start_ticks(int(pid_text)) != int(ticks_text)
