"""The budget store: one small typed interface, a SQLite and a PostgreSQL backend.

Budgets live in the same database as the events (tables of their own), so every
process driving runs on one ``HELIX_DB`` reserves against the same counts. Every
backend passes the one conformance suite in ``tests/budgets``.

A model call is a *charge*: held (its projected cost and tokens) before the call,
settled to what it cost after, or released. A hold counts until it lapses
(``lapses_at``): a process that crashed mid-call holds nothing for long.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ._model import BudgetCap, BudgetUsage, Charge, Passed

KEEP_LAPSED_S = 86400.0
"""How long a lapsed hold's row is kept (a late settle still finds it), in seconds."""

COUNT_SQL = (
    "SELECT coalesce(sum(CASE WHEN settled = 1 THEN usd END), 0),"
    " coalesce(sum(CASE WHEN settled = 1 THEN tokens END), 0),"
    " coalesce(sum(CASE WHEN settled = 0 THEN usd END), 0),"
    " coalesce(sum(CASE WHEN settled = 0 THEN tokens END), 0)"
    " FROM budgets_charges WHERE workspace = ? AND at >= ? AND at < ?"
    " AND (settled = 1 OR lapses_at > ?)"
)
"""What one budget counted in one period; ``AND blueprint = ?``/``AND person = ?`` narrow it."""

NARROW = {"workspace": "", "blueprint": " AND blueprint = ?", "person": " AND person = ?"}

ORDER = (
    "ORDER BY CASE kind WHEN 'workspace' THEN 0 WHEN 'blueprint' THEN 1 ELSE 2 END, name, period"
)


class BudgetStore(ABC):
    """Budgets per workspace, and the charges of model calls against them."""

    @abstractmethod
    async def put(self, budget: BudgetCap) -> None:
        """Store ``budget``, replacing the one of the same workspace, kind, name and period."""

    @abstractmethod
    async def remove(self, workspace: str, kind: str, name: str, period: str) -> bool:
        """Delete that budget (its charges stay: they count again if it is set again)."""

    @abstractmethod
    async def caps(self, workspace: str) -> list[BudgetCap]:
        """The workspace's budgets: workspace first, then blueprints, then persons."""

    @abstractmethod
    async def usage(self, workspace: str, *, now: float) -> list[BudgetUsage]:
        """Each of the workspace's budgets with what it counted in the period holding ``now``."""

    @abstractmethod
    async def reserve(self, charge: Charge, *, hold: str, lapses_at: float) -> Passed | None:
        """Hold ``charge`` as ``hold`` unless it would take a budget that applies past a cap.

        Atomic across processes: the check and the hold are one transaction, and two
        reservations in one workspace are made one after the other. Returns the first
        budget it would pass (and holds nothing), else ``None``.
        """

    @abstractmethod
    async def settle(self, hold: str, *, usd: float, tokens: int) -> None:
        """Count the held call at what it really cost (it no longer lapses)."""

    @abstractmethod
    async def release(self, hold: str) -> None:
        """Drop a hold (the call was not made)."""

    async def close(self) -> None:  # noqa: B027 (a no-op unless the backend holds resources)
        """Release the connection."""
