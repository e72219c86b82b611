"""Budgets in SQLite: the file the events live in, tables of their own.

A reservation is one ``BEGIN IMMEDIATE`` transaction: SQLite's write lock makes the
check and the hold of every process on the file one at a time.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import (
    BudgetCap,
    BudgetUsage,
    Charge,
    Counted,
    Passed,
    applies,
    passes,
    period_bounds,
    usage_of,
)
from ._store import COUNT_SQL, KEEP_LAPSED_S, NARROW, ORDER, BudgetStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS budgets_caps (
    workspace TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, period TEXT NOT NULL,
    usd REAL, tokens INTEGER, PRIMARY KEY (workspace, kind, name, period));
CREATE TABLE IF NOT EXISTS budgets_charges (
    id TEXT PRIMARY KEY, workspace TEXT NOT NULL, blueprint TEXT NOT NULL, person TEXT,
    run_id TEXT NOT NULL, at REAL NOT NULL, usd REAL NOT NULL, tokens INTEGER NOT NULL,
    settled INTEGER NOT NULL, lapses_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS budgets_charges_by_time ON budgets_charges(workspace, at);
"""


def cap_of(row: Any) -> BudgetCap:
    """A ``budgets_caps`` row (workspace, kind, name, period, usd, tokens) as a budget."""
    workspace, kind, name, period, usd, tokens = row
    return BudgetCap(
        workspace=workspace, kind=kind, name=name, period=period, usd=usd,
        tokens=None if tokens is None else int(tokens),
    )  # fmt: skip


def count_args(budget: BudgetCap, at: float) -> tuple[str, list[Any]]:
    """The query counting ``budget``'s charges in the period holding ``at``, and its values."""
    start, end = period_bounds(budget.period, at)
    args: list[Any] = [budget.workspace, start, end, at]
    if budget.kind != "workspace":
        args.append(budget.name)
    return COUNT_SQL + NARROW[budget.kind], args


def counted_of(row: Any) -> Counted:
    """A count row as ``Counted``."""
    return Counted(float(row[0]), int(row[1]), float(row[2]), int(row[3]))


class SqliteBudgetStore(BudgetStore):
    """Budgets in a SQLite file (WAL, shared with the event store)."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the budget store {path}: {error}") from None

    @override
    async def put(self, budget: BudgetCap) -> None:
        self._db.execute(
            "INSERT INTO budgets_caps VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (workspace, kind, name, period)"
            " DO UPDATE SET usd = excluded.usd, tokens = excluded.tokens",
            (budget.workspace, budget.kind, budget.name, budget.period, budget.usd, budget.tokens),
        )

    @override
    async def remove(self, workspace: str, kind: str, name: str, period: str) -> bool:
        cursor = self._db.execute(
            "DELETE FROM budgets_caps WHERE workspace = ? AND kind = ? AND name = ? AND period = ?",
            (workspace, kind, name, period),
        )
        return cursor.rowcount > 0

    @override
    async def caps(self, workspace: str) -> list[BudgetCap]:
        rows = self._db.execute(
            "SELECT workspace, kind, name, period, usd, tokens FROM budgets_caps"
            f" WHERE workspace = ? {ORDER}",
            (workspace,),
        ).fetchall()
        return [cap_of(row) for row in rows]

    def _count(self, budget: BudgetCap, at: float) -> Counted:
        sql, args = count_args(budget, at)
        return counted_of(self._db.execute(sql, args).fetchone())

    @override
    async def usage(self, workspace: str, *, now: float) -> list[BudgetUsage]:
        return [usage_of(b, self._count(b, now), now) for b in await self.caps(workspace)]

    @override
    async def reserve(self, charge: Charge, *, hold: str, lapses_at: float) -> Passed | None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "DELETE FROM budgets_charges WHERE settled = 0 AND lapses_at <= ?",
                (charge.at - KEEP_LAPSED_S,),
            )
            for budget in await self.caps(charge.workspace):
                if applies(budget, charge):
                    passed = passes(budget, self._count(budget, charge.at), charge)
                    if passed is not None:
                        db.execute("ROLLBACK")
                        return passed
            db.execute(
                "INSERT INTO budgets_charges VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                (hold, charge.workspace, charge.blueprint, charge.person, charge.run_id,
                 charge.at, charge.usd, charge.tokens, lapses_at),
            )  # fmt: skip
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return None

    @override
    async def settle(self, hold: str, *, usd: float, tokens: int) -> None:
        self._db.execute(
            "UPDATE budgets_charges SET usd = ?, tokens = ?, settled = 1 WHERE id = ?",
            (usd, tokens, hold),
        )

    @override
    async def release(self, hold: str) -> None:
        self._db.execute("DELETE FROM budgets_charges WHERE id = ? AND settled = 0", (hold,))

    @override
    async def close(self) -> None:
        self._db.close()
