"""The SQLite event store: the embedded default.

Statements run inline on the event loop's thread. Each is tens of microseconds, and
handing every call to a worker thread measured ~190 µs of wake-up latency per call
here, which would cut single appends five-fold; long reads are paged instead, so the
loop is never held for long.

Durability: ``normal`` (WAL, ``synchronous=NORMAL``) keeps every returned append across
a crash or ``SIGKILL`` of the process, but the last commits may be lost if the machine
loses power; ``full`` (``synchronous=FULL``) fsyncs every commit, surviving power loss too.

The WAL file stays near ``wal_limit`` bytes (4 MiB by default): past it, a background
thread checkpoints it and empties it (see ``_checkpoint``). ``wal_limit=None`` leaves
only the timed passive checkpoints, under which the file keeps its largest size.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from helix.errors import (
    AppendOnlyError,
    HelixError,
    LeaseLostError,
    RunExistsError,
    RunNotFoundError,
    SeqConflictError,
    StoreDamagedError,
    StoreUnavailableError,
)
from helix.kernel.events import EventRegistry, RunStatus

from . import _sqlite_lease as sqlite_lease
from ._checkpoint import DEFAULT_WAL_LIMIT, Checkpointer
from ._codec import DEFAULT_BLOB_THRESHOLD
from ._derived_sql import SqliteDerived
from ._records import (
    Durability,
    EncodedEvent,
    FoldSnapshot,
    Lease,
    RawRow,
    RunDelta,
    RunRecord,
)
from ._sql import EVENT_COLUMNS, RUN_COLUMNS, run_from_row, run_values, select_runs
from ._sqlite_file import connect, damage, transaction
from ._sqlite_rows import APPEND as _APPEND
from ._sqlite_rows import insert as _insert
from ._sqlite_rows import put_blobs as _put_blobs
from ._store import EventStore

_ADVANCE = """
UPDATE runs SET next_seq = ?, status = coalesce(?, status), turns = max(turns, ?),
    input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
    cost_usd = cost_usd + ?, updated_at = ?
