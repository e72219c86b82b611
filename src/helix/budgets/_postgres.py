"""Budgets in PostgreSQL: the database the events live in, tables of their own.

A reservation is one transaction holding the workspace's advisory lock: reservations
in one workspace, from any server or worker, are checked and held one at a time.
"""

from __future__ import annotations

import re
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import BudgetCap, BudgetUsage, Charge, Counted, Passed, applies, passes, usage_of
from ._sqlite import SCHEMA, cap_of, count_args, counted_of
from ._store import KEEP_LAPSED_S, ORDER, BudgetStore

_PG_SCHEMA = SCHEMA.replace("REAL", "DOUBLE PRECISION").replace("INTEGER", "BIGINT")
_LOCK = 7240720


def _numbered(sql: str) -> str:
    """The statement with its ``?`` placeholders as ``$1``, ``$2`` and on."""
    count = iter(range(1, 1000))
    return re.sub(r"\?", lambda _: f"${next(count)}", sql)


class PostgresBudgetStore(BudgetStore):
    """Budgets in PostgreSQL, through a small asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str) -> PostgresBudgetStore:
        """Connect and create the tables if they are missing."""
        import asyncpg

        try:
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"cannot reach PostgreSQL for budgets: {error}") from None
        async with pool.acquire() as conn:
            await conn.execute(f"SELECT pg_advisory_lock({_LOCK})")  # one creator at a time
            try:
                await conn.execute(_PG_SCHEMA)
            finally:
                await conn.execute(f"SELECT pg_advisory_unlock({_LOCK})")
        return cls(pool)

    @override
    async def put(self, budget: BudgetCap) -> None:
        await self._pool.execute(
            "INSERT INTO budgets_caps VALUES ($1, $2, $3, $4, $5, $6)"
            " ON CONFLICT (workspace, kind, name, period)"
            " DO UPDATE SET usd = excluded.usd, tokens = excluded.tokens",
            budget.workspace, budget.kind, budget.name, budget.period, budget.usd, budget.tokens,
        )  # fmt: skip

    @override
    async def remove(self, workspace: str, kind: str, name: str, period: str) -> bool:
        status = await self._pool.execute(
            "DELETE FROM budgets_caps"
            " WHERE workspace = $1 AND kind = $2 AND name = $3 AND period = $4",
            workspace, kind, name, period,
        )  # fmt: skip
        return not str(status).endswith(" 0")

    async def _caps(self, conn: Any, workspace: str) -> list[BudgetCap]:
        rows = await conn.fetch(
            "SELECT workspace, kind, name, period, usd, tokens FROM budgets_caps"
            f" WHERE workspace = $1 {ORDER}",
            workspace,
        )
        return [cap_of(tuple(row)) for row in rows]

    @override
    async def caps(self, workspace: str) -> list[BudgetCap]:
        async with self._pool.acquire() as conn:
            return await self._caps(conn, workspace)

    @staticmethod
    async def _count(conn: Any, budget: BudgetCap, at: float) -> Counted:
        sql, args = count_args(budget, at)
        return counted_of(tuple(await conn.fetchrow(_numbered(sql), *args)))

    @override
    async def usage(self, workspace: str, *, now: float) -> list[BudgetUsage]:
        async with self._pool.acquire() as conn:
            caps = await self._caps(conn, workspace)
            return [usage_of(b, await self._count(conn, b, now), now) for b in caps]

    @override
    async def reserve(self, charge: Charge, *, hold: str, lapses_at: float) -> Passed | None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                f"SELECT pg_advisory_xact_lock({_LOCK}, hashtext($1))", charge.workspace
            )
            await conn.execute(
                "DELETE FROM budgets_charges WHERE settled = 0 AND lapses_at <= $1",
                charge.at - KEEP_LAPSED_S,
            )
            for budget in await self._caps(conn, charge.workspace):
                if applies(budget, charge):
                    passed = passes(budget, await self._count(conn, budget, charge.at), charge)
                    if passed is not None:
                        return passed  # the transaction holds nothing: it commits nothing
            await conn.execute(
                "INSERT INTO budgets_charges VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9)",
                hold, charge.workspace, charge.blueprint, charge.person, charge.run_id,
                charge.at, charge.usd, charge.tokens, lapses_at,
            )  # fmt: skip
        return None

    @override
    async def settle(self, hold: str, *, usd: float, tokens: int) -> None:
        await self._pool.execute(
            "UPDATE budgets_charges SET usd = $1, tokens = $2, settled = 1 WHERE id = $3",
            usd, tokens, hold,
        )  # fmt: skip

    @override
    async def release(self, hold: str) -> None:
        await self._pool.execute("DELETE FROM budgets_charges WHERE id = $1 AND settled = 0", hold)

    @override
    async def close(self) -> None:
        await self._pool.close()
