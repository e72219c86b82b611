"""The ``ray`` executor: each run's loop is a Ray actor on some node of a cluster.

``submit(run_id)`` makes one actor (``RunActor``) for the run, holding only its id and
the ``EngineOpener``; the actor builds an engine over the shared store and drives the
run from its log. A child of the caller's supervisor follows each run: it asks the
actor where it lives, awaits its drive, and frees the actor when the run ends, pauses
or is handed off. Ray restarts an actor whose process or node was lost (up to
``max_restarts`` times); the follower then drives it again, and the new drive takes the
run's lease over. A drained node's runs stop at their next turn boundary and are made
again as new actors that a label selector keeps off every drained node.

Ray is imported when the executor is made (``connect_ray`` first: the token is read
once, at Ray's first import in a process), never by ``import helix.distributed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from helix.errors import ConfigError, NodeNotFoundError, NodeStateError
from helix.runtime import (
    SYSTEM_CLOCK,
    ChildSpec,
    Clock,
    EngineOpener,
    ExecutorKind,
    NodeInfo,
    NodeState,
    Supervisor,
)

from ._ray import NODE_ID_LABEL, RayAddress, connect_ray, node_info, ray_environment, token_from
from ._ray_actor import ActorLocation, Outcome, RunActor

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RayRunOptions:
    """How each run's actor is made."""

    max_restarts: int = 3
    """How many times Ray rebuilds a run's actor after its process or node was lost;
    past that the run is left as its log says (the next start, or ``helix resume``,
    drives it)."""
    cpus_per_run: float = 0.1
    """CPUs each run's actor reserves on its node (a run mostly waits on its model)."""
    held_wait_s: float = 30.0
    """How long a restarted actor waits for the lease its lost incarnation held (a
    process of another host: until the lease expires). Keep it above the lease TTL."""
    retry_s: float = 0.2
    """How often the follower asks a restarting actor again."""


@dataclass(slots=True)
class _Run:
    """One run this executor drives: its actor and where the actor was last seen."""

    run_id: str
    actor: Any = None
    location: ActorLocation | None = None


