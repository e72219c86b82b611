"""``actor_restart_to_resumed_s``: from killing the node that drives a run to its resumption.

The bench starts a small Ray cluster of its own on this machine (token auth on: a
head node, and for each sample a node it kills), a PostgreSQL database of its own
(every node's actors share it) and a mock model server. A run's actor is placed on
the doomed node and its model call held in flight; the node is then removed (its
raylet and worker processes killed). Ray restarts the actor on the head node, whose
drive takes the lease over and logs ``run.resumed``: the figure is the time from the
kill to that event's commit. Baseline, measured in the same run: the lease takeover of
a killed local driver (``helix run`` ``SIGKILL``-ed, another driver in this process
polling for the run: ``lease_takeover_s``'s ``killed`` case).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from helix.distributed import RayAddress, RayExecutor, ray_environment
from helix.errors import ConfigError
from helix.kernel.events import parse_iso
from helix.kernel.log import EventStore, open_store
from helix.providers import Scenario
from helix.runtime import Engine, open_supervisor
from helix.server import ServerConfig, open_server_engine
from helix.testing import MockModelServer

from ._figure import Figure
from ._lease import LeaseSizes, _takeover
from ._postgres import temporary_database

SUITE = "distributed"
WAIT_S = 600.0
"""A safety net for a stuck sample on a busy machine (a restarted actor opens a whole
server engine), never a performance limit: the figure is the time measured."""
MODEL = "openai:bench"


@dataclass(frozen=True, slots=True)
class RayRestartSizes:
    """How many node kills to time, and the lease's time to live."""

    samples: int = 3
    ttl_s: float = 5.0

    @classmethod
    def quick(cls) -> RayRestartSizes:
        """A smoke test's sizes."""
        return cls(samples=1)


async def run_ray_restart(
    sizes: RayRestartSizes, *, postgres_url: str | None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Time actor restarts after node kills (median), beside a local driver's takeover."""
    if postgres_url is None:  # the actors of every node share one store: no figure without it
        return
    token = secrets.token_hex(16)
    os.environ.update(ray_environment(token))  # before Ray's first import in this process
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        raise ConfigError("the ray figure needs Ray: pip install 'helix-harness[ray]'") from None
    # Ray starts nodes only from the main thread (it sets signal handlers): the bench
    # waits for them here, with nothing else to do meanwhile.
    head = {"num_cpus": 2, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            async with temporary_database(postgres_url) as db_url:
                times, reasons = await _samples(
                    cluster, RayAddress(cluster.address, token), db_url, Path(tmp), sizes
                )
            baseline = []
            for _ in range(sizes.samples):
                with tempfile.TemporaryDirectory(dir=workdir) as base:
                    lease = LeaseSizes(samples=1, ttl_s=sizes.ttl_s)
                    baseline.append(await _takeover(Path(base), "killed", lease))
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
    yield Figure(
        SUITE,
        "actor_restart_to_resumed_s",
        statistics.median(times),
        "s",
        params={
            "samples": sizes.samples,
            "lease_ttl_s": sizes.ttl_s,
            "each_s": [round(t, 2) for t in times],
            "takeover": sorted(reasons),
            "baseline": "lease_takeover_s of a killed local driver",
        },
        baseline=statistics.median(baseline),
    )


async def _samples(
    cluster: Any, address: RayAddress, db_url: str, tmp: Path, sizes: RayRestartSizes
) -> tuple[list[float], set[str]]:
    times: list[float] = []
    reasons: set[str] = set()
    home = tmp / "home"
    with MockModelServer() as mock:
        env = {
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": mock.openai_base_url,
            "HELIX_LEASE_TTL_S": str(sizes.ttl_s),
        }
        config = ServerConfig(db_url=db_url, home=home, env=env)
        store = await open_store(db_url)
        try:
            engine = Engine(store, home=home, env=env, snapshots=False)
            async with open_supervisor() as supervisor:
                executor = RayExecutor(address, partial(open_server_engine, config), supervisor)
                for sample in range(sizes.samples):
                    world = tmp / f"world-{sample}"
                    await asyncio.to_thread(world.mkdir, parents=True)
                    mock.play(Scenario.of({"text": "held", "delay_s": 3600}, {"text": "done"}))
                    asked = len(mock.requests)
                    record = await engine.create("bench", model=MODEL, world=world)
                    elapsed, reason = await _kill_and_resume(
                        cluster, executor, store, mock, record.id, asked
                    )
                    times.append(elapsed)
                    reasons.add(reason)
                await executor.close()
        finally:
            await store.close()
    return times, reasons


async def _kill_and_resume(
    cluster: Any,
    executor: RayExecutor,
    store: EventStore,
    mock: MockModelServer,
    run_id: str,
    asked: int,
) -> tuple[float, str]:
    """Kill the node driving the run mid-call; the seconds until ``run.resumed`` commits."""
    victim = cluster.add_node(num_cpus=1)  # main thread only (see above)
    cluster.wait_for_nodes()
    executor.submit(run_id, prefer=victim.node_id)
    async with asyncio.timeout(WAIT_S):
        while True:  # until the held call has reached the model
            if len(mock.requests) > asked:
                break
            await asyncio.sleep(0.02)
        placed = {n.id for n in await executor.nodes() if run_id in n.runs}
        if placed != {victim.node_id}:
            raise ConfigError(f"the bench's run was placed on {placed}, not the node it kills")
        head = (await store.get_run(run_id)).next_seq
        killed_at = time.time()
        cluster.remove_node(victim)
        reason, resumed = "", float("nan")
        async with store.subscribe(run_id, after=head - 1) as events:
            async for event in events:
                if event.type == "lease.taken_over":
                    reason = str(event.data.get("reason", ""))
                if event.type == "run.resumed":
                    resumed = parse_iso(event.ts) - killed_at
                if event.type in ("run.completed", "run.failed"):
                    break
    return resumed, reason
