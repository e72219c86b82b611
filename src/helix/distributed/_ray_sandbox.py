"""The remote-node tier: a command runs as a Ray task on a node chosen by its placement.

``RayNodeSandbox`` is a ``helix.sandbox.Sandbox``: the runtime calls ``run`` as for any
tier. The host walks the world (reusing the hashes of files whose stat did not change),
puts the content of each file not yet sent into the Ray object store (one object per
digest, kept while the world holds it), and submits one task with the placement's
``label_selector`` and resources. On the node (``_ray_node.py``) the task fetches only
the digests its cache lacks, materialises a private copy, runs the command in its
bubblewrap with the world shown at the host's path, and returns what changed; the host
writes that back through ``take_back`` (``_ray_sync.py``: hostile paths, links out of
the world, special files and sizes past the quota refused and reported), so the run's
``world.snapshotted`` records it as it would a local command's.

A placement no live node can satisfy is a ``ConfigError`` before anything is
submitted (Ray would wait for such a task forever). The network stays off on the node:
the run's egress proxy listens on the host, so a command of a run that may reach some
hosts is told that it could not. Each task runs once (no retries): a command's side
effects must not happen twice.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helix.errors import ConfigError
from helix.runtime import Blueprint, Placement
from helix.sandbox import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_TMP_BYTES,
    CommandResult,
    EgressHook,
    Sandbox,
    default_hidden_paths,
)
from helix.world import Entry

from ._ray import RayAddress, connect_ray
from ._ray_node import run_on_node
from ._ray_sync import Known, Tree, digest_of, read_regular, take_back, walk

SCHEDULE_GRACE_S = 300.0
"""How long past its timeout a command may wait for its node (queued behind others)."""

STOP_GRACE_S = 3.0
"""How long a cancelled command's task has to end before its worker is killed."""

_NETWORK_OFF = (
    "[network was off on node {node}: the run's egress proxy is on the Helix host, which"
    " placed commands cannot reach; connections from this command were refused]"
)


@dataclass(frozen=True, slots=True)
class NodeMatch:
    """A live node that can take a placement: its id, labels and total resources."""

    node_id: str
    labels: Mapping[str, str]
    resources: Mapping[str, float]


def _required(placement: Placement) -> dict[str, float]:
    """What each task holds: the placement's resources, one CPU unless it says."""
    return {"CPU": 1.0, **placement.resources}


def matching_nodes(placement: Placement, nodes: Sequence[Mapping[str, Any]]) -> list[NodeMatch]:
    """The live nodes (``ray.nodes()`` rows) with every label and enough of each resource."""
    needed = _required(placement)
    found = []
    for node in nodes:
        labels = node.get("Labels") or {}
        total = node.get("Resources") or {}
        if not node.get("Alive"):
            continue
        if any(labels.get(k) != v for k, v in placement.labels.items()):
            continue
        if any(total.get(k, 0.0) < amount for k, amount in needed.items()):
            continue
        found.append(NodeMatch(str(node["NodeID"]), dict(labels), dict(total)))
    return found


