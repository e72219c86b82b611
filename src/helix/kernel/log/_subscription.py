"""Live subscriptions: the backlog from the log, then new events as they commit.

The log is the source of truth and the push queue only a shortcut. A subscriber
registers before it reads its backlog, so nothing committed in between can slip past;
whatever arrives twice (pulled and pushed) is dropped by seq; and a subscriber that
falls behind never slows a writer: its bounded queue is emptied, and it catches up
from the log where it left off (or, if it asked to be told, gets
``SubscriptionOverflowError`` with the seq to resume from).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from types import TracebackType
from typing import Self

from helix.errors import SubscriptionGapError, SubscriptionOverflowError
from helix.kernel.events import Event

DEFAULT_MAX_QUEUE = 1024
_PULL_PAGE = 500

Reader = Callable[[str, int, int], Awaitable[list[Event]]]
"""``read(run_id, after, limit)``: the events of a run with seq > after, in order."""


class _Inbox:
    """A bounded push queue that marks itself overflowed instead of growing."""

    def __init__(self, max_queue: int) -> None:
        self.events: deque[Event] = deque()
        self.max_queue = max_queue
        self.overflowed = False
        self.overflows = 0
        self.wakeup = asyncio.Event()
        self.floor = -1
        """Seqs up to here are already known to the subscriber: not queued, no wakeup."""
        self.gap = False
        """Pushes may have been missed (the feed of other processes' appends stopped)."""

    def push(self, events: Sequence[Event]) -> None:
        if events[-1].seq <= self.floor:
            return
        if not self.overflowed:
            if len(self.events) + len(events) > self.max_queue:
                self.events.clear()
                self.overflowed = True
                self.overflows += 1
            else:
                self.events.extend(events)
        self.wakeup.set()


class Broadcaster:
    """Fans committed events out to this process's subscribers; never blocks."""

    def __init__(self) -> None:
        self._by_run: dict[str, set[_Inbox]] = {}
        self._all: set[_Inbox] = set()

    @property
    def active(self) -> bool:
        """Whether anyone is subscribed."""
        return bool(self._by_run or self._all)

    def publish(self, run_id: str, events: Sequence[Event]) -> None:
        """Hand committed events of one run to everyone subscribed to them."""
        if not events:
            return
        for inbox in self._by_run.get(run_id, ()):
            inbox.push(events)
        for inbox in self._all:
            inbox.push(events)

    def add(self, run_id: str | None, inbox: _Inbox) -> None:
        if run_id is None:
            self._all.add(inbox)
        else:
            self._by_run.setdefault(run_id, set()).add(inbox)

    def remove(self, run_id: str | None, inbox: _Inbox) -> None:
        if run_id is None:
            self._all.discard(inbox)
            return
        inboxes = self._by_run.get(run_id)
        if inboxes is not None:
            inboxes.discard(inbox)
            if not inboxes:
                del self._by_run[run_id]

    def resync(self) -> None:
        """Tell every subscriber that pushes may have been missed, so it reads the log.

        A store calls it when its feed of other processes' appends was interrupted and
        is back (a PostgreSQL listening connection dropped and was opened again).
        """
        for inboxes in (*self._by_run.values(), self._all):
            for inbox in inboxes:
                inbox.gap = True
                inbox.wakeup.set()


class Subscription(AsyncIterator[Event]):
    """An async iterator over one run's events after a seq, then live, forever.

    Use it as an async context manager (or call ``close``) to stop receiving.
    """

    def __init__(
        self,
        broadcaster: Broadcaster,
        reader: Reader,
        start_watching: Callable[[], Awaitable[None]],
        run_id: str,
        *,
        after: int,
        max_queue: int,
        resume_on_overflow: bool,
    ) -> None:
        self.run_id = run_id
        self.cursor = after
        """The seq of the last event delivered."""
        self._broadcaster = broadcaster
        self._reader = reader
        self._start_watching = start_watching
        self._resume = resume_on_overflow
        self._inbox = _Inbox(max_queue)
        self._pulled: deque[Event] = deque()
        self._needs_pull = True
        self._started = False
        self._closed = False

    @property
    def overflows(self) -> int:
        """How many times this subscriber fell behind and had to catch up from the log."""
        return self._inbox.overflows

    async def __anext__(self) -> Event:
        if not self._started:
            self._started = True
            # Register first: a commit racing with the backlog read is then both pulled
            # and pushed, never neither.
            self._broadcaster.add(self.run_id, self._inbox)
            await self._start_watching()
        while True:
            if self._closed:
                raise StopAsyncIteration
            event = self._next_buffered()
            if event is not None:
                return event
            if self._inbox.overflowed:
                if not self._resume:
                    raise SubscriptionOverflowError({self.run_id: self.cursor})
                self._inbox.overflowed = False
                self._needs_pull = True
            if self._inbox.gap:  # not the subscriber's fault: caught up whatever it asked
                self._inbox.gap = False
                self._needs_pull = True
            if self._needs_pull:
                self._needs_pull = False
                batch = await self._reader(self.run_id, self.cursor, _PULL_PAGE)
                self._pulled.extend(batch)
                self._needs_pull = len(batch) == _PULL_PAGE
                continue
            self._inbox.wakeup.clear()
            if not (self._inbox.events or self._inbox.overflowed or self._inbox.gap):
                await self._inbox.wakeup.wait()

    def _next_buffered(self) -> Event | None:
        for source in (self._pulled, self._inbox.events):
            while source:
                event = source.popleft()
                if event.seq <= self.cursor:
                    continue
                if event.seq == self.cursor + 1:
                    self.cursor = event.seq
                    return event
                # Something between is missing from this buffer: the log has it.
                source.clear()
                self._needs_pull = True
                return None
        return None

    def skip_through(self, seq: int) -> None:
        """Skip the events up to ``seq``: the subscriber has them (it is appending them).

        A writer that also subscribes to its own run (a live session) calls this before
        its append, so its own events neither queue up nor wake it. Should that append
        fail, the writer must read the log itself for what others wrote at those seqs.
        """
        self.cursor = max(self.cursor, seq)
        self._inbox.floor = max(self._inbox.floor, seq)

    def close(self) -> None:
        """Stop the subscription; a waiting ``__anext__`` ends the iteration."""
        self._closed = True
        self._broadcaster.remove(self.run_id, self._inbox)
        self._inbox.wakeup.set()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AllRunsSubscription(AsyncIterator[Event]):
    """Live events of every run, from the moment of subscribing, in order per run.

    A subscriber that falls behind is told (``SubscriptionOverflowError`` carries the
    last seq delivered per run) rather than silently missing events; so is one whose
    store's feed of other processes' appends was interrupted (``SubscriptionGapError``).
    """

    def __init__(
        self,
        broadcaster: Broadcaster,
        start_watching: Callable[[], Awaitable[None]],
        *,
        max_queue: int,
    ) -> None:
        self.cursors: dict[str, int] = {}
        """The seq of the last event delivered, per run."""
        self._broadcaster = broadcaster
        self._start_watching = start_watching
        self._inbox = _Inbox(max_queue)
        self._watching = False
        self._closed = False
        # Registered at once: "from the moment of subscribing" means this call.
        broadcaster.add(None, self._inbox)

    async def __anext__(self) -> Event:
        if not self._watching:
            self._watching = True
            await self._start_watching()
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._inbox.overflowed:
                raise SubscriptionOverflowError(dict(self.cursors))
            if self._inbox.gap:  # no log to read for every run: told where it was
                self._inbox.gap = False
                self._inbox.events.clear()
                raise SubscriptionGapError(dict(self.cursors))
            while self._inbox.events:
                event = self._inbox.events.popleft()
                if event.seq > self.cursors.get(event.run_id, -1):
                    self.cursors[event.run_id] = event.seq
                    return event
            self._inbox.wakeup.clear()
            if not (self._inbox.events or self._inbox.overflowed or self._inbox.gap):
                await self._inbox.wakeup.wait()

    def close(self) -> None:
        """Stop the subscription."""
        self._closed = True
        self._broadcaster.remove(None, self._inbox)
        self._inbox.wakeup.set()

    async def __aenter__(self) -> Self:
        if not self._watching:
            self._watching = True
            await self._start_watching()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
