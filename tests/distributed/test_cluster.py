"""``helix cluster up|status|down`` with real ``ray start`` processes (slow: one test).

Up starts a head and a labelled worker with token authentication on; status sees both
alive with their labels; down stops every process up started (the ``ray start``s and
all below them) and removes the state file; a second down says nothing is up.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path

import pytest

from helix.distributed._cluster_state import descendants, read_state, start_ticks
from tests.conftest import ray_tier

from ._cli import helix


@pytest.fixture
def ray_installed() -> None:
    if importlib.util.find_spec("ray") is None:
        message = "Ray is not installed (the ray extra)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)


@ray_tier
def test_up_status_down_leaves_no_process_behind(ray_installed: None, helix_home: Path) -> None:
    up = helix(
        helix_home, "cluster", "up", "--nodes", "1", "--label", "gpu=true", "--cpus", "1",
        "--object-store-mb", "80",
    )  # fmt: skip
    try:
        assert up.returncode == 0, up.stderr + up.stdout
        state_file = helix_home / "cluster" / "state.json"
        assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
        cluster = read_state(helix_home)
        assert cluster is not None
        assert f"export HELIX_RAY_TOKEN={cluster.token}" in up.stdout  # shown once
        assert f"helix serve --executor ray --ray-address {cluster.address}" in up.stdout
        assert [p.name for p in cluster.processes] == ["head", "worker-1"]
        tree = {p.pid for p in cluster.processes}
        tree |= descendants(tree)
        assert len(tree) > 2  # gcs_server, raylets, …: all below the ray start processes

        status = helix(helix_home, "cluster", "status", "--json")
        assert status.returncode == 0, status.stderr
        assert cluster.token not in status.stdout + status.stderr
        shown = json.loads(status.stdout)
        assert shown["address"] == cluster.address
        nodes = shown["nodes"]
        assert [n["state"] for n in nodes] == ["alive", "alive"]
        head, worker = nodes
        assert head["labels"]["helix.role"] == "head"
        assert worker["labels"] == {"helix.role": "worker", "helix.node": "worker-1", "gpu": "true"}
        assert worker["resources"]["CPU"] == 1.0
        assert all(n["executor"] == "ray" for n in nodes)

        again = helix(helix_home, "cluster", "up")
        assert again.returncode == 1
        assert "a cluster is up already" in again.stderr
    finally:
        down = helix(helix_home, "cluster", "down")
    assert down.returncode == 0, down.stderr
    assert "is down" in down.stdout
    assert [pid for pid in tree if start_ticks(pid) is not None] == []
    assert not (helix_home / "cluster" / "state.json").exists()
    twice = helix(helix_home, "cluster", "down")
    assert twice.returncode == 3
    assert twice.stderr == "error: no cluster is up here (helix cluster up starts one)\n"
