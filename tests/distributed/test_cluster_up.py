"""How ``helix cluster up`` tells of a node that stopped while it started (no Ray needed)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from helix.distributed._cluster_state import LocalCluster
from helix.errors import StoreUnavailableError


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


def test_a_cluster_whose_node_stops_while_it_starts_is_started_once_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node stopping as the cluster starts (a port taken meanwhile) costs one more try."""
    from helix.distributed import _cluster

    tries: list[int] = []
    said: list[str] = []

    made = LocalCluster("127.0.0.1:1", "token", ())

    def up_once(*args: object) -> LocalCluster:
        tries.append(1)
        if len(tries) == 1:
            raise _cluster._NodeStopped("node worker-1 stopped (killed by SIGKILL): no output")
        return made

    monkeypatch.setattr(_cluster, "_up_once", up_once)
    spec = _cluster.ClusterSpec(nodes=1)
    assert _cluster.cluster_up(tmp_path, spec, env={}, tell=said.append) is made
    assert said == [
        "node worker-1 stopped (killed by SIGKILL): no output; starting the cluster again …"
    ]

    def never(*args: object) -> LocalCluster:
        raise _cluster._NodeStopped("the head node did not start (exit code 1): no output")

    monkeypatch.setattr(_cluster, "_up_once", never)
    with pytest.raises(StoreUnavailableError, match=r"head node did not start \(exit code 1\)"):
        _cluster.cluster_up(tmp_path, spec, env={}, tell=said.append)
