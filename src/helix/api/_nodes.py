"""``LocalApi``'s nodes: its executor's, or (embedded) one node, ``local``, this machine.

Embedded, runs are driven by the processes that started them (``helix run``, a
detached ``helix resume``, an SDK client): the ``local`` node's runs are the unfinished
ones whose lease a process sharing this store holds now. There is nowhere to move
them, so draining it is refused, as ``LocalExecutor`` refuses.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from helix._util import machine_resources
from helix.errors import NodeNotFoundError, NodeStateError, RunNotFoundError
from helix.kernel.events import RunStatus
from helix.kernel.log import EventStore, RunRecord

from ._node_models import Drained, Node, NodeList

if TYPE_CHECKING:
    from helix.runtime import Executor

_LIVE: tuple[RunStatus, ...] = ("queued", "running", "waiting")
_PAGE = 500


class NodeDoor:
    """``HelixApi.nodes`` and ``drain_node`` for ``LocalApi`` (its store, executor, workspaces)."""

    store: EventStore
    executor: Executor | None
    visible: frozenset[str] | None

    async def nodes(self) -> NodeList:
        """Where runs are driven: the executor's nodes, or this machine (``HelixApi``).

        A node's runs are narrowed to the caller's workspaces (``visible``).
        """
        if self.executor is None:
            return NodeList(executor="local", nodes=[await _embedded(self.store, self.visible)])
        infos = await self.executor.nodes()
        every = [r for info in infos for r in info.runs]
        visible = await _visible(self.store, every, self.visible)
        return NodeList(executor=self.executor.kind, nodes=[Node.of(i, visible) for i in infos])

    async def drain_node(self, node_id: str) -> Drained:
        """Move the node's runs elsewhere at their next turn boundary (``HelixApi``).

        Embedded, ``local`` has nowhere to send its runs.
        """
        if self.executor is None:
            if node_id != "local":
                raise NodeNotFoundError(node_id)
            raise NodeStateError(
                "runs here are driven by the processes that started them: there is no other"
                " node to move them to (a server with the processes or ray executor has)"
            )
        moving = await self.executor.drain(node_id)
        visible = await _visible(self.store, moving, self.visible)
        return Drained(
            node=node_id, runs=[r for r in moving if r in visible], run_count=len(moving)
        )


async def _visible(
    store: EventStore, run_ids: Iterable[str], workspaces: Collection[str] | None
) -> set[str]:
    """The ids among ``run_ids`` of runs in ``workspaces`` (all of them for ``None``)."""
    ids = set(run_ids)
    if workspaces is None:
        return ids
    seen: set[str] = set()
    for run_id in ids:
        try:
            record = await store.get_run(run_id)
        except RunNotFoundError:
            continue
        if record.workspace in workspaces:
            seen.add(run_id)
    return seen


async def _embedded(store: EventStore, workspaces: Collection[str] | None) -> Node:
    """This machine as one node, driving the live runs some process here holds."""
    now = time.time()  # leases are stamped with the drivers' wall clocks
    driven: list[RunRecord] = []
    for status in _LIVE:
        cursor = None
        while True:
            page = await store.list_runs(status=status, limit=_PAGE, cursor=cursor)
            for record in page.runs:
                lease = await store.get_lease(record.id)
                if lease is not None and lease.held(now):
                    driven.append(record)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    return Node(
        id="local",
        executor="local",
        address=socket.gethostname(),
        state="alive",
        resources=machine_resources(),
        labels={},
        runs=[r.id for r in driven if workspaces is None or r.workspace in workspaces],
        run_count=len(driven),
    )
