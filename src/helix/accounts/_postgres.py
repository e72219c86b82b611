"""Accounts in PostgreSQL: the database the events live in, tables of their own."""

from __future__ import annotations

import json
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
from ._sqlite import BLUEPRINT_COLUMNS, LATEST_BLUEPRINTS, MIGRATE_BLUEPRINTS, SCHEMA, blueprint_row
from ._store import AccountStore, TokenKind

_PG_SCHEMA = SCHEMA.replace("BLOB", "BYTEA").replace("REAL", "DOUBLE PRECISION")


class PostgresAccountStore(AccountStore):
    """Accounts in PostgreSQL, through a small asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str) -> PostgresAccountStore:
        """Connect and create the tables if they are missing."""
        import asyncpg

        try:
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"cannot reach PostgreSQL for accounts: {error}") from None
        async with pool.acquire() as conn:
            # Two servers starting at once must not both create the tables.
            await conn.execute("SELECT pg_advisory_lock(7240713)")
            try:
                await conn.execute(_PG_SCHEMA)
                if await conn.fetchval("SELECT to_regclass('accounts_blueprints')") is not None:
                    async with conn.transaction():
                        await conn.execute(MIGRATE_BLUEPRINTS)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(7240713)")
        return cls(pool)

    async def _insert(self, sql: str, params: tuple[Any, ...], what: str) -> None:
        import asyncpg

        try:
            await self._pool.execute(sql, *params)
        except asyncpg.UniqueViolationError:
            raise AccountExistsError(f"{what} already exists") from None
        except asyncpg.ForeignKeyViolationError:
            raise AccountNotFoundError(f"{what}: the user or workspace does not exist") from None

    @override
    async def add_user(self, name: str, password_hash: str | None, *, created_at: str) -> User:
        await self._insert(
            "INSERT INTO accounts_users VALUES ($1, $2, $3)",
            (name, password_hash, created_at),
            f"user {name!r}",
        )
        return User(name, password_hash, created_at)

    @override
    async def get_user(self, name: str) -> User | None:
        row = await self._pool.fetchrow(
            "SELECT name, password_hash, created_at FROM accounts_users WHERE name = $1", name
        )
        return None if row is None else User(*row)

    @override
    async def set_password(self, name: str, password_hash: str | None) -> None:
        status = await self._pool.execute(
            "UPDATE accounts_users SET password_hash = $1 WHERE name = $2", password_hash, name
        )
        if status.endswith(" 0"):
            raise AccountNotFoundError(f"no user {name!r}")

    @override
    async def count_users(self) -> int:
        return int(await self._pool.fetchval("SELECT count(*) FROM accounts_users"))

    @override
    async def add_workspace(self, name: str, kind: WorkspaceKind, *, created_at: str) -> Workspace:
        await self._insert(
            "INSERT INTO accounts_workspaces VALUES ($1, $2, $3, NULL)",
            (name, kind, created_at),
            f"workspace {name!r}",
        )
        return Workspace(name, kind, created_at, None)

    @override
    async def get_workspace(self, name: str) -> Workspace | None:
        row = await self._pool.fetchrow(
            "SELECT name, kind, created_at, policy FROM accounts_workspaces WHERE name = $1", name
        )
        if row is None:
            return None
        return Workspace(row[0], row[1], row[2], None if row[3] is None else json.loads(row[3]))

    @override
    async def set_role(self, workspace: str, user: str, role: Role) -> None:
        await self._insert(
            "INSERT INTO accounts_members VALUES ($1, $2, $3)"
            " ON CONFLICT (workspace, user_name) DO UPDATE SET role = excluded.role",
            (workspace, user, role),
            f"membership of {user!r} in {workspace!r}",
        )

    @override
    async def roles(self, user: str) -> dict[str, Role]:
        rows = await self._pool.fetch(
            "SELECT workspace, role FROM accounts_members WHERE user_name = $1", user
        )
        return {r[0]: cast(Role, r[1]) for r in rows}

    @override
    async def members(self, workspace: str) -> dict[str, Role]:
        rows = await self._pool.fetch(
            "SELECT user_name, role FROM accounts_members WHERE workspace = $1", workspace
        )
        return {r[0]: cast(Role, r[1]) for r in rows}

    @override
    async def add_token(
        self, token_hash: str, user: str, kind: TokenKind, *, expires_at: float | None
    ) -> None:
        await self._insert(
            "INSERT INTO accounts_tokens VALUES ($1, $2, $3, $4)",
            (token_hash, user, kind, expires_at),
            f"token of {user!r}",
        )

    @override
    async def find_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        found = await self._pool.fetchval(
            "SELECT user_name FROM accounts_tokens WHERE token_hash = $1 AND kind = $2"
            " AND (expires_at IS NULL OR expires_at > $3)",
            token_hash,
            kind,
            now,
        )
        return None if found is None else str(found)

    @override
    async def take_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        found = await self._pool.fetchval(
            "DELETE FROM accounts_tokens WHERE token_hash = $1 AND kind = $2"
            " AND (expires_at IS NULL OR expires_at > $3) RETURNING user_name",
            token_hash,
            kind,
            now,
        )
        return None if found is None else str(found)

    @override
    async def remove_user(self, name: str) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM accounts_tokens WHERE user_name = $1", name)
            await conn.execute("DELETE FROM accounts_members WHERE user_name = $1", name)
            status = await conn.execute("DELETE FROM accounts_users WHERE name = $1", name)
        if status.endswith(" 0"):
            raise AccountNotFoundError(f"no user {name!r}")

    @override
    async def count_attempt(
        self, key: str, *, now: float, window_s: float, limit: int
    ) -> float | None:
        async with self._pool.acquire() as conn, conn.transaction():
            # One key's attempts are counted one at a time, on every server of the database.
            await conn.execute("SELECT pg_advisory_xact_lock(7240714, hashtext($1))", key)
            await conn.execute("DELETE FROM accounts_attempts WHERE at <= $1", now - window_s)
            row = await conn.fetchrow(
                "SELECT count(*), min(at) FROM accounts_attempts WHERE key = $1", key
            )
            assert row is not None
            count, oldest = int(row[0]), row[1]
            if count < limit:
                await conn.execute("INSERT INTO accounts_attempts VALUES ($1, $2)", key, now)
        return None if count < limit else float(oldest)

    @override
    async def forget_attempt(self, key: str, *, at: float) -> None:
        await self._pool.execute(
            "DELETE FROM accounts_attempts WHERE ctid ="
            " (SELECT ctid FROM accounts_attempts WHERE key = $1 AND at = $2 LIMIT 1)",
            key,
            at,
        )

    @override
    async def drop_tokens(self, user: str, kind: TokenKind) -> int:
        status = await self._pool.execute(
            "DELETE FROM accounts_tokens WHERE user_name = $1 AND kind = $2", user, kind
        )
        return int(status.rsplit(" ", 1)[-1])

    @override
    async def set_policy(self, workspace: str, policy: dict[str, Any] | None) -> None:
        text = None if policy is None else json.dumps(policy)
        status = await self._pool.execute(
            "UPDATE accounts_workspaces SET policy = $1 WHERE name = $2", text, workspace
        )
        if status.endswith(" 0"):
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
        import asyncpg

        try:
            async with self._pool.acquire() as conn, conn.transaction():
                # One name's saves are numbered one at a time, on every server of the database.
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(7240715, hashtext($1))", f"{workspace}/{name}"
                )
                latest = int(
                    await conn.fetchval(
                        "SELECT coalesce(max(version), 0) FROM accounts_blueprint_versions"
                        " WHERE workspace = $1 AND name = $2",
                        workspace,
                        name,
                    )
                )
                if expected is not None and expected != latest:
                    raise StaleBlueprintVersionError(stale_blueprint(name, expected, latest))
                stored = StoredBlueprint(workspace, name, latest + 1, body, by, at, note)
                await conn.execute(
                    f"INSERT INTO accounts_blueprint_versions ({BLUEPRINT_COLUMNS})"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    workspace, name, stored.version, json.dumps(body), by, at, note,
                )  # fmt: skip
        except asyncpg.ForeignKeyViolationError:
            raise AccountNotFoundError(f"no workspace {workspace!r}") from None
        return stored

    @override
    async def get_blueprint(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredBlueprint | None:
        sql = f"SELECT {BLUEPRINT_COLUMNS} FROM accounts_blueprint_versions"
        if version is None:
            row = await self._pool.fetchrow(
                sql + " WHERE workspace = $1 AND name = $2 ORDER BY version DESC LIMIT 1",
                workspace,
                name,
            )
        else:
            row = await self._pool.fetchrow(
                sql + " WHERE workspace = $1 AND name = $2 AND version = $3",
                workspace,
                name,
                version,
            )
        return None if row is None else blueprint_row(row)

    @override
    async def blueprint_history(self, workspace: str, name: str) -> list[StoredBlueprint]:
        rows = await self._pool.fetch(
            f"SELECT {BLUEPRINT_COLUMNS} FROM accounts_blueprint_versions"
            " WHERE workspace = $1 AND name = $2 ORDER BY version",
            workspace,
            name,
        )
        return [blueprint_row(row) for row in rows]

    @override
    async def latest_blueprints(self, workspace: str) -> list[StoredBlueprint]:
        rows = await self._pool.fetch(LATEST_BLUEPRINTS, workspace)
        return [blueprint_row(row) for row in rows]

    @override
    async def secret(self, name: str, new: bytes) -> bytes:
        await self._pool.execute(
            "INSERT INTO accounts_secrets VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", name, new
        )
        value = await self._pool.fetchval(
            "SELECT value FROM accounts_secrets WHERE name = $1", name
        )
        return bytes(value)

    @override
    async def close(self) -> None:
        await self._pool.close()
