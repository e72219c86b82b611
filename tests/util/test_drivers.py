"""Lease holders: a name per drive, and telling a dead process of this host at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from helix._util import holder_gone, new_holder


def test_a_holder_names_this_host_and_process_and_is_new_each_time() -> None:
    holder = new_holder()
    host, pid, nonce = holder.split("/")
    assert (host, int(pid)) == (socket.gethostname(), os.getpid())
    assert nonce
    assert new_holder() != holder
    assert not holder_gone(holder)  # this very process


def test_an_ended_process_of_this_host_is_gone_reaped_or_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    holder = f"{socket.gethostname()}/{child.pid}/abcd"
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
    assert _state(child.pid) == "Z"
    assert holder_gone(holder)  # a zombie
    child.wait()
    assert holder_gone(holder)  # no process at all


def test_a_live_process_or_another_host_is_not_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not holder_gone(f"{socket.gethostname()}/{child.pid}/abcd")
    finally:
        child.kill()
        child.wait()
    assert not holder_gone(f"elsewhere.example/{child.pid}/abcd")  # only expiry can tell
    assert not holder_gone("not a holder name")
    assert not holder_gone(f"{socket.gethostname()}/pid/abcd")


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2]