WHERE id = ? AND next_seq = ? AND (? IS NULL OR lease_epoch = ?)
"""
WATCH_INTERVAL_S = 0.01  # the poll for other processes' commits: one pragma when idle


class SqliteEventStore(EventStore):
    """An ``EventStore`` in one SQLite file (WAL mode), shareable between processes."""

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability = "normal",
        registry: EventRegistry | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        group_commit: bool = False,
        wal_limit: int | None = DEFAULT_WAL_LIMIT,
        watch_interval_s: float = WATCH_INTERVAL_S,
    ) -> None:
        super().__init__(registry=registry, blob_threshold=blob_threshold)
        self.watch_interval_s = watch_interval_s
        """How often, while anyone subscribes, the file is polled for others' commits."""
        self.path = Path(path)
        self.durability = durability
        self._db = connect(self.path, durability)
        self._db.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer does it, off-loop
        if wal_limit is not None:  # cut the WAL back to this when it starts over
            self._db.execute(f"PRAGMA journal_size_limit = {int(wal_limit)}")
        self._checkpointer = Checkpointer(self.path, limit=wal_limit)
        self._derived = SqliteDerived(self._db)
        # A store dropped without close() must not leave its thread behind.
        weakref.finalize(self, self._checkpointer.signal_stop)
        self._watcher: asyncio.Task[None] | None = None
        self._seen: int | None = None  # the last row the watcher read, or knows is ours
        self._pending: list[tuple[_Append, asyncio.Future[None]]] = []
        self.group_commit = group_commit

    @property
    def checkpoints(self) -> int:
        """How many background WAL checkpoints have run."""
        return self._checkpointer.checkpoints

    @property
    def wal_truncations(self) -> int:
        """How many times the WAL, grown past ``wal_limit``, was checkpointed and emptied."""
        return self._checkpointer.truncations

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection (for tests and benchmarks that bypass the store)."""
        return self._db

    async def _insert_run(
        self, record: RunRecord, first: EncodedEvent, blobs: dict[str, bytes]
    ) -> None:
        db = self._db
        with transaction(db):
            try:
                db.execute(
                    f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                    run_values(record),
                )
            except sqlite3.IntegrityError as error:
                if "runs.id" in str(error):
                    raise RunExistsError(record.id) from None
                raise
            _put_blobs(db, blobs)
            db.execute(_APPEND, first)

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
        append = _Append(run_id, expected_seq, rows, blobs, delta, ts, epoch)
        if not self.group_commit:
            (outcome,) = self._commit([append])
            if outcome is not None:
                raise outcome
            return
        # Group commit: appends made in the same turn of the event loop (many runs at
        # once, say) share one transaction, each in a savepoint of its own so that one
        # refused append leaves the others alone. Each still returns only once committed.
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._pending.append((append, done))
        if len(self._pending) == 1:
            loop.call_soon(self._flush)
        await done

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        outcomes = self._commit([append for append, _done in batch])
        for (_append, done), outcome in zip(batch, outcomes, strict=True):
            if done.cancelled():
                continue
            if outcome is None:
                done.set_result(None)
            else:
                done.set_exception(outcome)

    def _commit(self, batch: list[_Append]) -> list[BaseException | None]:
        """Write appends in one transaction; each one's refusal (or ``None``), in order."""
        if len(batch) > 1:
            together = self._commit_together(batch)
            if together is not None:
                return together
        return self._commit_guarded(batch)

    def _commit_together(self, batch: list[_Append]) -> list[BaseException | None] | None:
        """The common case of a group, without a savepoint per append.

        An append is refused (wrong seq, no such run) by its registry row before it
        writes anything, so its neighbours need no protection from it. Only a refusal
        halfway through its rows (which the registry row makes impossible short of a
        corrupted file) would; then this gives up (``None``) and the guarded path runs.
        """
        db = self._db
        outcomes: list[BaseException | None] = []
        last = 0
        try:
            db.execute("BEGIN IMMEDIATE")
            for append in batch:
                try:
                    self._advance(append)
                except HelixError as error:
                    outcomes.append(error)
                    continue
                _put_blobs(db, append.blobs)
                last = _insert(db, append.rows)
                outcomes.append(None)
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")
            return None
        except sqlite3.Error as error:
            return self._broken(error, len(batch))
        self._skip_own(batch, outcomes, last)
        return outcomes

    def _commit_guarded(self, batch: list[_Append]) -> list[BaseException | None]:
        """Each append in a savepoint of its own, so any refusal leaves the others alone."""
        db = self._db
        outcomes: list[BaseException | None] = []
        alone = len(batch) == 1  # no neighbour to protect: no savepoint needed
        last = 0
        try:
            db.execute("BEGIN IMMEDIATE")
            for append in batch:
                if not alone:
                    db.execute("SAVEPOINT helix_append")
                try:
                    last = self._write(append)
                except (HelixError, sqlite3.IntegrityError) as error:
                    if not alone:
                        db.execute("ROLLBACK TO helix_append")
                    outcomes.append(_refusal(error))
                else:
                    outcomes.append(None)
                if not alone:
                    db.execute("RELEASE helix_append")
            db.execute("ROLLBACK" if alone and outcomes[0] is not None else "COMMIT")
        except sqlite3.Error as error:
            return self._broken(error, len(batch))
        self._skip_own(batch, outcomes, last)
        return outcomes

    def _skip_own(
        self, batch: list[_Append], outcomes: list[BaseException | None], last: int
    ) -> None:
        """Let the watcher skip the rows just committed: ``_append`` published them.

        Only if they follow what it has read (a checkpoint emptying the WAL wakes it).
        """
        count = sum(len(a.rows) for a, o in zip(batch, outcomes, strict=True) if o is None)
        if self._seen is not None and count and last - count == self._seen:
            self._seen = last

    def _broken(self, error: sqlite3.Error, count: int) -> list[BaseException | None]:
        """Roll back whatever is open: every append of the batch fails with the store."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        failure = StoreUnavailableError(f"the SQLite store at {self.path} failed: {error}")
        return [failure] * count

    def _write(self, append: _Append) -> int:
        """Write one append (its seq checked first); the position of its last row."""
        db = self._db
        self._advance(append)
        _put_blobs(db, append.blobs)
        try:
            return _insert(db, append.rows)
        except sqlite3.IntegrityError:
            found = db.execute("SELECT next_seq FROM runs WHERE id = ?", (append.run_id,))
            raise SeqConflictError(
                append.run_id, append.expected_seq, found.fetchone()[0]
            ) from None

    def _advance(self, append: _Append) -> None:
        """Move the run's next seq past the append, or refuse it having written nothing."""
        db = self._db
        rows = append.rows
        advanced = db.execute(
            _ADVANCE,
            (
                append.expected_seq + len(rows),
                append.delta.status,
                append.delta.turns or 0,
                append.delta.input_tokens,
                append.delta.output_tokens,
                append.delta.cost_usd,
                append.ts,
                append.run_id,
                append.expected_seq,
                append.epoch,
                append.epoch,
            ),
        ).rowcount
        if advanced != 1:
            found = db.execute(
                "SELECT next_seq, lease_epoch FROM runs WHERE id = ?", (append.run_id,)
            )
            row = found.fetchone()
            if row is None:
                raise RunNotFoundError(append.run_id)
            if append.epoch is not None and append.epoch != row[1]:
                raise LeaseLostError(append.run_id, append.epoch, row[1])
            raise SeqConflictError(append.run_id, append.expected_seq, row[0])

    async def _take_lease(
        self, run_id: str, holder: str, now: float, expires_at: float, stale: Lease | None
    ) -> Lease:
        with self._writing(), transaction(self._db):
            return sqlite_lease.take(self._db, run_id, holder, now, expires_at, stale)

    async def _renew_lease(self, lease: Lease, expires_at: float) -> int:
        with self._writing(), transaction(self._db):
            return sqlite_lease.renew(self._db, lease, expires_at)

    async def _release_lease(self, lease: Lease) -> None:
        with self._writing(), transaction(self._db):
            sqlite_lease.release(self._db, lease)

    async def _get_lease(self, run_id: str) -> Lease | None:
        with self._reading():
            return sqlite_lease.get(self._db, run_id)

    async def _load_run(self, run_id: str) -> RunRecord | None:
        with self._reading():
            row = self._db.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        return None if row is None else run_from_row(row)

    async def _query_runs(
        self,
        status: RunStatus | None,
        workspaces: frozenset[str] | None,
        parent_id: str | None,
        limit: int,
        after: tuple[str, str] | None,
    ) -> list[RunRecord]:
        return self._runs(select_runs(status, workspaces, parent_id, after, limit, _mark))

    async def _query_prefix(
        self, prefix: str, workspaces: frozenset[str] | None, limit: int
    ) -> list[RunRecord]:  # a range of the id's index (SQLite compares text bytewise)
        return self._runs(select_runs(None, workspaces, None, None, limit, _mark, prefix))

    def _runs(self, query: tuple[str, list[Any]]) -> list[RunRecord]:
        with self._reading():
            rows = self._db.execute(*query).fetchall()
        return [run_from_row(row) for row in rows]

    async def _read_rows(
        self, run_id: str, after: int, to_seq: int | None, limit: int | None
    ) -> list[RawRow]:
        last = _MAX_SEQ if to_seq is None else to_seq
        with self._reading():
            rows: list[RawRow] = self._db.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE run_id = ? AND seq > ? AND seq <= ?"
                " ORDER BY seq LIMIT ?",
                (run_id, after, last, -1 if limit is None else limit),
            ).fetchall()
        return rows

    async def _get_blobs(self, hashes: set[str]) -> dict[str, bytes]:
        marks = ", ".join("?" * len(hashes))
        with self._reading():
            rows = self._db.execute(
                f"SELECT hash, data FROM blobs WHERE hash IN ({marks})", list(hashes)
            ).fetchall()
        return {h: bytes(d) for h, d in rows}

    async def _put_snapshot(self, snapshot: FoldSnapshot) -> None:
        with self._reading():
            try:
                self._derived.put(snapshot)
            except sqlite3.OperationalError as error:  # read-only, or locked for long
                problem = f"cannot keep a snapshot in {self.path}: {error}"
                raise StoreUnavailableError(problem) from None

    async def _get_snapshot(
        self, run_id: str, kind: str, version: str, first: int, last: int
    ) -> tuple[int, bytes] | None:
        with self._reading():
            return self._derived.get(run_id, kind, version, first, last)

    async def _drop_snapshots(self, run_id: str | None) -> None:
        with self._reading():
            self._derived.drop(run_id)

    async def _turn_end(self, run_id: str, turn: int, first: int, last: int) -> int | None:
        with self._reading():
            return self._derived.turn_end(run_id, turn, first, last)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A lease write that SQLite cannot make is the store failing, said as one."""
        try:
            yield
        except sqlite3.Error as error:
            raise StoreUnavailableError(
                f"the SQLite store at {self.path} failed: {error}"
            ) from None

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Turn SQLite's "malformed" and "not a database" into ``StoreDamagedError``."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            if damage(error):
                raise StoreDamagedError(
                    f"the SQLite store at {self.path} is damaged: {error} (restore it from a"
                    " backup, or recover it with sqlite3's .recover)"
                ) from None
            raise

    # -- noticing other processes' appends --------------------------------------------

    async def _start_watching(self) -> None:
        if self._watcher is None:
            self._seen = self._db.execute("SELECT coalesce(max(pos), 0) FROM events").fetchone()[0]
            self._watcher = asyncio.create_task(self._watch(), name="helix-sqlite-watch")

    async def _watch(self) -> None:
        """Poll for commits by other connections and publish what they appended.

        ``PRAGMA data_version`` changes only when another connection commits, so an
        idle poll costs one pragma; the rows themselves are read only when needed.
        """
        version = self._data_version()
        while True:
            await asyncio.sleep(self.watch_interval_s)
            try:
                current = self._data_version()
                if current == version:
                    continue
                version = current
                await self._publish_since()
            except sqlite3.Error:
                continue  # a busy or briefly locked file: try again next tick

    async def _publish_since(self) -> None:
        while True:
            rows = self._db.execute(
                f"SELECT pos, {EVENT_COLUMNS} FROM events WHERE pos > ? ORDER BY pos LIMIT 1000",
                (self._seen,),
            ).fetchall()
            if not rows:
                return
            self._seen = rows[-1][0]
            by_run: dict[str, list[RawRow]] = {}
            for row in rows:
                by_run.setdefault(row[1], []).append(row[1:])
            for run_id, encoded_rows in by_run.items():
                self._broadcaster.publish(run_id, await self._decode(encoded_rows))

    def _data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    async def close(self) -> None:
        """Stop watching and close the database."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
            self._seen = None
        self._checkpointer.stop()
        self._db.close()


_MAX_SEQ = 2**62


def _mark(_number: int) -> str:
    return "?"


class _Append(NamedTuple):
    run_id: str
    expected_seq: int
    rows: list[EncodedEvent]
    blobs: dict[str, bytes]
    delta: RunDelta
    ts: str
    epoch: int | None


def _refusal(error: BaseException) -> BaseException:
    if isinstance(error, sqlite3.IntegrityError) and (
        "append-only" in str(error) or "immutable" in str(error)
    ):
        return AppendOnlyError(str(error))
    return error
