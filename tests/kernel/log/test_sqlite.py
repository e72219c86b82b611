from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ConfigError, SeqConflictError, StoreUnavailableError
from helix.kernel.events import Event, EventRegistry, NewEvent, SteerReceived, ToolCompleted
from helix.kernel.log import EventStore, SqliteEventStore, Subscription, open_store
from helix.testing import run_created, session_events
from helix.testing.conformance import EventStoreConformance, Reopen

from ._crash import appending_child, check_appends_survive_sigkill, check_racing_processes


class TestSqliteConformance(EventStoreConformance):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[EventStore]:
        async with SqliteEventStore(tmp_path / "helix.db") as store:
            yield store

    @pytest.fixture
    async def reopen(self) -> AsyncIterator[Reopen]:
        opened: list[EventStore] = []

        async def reopen(store: EventStore, registry: EventRegistry) -> EventStore:
            assert isinstance(store, SqliteEventStore)
            other = SqliteEventStore(store.path, registry=registry)
            opened.append(other)
            return other

        yield reopen
        for other in opened:
            await other.close()


class TestSqliteGroupCommitConformance(TestSqliteConformance):
    """The same guarantees when appends of one event-loop turn share a transaction."""

    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[EventStore]:
        async with SqliteEventStore(tmp_path / "helix.db", group_commit=True) as store:
            yield store


async def test_group_commit_refuses_one_append_and_keeps_its_neighbours(tmp_path: Path) -> None:
    async with SqliteEventStore(tmp_path / "g.db", group_commit=True) as store:
        first = (await store.create_run(run_created())).id
        second = (await store.create_run(run_created())).id
        steer = [NewEvent(SteerReceived(message="x"))]
        results = await asyncio.gather(
            store.append(first, steer, expected_seq=1),
            store.append(second, steer, expected_seq=7),  # wrong: refused alone
            store.append(second, steer, expected_seq=1),
            return_exceptions=True,
        )
        assert results[0] == 2
        assert isinstance(results[1], SeqConflictError)
        assert results[2] == 2
        assert [e.seq for e in await store.read(second)] == [0, 1]


async def test_group_commit_survives_a_refusal_halfway_through_an_append(
    tmp_path: Path,
) -> None:
    # A row the registry does not know of (written behind the store's back) makes the
    # second of an append's rows collide: only that append is refused, as a conflict.
    async with SqliteEventStore(tmp_path / "g.db", group_commit=True) as store:
        first = (await store.create_run(run_created())).id
        second = (await store.create_run(run_created())).id
        store.connection.execute(
            "INSERT INTO events (run_id, seq, type, v, ts, turn, actor, data)"
            " VALUES (?, 2, 'steer.received', 1, '2026-01-01T00:00:00.000000Z', NULL,"
            " 'system', '{\"message\": \"planted\"}')",
            (second,),
        )
        two = [NewEvent(SteerReceived(message="x")), NewEvent(SteerReceived(message="y"))]
        results = await asyncio.gather(
            store.append(first, two, expected_seq=1),
            store.append(second, two, expected_seq=1),
            return_exceptions=True,
        )
        assert results[0] == 3
        assert isinstance(results[1], SeqConflictError)
        assert [e.seq for e in await store.read(first)] == [0, 1, 2]
        assert (await store.get_run(second)).next_seq == 1


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteEventStore]:
    async with SqliteEventStore(tmp_path / "helix.db") as store:
        yield store


async def _run(store: EventStore, turns: int = 1) -> str:
    run_id = (await store.create_run(run_created())).id
    await store.append(run_id, session_events(turns), expected_seq=1)
    return run_id


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET data = '{}' WHERE run_id = ?",
        "DELETE FROM events WHERE run_id = ?",
        "UPDATE events SET seq = seq + 100 WHERE run_id = ?",
    ],
)
async def test_database_refuses_changing_events(store: SqliteEventStore, sql: str) -> None:
    run_id = await _run(store)
    before = await store.read(run_id)
    raw = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute(sql, (run_id,))
    raw.close()
    assert await store.read(run_id) == before


