"""Workflow versions in PostgreSQL: the database the events live in, tables of their own."""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError, WorkflowConflictError

from ._sqlite import _COLUMNS, SCHEMA
from ._store import StoredVersion, WorkflowStore, stale


def _row(row: Any) -> StoredVersion:
    return StoredVersion(
        row[0], row[1], int(row[2]), json.loads(row[3]), row[4], row[5], row[6], row[7]
    )


class PostgresWorkflowStore(WorkflowStore):
    """Workflow versions in PostgreSQL, through a small asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str) -> PostgresWorkflowStore:
        """Connect and create the tables if they are missing."""
        import asyncpg

        try:
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"cannot reach PostgreSQL for workflows: {error}") from None
        async with pool.acquire() as conn:
            await conn.execute("SELECT pg_advisory_lock(7240718)")
            try:
                await conn.execute(SCHEMA)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(7240718)")
        return cls(pool)

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
        import asyncpg

        async with self._pool.acquire() as conn, conn.transaction():
            # One writer per workflow at a time: the lock is the workflow's, for this step.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"{workspace}/{name}")
            latest = int(
                await conn.fetchval(
                    "SELECT coalesce(max(version), 0) FROM workflows_versions"
                    " WHERE workspace = $1 AND name = $2",
                    workspace,
                    name,
                )
            )
            if base is not None and base != latest:
                raise WorkflowConflictError(stale(name, base, latest))
            try:
                await conn.execute(
                    f"INSERT INTO workflows_versions ({_COLUMNS})"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    workspace,
                    name,
                    latest + 1,
                    json.dumps(body),
                    by,
                    how,
                    at,
                    change,
                )
            except asyncpg.UniqueViolationError:
                raise WorkflowConflictError(stale(name, latest, latest + 1)) from None
        return latest + 1

    @override
    async def get(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredVersion | None:
        if version is None:
            row = await self._pool.fetchrow(
                f"SELECT {_COLUMNS} FROM workflows_versions WHERE workspace = $1 AND name = $2"
                " ORDER BY version DESC LIMIT 1",
                workspace,
                name,
            )
        else:
            row = await self._pool.fetchrow(
                f"SELECT {_COLUMNS} FROM workflows_versions"
                " WHERE workspace = $1 AND name = $2 AND version = $3",
                workspace,
                name,
                version,
            )
        return None if row is None else _row(row)

    @override
    async def history(self, workspace: str, name: str) -> list[StoredVersion]:
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM workflows_versions WHERE workspace = $1 AND name = $2"
            " ORDER BY version",
            workspace,
            name,
        )
        return [_row(row) for row in rows]

    @override
    async def latest(self, workspace: str) -> list[StoredVersion]:
        rows = await self._pool.fetch(
            f"SELECT DISTINCT ON (name) {_COLUMNS} FROM workflows_versions"
            " WHERE workspace = $1 ORDER BY name, version DESC",
            workspace,
        )
        return [_row(row) for row in rows]

    @override
    async def bind_run(self, run_id: str, workspace: str, name: str, purpose: str) -> None:
        await self._pool.execute(
            "INSERT INTO workflows_runs VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO UPDATE"
            " SET workspace = excluded.workspace, name = excluded.name, purpose = excluded.purpose",
            run_id,
            workspace,
            name,
            purpose,
        )

    @override
    async def bound(self, run_id: str) -> tuple[str, str, str] | None:
        row = await self._pool.fetchrow(
            "SELECT workspace, name, purpose FROM workflows_runs WHERE run_id = $1", run_id
        )
        return None if row is None else (row[0], row[1], row[2])

    @override
    async def close(self) -> None:
        await self._pool.close()
