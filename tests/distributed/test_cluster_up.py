"""How ``helix cluster up`` tells of a node that stopped while it started (no Ray needed)."""

from __future__ import annotations

import os
import signal


def test_a_node_that_ended_is_told_by_how_it_ended() -> None:
    """``up`` names a node's exit code or its killing signal beside its log's last line."""
    from helix.distributed._cluster import _how_it_ended
    from helix.distributed._cluster_state import ClusterProcess

    killed = os.posix_spawnp("sleep", ["sleep", "600"], os.environ)
    os.kill(killed, signal.SIGKILL)
    failed = os.posix_spawnp("sh", ["sh", "-c", "exit 3"], os.environ)
    running = os.posix_spawnp("sleep", ["sleep", "600"], os.environ)
    try:
        for pid in (killed, failed):
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
        node = ClusterProcess  # name, pid, start ticks, labels, log
        assert _how_it_ended(node("w", killed, 0, {}, "log")) == " (killed by SIGKILL)"
        assert _how_it_ended(node("w", failed, 0, {}, "log")) == " (exit code 3)"
        assert _how_it_ended(node("w", running, 0, {}, "log")) == ""
        assert _how_it_ended(node("w", failed, 0, {}, "log")) == ""  # reaped above
    finally:
        os.kill(running, signal.SIGKILL)
        os.waitpid(running, 0)
