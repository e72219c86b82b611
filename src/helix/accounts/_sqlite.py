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

from ._model import AccountExistsError, AccountNotFoundError, Role, User, Workspace, WorkspaceKind
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
CREATE TABLE IF NOT EXISTS accounts_blueprints (
    workspace TEXT NOT NULL REFERENCES accounts_workspaces(name),
    name TEXT NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (workspace, name));
CREATE TABLE IF NOT EXISTS accounts_attempts (key TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS accounts_attempts_by_key ON accounts_attempts(key, at);
CREATE INDEX IF NOT EXISTS accounts_attempts_by_time ON accounts_attempts(at);
"""


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
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the account store {path}: {error}") from None

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
    async def put_blueprint(
        self, workspace: str, name: str, body: dict[str, Any], *, updated_at: str
    ) -> None:
        try:
            self._db.execute(
                "INSERT INTO accounts_blueprints VALUES (?, ?, ?, ?) ON CONFLICT"
                " (workspace, name) DO UPDATE SET body = excluded.body,"
                " updated_at = excluded.updated_at",
                (workspace, name, json.dumps(body), updated_at),
            )
        except sqlite3.IntegrityError:
            raise AccountNotFoundError(f"no workspace {workspace!r}") from None

    @override
    async def get_blueprint(self, workspace: str, name: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT body FROM accounts_blueprints WHERE workspace = ? AND name = ?",
            (workspace, name),
        ).fetchone()
        return None if row is None else cast(dict[str, Any], json.loads(row[0]))

    @override
    async def blueprint_names(self, workspace: str) -> list[str]:
        rows = self._db.execute(
            "SELECT name FROM accounts_blueprints WHERE workspace = ? ORDER BY name",
            (workspace,),
        ).fetchall()
        return [str(row[0]) for row in rows]

    @override
    async def secret(self, name: str, new: bytes) -> bytes:
        self._db.execute("INSERT OR IGNORE INTO accounts_secrets VALUES (?, ?)", (name, new))
        row = self._db.execute("SELECT value FROM accounts_secrets WHERE name = ?", (name,))
        return bytes(row.fetchone()[0])

    @override
    async def close(self) -> None:
        self._db.close()
