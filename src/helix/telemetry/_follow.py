"""Following a store's live events and exporting each span as it closes.

The follower subscribes to every run's events (``subscribe_all``: any process's
appends) and folds them (``SpanFold``). A run first seen in the middle (the follower
started after it) is read back from the log up to that event; of what closes there,
only the spans that closed after the follower started are sent (the others were sent
by whoever followed then). A gap (a subscription that overflowed) is read from the log
too, and what closes in it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from typing import Protocol, TypeVar

from helix.errors import SubscriptionOverflowError
from helix.kernel.events import TERMINAL_EVENTS, Event
from helix.kernel.log import EventStore

from ._fold import RUN_STARTS, SpanFold
from ._settings import OtelSettings
from ._span import OtelSpan, ts_ns

log = logging.getLogger("helix.telemetry")
T = TypeVar("T")

_MAX_QUEUE = 100_000
DRAIN_S = 3.0
"""After the work ends, how long its last events may take to be folded, and then its
last spans to be sent (a collector that is down costs at most this, twice)."""
_MAX_ENDED = 100_000


class SpanSink(Protocol):
    """Where finished spans go (``OtlpSink``; a list, in a test)."""

    def export(self, spans: list[OtelSpan]) -> None:
        """Take finished spans; must not block."""
        ...


class TraceExport:
    """Follows a store and hands every span that closes to ``sink``.

    ``only``: the runs to export (and the children they delegate to, added as they are
    spawned); ``None``: every run in the store. ``gate_reasons``: see ``SpanFold``.
    """

    def __init__(
        self,
        sink: SpanSink,
        *,
        only: set[str] | None = None,
        gate_reasons: bool = False,
        max_queue: int = _MAX_QUEUE,
    ) -> None:
        self.sink = sink
        self.max_queue = max_queue
        self.since_ns = time.time_ns()
        """When the follower started: spans that closed before are not its to send."""
        self.fold = SpanFold(gate_reasons=gate_reasons)
        self.only = only
        self.cursors: dict[str, int] = {}
        """The seq of the last event folded, per run being followed."""
        self.ended: dict[str, None] = {}
        """Runs that ended here (the latest ``_MAX_ENDED``): their later events are ignored."""
        self.listening = asyncio.Event()
        """Set once the follower is subscribed: nothing appended after that is missed."""
        self._moved = asyncio.Event()

    async def follow(self, store: EventStore) -> None:
        """Export as runs go, until cancelled (a supervised child, or a task of a group)."""
        while True:
            try:
                async with store.subscribe_all(max_queue=self.max_queue) as events:
                    self.listening.set()
                    await self._refill(store)
                    async for event in events:
                        await self.handle(store, event)
            except SubscriptionOverflowError:
                log.warning("trace export fell behind; reading the missed events from the log")

    async def handle(self, store: EventStore, event: Event) -> None:
        """Fold one live event (reading the log first for a run seen mid-way or a gap)."""
        run_id = event.run_id
        if (self.only is not None and run_id not in self.only) or run_id in self.ended:
            return
        last = self.cursors.get(run_id)
        if last is None:
            await self._catch_up(store, event)
        elif event.seq > last + 1:
            await self._fill(store, run_id, until=event.seq)
        if run_id in self.ended or event.seq <= self.cursors.get(run_id, -1):
            return
        self._apply(event, send=True)

    async def reached(self, run_id: str, seq: int, timeout_s: float) -> bool:
        """Wait until the run's events up to ``seq`` (or its end) are folded; False on timeout."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while not self._reached(run_id, seq):
                    self._moved.clear()
                    await self._moved.wait()
        return self._reached(run_id, seq)

    def _reached(self, run_id: str, seq: int) -> bool:
        return run_id in self.ended or self.cursors.get(run_id, -1) >= seq

    def _apply(self, event: Event, *, send: bool) -> None:
        closed = self.fold.apply(event)
        self.cursors[event.run_id] = event.seq
        if event.type == "agent.spawned" and self.only is not None:
            self.only.add(event.data["child_run_id"])
        if closed and send:
            self.sink.export(closed)
        if event.type in TERMINAL_EVENTS and not self.fold.follows(event.run_id):
            self.ended[event.run_id] = None  # its cursor is dropped once its end is seen
            self.cursors.pop(event.run_id, None)
            if len(self.ended) > _MAX_ENDED:
                del self.ended[next(iter(self.ended))]
        self._moved.set()

    async def _catch_up(self, store: EventStore, event: Event) -> None:
        """A run first seen at ``event``: fold its own events before it.

        What closes is sent only if it closed after the follower started (its events
        were lost to an overflow, not appended before anyone here followed).
        """
        if event.type in RUN_STARTS:  # its first own event: nothing to read back
            self.cursors[event.run_id] = event.seq - 1
            return
        first = await _first_own_seq(store, event.run_id)
        self.cursors[event.run_id] = first - 1
        if event.seq > first:
            before = event.seq - 1
            async for old in store.iter_events(event.run_id, after=first - 1, to_seq=before):
                if old.run_id == event.run_id and event.run_id not in self.ended:
                    self._apply(old, send=ts_ns(old.ts) >= self.since_ns)

    async def _fill(self, store: EventStore, run_id: str, *, until: int | None) -> None:
        """Fold (and send) the run's events after its cursor, up to ``until`` (exclusive)."""
        last = None if until is None else until - 1
        async for old in store.iter_events(run_id, after=self.cursors[run_id], to_seq=last):
            if old.run_id == run_id and old.seq > self.cursors.get(run_id, old.seq):
                self._apply(old, send=True)

    async def _refill(self, store: EventStore) -> None:
        """After (re)subscribing: what the open runs appended meanwhile."""
        for run_id in list(self.fold.runs):
            await self._fill(store, run_id, until=None)


async def _first_own_seq(store: EventStore, run_id: str) -> int:
    record = await store.get_run(run_id)
    return record.parent.seq + 1 if record.parent is not None else 0


async def export_while(
    store: EventStore, settings: OtelSettings, run_id: str, work: Awaitable[T]
) -> T:
    """Await ``work`` (driving ``run_id`` here), exporting its spans and its children's.

    The export never fails the work: a collector that is down costs the spans, a
    follower that breaks is logged and stops. When the work ends, the run's last
    events are folded and the queued spans sent (a few seconds at most).
    """
    from ._otlp import OtlpSink

    sink = OtlpSink(settings)
    export = TraceExport(sink, only={run_id}, gate_reasons=settings.gate_reasons)

    async def follow() -> None:
        try:
            await export.follow(store)
        except Exception as error:  # a run is not stopped for its traces
            log.warning("trace export stopped: %s: %s", type(error).__name__, error)
            export.listening.set()

    done: list[T] = []
    failed: list[BaseException] = []
    try:
        async with asyncio.TaskGroup() as group:
            following = group.create_task(follow())
            try:
                await export.listening.wait()
                done.append(await work)
                head = (await store.get_run(run_id)).head
                await export.reached(run_id, head, timeout_s=DRAIN_S)
            except Exception as error:  # the work's own error, raised as it is (not a group)
                failed.append(error)
            finally:
                following.cancel()
    finally:
        await asyncio.to_thread(sink.close, DRAIN_S)
    if failed:
        raise failed[0]
    return done[0]
