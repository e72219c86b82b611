"""Opening the workflow store that sits beside the events named by ``HELIX_DB``."""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import parse_store_url

from ._store import WorkflowStore


async def open_workflows(url: str) -> WorkflowStore:
    """Open (creating its tables if needed) the workflow store in the database ``url`` names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        from ._sqlite import SqliteWorkflowStore

        return SqliteWorkflowStore(Path(parsed.target))
    if parsed.backend == "postgres":
        from ._postgres import PostgresWorkflowStore

        return await PostgresWorkflowStore.open(parsed.target)
    raise ConfigError(
        "workflows need a database: HELIX_DB must be sqlite:///PATH or postgresql://…"
    )
