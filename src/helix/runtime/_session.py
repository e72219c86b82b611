"""A run's live session: the folded state, kept current, and the one way to append.

The loop is the run's main writer, but people write to the same log from other
processes (approvals, steering, pause, cancel). Appends therefore name the seq they
expect; on a conflict the session reads what others wrote, folds it, and tries again —
unless what it read makes the append pointless (say, a person answered the approval
the deadline was about to deny). Every event is folded exactly once, in seq order,
whichever path brings it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from helix.errors import SeqConflictError
from helix.kernel.events import TERMINAL_STATUSES, Event, NewEvent
from helix.kernel.log import EventStore, Lease, Subscription
from helix.kernel.session import SessionState, apply, replay_run, save_snapshot

from ._clock import SYSTEM_CLOCK, Clock

T = TypeVar("T")

Build = Callable[[SessionState], Sequence[NewEvent] | None]
"""What to append given the run's state: events, ``None`` if pointless now, or raise."""


class LiveSession:
    """The state of one run, folded from its log and advanced by every append."""

    def __init__(
        self,
        store: EventStore,
        run_id: str,
        state: SessionState,
        on_append: Callable[[list[str]], None] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        lease: Lease | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.state = state
        self.clock = clock
        """What ``wait_until`` measures its time limit on."""
        self.lease = lease
        """The driver's lease, every append is made with (``None``: not a driver's)."""
        self._changed = asyncio.Event()
        self._waiting = 0  # tasks waiting on ``_changed``: none, no new event per append
        self._stoppers: set[Stopper] = set()
        self._on_append = on_append
        self._watching: Subscription | None = None
        self._snapshot_head = state.head
        self.on_fold: Callable[[Event], None] | None = None
        """Called with each event after it is folded (in seq order, each once)."""

    @classmethod
    async def load(
        cls,
        store: EventStore,
        run_id: str,
        on_append: Callable[[list[str]], None] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        lease: Lease | None = None,
    ) -> LiveSession:
        """Replay the run's log."""
        return cls(store, run_id, await replay_run(store, run_id), on_append, clock, lease)

    def offer(self, event: Event) -> bool:
        """Fold ``event`` if it is the next one; return False if something is missing."""
        if event.seq <= self.state.head:
            return True
        if event.seq != self.state.head + 1:
            return False
        apply(self.state, event)
        if self.on_fold is not None:
            self.on_fold(event)
        return True

    def _fold_own(self, committed: list[Event]) -> bool:
        """``offer`` each event this session just appended; False if one did not follow."""
        state, on_fold = self.state, self.on_fold
        for event in committed:
            seq = event.seq
            if seq <= state.head:
                continue
            if seq != state.head + 1:
                return False
            apply(state, event)
            if on_fold is not None:
                on_fold(event)
        return True

    async def catch_up(self) -> None:
        """Read and fold whatever others appended since our head."""
        for event in await self.store.read(self.run_id, after=self.state.head):
            self.offer(event)
        await self._notify()

    async def append(
        self,
        events: Sequence[NewEvent],
        *,
        unless: Callable[[SessionState], bool] | None = None,
    ) -> bool:
        """Append ``events`` after everything in the log; False if ``unless`` became true."""
        return await self.append_built(
            lambda state: None if unless is not None and unless(state) else events
        )

    async def append_built(self, build: Build) -> bool:
        """Append what ``build`` makes of the current state, after everything in the log.

        On a conflict (someone appended first), what they wrote is folded and ``build``
        asked again: it returns ``None`` when the append became pointless (then False),
        or raises when the state refuses it. The one optimistic append of the runtime.
        Made with the session's lease if it has one: ``LeaseLostError`` (nothing written)
        once another driver took the run over.
        """
        while True:
            events = build(self.state)
            if events is None:
                return False
            if not events:
                return True
            first = self.state.head + 1
            if self._watching is not None:  # our own events need not wake our watcher
                self._watching.skip_through(first + len(events) - 1)
            try:
                committed = await self.store.append_events(
                    self.run_id, events, expected_seq=first, lease=self.lease
                )
            except SeqConflictError:
                await self.catch_up()
                continue
            if not self._fold_own(committed):
                await self.catch_up()
            await self._keep_snapshot()
            await self._notify()
            if self._on_append is not None:
                self._on_append([e.type for e in events])
            return True

    async def _keep_snapshot(self) -> None:
        """Keep a snapshot of the state each time it passes ``store.snapshot_every`` events.

        Derived data: a store that refuses it costs the next replay some time, nothing more.
        """
        every = self.store.snapshot_every
        if every <= 0 or self.state.head // every <= self._snapshot_head // every:
            return
        self._snapshot_head = self.state.head
        await save_snapshot(self.store, self.run_id, self.state)

    async def watch(self) -> None:
        """Fold others' appends as they commit, waking whoever waits on ``changed``."""
        async with self.store.subscribe(self.run_id, after=self.state.head) as events:
            self._watching = events
            try:
                async for event in events:
                    if not self.offer(event):
                        await self.catch_up()
                    await self._notify()
            finally:
                self._watching = None

    async def wait_until(
        self, ready: Callable[[SessionState], bool], within_s: float | None
    ) -> bool:
        """Wait until ``ready(state)``; False if ``within_s`` seconds pass first (on the clock)."""
        if within_s is None:
            while not ready(self.state):
                await self._changed_wait()
            return True
        expired = False

        async def alarm() -> None:
            nonlocal expired
            await self.clock.sleep(within_s)
            expired = True
            self._wake()

        async with asyncio.TaskGroup() as group:
            timer = group.create_task(alarm())
            try:
                while not ready(self.state):
                    if expired:
                        return False
                    await self._changed_wait()
                return True
            finally:
                timer.cancel()

    async def unless_stopped(self, work: Awaitable[T]) -> tuple[bool, T | None]:
        """Await ``work``, abandoning it if the run stops (is cancelled, ends) meanwhile.

        Returns ``(stopped, result)``. Cheaper than racing a second task against the
        work: it runs in the caller's task, which the fold cancels when it sees the run
        stop; any other cancellation (the loop shutting down) goes on up.
        """
        stopper = Stopper(self)
        try:
            with stopper:
                return False, await work
        except asyncio.CancelledError:
            if not stopper.fired:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return True, None

    async def _changed_wait(self) -> None:
        self._waiting += 1
        try:
            await self._changed.wait()
        finally:
            self._waiting -= 1

    def _wake(self) -> None:
        """Wake everyone waiting for a change (each checks again what it waits for).

        With nobody waiting (a driven run's every append) there is nothing to wake.
        """
        if self._waiting:
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    async def _notify(self) -> None:
        self._wake()
        if self.state.status in TERMINAL_STATUSES:
            for stopper in list(self._stoppers):
                stopper.fire()


async def append_checked(
    store: EventStore, run_id: str, build: Build, *, lease: Lease | None = None
) -> SessionState:
    """Append to a run without its live session: folded from its log, then ``append_built``.

    Returns the run's state after the append (or after finding it pointless). A person's
    act passes no ``lease``; the driver's supervisor passes its own.
    """
    session = await LiveSession.load(store, run_id, lease=lease)
    await session.append_built(build)
    return session.state


def finished(state: SessionState) -> bool:
    """Cancelled or ended: nothing may be appended for it any more."""
    return state.status in TERMINAL_STATUSES


def halted(state: SessionState) -> bool:
    """Paused, cancelled or ended: nothing new may start."""
    return state.status in TERMINAL_STATUSES or state.status == "paused"


class Stopper:
    """See ``LiveSession.stopper``; ``fired`` tells a stop from any other cancellation."""

    def __init__(self, session: LiveSession) -> None:
        self._session = session
        self._task: asyncio.Task[object] | None = None
        self.fired = False

    def __enter__(self) -> Stopper:
        self._task = asyncio.current_task()
        self._session._stoppers.add(self)
        if self._session.state.status in TERMINAL_STATUSES:
            self.fire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._session._stoppers.discard(self)

    def fire(self) -> None:
        if not self.fired and self._task is not None:
            self.fired = True
            self._task.cancel()
