"""The SQLite schema, as an ordered list of migrations (index = version).

The log's invariants live here, not in Python: ``UNIQUE (run_id, seq)`` makes a
duplicate seq impossible, and triggers make the database itself refuse to change or
delete an event or a blob. ``pos`` orders rows by commit (SQLite has one writer at a
time), which is how another process's subscribers find what is new. A run's driver
lease (holder, expiry, fencing epoch) lives in its registry row, so the append that
checks the next seq checks the epoch in the same ``UPDATE``.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 0 -> 1
    """
    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        workspace     TEXT NOT NULL,
        status        TEXT NOT NULL,
        objective     TEXT NOT NULL,
        model         TEXT NOT NULL,
        blueprint     TEXT,
        world         TEXT NOT NULL,
        parent_id     TEXT REFERENCES runs (id),
        fork_seq      INTEGER,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        next_seq      INTEGER NOT NULL,
        turns         INTEGER NOT NULL DEFAULT 0,
        input_tokens  INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd      REAL NOT NULL DEFAULT 0
    );
    CREATE INDEX runs_by_created ON runs (created_at DESC, id DESC);
    CREATE INDEX runs_by_parent ON runs (parent_id);

    CREATE TABLE events (
        pos    INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        seq    INTEGER NOT NULL,
        type   TEXT NOT NULL,
        v      INTEGER NOT NULL,
        ts     TEXT NOT NULL,
        turn   INTEGER,
        actor  TEXT NOT NULL,
        data   TEXT NOT NULL,
        ext    TEXT,
        UNIQUE (run_id, seq)
    );
    CREATE TRIGGER events_are_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'helix: events are append-only'); END;
    CREATE TRIGGER events_are_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'helix: events are append-only'); END;

    CREATE TABLE blobs (
        hash TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        data BLOB NOT NULL
    ) WITHOUT ROWID;
    CREATE TRIGGER blobs_are_immutable_update BEFORE UPDATE ON blobs
    BEGIN SELECT RAISE(ABORT, 'helix: blobs are immutable'); END;
    CREATE TRIGGER blobs_are_immutable_delete BEFORE DELETE ON blobs
    BEGIN SELECT RAISE(ABORT, 'helix: blobs are immutable'); END;
    """,
    # 1 -> 2: the driver's lease
    """
    ALTER TABLE runs ADD COLUMN lease_holder TEXT;
    ALTER TABLE runs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN lease_expires REAL NOT NULL DEFAULT 0;
    """,
]
