"""One run's driver on a Ray cluster: an actor that holds only the run's id.

``RayExecutor`` makes one ``RunActor`` per run it drives. The actor holds the run id
and the ``EngineOpener`` (how to build an engine over the shared store); everything
else is rebuilt from the log when it drives: ``Engine.drive`` takes the run's lease,
replays the log and goes on from there. Restarted by Ray after its process or node
was lost, the actor drives again: the new drive takes the lease over (at once if the
old holder was a process of this host that ended, else once its lease expires) and
logs ``lease.taken_over``; the lost driver's late appends are refused by epoch.

Ray gives each actor a worker process of its own, so there is one engine per actor
process: opened when a drive starts, closed when it stops. The module imports Ray
only inside the methods that need it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass
from typing import Literal

from helix._util import holder_gone, holder_process
from helix.errors import LeaseHeldError, LeaseLostError, ModelNameError, RunStateError
from helix.runtime import EngineOpener, Handoff, HolderGone, Until, moved

_log = logging.getLogger(__name__)

Outcome = Literal["completed", "failed", "cancelled", "paused", "moved", "held", "refused"]
"""How a drive stopped: the run's end or pause; ``moved`` (handed off at a turn boundary,
for another node); ``held`` (another live driver has the run: left to it); ``refused``
(this node cannot drive it: its model cannot be opened here)."""

HELD_WAIT_POLL_S = 0.2
"""How often a restarted actor tries again for a lease its lost incarnation held."""


@dataclass(frozen=True, slots=True)
class ActorLocation:
    """Where an actor lives: its Ray node and process."""

    node_id: str
    pid: int
    restarted: bool
    """Whether this is a restart (Ray rebuilt the actor after its process or node was lost)."""
    host: str = ""
    """The host name its lease holders carry (``HOST/PID/NONCE``)."""


class RunActor:
    """Drives one run (``drive``), hands it off at its next turn boundary on request."""

    def __init__(self, run_id: str, opener: EngineOpener, held_wait_s: float) -> None:
        self.run_id = run_id
        self.opener = opener
        self.held_wait_s = held_wait_s
        """How long a restarted actor waits for the lease of its lost incarnation."""
        self.handoff = Handoff()
        self._driving: asyncio.Future[Outcome] | None = None

    async def where(self) -> ActorLocation:
        """The node and process this actor lives in."""
        import ray

        context = ray.get_runtime_context()
        restarted = context.was_current_actor_reconstructed
        return ActorLocation(context.get_node_id(), os.getpid(), restarted, socket.gethostname())

    async def hand_off(self) -> None:
        """Stop at the run's next turn boundary (the executor re-creates it elsewhere)."""
        self.handoff.ask(self.run_id)

    async def drive(self, lost: ActorLocation | None = None) -> Outcome:
        """Drive the run until it ends, pauses or is handed off; say how it stopped.

        ``lost``: where this actor lived before Ray restarted it. A lease still held by
        a process of that placement is taken over at once: Ray declared that process
        lost, and the lease's epoch fences off anything it would still append.

        A second call while a drive is under way (the caller lost sight of the first)
        waits for the same drive rather than starting another.
        """
        if self._driving is not None:
            return await asyncio.shield(self._driving)
        self._driving = asyncio.get_running_loop().create_future()
        try:
            outcome = await self._drive(lost)
        except BaseException as error:
            self._driving.set_exception(error)
            self._driving.exception()  # retrieved: a later caller sees it, no warning
            self._driving = None
            raise
        self._driving.set_result(outcome)
        self._driving = None
        return outcome

    def _until(self) -> Until:
        """Stop at a turn boundary once handed off, or when the run pauses (frees the actor)."""
        return self.handoff.until(self.run_id, lambda state: state.status == "paused")

    async def _drive(self, lost: ActorLocation | None) -> Outcome:
        import ray

        restarted = ray.get_runtime_context().was_current_actor_reconstructed
        gone = _ended(lost) if restarted and lost is not None else None
        async with self.opener() as engine:
            waited = 0.0
            while True:
                try:
                    state = await engine.drive(self.run_id, until=self._until(), gone=gone)
                    break
                except LeaseLostError:
                    return "held"  # another driver took the run over: it is theirs
                except LeaseHeldError:
                    # A restart's lost incarnation may hold the lease still (taken over
                    # at once through ``gone``); another holder's lease must expire.
                    if not restarted or waited >= self.held_wait_s:
                        return "held"
                    await engine.clock.sleep(HELD_WAIT_POLL_S)
                    waited += HELD_WAIT_POLL_S
                except ModelNameError as error:
                    _log.warning("run %s is not driven on this node: %s", self.run_id, error)
                    return "refused"
                except RunStateError:
                    return "held"
        self.handoff.done(self.run_id)
        if moved(state):
            return "moved"
        status = state.status
        assert status in ("completed", "failed", "cancelled", "paused"), status
        return status


def _ended(lost: ActorLocation) -> HolderGone:
    """Holders known to have ended: the lost incarnation's process, and any of this host.

    Ray declared that process lost; the lease's epoch fences off anything it would
    still append.
    """

    def gone(holder: str) -> bool:
        return holder_process(holder) == (lost.host, lost.pid) or holder_gone(holder)

    return gone
