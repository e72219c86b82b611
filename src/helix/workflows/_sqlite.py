"""Workflow versions in SQLite: the file the events live in, tables of their own."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError, WorkflowConflictError

from ._store import StoredVersion, WorkflowStore, stale

SCHEMA = """
CREATE TABLE IF NOT EXISTS workflows_versions (
    workspace TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
    body TEXT NOT NULL, by_actor TEXT NOT NULL, how TEXT NOT NULL, at TEXT NOT NULL,
    change TEXT NOT NULL, PRIMARY KEY (workspace, name, version));
CREATE TABLE IF NOT EXISTS workflows_runs (
    run_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, name TEXT NOT NULL,
    purpose TEXT NOT NULL);
"""
_COLUMNS = "workspace, name, version, body, by_actor, how, at, change"


def _row(row: Any) -> StoredVersion:
    return StoredVersion(row[0], row[1], int(row[2]), json.loads(row[3]), *row[4:])


class SqliteWorkflowStore(WorkflowStore):
    """Workflow versions in a SQLite file (WAL, shared with the event store)."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the workflow store {path}: {error}") from None

    @override
    async def add_version(
        self,
        workspace: str,
        name: str,
        body: dict[str, Any],
        *,
        base: int | None,
        by: str,
        how: str,
        at: str,
        change: str,
    ) -> int:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT max(version) FROM workflows_versions WHERE workspace = ? AND name = ?",
                (workspace, name),
            ).fetchone()
            latest = int(row[0] or 0)
            if base is not None and base != latest:
                raise WorkflowConflictError(stale(name, base, latest))
            db.execute(
                f"INSERT INTO workflows_versions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (workspace, name, latest + 1, json.dumps(body), by, how, at, change),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return latest + 1

    @override
    async def get(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredVersion | None:
        where = "workspace = ? AND name = ?"
        if version is None:
            sql = f"SELECT {_COLUMNS} FROM workflows_versions WHERE {where} ORDER BY version DESC"
            row = self._db.execute(sql + " LIMIT 1", (workspace, name)).fetchone()
        else:
            sql = f"SELECT {_COLUMNS} FROM workflows_versions WHERE {where} AND version = ?"
            row = self._db.execute(sql, (workspace, name, version)).fetchone()
        return None if row is None else _row(row)

    @override
    async def history(self, workspace: str, name: str) -> list[StoredVersion]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM workflows_versions WHERE workspace = ? AND name = ?"
            " ORDER BY version",
            (workspace, name),
        ).fetchall()
        return [_row(row) for row in rows]

    @override
    async def latest(self, workspace: str) -> list[StoredVersion]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM workflows_versions v WHERE workspace = ? AND version ="
            " (SELECT max(version) FROM workflows_versions w"
            "  WHERE w.workspace = v.workspace AND w.name = v.name) ORDER BY name",
            (workspace,),
        ).fetchall()
        return [_row(row) for row in rows]

    @override
    async def bind_run(self, run_id: str, workspace: str, name: str, purpose: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO workflows_runs VALUES (?, ?, ?, ?)",
            (run_id, workspace, name, purpose),
        )

    @override
    async def bound(self, run_id: str) -> tuple[str, str, str] | None:
        row = self._db.execute(
            "SELECT workspace, name, purpose FROM workflows_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    @override
    async def close(self) -> None:
        self._db.close()
