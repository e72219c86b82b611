"""Who drives a run: a lease holder's name, and whether that holder is a dead process here.

A holder is ``HOST/PID/NONCE``: unique per drive (the nonce), and telling which process
of which machine took the lease. A lease protects the run for its time to live (seconds)
even if its holder died, so that a driver on another machine that stopped answering is
never raced; but a holder on *this* host whose process is gone (``kill -9``, a crash)
is known dead at once, and its lease may be taken over without waiting (as the
operating system released a file lock on death before leases). Here because the
runtime drives and the API only asks: reading runs loads no engine.
"""

from __future__ import annotations

import os
import secrets
import socket

from ._procs import proc_stat


def new_holder() -> str:
    """A fresh holder name for one drive: ``HOST/PID/NONCE``."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def holder_process(holder: str) -> tuple[str, int] | None:
    """The ``(host, pid)`` a holder made by ``new_holder`` names; ``None`` for another name."""
    host, _, rest = holder.partition("/")
    pid_text, _, _nonce = rest.partition("/")
    return (host, int(pid_text)) if host and pid_text.isdigit() else None


def holder_gone(holder: str) -> bool:
    """Whether ``holder`` names a process of this host that has ended.

    ``False`` for any other host's holder (only its lease's expiry can tell) and for a
    name not made by ``new_holder``. A zombie (ended, not yet reaped) counts as gone.
    """
    process = holder_process(holder)
    if process is None or process[0] != socket.gethostname():
        return False
    pid = process[1]
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    return proc_stat(pid) is None  # a zombie (or gone since)
