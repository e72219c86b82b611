"""The wire models of where runs are driven: ``GET /nodes``, ``POST /nodes/{id}/drain``.

A node is one place an executor drives runs (this process, a worker process, a Ray
node); the models carry what ``helix.runtime.NodeInfo`` says, with the runs narrowed to
the ones the caller may see.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Literal

from ._models import _Out

if TYPE_CHECKING:
    from helix.runtime import NodeInfo

NodeStatus = Literal["alive", "draining", "dead"]


class Node(_Out):
    """One place runs are driven, as ``helix nodes`` lists it."""

    id: str
    """Stable for the node's life: ``local``, ``worker-2``, a Ray node id."""
    executor: Literal["local", "processes", "ray"]
    address: str
    """A host name or address."""
    state: NodeStatus
    """``draining``: its runs move at their next turn boundary and it takes no new ones;
    ``dead``: gone (its runs are taken over by other drivers once their leases lapse)."""
    resources: dict[str, float]
    """What it offers: ``CPU`` (cores), ``memory`` (bytes), ``GPU``, custom resources."""
    labels: dict[str, str]
    """Its labels (a blueprint's placement selects nodes by them)."""
    runs: list[str]
    """Ids of the runs it drives now that the caller may see."""
    run_count: int
    """How many runs it drives now, of every workspace (its load)."""

    @classmethod
    def of(cls, info: NodeInfo, visible: Collection[str] | None = None) -> Node:
        """From the executor's ``NodeInfo``; ``visible``: the run ids the caller may see."""
        runs = [r for r in info.runs if visible is None or r in visible]
        return cls(
            id=info.id,
            executor=info.executor,
            address=info.address,
            state=info.state,
            resources=_floats(info.resources),
            labels=dict(info.labels),
            runs=runs,
            run_count=len(info.runs),
        )


class NodeList(_Out):
    """Every node of the executor, in its order."""

    executor: Literal["local", "processes", "ray"]
    nodes: list[Node]


class Drained(_Out):
    """``POST /nodes/{id}/drain``'s answer: the node, now draining, and its runs that move."""

    node: str
    runs: list[str]
    """The runs that will move at their next turn boundary (those the caller may see)."""
    run_count: int
    """How many runs will move, of every workspace."""


def _floats(resources: Mapping[str, float]) -> dict[str, float]:
    return {str(k): float(v) for k, v in resources.items()}
