"""Opening the budget store that sits beside the events named by ``HELIX_DB``."""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import parse_store_url

from ._store import BudgetStore


async def open_budgets(url: str) -> BudgetStore:
    """Open (creating its tables if needed) the budget store in the database ``url`` names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        from ._sqlite import SqliteBudgetStore

        return SqliteBudgetStore(Path(parsed.target))
    if parsed.backend == "postgres":
        from ._postgres import PostgresBudgetStore

        return await PostgresBudgetStore.open(parsed.target)
    raise ConfigError("budgets need a database: HELIX_DB must be sqlite:///PATH or postgresql://…")
