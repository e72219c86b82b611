"""Accounts in SQLite: the file the events live in, tables of their own.

Statements run inline on the event loop's thread, as the event store's do: each is a
few microseconds on an indexed table.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, cast

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import (
    AccountExistsError,
    AccountNotFoundError,
    Role,
    StaleBlueprintVersionError,
    StoredBlueprint,
    User,
    Workspace,
    WorkspaceKind,
    stale_blueprint,
)
from ._store import AccountStore, TokenKind

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts_users (
    name TEXT PRIMARY KEY, password_hash TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts_workspaces (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, created_at TEXT NOT NULL, policy TEXT);
CREATE TABLE IF NOT EXISTS accounts_members (
    workspace TEXT NOT NULL REFERENCES accounts_workspaces(name),
    user_name TEXT NOT NULL REFERENCES accounts_users(name),
    role TEXT NOT NULL, PRIMARY KEY (workspace, user_name));
CREATE INDEX IF NOT EXISTS accounts_members_user ON accounts_members(user_name);
CREATE TABLE IF NOT EXISTS accounts_tokens (
    token_hash TEXT PRIMARY KEY, user_name TEXT NOT NULL REFERENCES accounts_users(name),
    kind TEXT NOT NULL, expires_at REAL);
CREATE TABLE IF NOT EXISTS accounts_secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS accounts_blueprint_versions (
    workspace TEXT NOT NULL REFERENCES accounts_workspaces(name),
    name TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL,
    by_actor TEXT NOT NULL, at TEXT NOT NULL, note TEXT NOT NULL,
    PRIMARY KEY (workspace, name, version));
CREATE TABLE IF NOT EXISTS accounts_attempts (key TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS accounts_attempts_by_key ON accounts_attempts(key, at);
CREATE INDEX IF NOT EXISTS accounts_attempts_by_time ON accounts_attempts(at);
"""

MIGRATE_BLUEPRINTS = """
INSERT INTO accounts_blueprint_versions
    SELECT workspace, name, 1, body, 'unknown', updated_at, 'saved before versions'
    FROM accounts_blueprints old WHERE NOT EXISTS (SELECT 1 FROM accounts_blueprint_versions v
        WHERE v.workspace = old.workspace AND v.name = old.name);
DROP TABLE accounts_blueprints;
"""
"""Blueprints stored before versions (one row per name, replaced in place) become version 1."""
BLUEPRINT_COLUMNS = "workspace, name, version, body, by_actor, at, note"
LATEST_BLUEPRINTS = (
    f"SELECT {BLUEPRINT_COLUMNS} FROM accounts_blueprint_versions v WHERE workspace = $1"
    " AND version = (SELECT max(version) FROM accounts_blueprint_versions l"
    " WHERE l.workspace = v.workspace AND l.name = v.name) ORDER BY name"
)


def blueprint_row(row: Any) -> StoredBlueprint:
    """A row of ``BLUEPRINT_COLUMNS`` as a value."""
    body = cast(dict[str, Any], json.loads(row[3]))
    return StoredBlueprint(row[0], row[1], int(row[2]), body, row[4], row[5], row[6])


