"""Opening the account store that sits beside the events named by ``HELIX_DB``."""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import parse_store_url

from ._store import AccountStore


async def open_accounts(url: str) -> AccountStore:
    """Open (creating its tables if needed) the account store in the database ``url`` names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        from ._sqlite import SqliteAccountStore

        return SqliteAccountStore(Path(parsed.target))
    if parsed.backend == "postgres":
        from ._postgres import PostgresAccountStore

        return await PostgresAccountStore.open(parsed.target)
    raise ConfigError("accounts need a database: HELIX_DB must be sqlite:///PATH or postgresql://…")
