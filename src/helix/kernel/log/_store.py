"""The event store: one interface over every backend.

``EventStore`` holds all behaviour the backends share (validation, encoding, the run
registry's projection, fork stitching, subscriptions); a backend implements only the
small set of storage primitives at the bottom of the class. Every backend runs the one
conformance suite in ``helix.testing.conformance``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Collection, Sequence
from types import TracebackType
from typing import Self

from helix.errors import ForkError, InvalidEventError, RunNotFoundError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    Budget,
    Event,
    EventRegistry,
    ForkPoint,
    NewEvent,
    RunCreated,
    RunForked,
    RunStatus,
    utc_now_iso,
)

from ._codec import (
    DEFAULT_BLOB_THRESHOLD,
    blob_hashes,
    committed_batch,
    decode_rows,
    encode,
    encode_batch,
)
from ._derived import DerivedData
from ._ids import check_id, decode_cursor, encode_cursor, min_opt, new_run_id
from ._leases import LeaseStore
from ._projection import delta_of
from ._records import (
    LAST_SEQ,
    EncodedEvent,
    Lease,
    RawRow,
    RunDelta,
    RunPage,
    RunRecord,
    Segment,
    narrowed,
)
from ._subscription import DEFAULT_MAX_QUEUE, AllRunsSubscription, Broadcaster, Subscription

FORK_POINT_TYPES = frozenset({"run.created", "run.forked", "turn.ended"})
"""Event types whose seq is a turn boundary, where a run may be forked."""

DEFAULT_SNAPSHOT_EVERY = 500
"""How many events apart a run's folded-state snapshots are kept, by default."""

_READ_PAGE = 1000


