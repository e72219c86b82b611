"""The remote-node tier through ``SandboxConformance``, on the session's real Ray cluster.

Each command is a Ray task on the worker node (label ``helix.role=worker``), run in its
bubblewrap on a private copy of the world; the arena's world is synchronised there and
back. Every attack is contained, as under the local ``bwrap`` tier; the cluster's nodes
share this machine, so the suite judges each attack from the host's side as it does
for the other tiers.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from helix.distributed import RayNodeSandbox, connect_ray
from helix.runtime import Placement
from helix.sandbox import Sandbox
from helix.testing.conformance import SandboxArena, SandboxConformance

from .conftest import RayCluster


class TestRayNodeTier(SandboxConformance):
    """Every attack contained: the node's bwrap, plus the host's checks on what comes back."""

    expected_escapes = frozenset()
    timeout_s = 60.0  # a node's first task starts a Ray worker

    @pytest.fixture
    def postgres_address(self, postgres_url: str) -> tuple[str, int]:
        url = urlsplit(postgres_url)
        return (url.hostname or "127.0.0.1", url.port or 5432)

    @pytest.fixture
    def sandbox(
        self, arena: SandboxArena, bwrap_available: None, ray_cluster: RayCluster
    ) -> Sandbox:
        connect_ray(ray_cluster.address)
        return RayNodeSandbox(
            Placement(labels={"helix.role": "worker"}),
            hidden=[arena.helix_data],
            max_processes=self.max_processes,
            max_memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
