"""Opening the automation store that sits beside the events named by ``HELIX_DB``."""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import parse_store_url

from ._store import AutomationStore


async def open_automations(url: str) -> AutomationStore:
    """Open (creating its tables if needed) the automation store in the database ``url`` names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        from ._sqlite import SqliteAutomationStore

        return SqliteAutomationStore(Path(parsed.target))
    if parsed.backend == "postgres":
        from ._postgres import PostgresAutomationStore

        return await PostgresAutomationStore.open(parsed.target)
    raise ConfigError(
        "automations need a database: HELIX_DB must be sqlite:///PATH or postgresql://…"
    )