class SqliteAccountStore(AccountStore):
    """Accounts in a SQLite file (WAL, shared with the event store)."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.executescript(SCHEMA)
            self._migrate()
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the account store {path}: {error}") from None

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            old = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts_blueprints'"
            ).fetchone()
            if old is not None:
                for statement in MIGRATE_BLUEPRINTS.split(";")[:2]:
                    db.execute(statement)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _insert(self, sql: str, params: tuple[Any, ...], what: str) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.IntegrityError:
            raise AccountExistsError(f"{what} already exists") from None

    @override
    async def add_user(self, name: str, password_hash: str | None, *, created_at: str) -> User:
        self._insert(
            "INSERT INTO accounts_users VALUES (?, ?, ?)",
            (name, password_hash, created_at),
            f"user {name!r}",
        )
        return User(name, password_hash, created_at)

    @override
    async def get_user(self, name: str) -> User | None:
        row = self._db.execute(
            "SELECT name, password_hash, created_at FROM accounts_users WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else User(*row)

    @override
    async def set_password(self, name: str, password_hash: str | None) -> None:
        cursor = self._db.execute(
            "UPDATE accounts_users SET password_hash = ? WHERE name = ?", (password_hash, name)
        )
        if cursor.rowcount == 0:
            raise AccountNotFoundError(f"no user {name!r}")

    @override
    async def count_users(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM accounts_users").fetchone()[0])

    @override
    async def add_workspace(self, name: str, kind: WorkspaceKind, *, created_at: str) -> Workspace:
        self._insert(
            "INSERT INTO accounts_workspaces VALUES (?, ?, ?, NULL)",
            (name, kind, created_at),
            f"workspace {name!r}",
        )
        return Workspace(name, kind, created_at, None)

    @override
    async def get_workspace(self, name: str) -> Workspace | None:
        row = self._db.execute(
            "SELECT name, kind, created_at, policy FROM accounts_workspaces WHERE name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        return Workspace(row[0], row[1], row[2], None if row[3] is None else json.loads(row[3]))

    @override
    async def set_role(self, workspace: str, user: str, role: Role) -> None:
        try:
            self._db.execute(
                "INSERT INTO accounts_members VALUES (?, ?, ?)"
                " ON CONFLICT (workspace, user_name) DO UPDATE SET role = excluded.role",
                (workspace, user, role),
            )
        except sqlite3.IntegrityError:
            raise AccountNotFoundError(f"no workspace {workspace!r} or no user {user!r}") from None

    @override
    async def roles(self, user: str) -> dict[str, Role]:
        rows = self._db.execute(
            "SELECT workspace, role FROM accounts_members WHERE user_name = ?", (user,)
        ).fetchall()
        return {w: cast(Role, r) for w, r in rows}

    @override
    async def members(self, workspace: str) -> dict[str, Role]:
        rows = self._db.execute(
            "SELECT user_name, role FROM accounts_members WHERE workspace = ?", (workspace,)
        ).fetchall()
        return {u: cast(Role, r) for u, r in rows}

    @override
    async def add_token(
        self, token_hash: str, user: str, kind: TokenKind, *, expires_at: float | None
    ) -> None:
        try:
            self._db.execute(
                "INSERT INTO accounts_tokens VALUES (?, ?, ?, ?)",
                (token_hash, user, kind, expires_at),
            )
        except sqlite3.IntegrityError:
            raise AccountNotFoundError(f"no user {user!r}") from None

    @override
    async def find_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        row = self._db.execute(
            "SELECT user_name FROM accounts_tokens WHERE token_hash = ? AND kind = ?"
            " AND (expires_at IS NULL OR expires_at > ?)",
            (token_hash, kind, now),
        ).fetchone()
        return None if row is None else str(row[0])

    @override
    async def take_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        row = self._db.execute(
            "DELETE FROM accounts_tokens WHERE token_hash = ? AND kind = ?"
            " AND (expires_at IS NULL OR expires_at > ?) RETURNING user_name",
            (token_hash, kind, now),
        ).fetchone()
        return None if row is None else str(row[0])

    @override
    async def remove_user(self, name: str) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM accounts_tokens WHERE user_name = ?", (name,))
            db.execute("DELETE FROM accounts_members WHERE user_name = ?", (name,))
            removed = db.execute("DELETE FROM accounts_users WHERE name = ?", (name,)).rowcount
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        if removed == 0:
            raise AccountNotFoundError(f"no user {name!r}")

    @override
    async def count_attempt(
        self, key: str, *, now: float, window_s: float, limit: int
    ) -> float | None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM accounts_attempts WHERE at <= ?", (now - window_s,))
            count, oldest = db.execute(
                "SELECT count(*), min(at) FROM accounts_attempts WHERE key = ?", (key,)
            ).fetchone()
            if count < limit:
                db.execute("INSERT INTO accounts_attempts VALUES (?, ?)", (key, now))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return None if count < limit else float(oldest)

    @override
    async def forget_attempt(self, key: str, *, at: float) -> None:
        self._db.execute(
            "DELETE FROM accounts_attempts WHERE rowid ="
            " (SELECT rowid FROM accounts_attempts WHERE key = ? AND at = ? LIMIT 1)",
            (key, at),
        )

    @override
    async def drop_tokens(self, user: str, kind: TokenKind) -> int:
        cursor = self._db.execute(
            "DELETE FROM accounts_tokens WHERE user_name = ? AND kind = ?", (user, kind)
        )
        return cursor.rowcount

    @override
    async def set_policy(self, workspace: str, policy: dict[str, Any] | None) -> None:
        text = None if policy is None else json.dumps(policy)
        cursor = self._db.execute(
            "UPDATE accounts_workspaces SET policy = ? WHERE name = ?", (text, workspace)
        )
        if cursor.rowcount == 0:
            raise AccountNotFoundError(f"no workspace {workspace!r}")

    @override
    async def add_blueprint(
        self,
        workspace: str,
        name: str,
        body: dict[str, Any],
        *,
        expected: int | None,
        by: str,
        at: str,
        note: str,
    ) -> StoredBlueprint:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT max(version) FROM accounts_blueprint_versions"
                " WHERE workspace = ? AND name = ?",
                (workspace, name),
            ).fetchone()
            latest = int(row[0] or 0)
            if expected is not None and expected != latest:
                raise StaleBlueprintVersionError(stale_blueprint(name, expected, latest))
            stored = StoredBlueprint(workspace, name, latest + 1, body, by, at, note)
            db.execute(
                f"INSERT INTO accounts_blueprint_versions ({BLUEPRINT_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (workspace, name, stored.version, json.dumps(body), by, at, note),
            )
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")
            raise AccountNotFoundError(f"no workspace {workspace!r}") from None
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return stored

    @override
    async def get_blueprint(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredBlueprint | None:
        sql = f"SELECT {BLUEPRINT_COLUMNS} FROM accounts_blueprint_versions"
        if version is None:
            sql += " WHERE workspace = ? AND name = ? ORDER BY version DESC LIMIT 1"
            params: tuple[Any, ...] = (workspace, name)
        else:
            sql += " WHERE workspace = ? AND name = ? AND version = ?"
            params = (workspace, name, version)
        row = self._db.execute(sql, params).fetchone()
        return None if row is None else blueprint_row(row)

    @override
    async def blueprint_history(self, workspace: str, name: str) -> list[StoredBlueprint]:
        rows = self._db.execute(
            f"SELECT {BLUEPRINT_COLUMNS} FROM accounts_blueprint_versions"
            " WHERE workspace = ? AND name = ? ORDER BY version",
            (workspace, name),
        ).fetchall()
        return [blueprint_row(row) for row in rows]

    @override
    async def latest_blueprints(self, workspace: str) -> list[StoredBlueprint]:
        rows = self._db.execute(LATEST_BLUEPRINTS.replace("$1", "?"), (workspace,)).fetchall()
        return [blueprint_row(row) for row in rows]

    @override
    async def secret(self, name: str, new: bytes) -> bytes:
        self._db.execute("INSERT OR IGNORE INTO accounts_secrets VALUES (?, ?)", (name, new))
        row = self._db.execute("SELECT value FROM accounts_secrets WHERE name = ?", (name,))
        return bytes(row.fetchone()[0])

    @override
    async def close(self) -> None:
        self._db.close()
