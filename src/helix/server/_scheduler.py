"""The automation scheduler: two supervised children of ``helix serve``.

``run`` fires cron slots: on each wake it asks every active cron automation which slots
to fire (``helix.automations.slots_to_fire``: the on-time ones, and the missed ones as
its policy says), claims each in the database and, if the claim is its own, starts the
target. ``follow`` watches every run's log for run endings that event automations wait
for. Both read time only from the server's ``Clock`` (``ServerConfig.clock``), and
several servers on one database fire each slot once: the claim's primary key decides.
A firing runs as the automation's owner, through ``LocalApi`` (``start_target``), and
the run's log says why it started (``automation.fired``, right after ``run.created``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import TYPE_CHECKING

from helix.accounts import can_act
from helix.api import start_target
from helix.automations import (
    Automation,
    CronTrigger,
    EventTrigger,
    slots_to_fire,
)
from helix.errors import ConflictError, HelixError, SubscriptionOverflowError
from helix.kernel.events import AutomationFired, Event, format_iso

from ._api import local_api
from ._auth import Caller

if TYPE_CHECKING:
    from helix.runtime import Clock

    from ._state import ServerState

log = logging.getLogger("helix.server.automations")

POLL_S = 10.0
"""The longest the scheduler sleeps: how soon it sees an automation another server added."""
_ENDINGS = frozenset({"run.failed", "run.completed", "run.cancelled"})


def _iso(seconds: float) -> str:
    from datetime import UTC, datetime

    return format_iso(datetime.fromtimestamp(seconds, UTC))


class Scheduler:
    """Fires a server's automations (cron slots and run events); see the module's note."""

    def __init__(self, state: ServerState, clock: Clock) -> None:
        self.state = state
        self.clock = clock
        self.started_at: float | None = None
        """When this scheduler first ran: cron slots before it are *missed* ones."""
        self.checked_until = -math.inf
        """The time of the last wake that went through every automation (tests wait on it)."""
        self.fired = 0
        """Firings this server claimed (cron, webhook and event)."""
        self.endings_seen = 0
        """Run endings ``follow`` went through (tests wait on it)."""

    # -- firing --------------------------------------------------------------------------

    async def fire(
        self,
        automation: Automation,
        slot: str,
        fired: AutomationFired,
        *,
        slot_at: float | None = None,
    ) -> str | None:
        """Claim ``slot`` and start the target: the run's id, ``None`` if another had it.

        A target that cannot start is recorded on the claim (``last_firing.error``) and
        raised.
        """
        store = self.state.automations
        if not await store.claim(
            automation.id, slot, fired_at=_iso(self.clock.now()), slot_at=slot_at
        ):
            return None
        self.fired += 1
        try:
            api = local_api(self.state, await self._owner(automation))
            run_id = await start_target(api, automation, fired)
        except HelixError as error:
            await store.settle(automation.id, slot, run_id=None, error=str(error))
            log.warning("automation %s (%s) could not fire: %s", automation.id, slot, error)
            raise
        await store.settle(automation.id, slot, run_id=run_id, error=None)
        log.info("automation %s fired %s: run %s", automation.id, slot, run_id)
        return run_id

    async def _owner(self, automation: Automation) -> Caller:
        """The owner, as a caller, if they may still start runs in the workspace."""
        name = automation.owner.removeprefix("user:")
        roles = await self.state.accounts.store.roles(name)
        if not can_act(roles.get(automation.workspace)):
            raise ConflictError(
                f"the owner {name!r} can no longer start runs in workspace {automation.workspace!r}"
            )
        return Caller(name, roles)

    # -- cron ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Fire cron slots as they come, until cancelled (a supervised child)."""
        if self.started_at is None:
            self.started_at = self.clock.now()
        while True:
            now = self.clock.now()
            upcoming = await self.tick(now)
            self.checked_until = now
            await self.clock.sleep(min(POLL_S, max(0.0, upcoming - self.clock.now())))

    async def tick(self, now: float) -> float:
        """Fire what is due at ``now``; when the next known slot comes."""
        assert self.started_at is not None
        upcoming = math.inf
        for automation in await self.state.automations.list():
            trigger = automation.trigger
            if automation.paused or not isinstance(trigger, CronTrigger):
                continue
            schedule = trigger.schedule()
            last = await self.state.automations.last_slot(automation.id)
            floor = max(automation.active_since, -math.inf if last is None else last)
            due = slots_to_fire(
                schedule, automation.missed, floor=floor, started_at=self.started_at, now=now
            )
            for slot in due:
                fired = AutomationFired(
                    automation_id=automation.id, name=automation.name, trigger="cron",
                    slot=f"cron:{_iso(slot)}", missed=slot < self.started_at,
                )  # fmt: skip
                with contextlib.suppress(HelixError):  # recorded on the claim, logged
                    await self.fire(automation, fired.slot, fired, slot_at=slot)
            upcoming = min(upcoming, schedule.next_after(now))
        return upcoming

    # -- run events ----------------------------------------------------------------------

    async def follow(self) -> None:
        """Fire event automations as runs end, until cancelled (a supervised child)."""
        while True:
            try:
                async with self.state.store.subscribe_all(max_queue=10_000) as events:
                    async for event in events:
                        if event.type in _ENDINGS:
                            await self.ended(event)
                            self.endings_seen += 1
            except SubscriptionOverflowError:
                await asyncio.sleep(0)  # a burst past the queue: those endings are not seen

    async def ended(self, event: Event) -> None:
        """Fire every event automation that ``event`` (a run's ending) matches."""
        waiting = [
            a
            for a in await self.state.automations.list()
            if isinstance(a.trigger, EventTrigger) and not a.paused
            and a.trigger.event == event.type
        ]  # fmt: skip
        if not waiting:
            return
        record = await self.state.store.get_run(event.run_id)
        if await self._automated(event.run_id):
            return  # runs an automation started trigger none: no chains, no loops
        for automation in waiting:
            trigger = automation.trigger
            assert isinstance(trigger, EventTrigger)
            if automation.workspace != record.workspace:
                continue
            if trigger.blueprint is not None and record.blueprint != trigger.blueprint:
                continue
            fired = AutomationFired(
                automation_id=automation.id, name=automation.name, trigger="event",
                slot=f"event:{event.run_id}:{event.type}", source_run=event.run_id,
            )  # fmt: skip
            with contextlib.suppress(HelixError):  # recorded on the claim, logged
                await self.fire(automation, fired.slot, fired)

    async def _automated(self, run_id: str) -> bool:
        head = await self.state.store.read(run_id, to_seq=2)
        return any(e.type == AutomationFired.TYPE for e in head)
