"""The PostgreSQL schema, as an ordered list of migrations (index = version).

The log's invariants live here, not in Python: the ``(run_id, seq)`` primary key makes
a duplicate seq impossible, and triggers make the database itself refuse to change,
delete or truncate an event or a blob. Timestamps stay ``TEXT`` in the log's own ISO
format, and the text columns that runs are ordered or looked up by are ``COLLATE "C"``:
byte order, as SQLite compares, whatever the database's locale (under ``en_US``,
``'run-b' < 'run_a'`` is false), so listings and their cursors match the other backends
and index comparisons skip the locale's rules. A run's driver lease (holder, expiry,
fencing epoch) lives in its registry row, so the append that checks the next seq checks
the epoch in the same statement (and waits on the same row lock as a take-over).

Each script runs whole through the simple query protocol, so it may hold several
statements and dollar-quoted function bodies.
"""

from __future__ import annotations

from typing import Any

from helix.errors import StoreUnavailableError

from ._derived_sql import POSTGRES_DERIVED

_LOCK = 0x68656C6978  # "helix"; any key works as long as every Helix uses the same one
_SCHEMA_TABLE = """
CREATE TABLE IF NOT EXISTS helix_schema (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    version  INTEGER NOT NULL
)
"""

MIGRATIONS: list[str] = [
    # 0 -> 1
    """
    CREATE TABLE runs (
        id            TEXT COLLATE "C" PRIMARY KEY,
        workspace     TEXT NOT NULL,
        status        TEXT NOT NULL,
        objective     TEXT NOT NULL,
        model         TEXT NOT NULL,
        blueprint     TEXT,
        world         TEXT NOT NULL,
        parent_id     TEXT COLLATE "C" REFERENCES runs (id),
        fork_seq      BIGINT,
        created_at    TEXT COLLATE "C" NOT NULL,
        updated_at    TEXT NOT NULL,
        next_seq      BIGINT NOT NULL,
        turns         BIGINT NOT NULL DEFAULT 0,
        input_tokens  BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        cost_usd      DOUBLE PRECISION NOT NULL DEFAULT 0
    );
    CREATE INDEX runs_by_created ON runs (created_at DESC, id DESC);
    CREATE INDEX runs_by_parent ON runs (parent_id);

    CREATE TABLE events (
        run_id TEXT COLLATE "C" NOT NULL,
        seq    BIGINT NOT NULL,
        type   TEXT NOT NULL,
        v      INTEGER NOT NULL,
        ts     TEXT NOT NULL,
        turn   BIGINT,
        actor  TEXT NOT NULL,
        data   TEXT NOT NULL,
        ext    TEXT,
        PRIMARY KEY (run_id, seq)
    );
    CREATE FUNCTION helix_events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'helix: events are append-only';
    END
    $$;
    CREATE TRIGGER events_are_append_only BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION helix_events_are_append_only();
    CREATE TRIGGER events_are_append_only_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION helix_events_are_append_only();

    CREATE TABLE blobs (
        hash TEXT COLLATE "C" PRIMARY KEY,
        size BIGINT NOT NULL,
        data BYTEA NOT NULL
    );
    CREATE FUNCTION helix_blobs_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'helix: blobs are immutable';
    END
    $$;
    CREATE TRIGGER blobs_are_immutable BEFORE UPDATE OR DELETE ON blobs
        FOR EACH ROW EXECUTE FUNCTION helix_blobs_are_immutable();
    CREATE TRIGGER blobs_are_immutable_truncate BEFORE TRUNCATE ON blobs
        FOR EACH STATEMENT EXECUTE FUNCTION helix_blobs_are_immutable();
    """,
    # 1 -> 2: the driver's lease
    """
    ALTER TABLE runs ADD COLUMN lease_holder TEXT;
    ALTER TABLE runs ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN lease_expires DOUBLE PRECISION NOT NULL DEFAULT 0;
    """,
]


async def migrate(db: Any) -> None:
    """Bring the schema up to date; safe with several processes opening at once."""
    async with db.transaction():
        # A transaction-level lock is released at commit or rollback, even if this
        # process dies half-way, so no one ever waits on a stale lock.
        await db.execute("SELECT pg_advisory_xact_lock($1)", _LOCK)
        await db.execute(_SCHEMA_TABLE)
        version = await db.fetchval("SELECT version FROM helix_schema")
        if version is None:
            version = 0
            await db.execute("INSERT INTO helix_schema (version) VALUES (0)")
        if version > len(MIGRATIONS):
            raise StoreUnavailableError(
                f"the store's schema (version {version}) is newer than this Helix understands"
                f" ({len(MIGRATIONS)}): upgrade Helix"
            )
        for script in MIGRATIONS[version:]:
            await db.execute(script)
        await db.execute("UPDATE helix_schema SET version = $1", len(MIGRATIONS))
        await db.execute(POSTGRES_DERIVED)
