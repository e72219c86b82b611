"""The derived tables in SQL, and the queries the SQL backends share over them.

See ``_derived``: the tables are created if missing whenever a store opens (outside the
versioned schema) and hold nothing the log does not imply.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ._records import FoldSnapshot

SQLITE_DERIVED = """
CREATE TABLE IF NOT EXISTS fold_snapshots (
    run_id  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    version TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (run_id, kind, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_turn_ends ON events (run_id, turn, seq)
    WHERE type = 'turn.ended';
"""

POSTGRES_DERIVED = """
CREATE TABLE IF NOT EXISTS fold_snapshots (
    run_id  TEXT COLLATE "C" NOT NULL,
    kind    TEXT NOT NULL,
    seq     BIGINT NOT NULL,
    version TEXT NOT NULL,
    data    BYTEA NOT NULL,
    PRIMARY KEY (run_id, kind, seq)
);
CREATE INDEX IF NOT EXISTS events_turn_ends ON events (run_id, turn, seq)
    WHERE type = 'turn.ended';
"""

NEAREST_SNAPSHOT = (
    "SELECT seq, data FROM fold_snapshots WHERE run_id = {0} AND kind = {1} AND version = {2}"
    " AND seq >= {3} AND seq <= {4} ORDER BY seq DESC LIMIT 1"
)
TURN_END = (
    "SELECT seq FROM events WHERE run_id = {0} AND type = 'turn.ended' AND turn = {1}"
    " AND seq >= {2} AND seq <= {3} ORDER BY seq LIMIT 1"
)
_COLUMNS = "run_id, kind, seq, version, data"


class SqliteDerived:
    """Fold snapshots and turn-index lookups on one SQLite connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def put(self, snapshot: FoldSnapshot) -> None:
        """Insert or replace the snapshot at its run, kind and seq."""
        self._db.execute(
            f"INSERT OR REPLACE INTO fold_snapshots ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (snapshot.run_id, snapshot.kind, snapshot.seq, snapshot.version, snapshot.data),
        )

    def get(
        self, run_id: str, kind: str, version: str, first: int, last: int
    ) -> tuple[int, bytes] | None:
        """The latest such snapshot with ``first <= seq <= last``: (seq, data)."""
        query = NEAREST_SNAPSHOT.format("?", "?", "?", "?", "?")
        row = self._db.execute(query, (run_id, kind, version, first, last)).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    def drop(self, run_id: str | None) -> None:
        """Delete the run's snapshots, or every run's."""
        if run_id is None:
            self._db.execute("DELETE FROM fold_snapshots")
        else:
            self._db.execute("DELETE FROM fold_snapshots WHERE run_id = ?", (run_id,))

    def turn_end(self, run_id: str, turn: int, first: int, last: int) -> int | None:
        """The lowest seq of the run's own ``turn.ended`` rows of ``turn`` in range."""
        query = TURN_END.format("?", "?", "?", "?")
        row = self._db.execute(query, (run_id, turn, first, last)).fetchone()
        return None if row is None else int(row[0])


class PostgresDerived:
    """Fold snapshots and turn-index lookups through an ``asyncpg`` pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def put(self, snapshot: FoldSnapshot) -> None:
        """Insert or replace the snapshot at its run, kind and seq."""
        await self._pool.execute(
            f"INSERT INTO fold_snapshots ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5)"
            " ON CONFLICT (run_id, kind, seq)"
            " DO UPDATE SET version = excluded.version, data = excluded.data",
            snapshot.run_id,
            snapshot.kind,
            snapshot.seq,
            snapshot.version,
            snapshot.data,
        )

    async def get(
        self, run_id: str, kind: str, version: str, first: int, last: int
    ) -> tuple[int, bytes] | None:
        """The latest such snapshot with ``first <= seq <= last``: (seq, data)."""
        query = NEAREST_SNAPSHOT.format("$1", "$2", "$3", "$4", "$5")
        row = await self._pool.fetchrow(query, run_id, kind, version, first, last)
        return None if row is None else (row[0], bytes(row[1]))

    async def drop(self, run_id: str | None) -> None:
        """Delete the run's snapshots, or every run's."""
        if run_id is None:
            await self._pool.execute("DELETE FROM fold_snapshots")
        else:
            await self._pool.execute("DELETE FROM fold_snapshots WHERE run_id = $1", run_id)

    async def turn_end(self, run_id: str, turn: int, first: int, last: int) -> int | None:
        """The lowest seq of the run's own ``turn.ended`` rows of ``turn`` in range."""
        query = TURN_END.format("$1", "$2", "$3", "$4")
        seq = await self._pool.fetchval(query, run_id, turn, first, last)
        return None if seq is None else int(seq)