def check_placement(placement: Placement) -> list[NodeMatch]:
    """The nodes that can take ``placement`` now; ``ConfigError`` naming the cluster if none."""
    import ray

    nodes: list[Mapping[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    found = matching_nodes(placement, nodes)
    if not found:
        alive = [n for n in nodes if n.get("Alive")]
        seen = "; ".join(
            f"{str(n['NodeID'])[:12]}: labels "
            + ", ".join(f"{k}={v}" for k, v in sorted((n.get("Labels") or {}).items()))
            + " resources "
            + ", ".join(f"{k}={v:g}" for k, v in sorted((n.get("Resources") or {}).items()))
            for n in alive[:8]
        )
        raise ConfigError(
            f"no node of the cluster can run this run's commands (placement:"
            f" {placement.describe()}, plus CPU=1 unless it says); the {len(alive)} live"
            f" nodes are: {seen or 'none'}"
        )
    return found


def _task_options(placement: Placement) -> dict[str, Any]:
    """The placement as Ray's task options (CPU, GPU and memory have keywords of their own)."""
    resources = dict(_required(placement))
    options: dict[str, Any] = {
        "num_cpus": resources.pop("CPU"),
        "max_retries": 0,
        "retry_exceptions": False,
    }
    if "GPU" in resources:
        options["num_gpus"] = resources.pop("GPU")
    if "memory" in resources:
        options["memory"] = resources.pop("memory")
    if resources:
        options["resources"] = resources
    if placement.labels:
        options["label_selector"] = dict(placement.labels)
    return options


class RayNodeSandbox(Sandbox):
    """Runs each command on a Ray node its placement selects, in that node's bubblewrap.

    Args:
        placement: The labels and resources the node must have.
        hidden: Host paths never sent to a node nor written back (default:
            ``helix.sandbox.default_hidden_paths()``: Helix's data, credentials).
        max_world_bytes: The world's quota: content coming back past it is refused.
        **limits: The bwrap tier's limits on the node (``max_processes``, …).
    """

    tier = "bwrap"

    def __init__(
        self,
        placement: Placement,
        *,
        hidden: Sequence[Path] | None = None,
        max_world_bytes: int | None = None,
        **limits: Any,
    ) -> None:
        self.placement = placement
        self.reason = f"on a Ray node ({placement.describe()}), in its bubblewrap"
        self._hidden = [
            Path(os.path.abspath(p)) for p in (default_hidden_paths() if hidden is None else hidden)
        ]
        self._max_bytes = max_world_bytes
        self._limits = dict(limits)
        self._refs: dict[str, Any] = {}
        """Digest → the Ray object holding that content (kept while a world holds it)."""
        self._walked: tuple[Path, Known] | None = None
        """The world last sent, and its files' entries with the stat keys that vouch for them."""
        self._lock = threading.Lock()
        self._remote: Any = None
        self.fetched: tuple[int, int] = (0, 0)
        """What the last command's node fetched from the object store: (objects, bytes)
        its cache lacked (``(0, 0)`` once it holds the whole world)."""

    def nodes(self) -> list[NodeMatch]:
        """The nodes that can take this sandbox's commands now (``ConfigError`` if none)."""
        return check_placement(self.placement)

    def _send(self, world: Path) -> Tree:
        """Walk the world and put the content no task was given yet (in a thread)."""
        import ray

        with self._lock:
            before = self._walked[1] if self._walked and self._walked[0] == world else None
            tree, known = walk(world, known=before, hidden=self._hidden)
            self._walked = (world, known)
            wanted = {
                e.hash: p for p, e in tree.manifest.items() if p not in tree.targets and e.hash
            }
            for digest, path in wanted.items():
                if digest not in self._refs:
                    data = read_regular(world / path, known[path][1][0])
                    if digest_of(data) != digest:
                        raise OSError(f"{path} changed while the world was sent: try again")
                    self._refs[digest] = ray.put(data)
            self._refs = {d: r for d, r in self._refs.items() if d in wanted}
            return tree

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
    ) -> CommandResult:
        import ray

        world = await asyncio.to_thread(_world_folder, cwd)
        await asyncio.to_thread(self.nodes)  # infeasible: said now, not a task queued forever
        tree = await asyncio.to_thread(self._send, world)
        if self._remote is None:
            self._remote = ray.remote(run_on_node)
        request = {
            "command": command,
            "shown_at": str(world),
            "timeout_s": timeout_s,
            "max_output": max_output,
            "tmp_bytes": DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes,
            "limits": self._limits,
            "rows": tree.rows(),
            "refs": dict(self._refs),
            "max_bytes": self._max_bytes,
        }
        ref = self._remote.options(**_task_options(self.placement)).remote(request)
        try:
            outcome = await asyncio.wait_for(
                asyncio.wrap_future(ref.future()), timeout_s + SCHEDULE_GRACE_S
            )
        except asyncio.CancelledError:
            await _stop(ref)
            raise
        except TimeoutError:
            ray.cancel(ref, force=True)
            return CommandResult(
                exit_code=None,
                output=f"[no node took the command within {timeout_s + SCHEDULE_GRACE_S:g}s]",
                truncated=False,
                timed_out=True,
                duration_ms=(timeout_s + SCHEDULE_GRACE_S) * 1000,
            )
        except ray.exceptions.RayError as error:
            return CommandResult(
                exit_code=None,
                output=f"[the command's node failed: {type(error).__name__}: {error}]"[:2000],
                truncated=False,
                timed_out=False,
                duration_ms=0.0,
            )
        return await asyncio.to_thread(self._take, world, tree.manifest, outcome, egress)

    def serve(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        egress: EgressHook | None = None,
        read_only: Sequence[Path] = (),
        tmp_bytes: int | None = None,
    ) -> AbstractAsyncContextManager[asyncio.subprocess.Process]:
        raise ConfigError(
            "a run whose commands are placed on nodes cannot start stdio MCP servers:"
            " drop the placement or the server"
        )

    def _take(
        self, world: Path, sent: Mapping[str, Entry], outcome: Any, egress: EgressHook | None
    ) -> CommandResult:
        """The node's answer as a result, its changes written into the world."""
        if not isinstance(outcome, dict):
            raise ConfigError("the node answered something that is not a command's outcome")
        node = str(outcome.get("node", ""))
        if "error" in outcome:
            raise ConfigError(str(outcome["error"]))
        fetched = outcome.get("fetched")
        if isinstance(fetched, list) and len(fetched) == 2:
            self.fetched = (int(fetched[0]), int(fetched[1]))
        taken = take_back(
            world,
            sent,
            outcome.get("changed"),
            outcome.get("removed"),
            outcome.get("contents"),
            hidden=self._hidden,
            max_bytes=self._max_bytes,
        )
        for path, why in dict(outcome.get("refused") or {}).items():
            taken.refused.setdefault(str(path)[:300], f"{why} (on the node)")
        output = str(outcome.get("output", ""))
        notes = [f"[{line}]" for line in taken.notes()]
        if egress is not None:
            notes.append(_NETWORK_OFF.format(node=node))
        if notes:
            separator = "" if not output or output.endswith("\n") else "\n"
            output = output + separator + "\n".join(notes) + "\n"
        exit_code = outcome.get("exit_code")
        return CommandResult(
            exit_code=exit_code if isinstance(exit_code, int) else None,
            output=output,
            truncated=bool(outcome.get("truncated")),
            timed_out=bool(outcome.get("timed_out")),
            duration_ms=float(outcome.get("duration_ms") or 0.0),
            tmp_full=bool(outcome.get("tmp_full")),
            node=node,
        )


def _world_folder(cwd: Path) -> Path:
    world = Path(os.path.abspath(cwd))
    if not world.is_dir():
        raise FileNotFoundError(f"the world {world} is not a folder")
    return world


async def _stop(ref: Any) -> None:
    """Cancel a running command's task: gently (the node kills the command), else its worker.

    Ray interrupts the task, whose loop cancels the command as a local cancel does;
    if the task has not ended within ``STOP_GRACE_S``, its worker is killed, and bwrap
    with it (parent-death signal), taking every process the command started.
    """
    import ray

    ray.cancel(ref, force=False)
    try:
        await asyncio.wait_for(asyncio.wrap_future(ref.future()), STOP_GRACE_S)
    except BaseException:  # cancelled (as asked), failed, or still running
        if not ref.future().done():
            ray.cancel(ref, force=True)


class RayPlacer:
    """Places runs' commands on a Ray cluster's nodes (``Engine(placer=RayPlacer(…))``).

    ``cluster``: the cluster to connect to on first use (``None``: this process is
    connected already, as a Ray worker is). Each run gets a ``RayNodeSandbox`` with its
    blueprint's placement, the world quota of ``sandbox.world_mb`` and ``limits``.
    """

    def __init__(self, cluster: RayAddress | None = None, **limits: Any) -> None:
        self._cluster = cluster
        self._limits = limits

    def place(self, run_id: str | None, blueprint: Blueprint) -> Sandbox:
        placement = blueprint.placement
        if placement is None:
            raise ConfigError("this blueprint places nothing: its commands run where it is driven")
        if self._cluster is not None:
            connect_ray(self._cluster)
        world_mb = blueprint.sandbox.world_mb
        box = RayNodeSandbox(
            placement,
            max_world_bytes=None if world_mb is None else world_mb << 20,
            **self._limits,
        )
        box.nodes()  # refused now when no node can take it
        return box