class EventStore(DerivedData, LeaseStore, ABC):
    """An append-only log of run events plus the registry of runs.

    Guarantees, whatever the backend: a run's seqs are contiguous from 0; a batch is
    appended whole or not at all; an append names the seq it expects to write next and
    fails with ``SeqConflictError`` otherwise, so racing writers never leave a gap or a
    duplicate; stored events are never changed or deleted; an append made with a
    driver's lease is refused unless that lease's epoch is still the run's.
    """

    def __init__(
        self,
        *,
        registry: EventRegistry | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
    ) -> None:
        self.registry = registry or DEFAULT_REGISTRY
        self.blob_threshold = blob_threshold
        self._broadcaster = Broadcaster()
        self._links: dict[str, ForkPoint | None] = {}
        self.snapshot_every = DEFAULT_SNAPSHOT_EVERY

    # -- runs ---------------------------------------------------------------------

    async def create_run(
        self,
        created: RunCreated,
        *,
        run_id: str | None = None,
        workspace: str = "default",
        actor: str = "system",
        ts: str | None = None,
    ) -> RunRecord:
        """Register a new run and append its ``run.created`` event (seq 0).

        ``ts`` backdates the creation (an imported log keeps its times).
        """
        run_id = run_id or new_run_id()
        check_id(run_id)
        ts = ts or utc_now_iso()
        first = NewEvent(created, actor=actor, turn=0, ts=ts)
        record = RunRecord(
            id=run_id,
            workspace=workspace,
            status="queued",
            objective=created.objective,
            model=created.model,
            blueprint=created.blueprint,
            world=created.world,
            parent=None,
            created_at=ts,
            updated_at=ts,
            next_seq=1,
            turns=0,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
        )
        await self._insert_first(record, first)
        return record

    async def get_run(self, run_id: str) -> RunRecord:
        """Return the run's registry row; ``RunNotFoundError`` if there is none."""
        record = await self._load_run(run_id)
        if record is None:
            raise RunNotFoundError(run_id)
        return record

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        parent_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        workspaces: Collection[str] | None = None,
    ) -> RunPage:
        """Return runs newest first, filtered, one page at a time.

        ``workspaces``: only runs of these (with ``workspace`` too: of both filters).
        """
        if not 1 <= limit <= 1000:
            raise InvalidEventError(f"limit must be between 1 and 1000, not {limit}")
        after = decode_cursor(cursor)
        within = narrowed(workspace, workspaces)
        if within is not None and not within:
            return RunPage([], None)
        runs = await self._query_runs(status, within, parent_id, limit + 1, after)
        next_cursor = None
        if len(runs) > limit:
            runs = runs[:limit]
            next_cursor = encode_cursor(runs[-1])
        return RunPage(runs, next_cursor)

    async def find_runs(
        self, prefix: str, *, workspaces: Collection[str] | None = None, limit: int = 10
    ) -> list[RunRecord]:
        """Return up to ``limit`` runs whose id starts with ``prefix``, in id order.

        One range scan of the id index, whatever the store holds. ``workspaces``: only
        runs of these count (a caller never learns of another workspace's runs).
        """
        if not 1 <= limit <= 1000:
            raise InvalidEventError(f"limit must be between 1 and 1000, not {limit}")
        within = narrowed(None, workspaces)
        if not prefix or (within is not None and not within):
            return []
        found = await self._query_prefix(prefix, within, limit)
        return [r for r in found if r.id.startswith(prefix)]

    # -- appending ------------------------------------------------------------------

    async def append(
        self,
        run_id: str,
        events: Sequence[NewEvent],
        *,
        expected_seq: int,
        lease: Lease | None = None,
    ) -> int:
        """Append ``events`` atomically as seqs ``expected_seq``, ``expected_seq + 1``, ….

        Returns the log's new next seq. Raises ``SeqConflictError`` when the log's next
        seq is not ``expected_seq`` and ``RunNotFoundError`` when the run does not
        exist; nothing is written then. A driver passes its ``lease``: the append is
        refused with ``LeaseLostError`` (checked first, in the same transaction as the
        write) unless the lease's epoch is still the run's. People's appends (approve,
        steer, pause) pass none and need no lease.
        """
        await self._append(run_id, events, expected_seq, lease, keep=False)
        return expected_seq + len(events)

    async def append_events(
        self,
        run_id: str,
        events: Sequence[NewEvent],
        *,
        expected_seq: int,
        lease: Lease | None = None,
    ) -> list[Event]:
        """``append``, returning the events as committed (seq, time and data as stored).

        A writer that folds what it wrote (a live session) takes them from here rather
        than serialising every payload a second time.
        """
        return await self._append(run_id, events, expected_seq, lease, keep=True)

    async def _append(
        self,
        run_id: str,
        events: Sequence[NewEvent],
        expected_seq: int,
        lease: Lease | None,
        *,
        keep: bool,
    ) -> list[Event]:
        """Write ``events``; the committed events are built only if kept or subscribed to."""
        if not events:
            return []
        if lease is not None and lease.run_id != run_id:
            raise InvalidEventError(
                f"the lease of run {lease.run_id!r} cannot append to {run_id!r}"
            )
        ts = utc_now_iso()
        blobs: dict[str, bytes] = {}
        stored: list[Event] | None = [] if keep or self._broadcaster.active else None
        rows = encode_batch(
            run_id, expected_seq, events, ts, self.registry, self.blob_threshold, blobs, stored
        )
        epoch = None if lease is None else lease.epoch
        await self._append_rows(run_id, expected_seq, rows, blobs, delta_of(events), ts, epoch)
        if self._broadcaster.active:  # built, handed out once committed (or subscribed since)
            stored = committed_batch(rows, events) if stored is None else stored
            self._broadcaster.publish(run_id, stored)
        return [] if stored is None else stored

    # -- reading ----------------------------------------------------------------------

    async def read(
        self,
        run_id: str,
        *,
        after: int = -1,
        to_seq: int | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        """Return the run's events with ``after < seq <= to_seq``, in seq order.

        A fork's log is stitched: events up to its fork point come from its ancestors
        (keeping their ``run_id``), the rest are its own. Bounds past any seq a log can
        hold are taken as "the end" (never handed to a database as an overflowing int).
        """
        after = min(after, LAST_SEQ)
        to_seq = None if to_seq is None else min(to_seq, LAST_SEQ)
        out: list[Event] = []
        for segment in await self._segments(run_id):
            lo = max(after, segment.first - 1)
            hi = min_opt(to_seq, segment.last)
            if hi is not None and lo >= hi:
                continue
            want = None if limit is None else limit - len(out)
            rows = await self._read_rows(segment.run_id, lo, hi, want)
            out.extend(await self._decode(rows))
            if limit is not None and len(out) >= limit:
                break
        return out

    async def read_pages(
        self, run_id: str, *, after: int = -1, to_seq: int | None = None
    ) -> AsyncIterator[list[Event]]:
        """Yield the run's events a page at a time (memory stays flat on long logs)."""
        cursor = after
        while True:
            page = await self.read(run_id, after=cursor, to_seq=to_seq, limit=_READ_PAGE)
            if page:
                yield page
            if len(page) < _READ_PAGE:
                return
            cursor = page[-1].seq

    async def iter_events(
        self, run_id: str, *, after: int = -1, to_seq: int | None = None
    ) -> AsyncIterator[Event]:
        """Yield the run's events one by one, reading a page at a time."""
        async for page in self.read_pages(run_id, after=after, to_seq=to_seq):
            for event in page:
                yield event

    async def event_at(self, run_id: str, seq: int) -> Event | None:
        """Return the event at ``seq`` in the run's (stitched) log, if there is one."""
        found = await self.read(run_id, after=seq - 1, to_seq=seq, limit=1)
        return found[0] if found else None

    # -- forking ----------------------------------------------------------------------

    async def fork(
        self,
        run_id: str,
        *,
        at_seq: int,
        message: str | None = None,
        model: str | None = None,
        fork_id: str | None = None,
        actor: str = "system",
        world: str | None = None,
        budget: Budget | None = None,
    ) -> RunRecord:
        """A run whose log is this one's up to ``at_seq`` (a turn boundary), then its own.

        Nothing is copied (one new event: ``run.forked``); ``world``, ``budget``: its own.
        """
        parent = await self.get_run(run_id)
        if at_seq < 0 or at_seq > parent.head:
            raise ForkError(
                f"cannot fork run {run_id!r} at seq {at_seq}: its log ends at seq {parent.head}"
            )
        boundary = await self.event_at(run_id, at_seq)
        if boundary is None or boundary.type not in FORK_POINT_TYPES:
            kind = boundary.type if boundary else "nothing"
            raise ForkError(
                f"cannot fork run {run_id!r} at seq {at_seq}: it holds {kind}, not a turn"
                " boundary (run.created, turn.ended or run.forked)"
            )
        turn = boundary.turn or 0
        fork_id = fork_id or new_run_id()
        check_id(fork_id)
        point = ForkPoint(run_id=run_id, seq=at_seq)
        forked = RunForked(parent=point, turn=turn, message=message, model=model, world=world)
        forked = forked.model_copy(update={"budget": budget})
        ts = utc_now_iso()
        record = RunRecord(
            id=fork_id,
            workspace=parent.workspace,
            status="queued",
            objective=parent.objective,
            model=model or parent.model,
            blueprint=parent.blueprint,
            world=world or parent.world,
            parent=point,
            created_at=ts,
            updated_at=ts,
            next_seq=at_seq + 2,
            turns=turn,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
        )
        await self._insert_first(record, NewEvent(forked, actor=actor, turn=turn))
        return record

    # -- subscribing ------------------------------------------------------------------

    def subscribe(
        self,
        run_id: str,
        *,
        after: int = -1,
        max_queue: int = DEFAULT_MAX_QUEUE,
        resume_on_overflow: bool = True,
    ) -> Subscription:
        """Iterate the run's events with seq > ``after``, then live ones as they commit."""
        return Subscription(
            self._broadcaster,
            self._read_for_subscriber,
            self._start_watching,
            run_id,
            after=after,
            max_queue=max_queue,
            resume_on_overflow=resume_on_overflow,
        )

    def subscribe_all(self, *, max_queue: int = DEFAULT_MAX_QUEUE) -> AllRunsSubscription:
        """Iterate live events of every run, from now on."""
        return AllRunsSubscription(self._broadcaster, self._start_watching, max_queue=max_queue)

    # -- lifecycle ----------------------------------------------------------------------

    async def close(self) -> None:
        """Release connections and stop watching for other processes' appends."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- shared internals -----------------------------------------------------------

    async def _insert_first(self, record: RunRecord, first: NewEvent) -> None:
        blobs: dict[str, bytes] = {}
        row = encode(
            record.id,
            record.next_seq - 1,
            first,
            record.created_at,
            self.registry,
            self.blob_threshold,
            blobs,
        )
        await self._insert_run(record, row, blobs)
        self._links[record.id] = record.parent
        if self._broadcaster.active:
            self._broadcaster.publish(record.id, await self._decode([row]))

    async def _segments(self, run_id: str) -> list[Segment]:
        """Split a run's stitched log into the stretches each ancestor holds."""
        segments: list[Segment] = []
        last: int | None = None
        current: str | None = run_id
        while current is not None:
            if current not in self._links:
                self._links[current] = (await self.get_run(current)).parent
            link = self._links[current]
            first = 0 if link is None else link.seq + 1
            segments.append(Segment(current, first, last))
            if link is None:
                break
            last = link.seq if last is None else min(last, link.seq)
            current = link.run_id
        segments.reverse()
        return segments

    async def _decode(self, rows: Sequence[RawRow]) -> list[Event]:
        hashes = blob_hashes(rows)
        blobs = await self._get_blobs(hashes) if hashes else {}
        return decode_rows(rows, self.registry, blobs)

    async def _read_for_subscriber(self, run_id: str, after: int, limit: int) -> list[Event]:
        return await self.read(run_id, after=after, limit=limit)

    async def _start_watching(self) -> None:
        """Start noticing other processes' appends; a no-op for single-process stores."""

    # -- backend primitives -----------------------------------------------------------

    @abstractmethod
    async def _insert_run(
        self, record: RunRecord, first: EncodedEvent, blobs: dict[str, bytes]
    ) -> None:
        """Insert a registry row and its first event atomically; ``RunExistsError`` if taken."""

    @abstractmethod
    async def _append_rows(
        self,
        run_id: str,
        expected_seq: int,
        rows: list[EncodedEvent],
        blobs: dict[str, bytes],
        delta: RunDelta,
        ts: str,
        epoch: int | None,
    ) -> None:
        """Atomically check the lease and the next seq, insert the rows and blobs, apply the delta.

        ``epoch`` given: ``LeaseLostError`` unless it is the run's lease epoch (checked
        before the seq, in the same transaction as the write).
        """

    @abstractmethod
    async def _load_run(self, run_id: str) -> RunRecord | None:
        """Return the registry row, or ``None``."""

    @abstractmethod
    async def _query_runs(
        self,
        status: RunStatus | None,
        workspaces: frozenset[str] | None,
        parent_id: str | None,
        limit: int,
        after: tuple[str, str] | None,
    ) -> list[RunRecord]:
        """Return runs ordered by (created_at, id) descending, strictly after ``after``.

        ``workspaces``: only runs of these (never empty; ``None``: of any).
        """

    @abstractmethod
    async def _query_prefix(
        self, prefix: str, workspaces: frozenset[str] | None, limit: int
    ) -> list[RunRecord]:
        """Return runs whose id starts with ``prefix`` (not empty), in id order."""

    @abstractmethod
    async def _read_rows(
        self, run_id: str, after: int, to_seq: int | None, limit: int | None
    ) -> Sequence[RawRow]:
        """Return the run's own rows with ``after < seq <= to_seq`` in seq order."""

    @abstractmethod
    async def _get_blobs(self, hashes: set[str]) -> dict[str, bytes]:
        """Return the blobs with these hashes."""
