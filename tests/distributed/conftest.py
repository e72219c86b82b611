"""One real multi-node Ray cluster for this folder's tests, token authentication on.

Ray's in-process cluster (``ray.cluster_utils.Cluster``) starts real raylets: a head
and worker nodes on this machine, each a node of its own to the scheduler. It costs a
few seconds and ~1 GiB, so every test that needs Ray shares this one; a test that kills
a node adds its own first (``ray_cluster.add_node``) and kills only that.

Every test using it is in the suite's Ray xdist group (tests/conftest.py), so one
worker starts it, runs those tests one after another, and stops it when they are done
(package scope: its raylets do not idle on through the rest of that worker's tests).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from helix.distributed import RayAddress, ray_environment


@dataclass
class RayCluster:
    """The shared cluster: its address and token, and Ray's own handle to add nodes."""

    address: RayAddress
    cluster: Any
    """``ray.cluster_utils.Cluster``: ``add_node(num_cpus=…, labels=…, resources=…)``,
    ``remove_node(node)``."""

    def add_node(self, **options: Any) -> Any:
        node = self.cluster.add_node(**options)
        self.cluster.wait_for_nodes()
        return node


@pytest.fixture(scope="package")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    """A head node (label ``helix.role=head``) and one worker node (``helix.role=worker``).

    Without Ray installed, the tests that need it fail in CI and skip elsewhere.
    """
    token = secrets.token_hex(16)
    names = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USAGE_STATS_ENABLED", "HELIX_NODE_CACHE")
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(ray_environment(token))  # before Ray is imported: it reads them once
    # the nodes' caches of worlds in the test's temporary folder, not the system's
    os.environ["HELIX_NODE_CACHE"] = str(tmp_path_factory.mktemp("node-cache"))
    try:
        from ray.cluster_utils import Cluster
    except ImportError as error:
        message = f"Ray is not installed (the ray extra): {error}"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "include_dashboard": False,
            "labels": {"helix.role": "head"},
        },
    )
    cluster.add_node(num_cpus=2, labels={"helix.role": "worker"})
    cluster.wait_for_nodes()
    try:
        yield RayCluster(RayAddress(cluster.address, token), cluster)
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
