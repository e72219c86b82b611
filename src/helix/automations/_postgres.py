"""Automations in PostgreSQL: the database the events live in, tables of their own."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import Automation, Firing
from ._sqlite import SCHEMA
from ._store import (
    COLUMNS,
    AutomationExistsError,
    AutomationNotFoundError,
    AutomationStore,
    decode,
    encode,
)

_PG_SCHEMA = SCHEMA.replace("REAL", "DOUBLE PRECISION")


class PostgresAutomationStore(AutomationStore):
    """Automations in PostgreSQL, through a small asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str) -> PostgresAutomationStore:
        """Connect and create the tables if they are missing."""
        import asyncpg

        try:
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(
                f"cannot reach PostgreSQL for automations: {error}"
            ) from None
        async with pool.acquire() as conn:
            # Two servers starting at once must not both create the tables.
            await conn.execute("SELECT pg_advisory_lock(7240714)")
            try:
                await conn.execute(_PG_SCHEMA)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(7240714)")
        return cls(pool)

    @override
    async def add(self, automation: Automation, secret: str | None) -> None:
        import asyncpg

        a = automation
        try:
            await self._pool.execute(
                f"INSERT INTO automations ({COLUMNS}, secret)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                a.id, a.workspace, a.name, a.owner, encode(a), int(a.paused), a.created_at,
                a.active_since, secret,
            )  # fmt: skip
        except asyncpg.UniqueViolationError:
            raise AutomationExistsError(
                f"workspace {a.workspace!r} already has an automation named {a.name!r}"
            ) from None

    @override
    async def get(self, automation_id: str) -> Automation | None:
        row = await self._pool.fetchrow(
            f"SELECT {COLUMNS} FROM automations WHERE id = $1", automation_id
        )
        return None if row is None else decode(row)

    @override
    async def list(self, workspaces: Collection[str] | None = None) -> list[Automation]:
        if workspaces is None:
            rows = await self._pool.fetch(
                f"SELECT {COLUMNS} FROM automations ORDER BY workspace, name"
            )
        else:
            rows = await self._pool.fetch(
                f"SELECT {COLUMNS} FROM automations WHERE workspace = ANY($1::text[])"
                " ORDER BY workspace, name",
                list(workspaces),
            )
        return [decode(r) for r in rows]

    @override
    async def set_paused(self, automation_id: str, paused: bool, *, active_since: float) -> None:
        if paused:
            status = await self._pool.execute(
                "UPDATE automations SET paused = 1 WHERE id = $1", automation_id
            )
        else:
            status = await self._pool.execute(
                "UPDATE automations SET paused = 0, active_since = $1 WHERE id = $2",
                active_since,
                automation_id,
            )
        if status.endswith(" 0"):
            raise AutomationNotFoundError(f"no automation {automation_id!r}")

    @override
    async def remove(self, automation_id: str) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            status = await conn.execute("DELETE FROM automations WHERE id = $1", automation_id)
            await conn.execute(
                "DELETE FROM automation_firings WHERE automation_id = $1", automation_id
            )
        if status.endswith(" 0"):
            raise AutomationNotFoundError(f"no automation {automation_id!r}")

    @override
    async def secret(self, automation_id: str) -> str | None:
        value = await self._pool.fetchval(
            "SELECT secret FROM automations WHERE id = $1", automation_id
        )
        return None if value is None else str(value)

    @override
    async def claim(
        self, automation_id: str, slot: str, *, fired_at: str, slot_at: float | None = None
    ) -> bool:
        status = await self._pool.execute(
            "INSERT INTO automation_firings (automation_id, slot, slot_at, fired_at)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            automation_id, slot, slot_at, fired_at,
        )  # fmt: skip
        return bool(status.endswith(" 1"))

    @override
    async def settle(
        self, automation_id: str, slot: str, *, run_id: str | None, error: str | None
    ) -> None:
        await self._pool.execute(
            "UPDATE automation_firings SET run_id = $1, error = $2"
            " WHERE automation_id = $3 AND slot = $4",
            run_id, error, automation_id, slot,
        )  # fmt: skip

    @override
    async def last_slot(self, automation_id: str) -> float | None:
        value = await self._pool.fetchval(
            "SELECT max(slot_at) FROM automation_firings WHERE automation_id = $1",
            automation_id,
        )
        return None if value is None else float(value)

    @override
    async def last_firing(self, automation_id: str) -> Firing | None:
        row = await self._pool.fetchrow(
            "SELECT slot, fired_at, run_id, error FROM automation_firings"
            " WHERE automation_id = $1 ORDER BY fired_at DESC, slot DESC LIMIT 1",
            automation_id,
        )
        if row is None:
            return None
        return Firing(slot=row[0], fired_at=row[1], run_id=row[2], error=row[3])

    @override
    async def close(self) -> None:
        await self._pool.close()
