"""``helix bench distributed``: Helix past one process.

* ``lease_takeover_s`` (``_lease.py``): how long a run waits for a new driver.
* ``cross_node_stream_p99_ms`` (``_crossnode.py``): an event appended by one API server
  reaching a WebSocket client of another on the same PostgreSQL database, against the
  same delivery within one server (needs PostgreSQL: without one, no figure).
* ``concurrent_runs_10k`` (``_fleet.py``): 10,000 runs with a 1 s model driven at once
  by one engine process, wall time against the ideal, and memory per run.
* ``actor_restart_to_resumed_s`` (``_ray_restart.py``): from killing the Ray node that
  drives a run to its resumption on another, against a local driver's takeover (needs
  PostgreSQL: without one, no figure).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from ._crossnode import StreamSizes, run_cross_node
from ._figure import Figure
from ._fleet import FleetSizes, run_fleet
from ._lease import LeaseSizes, run_lease
from ._ray_restart import RayRestartSizes, run_ray_restart


@dataclass(frozen=True, slots=True)
class DistributedSizes:
    """Each figure's sizes."""

    lease: LeaseSizes = field(default_factory=LeaseSizes)
    stream: StreamSizes = field(default_factory=StreamSizes)
    fleet: FleetSizes = field(default_factory=FleetSizes)
    restart: RayRestartSizes = field(default_factory=RayRestartSizes)

    @classmethod
    def quick(cls) -> DistributedSizes:
        """A smoke test's sizes."""
        return cls(
            LeaseSizes.quick(), StreamSizes.quick(), FleetSizes.quick(), RayRestartSizes.quick()
        )


async def run_distributed(
    sizes: DistributedSizes, *, postgres_url: str | None = None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure each figure in turn; they come out as they are ready."""
    async for figure in run_lease(sizes.lease, workdir=workdir):
        yield figure
    async for figure in run_cross_node(sizes.stream, postgres_url=postgres_url, workdir=workdir):
        yield figure
    async for figure in run_fleet(sizes.fleet, workdir=workdir):
        yield figure
    async for figure in run_ray_restart(sizes.restart, postgres_url=postgres_url, workdir=workdir):
        yield figure
