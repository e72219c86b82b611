"""One worker process of the ``processes`` executor: an event loop, an engine, its runs.

The parent (``ProcessExecutor``) forks it from its fork server and talks to it over
one pipe, in small tuples of strings:

parent → worker
    ``("drive", RUN)``: drive the run (under this process's supervisor) until it ends,
    pauses, or is asked to move; ``("move", RUN)``: stop the run at its next turn
    boundary (``Handoff``) so it can be driven elsewhere; ``("watch", RUN)`` and
    ``("unwatch", RUN)``: a view watches the run (its model calls stream) or no longer
    does; ``("stop",)``: stop driving (every drive is cancelled, its lease released)
    and exit.
worker → parent
    ``("ready", PID)`` once its engine is open; ``("failed", MESSAGE)`` if the engine
    could not be opened; ``("piece", JSON)``: a piece of a watched run's reply
    (``helix.runtime.piece_message``); ``("stopped", RUN, OUTCOME)`` when a drive is over:
    ``ended`` (finished or paused: the log says which), ``moved`` (stopped at a turn
    boundary when asked: submit it elsewhere), ``refused`` (another driver holds it, or
    this process cannot drive it).

A worker whose pipe closes (its parent died) stops the same way as on ``stop``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from functools import partial
from multiprocessing.connection import Connection

from helix.errors import ModelNameError, RunStateError
from helix.runtime import (
    ChildSpec,
    Engine,
    EngineOpener,
    Handoff,
    ModelDelta,
    Supervisor,
    moved,
    open_supervisor,
    piece_message,
)

_log = logging.getLogger(__name__)

Outcome = str
"""``ended``, ``moved`` or ``refused`` (see the module's docstring)."""


def worker_main(worker_id: str, opener: EngineOpener, conn: Connection) -> None:
    """The worker process's entry point (a module-level function: the fork server's)."""
    # Ctrl-C at a terminal reaches the whole process group: the parent stops its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=logging.WARNING, format=f"helix {worker_id}: %(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(_serve(worker_id, opener, conn))
    finally:
        conn.close()


async def _serve(worker_id: str, opener: EngineOpener, conn: Connection) -> None:
    try:
        context = opener()
        engine = await context.__aenter__()
    except Exception as error:  # a bad store address, an unreachable database
        _send(conn, ("failed", f"{type(error).__name__}: {error}"))
        return
    try:
        await _Worker(worker_id, engine, conn).serve()
    finally:
        await context.__aexit__(None, None, None)


def _send(conn: Connection, message: tuple[str, ...]) -> None:
    with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
        conn.send(message)


class _Worker:
    def __init__(self, worker_id: str, engine: Engine, conn: Connection) -> None:
        self.id = worker_id
        self.engine = engine
        self.conn = conn
        self.handoff = Handoff()
        self.stopping = asyncio.Event()
        self.supervisor: Supervisor | None = None
        self.watched: set[str] = set()
        """The runs a view of the parent's watches (their replies stream to it)."""
        engine.deltas = _Pieces(self)

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        async with open_supervisor() as supervisor:
            self.supervisor = supervisor
            loop.add_reader(self.conn.fileno(), self._readable)
            _send(self.conn, ("ready", str(os.getpid())))
            try:
                await self.stopping.wait()
            finally:
                loop.remove_reader(self.conn.fileno())
                for child in supervisor.children:
                    supervisor.cancel_child(child)

    def _readable(self) -> None:
        try:
            while self.conn.poll():
                self._handle(self.conn.recv())
        except (EOFError, OSError):  # the parent died or closed the pipe
            self.stopping.set()

    def _handle(self, message: tuple[str, ...]) -> None:
        assert self.supervisor is not None
        match message:
            case ("drive", run_id):
                child = f"run:{run_id}"
                if child not in self.supervisor.children:
                    spec = ChildSpec(
                        id=child, start=partial(self._drive, run_id), restart="temporary"
                    )
                    self.supervisor.start_child(spec)
            case ("move", run_id):
                self.handoff.ask(run_id)
            case ("watch", run_id):
                self.watched.add(run_id)
            case ("unwatch", run_id):
                self.watched.discard(run_id)
            case ("stop",):
                self.stopping.set()
            case _:
                _log.warning("unknown message from the parent: %r", message[:1])

    async def _drive(self, run_id: str) -> None:
        outcome: Outcome = "ended"
        try:
            state = await self.engine.drive(run_id, until=self.handoff.until(run_id))
            if self.handoff.asked(run_id) and moved(state):
                outcome = "moved"
        except RunStateError:  # another driver holds it (or took it over meanwhile)
            outcome = "refused"
        except ModelNameError as error:  # its provider was registered in another process
            _log.warning("run %s is not driven here: %s", run_id, error)
            outcome = "refused"
        except Exception:  # the engine's own supervisor gave up: the log says why
            _log.exception("driving run %s failed", run_id)
            outcome = "refused"
        finally:
            self.handoff.done(run_id)
            self.watched.discard(run_id)  # told again if it is driven here again
        _send(self.conn, ("stopped", run_id, outcome))


class _Pieces:
    """The worker's delta sink: pieces of watched runs' replies, sent to the parent."""

    def __init__(self, worker: _Worker) -> None:
        self.worker = worker

    def watching(self, run_id: str) -> bool:
        return run_id in self.worker.watched

    async def __call__(self, delta: ModelDelta) -> None:
        _send(self.worker.conn, ("piece", json.dumps(piece_message(delta))))
