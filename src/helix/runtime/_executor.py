"""Where runs are driven: one interface, an executor, for one process or many machines.

The server (or any embedding) hands a run to its executor with ``submit``; the
executor decides which process or node drives it. Whichever it is, the driver takes
the run's lease in the log (``Engine.drive``), so a run has one driver wherever it
goes, and state is rebuilt from the log by id: nothing but the run id travels.

A run moves only at a turn boundary (``drain``: its driver stops there and the run is
submitted again elsewhere) or after its driver is lost (the lease expires, or its
holder is a process of this host that ended, and another driver takes it over).

``LocalExecutor`` is today's: the runs are driven in this process, under the caller's
supervisor. The ``processes`` and ``ray`` executors live in ``helix.distributed``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, Protocol, runtime_checkable

from helix._util import machine_resources
from helix.errors import NodeNotFoundError, NodeStateError
from helix.kernel.session import SessionState

from ._engine import Engine
from ._loop import TERMINAL
from ._supervisor import ChildSpec, Supervisor
from ._until import Until

ExecutorKind = Literal["local", "processes", "ray"]
"""``local``: in this process; ``processes``: worker processes of this machine;
``ray``: actors on a Ray cluster."""
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("local", "processes", "ray")

NodeState = Literal["alive", "draining", "dead"]

EngineOpener = Callable[[], AbstractAsyncContextManager[Engine]]
"""How another process builds the engine that drives runs there: opens its store (and
whatever else the engine needs), yields the engine, closes them after. It must pickle
(a module-level function, or ``functools.partial`` of one over picklable settings):
the ``processes`` and ``ray`` executors send it to their workers."""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One place runs are driven: this process, a worker process, a Ray node."""

    id: str
    """Stable for the node's life: ``local``, ``worker-2``, a Ray node id."""
    executor: ExecutorKind
    address: str
    """Where it is: a host name or address."""
    state: NodeState
    """``draining``: its runs move at their next turn boundary, it takes no new ones."""
    resources: Mapping[str, float] = field(default_factory=dict)
    """What it offers (``CPU``, ``memory`` in bytes, ``GPU``, custom resources)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Its labels (a blueprint's placement selects nodes by them)."""
    runs: tuple[str, ...] = ()
    """Ids of the runs it drives now."""


@runtime_checkable
class Executor(Protocol):
    """Drives the runs it is given somewhere: this process, worker processes, a cluster."""

    @property
    def kind(self) -> ExecutorKind:
        """Which executor this is."""
        ...

    def submit(self, run_id: str) -> None:
        """Have the run driven until it ends, pauses or its node is drained.

        Nothing if this executor drives it already. A run another driver holds (another
        server) is left to it: the lease says who drives.
        """
        ...

    async def nodes(self) -> list[NodeInfo]:
        """The places it drives runs, with the runs each drives now."""
        ...

    async def drain(self, node_id: str) -> list[str]:
        """Stop giving the node runs; its runs move at their next turn boundary.

        Returns the ids of the runs that will move. ``NodeNotFoundError`` for an
        unknown node; ``NodeStateError`` when no other node could take them.
        """
        ...

    async def close(self) -> None:
        """Stop driving (runs stay as their logs say; the next start resumes them)."""
        ...


class Handoff:
    """Runs asked to stop at their next turn boundary, so they can move elsewhere.

    ``until(run_id)`` is the ``Engine.drive(until=…)`` predicate that holds once the
    run was asked to move and is between turns; a drive stopped by it leaves the run
    unfinished and its lease released, for another driver to take at once.
    """

    def __init__(self) -> None:
        self._asked: set[str] = set()

    def ask(self, run_id: str) -> None:
        """Ask the run's driver to stop at the run's next turn boundary."""
        self._asked.add(run_id)

    def asked(self, run_id: str) -> bool:
        """Whether the run was asked to move (and has not been handed off yet)."""
        return run_id in self._asked

    def done(self, run_id: str) -> None:
        """Forget the request (the run stopped, or ended)."""
        self._asked.discard(run_id)

    def until(self, run_id: str, inner: Until | None = None) -> Until:
        """Stop at a turn boundary once asked (or when ``inner`` holds)."""

        def stop(state: SessionState) -> bool:
            if run_id in self._asked and state.at_turn_boundary:
                return True
            return inner is not None and inner(state)

        return stop


def moved(state: SessionState) -> bool:
    """Whether a drive stopped with the run still to go on (handed off, not ended)."""
    return state.status not in TERMINAL and state.status != "paused"


class LocalExecutor:
    """Runs driven in this process, each a child of the caller's supervisor.

    One node, ``local``: there is nowhere to move a run to, so ``drain`` refuses.
    """

    def __init__(self, engine: Engine, supervisor: Supervisor) -> None:
        self.engine = engine
        self.supervisor = supervisor

    @property
    def kind(self) -> ExecutorKind:
        return "local"

    def submit(self, run_id: str) -> None:
        child = f"run:{run_id}"
        if child in self.supervisor.children:
            return
        drive = partial(self.engine.drive_quietly, run_id)
        self.supervisor.start_child(ChildSpec(id=child, start=drive, restart="temporary"))

    async def nodes(self) -> list[NodeInfo]:
        runs = tuple(c.removeprefix("run:") for c in self.supervisor.children if c[:4] == "run:")
        return [
            NodeInfo(
                id="local",
                executor="local",
                address=socket.gethostname(),
                state="alive",
                resources=machine_resources(),
                runs=runs,
            )
        ]

    async def drain(self, node_id: str) -> list[str]:
        if node_id != "local":
            raise NodeNotFoundError(node_id)
        raise NodeStateError("the local executor has one node: there is nowhere to move its runs")

    async def close(self) -> None:
        for child in self.supervisor.children:
            if child.startswith("run:"):
                self.supervisor.cancel_child(child)
