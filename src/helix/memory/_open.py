"""Opening the memory store that sits beside the events named by ``HELIX_DB``."""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import parse_store_url

from ._store import MemoryStore


async def open_memory(url: str) -> MemoryStore:
    """Open (creating its tables if needed) the memory store in the database ``url`` names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        from ._sqlite import SqliteMemoryStore

        return SqliteMemoryStore(Path(parsed.target))
    if parsed.backend == "postgres":
        from ._postgres import PostgresMemoryStore

        return await PostgresMemoryStore.open(parsed.target)
    raise ConfigError("memory needs a database: HELIX_DB must be sqlite:///PATH or postgresql://…")
