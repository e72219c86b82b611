"""The derived tables: data rebuilt from the log, never the source of truth.

``fold_snapshots`` keeps folds of a run's log at some seqs (see ``FoldSnapshot``);
``events_turn_ends`` is an index of each run's ``turn.ended`` rows by turn, so finding
where a turn ends is a lookup rather than a scan. Neither is part of the versioned
schema: both are created if missing whenever a store opens, either may be dropped at
any time (``DROP TABLE fold_snapshots``, ``DROP INDEX events_turn_ends``) and is rebuilt,
and an older Helix opening the database ignores them.
"""

from __future__ import annotations

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
