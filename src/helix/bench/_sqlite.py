"""SQLite plumbing for benchmarks: raw-driver baselines and storage measurements."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from helix.kernel.log import EncodedEvent, SqliteEventStore

_RAW_SCHEMA = """
CREATE TABLE events (
    pos INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
    v INTEGER NOT NULL, ts TEXT NOT NULL, turn INTEGER, actor TEXT NOT NULL,
    data TEXT NOT NULL, ext TEXT, UNIQUE (run_id, seq)
)
"""
_RAW_INSERT = (
    "INSERT INTO events (run_id, seq, type, v, ts, turn, actor, data, ext)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_EVENT_TEXT = ["run_id", "type", "ts", "actor", "data", "ext"]
_RUN_TEXT = [
    "id", "workspace", "status", "objective", "model", "blueprint", "world", "parent_id",
    "created_at", "updated_at",
]  # fmt: skip


def _bytes_of(columns: list[str], integers: int) -> str:
    lengths = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in columns)
    return f"{lengths} + 8 * {integers}"


def event_bytes(store: SqliteEventStore, run_id: str) -> int:
    """Bytes of a run's own event rows: text columns' lengths, eight per integer."""
    (total,) = store.connection.execute(
        f"SELECT coalesce(sum({_bytes_of(_EVENT_TEXT, 4)}), 0) FROM events WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    return int(total)


class SqliteBench:
    """Raw ``sqlite3`` baselines beside a store, each in a fresh file of its own."""

    def __init__(self, root: Path, store: SqliteEventStore) -> None:
        self._root = root
        self._store = store
        self._files = 0

    async def raw_inserts(self, rows: list[EncodedEvent], batch: int) -> float:
        """Insert ``rows`` with plain ``sqlite3`` (WAL, synchronous=NORMAL), ``batch`` a commit."""
        self._files += 1
        db = sqlite3.connect(self._root / f"raw-{self._files}.db", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(_RAW_SCHEMA)
        started = time.perf_counter()
        for i in range(0, len(rows), batch):
            db.execute("BEGIN")
            if batch == 1:
                db.execute(_RAW_INSERT, rows[i])
            else:
                db.executemany(_RAW_INSERT, rows[i : i + batch])
            db.execute("COMMIT")
        rate = len(rows) / (time.perf_counter() - started)
        db.close()
        return rate

    async def raw_commits(self, commits: list[list[EncodedEvent]]) -> list[float]:
        """Seconds plain ``sqlite3`` takes for each commit of exactly these rows."""
        self._files += 1
        db = sqlite3.connect(self._root / f"raw-{self._files}.db", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(_RAW_SCHEMA)
        seconds = []
        for rows in commits:
            started = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.executemany(_RAW_INSERT, rows)
            db.execute("COMMIT")
            seconds.append(time.perf_counter() - started)
        db.close()
        return seconds

    async def fork_bytes(self, fork_id: str) -> int:
        """Bytes of the rows a fork added: its registry row and its own events."""
        db = self._store.connection
        events = event_bytes(self._store, fork_id)
        (runs,) = db.execute(
            f"SELECT {_bytes_of(_RUN_TEXT, 6)} FROM runs WHERE id = ?", (fork_id,)
        ).fetchone()
        return int(events + runs)

    async def close(self) -> None:
        """Nothing to release: each baseline closes its own file."""
