"""The ``processes`` executor: runs spread over N worker processes of this machine.

Each worker (``_worker.py``) is a process of its own, forked from a fork server (a clean
process started for the purpose, never this one):
its own event loop, its own engine (built by the ``EngineOpener`` it is sent, so its own
store connection), driving the runs it is sent, each a child of its supervisor. So
every core works, where one process runs every turn's harness work on one.

- **Where a run goes**: to the live, undrained worker driving fewest runs.
- **A worker that dies** (``kill -9``, a crash) is started again, at most
  ``max_restarts`` times in ``restart_period_s`` (then it stays ``dead``), and its runs
  are submitted again at once: the new driver finds the lease's holder gone (a process
  of this host that ended) and takes the run over without waiting for the lease to
  expire, logging ``lease.taken_over``; a model call cut off is asked again, a tool
  call cut off is ``tool.interrupted``, as on any resume.
- **Draining a worker**: its runs stop at their next turn boundary (``Handoff``) and
  are submitted to the others; it takes no new runs.
- **Replies as they stream**: with a ``ReplyHub``, the worker driving a run a view
  watches is told so (``watch``/``unwatch``); its model calls then stream, and each
  piece comes back over the pipe to the hub (pieces are not events: a worker that dies
  loses the pieces, never the reply).

Only run ids travel between processes; every state is rebuilt from the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing
import os
import socket
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from helix.errors import ConfigError, NodeNotFoundError, NodeStateError
from helix.runtime import (
    SYSTEM_CLOCK,
    Clock,
    EngineOpener,
    ExecutorKind,
    NodeInfo,
    NodeState,
    ReplyHub,
    piece_of,
)

from ._worker import worker_main

_log = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0
"""How long a worker may take to open its engine when the executor starts."""
STOP_TIMEOUT_S = 10.0
"""How long a worker may take to stop its drives on close before it is killed."""


@dataclass(eq=False)
class _Worker:
    id: str
    process: BaseProcess
    conn: Connection
    state: NodeState = "alive"
    runs: set[str] = field(default_factory=set[str])
    pid: int | None = None
    ready: asyncio.Future[str | None] | None = None
    """Set to ``None`` when the worker is ready, to an error message if it failed."""
    restarts: deque[float] = field(default_factory=deque[float])


class ProcessExecutor:
    """Drives runs in worker processes of this machine (see the module docstring).

    Build it with ``open_executor("processes", …)`` (or ``start()`` and ``close()``).
    """

    def __init__(
        self,
        opener: EngineOpener,
        workers: int,
        *,
        max_restarts: int = 5,
        restart_period_s: float = 60.0,
        clock: Clock = SYSTEM_CLOCK,
        replies: ReplyHub | None = None,
    ) -> None:
        if workers < 1:
            raise ConfigError(f"the processes executor needs at least 1 worker, not {workers}")
        self.opener = opener
        self.size = workers
        self.max_restarts = max_restarts
        self.restart_period_s = restart_period_s
        self.clock = clock
        # A fork server that has imported the worker (and the opener's module) once:
        # each worker, and each restart, is a fork of it, ready in milliseconds rather
        # than the seconds a fresh interpreter takes to import the runtime; and like a
        # spawned process, it shares no threads or connections with this one.
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(_preload(opener))
        self._workers: dict[str, _Worker] = {}
        self._where: dict[str, str] = {}
        """Which worker drives each run."""
        self._pending: list[str] = []
        """Runs waiting for a worker (all of them were dead or draining)."""
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle = asyncio.Event()
        self.replies = replies
        """Where the pieces of watched runs' replies go (``None``: runs do not stream)."""
        if replies is not None:
            replies.listen(self._watched)

    @property
    def kind(self) -> ExecutorKind:
        return "processes"

    async def start(self) -> None:
        """Start the workers and wait until each has opened its engine.

        ``ConfigError`` (the workers stopped) if one could not: its error says why.
        """
        self._loop = asyncio.get_running_loop()
        for n in range(1, self.size + 1):
            self._spawn(f"worker-{n}")
        failures = []
        for worker in list(self._workers.values()):
            assert worker.ready is not None
            try:
                failed = await asyncio.wait_for(asyncio.shield(worker.ready), START_TIMEOUT_S)
            except TimeoutError:
                failed = f"it did not open its engine within {START_TIMEOUT_S:.0f} s"
            if failed is not None:
                failures.append(f"{worker.id}: {failed}")
        if failures:
            await self.close()
            raise ConfigError("the processes executor could not start: " + "; ".join(failures))

    def _spawn(self, worker_id: str) -> _Worker:
        assert self._loop is not None
        parent_end, child_end = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main,
            args=(worker_id, self.opener, child_end),
            name=f"helix-{worker_id}",
            daemon=True,
        )
        try:
            process.start()
        except Exception as error:  # the opener does not pickle
            parent_end.close()
            child_end.close()
            raise ConfigError(f"cannot start {worker_id}: {error}") from error
        child_end.close()
        old = self._workers.get(worker_id)
        worker = _Worker(worker_id, process, parent_end, ready=self._loop.create_future())
        if old is not None:
            worker.restarts = old.restarts
            worker.state = "draining" if old.state == "draining" else "alive"
        self._workers[worker_id] = worker
        self._loop.add_reader(parent_end.fileno(), self._readable, worker)
        self._loop.add_reader(process.sentinel, self._ended, worker)
        return worker

    # -- messages ----------------------------------------------------------------------

    def _readable(self, worker: _Worker) -> None:
        try:
            while worker.conn.poll():
                self._handle(worker, worker.conn.recv())
        except (EOFError, OSError):  # it is ending: its sentinel says when
            assert self._loop is not None
            with contextlib.suppress(OSError, ValueError):  # closed already
                self._loop.remove_reader(worker.conn.fileno())

    def _handle(self, worker: _Worker, message: tuple[str, ...]) -> None:
        match message:
            case ("ready", pid):
                worker.pid = int(pid)
                _settle(worker, None)
                self._flush_pending()
            case ("failed", error):
                _log.error("%s could not open its engine: %s", worker.id, error)
                _settle(worker, error)
            case ("piece", text):
                if self.replies is not None:
                    try:
                        self.replies.give(piece_of(json.loads(text)))
                    except ValueError as error:
                        _log.warning("a bad piece from %s: %s", worker.id, error)
            case ("stopped", run_id, outcome):
                if self._where.get(run_id) != worker.id:
                    return  # an answer from before the run was given to another
                del self._where[run_id]
                worker.runs.discard(run_id)
                if outcome == "moved" and not self._closed:
                    self.submit(run_id)
                self._check_idle()
            case _:
                _log.warning("unknown message from %s: %r", worker.id, message[:1])

    def _ended(self, worker: _Worker) -> None:
        """The worker's process ended: start it again (within limits), resubmit its runs."""
        assert self._loop is not None
        self._loop.remove_reader(worker.process.sentinel)
        with contextlib.suppress(OSError, ValueError):  # already closed
            self._loop.remove_reader(worker.conn.fileno())
        # Reap it, so its pid reads as gone to the next driver. The sentinel closes as
        # the process exits, a moment before the kernel makes it a zombie: wait for that.
        worker.process.join(STOP_TIMEOUT_S)
        worker.conn.close()
        code = worker.process.exitcode
        _settle(worker, f"it exited with code {code} before it was ready")
        orphans = sorted(worker.runs)
        for run_id in orphans:
            self._where.pop(run_id, None)
        worker.runs.clear()
        if self._closed or self._workers.get(worker.id) is not worker:
            return
        now = self.clock.monotonic()
        while worker.restarts and now - worker.restarts[0] > self.restart_period_s:
            worker.restarts.popleft()
        if worker.pid is None or len(worker.restarts) >= self.max_restarts:
            _log.error("%s ended (exit code %s); not restarted", worker.id, code)
            worker.state = "dead"
        else:
            _log.warning("%s ended (exit code %s); starting it again", worker.id, code)
            worker.restarts.append(now)
            try:
                self._spawn(worker.id)
            except ConfigError as error:
                _log.error("%s", error)
                worker.state = "dead"
        for run_id in orphans:
            self.submit(run_id)
        self._check_idle()

    # -- the Executor interface ---------------------------------------------------------

    def submit(self, run_id: str) -> None:
        if self._closed or run_id in self._where:
            return
        open_ones = [w for w in self._workers.values() if w.state == "alive"]
        if not open_ones:
            if run_id not in self._pending:
                self._pending.append(run_id)
            return
        # The least loaded, and one that is ready before one still starting.
        worker = min(open_ones, key=lambda w: (w.pid is None, len(w.runs)))
        try:
            worker.conn.send(("drive", run_id))
        except OSError:  # it just died: its sentinel will resubmit what it had
            self._pending.append(run_id)
            return
        worker.runs.add(run_id)
        self._where[run_id] = worker.id
        if self.replies is not None and self.replies.watching(run_id):
            self._watched(run_id, True)

    def _watched(self, run_id: str, watched: bool) -> None:
        """A view began (or stopped) watching ``run_id``: tell the worker driving it."""
        worker = self._workers.get(self._where.get(run_id, ""))
        if worker is not None:
            with contextlib.suppress(OSError):  # it just died: its runs go elsewhere
                worker.conn.send(("watch" if watched else "unwatch", run_id))

    async def wait_idle(self) -> None:
        """Wait until no worker drives a run and none waits for one (all ended or paused)."""
        self._check_idle()
        await self._idle.wait()

    def _check_idle(self) -> None:
        if self._where or self._pending:
            self._idle.clear()
        else:
            self._idle.set()

    async def nodes(self) -> list[NodeInfo]:
        host = socket.gethostname()
        return [
            NodeInfo(
                id=w.id,
                executor="processes",
                address=f"{host} pid {w.pid}" if w.pid is not None else host,
                state=w.state,
                resources={"CPU": 1.0},
                labels={"pid": str(w.pid or "")},
                runs=tuple(sorted(w.runs)),
            )
            for w in self._workers.values()
        ]

    async def drain(self, node_id: str) -> list[str]:
        worker = self._workers.get(node_id)
        if worker is None:
            raise NodeNotFoundError(node_id)
        if worker.state == "dead":
            raise NodeStateError(f"{node_id} is dead: it has no runs to move")
        others = [w for w in self._workers.values() if w is not worker and w.state == "alive"]
        if not others:
            raise NodeStateError(f"no other worker could take the runs of {node_id}")
        worker.state = "draining"
        runs = sorted(worker.runs)
        for run_id in runs:
            try:
                worker.conn.send(("move", run_id))
            except OSError:  # it died meanwhile: its runs are resubmitted anyway
                break
        return runs

    async def close(self) -> None:
        """Stop every worker: each cancels its drives (leases released) and exits."""
        self._closed = True
        for worker in self._workers.values():
            if worker.process.exitcode is None:
                with contextlib.suppress(OSError):  # it is dying anyway
                    worker.conn.send(("stop",))
        for worker in self._workers.values():
            await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
            if worker.process.exitcode is None:
                _log.warning("%s did not stop in %.0f s; killing it", worker.id, STOP_TIMEOUT_S)
                worker.process.kill()
                await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
            if not worker.conn.closed:
                self._ended(worker)
        self._where.clear()
        self._pending.clear()

    def _flush_pending(self) -> None:
        pending, self._pending = self._pending, []
        for run_id in pending:
            self.submit(run_id)


def _preload(opener: EngineOpener) -> list[str]:
    """Modules the fork server imports once: the worker's, and the opener's own."""
    modules = ["helix.distributed._worker"]
    function = getattr(opener, "func", opener)  # functools.partial's function
    module = getattr(function, "__module__", None)
    if isinstance(module, str) and module != "__main__":
        modules.append(module)
    return modules


def _settle(worker: _Worker, failure: str | None) -> None:
    if worker.ready is not None and not worker.ready.done():
        worker.ready.set_result(failure)


def default_workers() -> int:
    """The CPU count of this machine (at least 1)."""
    return os.cpu_count() or 1