async def test_database_refuses_changing_blobs(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    big = "z" * (store.blob_threshold + 10)
    event = NewEvent(ToolCompleted(call_id="c", ok=True, output=big, duration_ms=1))
    await store.append(run_id, [event, event], expected_seq=1)
    raw = sqlite3.connect(store.path)
    assert raw.execute("SELECT count(*), sum(size) FROM blobs").fetchone() == (1, len(big))
    for sql in ("UPDATE blobs SET data = x'00'", "DELETE FROM blobs"):
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute(sql)
    raw.close()


async def test_events_stay_small_when_outputs_are_large(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    big = "q" * 100_000
    event = NewEvent(ToolCompleted(call_id="c", ok=True, output=big, duration_ms=1))
    await store.append(run_id, [event], expected_seq=1)
    (size,) = store.connection.execute(
        "SELECT length(data) FROM events WHERE run_id = ? AND seq = 1", (run_id,)
    ).fetchone()
    assert size < 200


async def test_appends_survive_sigkill(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    await check_appends_survive_sigkill(store, f"sqlite:///{store.path}", run_id)


async def test_racing_processes_never_gap_or_duplicate(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    await check_racing_processes(store, f"sqlite:///{store.path}", run_id)


async def test_subscriber_sees_another_process_append(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    async with store.subscribe(run_id) as sub:
        assert (await anext(sub)).seq == 0
        async with appending_child(f"sqlite:///{store.path}", run_id, 1):
            got = [await asyncio.wait_for(anext(sub), 10) for _ in range(20)]
    assert [e.seq for e in got] == list(range(1, 21))
    assert got[0].data == {"message": "m1"}


async def test_all_runs_subscriber_sees_another_process(store: SqliteEventStore) -> None:
    run_id = (await store.create_run(run_created())).id
    async with store.subscribe_all() as sub, appending_child(f"sqlite:///{store.path}", run_id, 2):
        got = [await asyncio.wait_for(anext(sub), 10) for _ in range(6)]
    assert [(e.run_id, e.seq) for e in got] == [(run_id, s) for s in range(1, 7)]


@pytest.mark.parametrize("durability", ["normal", "full"])
async def test_durability_setting(tmp_path: Path, durability: str) -> None:
    store = await open_store(f"sqlite:///{tmp_path}/d.db", durability=durability)  # type: ignore[arg-type]
    assert isinstance(store, SqliteEventStore)
    (level,) = store.connection.execute("PRAGMA synchronous").fetchone()
    assert level == {"normal": 1, "full": 2}[durability]
    (mode,) = store.connection.execute("PRAGMA journal_mode").fetchone()
    assert mode == "wal"
    await store.close()


async def test_unknown_durability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match="durability"):
        SqliteEventStore(tmp_path / "x.db", durability="sometimes")  # type: ignore[arg-type]


async def test_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreUnavailableError, match="cannot open the SQLite store"):
        await open_store(f"sqlite:///{blocker}/helix.db")


async def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreUnavailableError, match="cannot open the SQLite store"):
        await open_store(f"sqlite:///{garbage}")


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StoreUnavailableError, match="newer"):
        SqliteEventStore(path)


@pytest.mark.parametrize(
    "url",
    ["sqlite://relative.db", "sqlite:///", "mysql://x/y", "nonsense", "postgresql:///db", ""],
)
async def test_malformed_store_urls(url: str) -> None:
    with pytest.raises(ConfigError, match="invalid store URL"):
        await open_store(url)


async def test_reopening_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "keep.db"
    async with SqliteEventStore(path) as first:
        run_id = await _run(first, 2)
        before = await first.read(run_id)
        record = await first.get_run(run_id)
    async with SqliteEventStore(path) as second:
        assert await second.read(run_id) == before
        assert await second.get_run(run_id) == record
        seq = await second.append(
            run_id, [NewEvent(SteerReceived(message="again"))], expected_seq=record.next_seq
        )
        assert seq == record.next_seq + 1


async def test_checkpoints_run_off_the_event_loop(store: SqliteEventStore) -> None:
    (automatic,) = store.connection.execute("PRAGMA wal_autocheckpoint").fetchone()
    assert automatic == 0  # no commit pays for a checkpoint
    run_id = (await store.create_run(run_created())).id
    await store.append(run_id, session_events(50), expected_seq=1)
    await asyncio.sleep(1.2)  # more than two rounds of the checkpointer
    assert store.checkpoints > 0
    raw = sqlite3.connect(store.path)
    (busy, log, done) = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    raw.close()
    assert busy == 0
    assert done == log  # everything in the WAL is in the database


WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""


def _wal_size(store: SqliteEventStore) -> int:
    wal = Path(f"{store.path}-wal")
    return wal.stat().st_size if wal.exists() else 0


async def test_the_wal_is_cut_back_under_steady_appends(tmp_path: Path) -> None:
    # A passive checkpoint never catches up with appends that keep coming, so the WAL
    # would only grow; past its limit it is checkpointed and emptied while they go on.
    limit = 256 * 1024
    async with SqliteEventStore(tmp_path / "bounded.db", wal_limit=limit) as store:
        (kept,) = store.connection.execute("PRAGMA journal_size_limit").fetchone()
        assert kept == limit
        run_id = (await store.create_run(run_created())).id
        seq, largest = 1, 0
        # Appends go on until the checkpointer (a thread looking every 50 ms) has cut the
        # WAL back: how many that takes depends on the machine, so no count is fixed.
        deadline = time.monotonic() + WAIT_S
        while not store.wal_truncations and time.monotonic() < deadline:
            event = NewEvent(SteerReceived(message=f"steer {seq}"))
            seq = await store.append(run_id, [event], expected_seq=seq)  # about 4 WAL pages
            largest = max(largest, await asyncio.to_thread(_wal_size, store))
            await asyncio.sleep(0)
        assert store.wal_truncations > 0
        assert largest > limit  # it did grow past the limit before being cut back
        for _ in range(1000):  # the checkpointer's next rounds, at most ten seconds
            if await asyncio.to_thread(_wal_size, store) <= limit:
                break
            await asyncio.sleep(0.01)
        assert await asyncio.to_thread(_wal_size, store) <= limit
        assert len(await store.read(run_id)) == seq  # nothing lost by the truncation


def _steers(count: int) -> list[NewEvent]:
    return [NewEvent(SteerReceived(message=f"m{i}"), actor="user:alice") for i in range(count)]


async def _next_seqs(sub: Subscription, count: int) -> list[int]:
    return [(await asyncio.wait_for(anext(sub), 10)).seq for _ in range(count)]


async def test_the_watcher_does_not_read_back_its_own_appends(
    store: SqliteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkpoint that empties the WAL changes data_version as another process's commit
    # does; the rows this store appended itself were published already, not read again.
    decoded: list[int] = []
    decode = store._decode

    async def counting(rows: Sequence[Any]) -> list[Event]:
        decoded.extend(row[1] for row in rows)
        return await decode(rows)

    monkeypatch.setattr(store, "_decode", counting)
    run_id = (await store.create_run(run_created())).id
    async with SqliteEventStore(store.path) as other, store.subscribe(run_id) as sub:
        assert await _next_seqs(sub, 1) == [0]
        seq = await store.append(run_id, _steers(5), expected_seq=1)
        assert await _next_seqs(sub, 5) == [1, 2, 3, 4, 5]
        raw = sqlite3.connect(store.path)
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        raw.close()
        await other.append(run_id, _steers(1), expected_seq=seq)
        assert await _next_seqs(sub, 1) == [6]
    assert decoded == [0, 6]  # the backlog, then only the other connection's row


async def test_own_appends_after_another_process_do_not_hide_its_rows(tmp_path: Path) -> None:
    async with (
        SqliteEventStore(tmp_path / "h.db", watch_interval_s=0.2) as store,
        SqliteEventStore(tmp_path / "h.db") as other,
    ):
        run_id = (await store.create_run(run_created())).id
        async with store.subscribe(run_id) as sub:
            assert await _next_seqs(sub, 1) == [0]
            seq = await store.append(run_id, _steers(2), expected_seq=1)
            seq = await other.append(run_id, _steers(2), expected_seq=seq)
            # The watcher has not polled yet: these rows follow the other's, unread.
            await store.append(run_id, _steers(2), expected_seq=seq)
            assert await _next_seqs(sub, 6) == [1, 2, 3, 4, 5, 6]
