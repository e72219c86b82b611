"""PostgreSQL plumbing for benchmarks: a throw-away database and raw-driver baselines."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from helix.errors import StoreUnavailableError
from helix.kernel.log import EncodedEvent

_RAW_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_events (
    run_id TEXT NOT NULL, seq BIGINT NOT NULL, type TEXT NOT NULL, v INTEGER NOT NULL,
    ts TEXT NOT NULL, turn BIGINT, actor TEXT NOT NULL, data TEXT NOT NULL, ext TEXT,
    PRIMARY KEY (run_id, seq)
)
"""
_RAW_INSERT = (
    "INSERT INTO raw_events (run_id, seq, type, v, ts, turn, actor, data, ext)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)


async def _connect(url: str) -> Any:
    try:
        import asyncpg
    except ImportError:  # pragma: no cover - depends on the install
        raise StoreUnavailableError(
            "PostgreSQL benchmarks need asyncpg: pip install 'helix-harness[postgres]'"
        ) from None
    try:
        return await asyncpg.connect(url, timeout=5)
    except (OSError, asyncpg.PostgresError) as error:
        raise StoreUnavailableError(f"cannot reach PostgreSQL: {error}") from None


@contextlib.asynccontextmanager
async def temporary_database(admin_url: str) -> AsyncIterator[str]:
    """Create a database for one benchmark run and drop it afterwards."""
    name = f"helix_bench_{uuid.uuid4().hex[:10]}"
    admin = await _connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base, _, _ = admin_url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        admin = await _connect(admin_url)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


class PostgresBench:
    """Raw ``asyncpg`` baselines and storage measurements in the benchmark's database."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: Any = None

    async def _connection(self) -> Any:
        if self._conn is None:
            self._conn = await _connect(self._url)
            # The store's ``normal`` durability; the baseline must match it.
            await self._conn.execute("SET synchronous_commit = off")
            await self._conn.execute(_RAW_SCHEMA)
        return self._conn

    async def raw_inserts(self, rows: list[EncodedEvent], batch: int) -> float:
        """Insert ``rows`` the plain way: ``executemany`` in one transaction per batch."""
        conn = await self._connection()
        await conn.execute("TRUNCATE raw_events")
        started = time.perf_counter()
        for i in range(0, len(rows), batch):
            async with conn.transaction():
                if batch == 1:
                    await conn.execute(_RAW_INSERT, *rows[i])
                else:
                    await conn.executemany(_RAW_INSERT, rows[i : i + batch])
        return len(rows) / (time.perf_counter() - started)

    async def fork_bytes(self, fork_id: str) -> int:
        """Bytes of the rows a fork added: its registry row and its own events."""
        conn = await self._connection()
        events = await conn.fetchval(
            "SELECT coalesce(sum(pg_column_size(e.*)), 0) FROM events e WHERE run_id = $1", fork_id
        )
        runs = await conn.fetchval("SELECT pg_column_size(r.*) FROM runs r WHERE id = $1", fork_id)
        return int(events) + int(runs)

    async def close(self) -> None:
        """Close the baseline's connection."""
        if self._conn is not None:
            await self._conn.close()
