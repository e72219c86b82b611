"""A store written before leases existed (schema version 1) gains them when opened."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest

from helix.errors import LeaseLostError
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import EventStore, SqliteEventStore
from helix.kernel.log._postgres import PostgresEventStore
from helix.kernel.log._postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from helix.kernel.log._sqlite_schema import MIGRATIONS as SQLITE_MIGRATIONS
from helix.testing import run_created

_T0 = 1_000_000.0


async def _old_run_gains_a_lease(store: EventStore, run_id: str) -> None:
    record = await store.get_run(run_id)
    assert record.next_seq == 2  # what the old schema held is all there
    assert await store.get_lease(run_id) is None
    first = await store.take_lease(run_id, "a", ttl_s=10, now=_T0)
    assert first.epoch == 1
    await store.append(run_id, [NewEvent(SteerReceived(message="x"))], expected_seq=2, lease=first)
    await store.take_lease(run_id, "b", ttl_s=10, now=_T0 + 11)
    with pytest.raises(LeaseLostError):
        await store.append(
            run_id, [NewEvent(SteerReceived(message="y"))], expected_seq=3, lease=first
        )


async def test_a_version_1_sqlite_store_gains_leases(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    async with SqliteEventStore(path) as store:
        run_id = (await store.create_run(run_created())).id
        await store.append(run_id, [NewEvent(SteerReceived(message="old"))], expected_seq=1)
    # Rebuild the file as version 1 wrote it: the same rows, no lease columns.
    raw = sqlite3.connect(path)
    runs = raw.execute("SELECT * FROM runs").fetchall()
    events = raw.execute("SELECT * FROM events").fetchall()
    raw.close()
    path.unlink()
    old = sqlite3.connect(path)
    old.executescript(SQLITE_MIGRATIONS[0])
    old.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * 16)})", [r[:16] for r in runs])
    old.executemany(f"INSERT INTO events VALUES ({', '.join('?' * 10)})", events)
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    async with SqliteEventStore(path) as store:
        await _old_run_gains_a_lease(store, run_id)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2


@pytest.mark.postgres
async def test_a_version_1_postgres_store_gains_leases(postgres_url: str) -> None:
    import asyncpg

    schema = f"old_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute(f"CREATE SCHEMA {schema}")
        await conn.execute(f"SET search_path TO {schema}")
        await conn.execute(POSTGRES_MIGRATIONS[0])
        await conn.execute(
            "CREATE TABLE helix_schema (only_row BOOLEAN PRIMARY KEY DEFAULT TRUE"
            " CHECK (only_row), version INTEGER NOT NULL); INSERT INTO helix_schema VALUES"
            " (TRUE, 1)"
        )
        await conn.execute(
            "INSERT INTO runs VALUES ('run_old', 'default', 'queued', 'o', 'm', NULL, '/w',"
            " NULL, NULL, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 2, 0, 0, 0, 0)"
        )
        await conn.execute(
            "INSERT INTO events VALUES ('run_old', 0, 'steer.received', 1,"
            " '2026-01-01T00:00:00Z', 0, 'user:ann', '{\"message\": \"a\"}', NULL),"
            " ('run_old', 1, 'steer.received', 1, '2026-01-01T00:00:00Z', 0, 'user:ann',"
            ' \'{"message": "b"}\', NULL)'
        )
        store = await PostgresEventStore.open(f"{postgres_url}?search_path={schema}")
        async with store:
            await _old_run_gains_a_lease(store, "run_old")
        assert await conn.fetchval("SELECT version FROM helix_schema") == 2
    finally:
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")
        await conn.close()
