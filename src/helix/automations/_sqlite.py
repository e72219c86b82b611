"""Automations in SQLite: the file the events live in, tables of their own."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import Automation, Firing
from ._store import (
    COLUMNS,
    AutomationExistsError,
    AutomationNotFoundError,
    AutomationStore,
    decode,
    encode,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS automations (
    id TEXT PRIMARY KEY, workspace TEXT NOT NULL, name TEXT NOT NULL, owner TEXT NOT NULL,
    body TEXT NOT NULL, paused INTEGER NOT NULL, created_at TEXT NOT NULL,
    active_since REAL NOT NULL, secret TEXT, UNIQUE (workspace, name));
CREATE TABLE IF NOT EXISTS automation_firings (
    automation_id TEXT NOT NULL, slot TEXT NOT NULL, slot_at REAL, fired_at TEXT NOT NULL,
    run_id TEXT, error TEXT, PRIMARY KEY (automation_id, slot));
"""


class SqliteAutomationStore(AutomationStore):
    """Automations in a SQLite file (WAL, shared with the event store)."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the automations {path}: {error}") from None

    @override
    async def add(self, automation: Automation, secret: str | None) -> None:
        a = automation
        try:
            self._db.execute(
                f"INSERT INTO automations ({COLUMNS}, secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (a.id, a.workspace, a.name, a.owner, encode(a), int(a.paused), a.created_at,
                 a.active_since, secret),
            )  # fmt: skip
        except sqlite3.IntegrityError:
            raise AutomationExistsError(
                f"workspace {a.workspace!r} already has an automation named {a.name!r}"
            ) from None

    @override
    async def get(self, automation_id: str) -> Automation | None:
        row = self._db.execute(
            f"SELECT {COLUMNS} FROM automations WHERE id = ?", (automation_id,)
        ).fetchone()
        return None if row is None else decode(row)

    @override
    async def list(self, workspaces: Collection[str] | None = None) -> list[Automation]:
        rows = self._db.execute(f"SELECT {COLUMNS} FROM automations ORDER BY workspace, name")
        return [decode(r) for r in rows if workspaces is None or r[1] in workspaces]

    @override
    async def set_paused(self, automation_id: str, paused: bool, *, active_since: float) -> None:
        if paused:
            sql, params = "UPDATE automations SET paused = 1 WHERE id = ?", (automation_id,)
        else:
            sql = "UPDATE automations SET paused = 0, active_since = ? WHERE id = ?"
            params = (active_since, automation_id)  # type: ignore[assignment]
        if self._db.execute(sql, params).rowcount == 0:
            raise AutomationNotFoundError(f"no automation {automation_id!r}")

    @override
    async def remove(self, automation_id: str) -> None:
        with self._db:
            self._db.execute("BEGIN")
            gone = self._db.execute("DELETE FROM automations WHERE id = ?", (automation_id,))
            self._db.execute(
                "DELETE FROM automation_firings WHERE automation_id = ?", (automation_id,)
            )
        if gone.rowcount == 0:
            raise AutomationNotFoundError(f"no automation {automation_id!r}")

    @override
    async def secret(self, automation_id: str) -> str | None:
        row = self._db.execute(
            "SELECT secret FROM automations WHERE id = ?", (automation_id,)
        ).fetchone()
        return None if row is None else row[0]

    @override
    async def claim(
        self, automation_id: str, slot: str, *, fired_at: str, slot_at: float | None = None
    ) -> bool:
        cursor = self._db.execute(
            "INSERT INTO automation_firings (automation_id, slot, slot_at, fired_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (automation_id, slot, slot_at, fired_at),
        )
        return cursor.rowcount == 1

    @override
    async def settle(
        self, automation_id: str, slot: str, *, run_id: str | None, error: str | None
    ) -> None:
        self._db.execute(
            "UPDATE automation_firings SET run_id = ?, error = ?"
            " WHERE automation_id = ? AND slot = ?",
            (run_id, error, automation_id, slot),
        )

    @override
    async def last_slot(self, automation_id: str) -> float | None:
        row = self._db.execute(
            "SELECT max(slot_at) FROM automation_firings WHERE automation_id = ?",
            (automation_id,),
        ).fetchone()
        return None if row[0] is None else float(row[0])

    @override
    async def last_firing(self, automation_id: str) -> Firing | None:
        row = self._db.execute(
            "SELECT slot, fired_at, run_id, error FROM automation_firings"
            " WHERE automation_id = ? ORDER BY fired_at DESC, slot DESC LIMIT 1",
            (automation_id,),
        ).fetchone()
        return (
            None
            if row is None
            else Firing(slot=row[0], fired_at=row[1], run_id=row[2], error=row[3])
        )

    @override
    async def close(self) -> None:
        self._db.close()