class RayExecutor:
    """Runs driven by Ray actors, one per run, on the nodes of a cluster."""

    def __init__(
        self,
        cluster: RayAddress,
        opener: EngineOpener,
        supervisor: Supervisor,
        *,
        options: RayRunOptions | None = None,
        clock: Clock = SYSTEM_CLOCK,
        namespace: str = "helix",
    ) -> None:
        """Connect to the cluster (token auth on); runs are followed under ``supervisor``."""
        connect_ray(cluster, namespace=namespace)  # sets the token before Ray's first import
        import ray

        self.cluster = cluster
        self.opener = opener
        self.supervisor = supervisor
        self.options = options or RayRunOptions()
        self.clock = clock
        self._actor_class = ray.remote(RunActor)
        self._runs: dict[str, _Run] = {}
        self._draining: set[str] = set()

    @property
    def kind(self) -> ExecutorKind:
        return "ray"

    def submit(self, run_id: str, *, prefer: str | None = None) -> None:
        """Drive the run on the cluster; ``prefer``: a node id to place it on if it can.

        The preference is soft: if that node is lost, Ray restarts the actor elsewhere.
        """
        child = f"ray:{run_id}"
        if child in self.supervisor.children:
            return
        spec = ChildSpec(id=child, start=partial(self._follow, run_id, prefer), restart="temporary")
        self.supervisor.start_child(spec)

    async def _follow(self, run_id: str, prefer: str | None) -> None:
        """Make the run's actor, drive it until it stops; again elsewhere if handed off."""
        run = _Run(run_id)
        self._runs[run_id] = run
        try:
            while True:
                run.actor = self._make_actor(run_id, prefer)
                outcome = await self._drive(run)
                self._free(run)
                if outcome != "moved":
                    return
                prefer = None
        finally:
            self._free(run)
            self._runs.pop(run_id, None)

    def _make_actor(self, run_id: str, prefer: str | None) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = {
            "max_restarts": self.options.max_restarts,
            "max_task_retries": 0,  # a drive is never retried blindly: the follower asks again
            "num_cpus": self.options.cpus_per_run,
        }
        if self._draining:
            options["label_selector"] = {NODE_ID_LABEL: f"!in({','.join(sorted(self._draining))})"}
        if prefer is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(prefer, soft=True)
        actor_class = self._actor_class.options(**options)
        return actor_class.remote(run_id, self.opener, self.options.held_wait_s)

    async def _drive(self, run: _Run) -> Outcome | None:
        """Await the actor's drive; while Ray restarts it, ask again. ``None``: it is gone."""
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayError

        lost: ActorLocation | None = None
        while True:
            try:
                run.location = await run.actor.where.remote()
                outcome: Outcome = await run.actor.drive.remote(lost)
                return outcome
            except ActorUnavailableError:  # restarting after its process or node was lost
                lost = run.location or lost
                run.location = None
                await self.clock.sleep(self.options.retry_s)
            except ActorDiedError:
                _log.warning(
                    "run %s: its actor died and was not restarted (lost more than %d times,"
                    " or it could not start: is Helix installed on every node?); the run is"
                    " left as its log says (helix resume drives it)",
                    run.run_id,
                    self.options.max_restarts,
                )
                return None
            except RayError as error:
                _log.warning("run %s: its actor failed: %s", run.run_id, type(error).__name__)
                return None

    def _free(self, run: _Run) -> None:
        if run.actor is None:
            return
        import ray

        actor, run.actor, run.location = run.actor, None, None
        ray.kill(actor, no_restart=True)

    async def nodes(self) -> list[NodeInfo]:
        import ray

        runs: dict[str, list[str]] = {}
        for run in list(self._runs.values()):
            if run.location is not None:
                runs.setdefault(run.location.node_id, []).append(run.run_id)
        found = []
        for node in await asyncio.to_thread(ray.nodes):
            node_id = str(node["NodeID"])
            state: NodeState | None = "draining" if node_id in self._draining else None
            if not node.get("Alive"):
                state = "dead"
            found.append(node_info(node, state=state, runs=tuple(sorted(runs.get(node_id, ())))))
        order = {"alive": 0, "draining": 1, "dead": 2}
        return sorted(found, key=lambda n: (order[n.state], n.id))

    async def drain(self, node_id: str) -> list[str]:
        from ray.exceptions import RayError

        nodes = await self.nodes()
        node = next((n for n in nodes if n.id == node_id), None)
        if node is None:
            raise NodeNotFoundError(node_id)
        if node.state == "dead":
            raise NodeStateError(f"node {node_id} is dead: its runs were restarted elsewhere")
        if not any(n.state == "alive" and n.id != node_id for n in nodes):
            raise NodeStateError(f"no other live node could take the runs of node {node_id}")
        self._draining.add(node_id)
        moving = list(node.runs)
        for run_id in moving:
            run = self._runs.get(run_id)
            if run is None or run.actor is None:
                continue
            with contextlib.suppress(RayError):  # lost: Ray restarts it off the drained node
                await run.actor.hand_off.remote()
        return moving

    async def close(self) -> None:
        for child in self.supervisor.children:
            if child.startswith("ray:"):
                self.supervisor.cancel_child(child)


def ray_executor(
    address: str,
    opener: EngineOpener,
    supervisor: Supervisor,
    *,
    env: Mapping[str, str],
    options: RayRunOptions | None = None,
) -> RayExecutor:
    """The ``ray`` executor for ``helix serve --executor ray --ray-address HOST:PORT``.

    The token comes from ``HELIX_RAY_TOKEN`` (or ``RAY_AUTH_TOKEN``) in ``env``.
    ``ConfigError`` (naming the fix) when Ray is not installed, the address is not
    ``HOST:PORT`` or the token is missing.
    """
    return RayExecutor(ray_address_of(address, env), opener, supervisor, options=options)


def ray_address_of(address: str, env: Mapping[str, str]) -> RayAddress:
    """The cluster at ``HOST:PORT`` with the token ``env`` gives, checked.

    ``ConfigError`` (naming the fix) when Ray is not installed, the address is not
    ``HOST:PORT``, or the token is missing or malformed.
    """
    if importlib.util.find_spec("ray") is None:
        raise ConfigError("the ray executor needs Ray: pip install 'helix-harness[ray]'")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"ray address {address!r}: give the cluster's HOST:PORT")
    cluster = RayAddress(address, token_from(env))
    ray_environment(cluster.token)  # a malformed token is refused before Ray sees it
    return cluster
