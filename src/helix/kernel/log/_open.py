"""Opening a store from a URL: ``sqlite:///PATH``, ``memory://`` or ``postgresql://…``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from helix.errors import ConfigError
from helix.kernel.events import EventRegistry

from ._memory import MemoryEventStore
from ._records import Durability
from ._sqlite import SqliteEventStore
from ._store import EventStore


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL."""

    backend: Literal["sqlite", "postgres", "memory"]
    target: str
    """The file path for SQLite, the DSN for PostgreSQL, empty for memory."""


def parse_store_url(url: str) -> StoreUrl:
    """Parse and check a store URL; ``ConfigError`` explains what is wrong with it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(
                f"invalid store URL {url!r}: a SQLite URL is sqlite:///PATH (three slashes),"
                " e.g. sqlite:///home/me/helix.db"
            )
        if not parts.path or parts.path.endswith("/"):
            raise ConfigError(f"invalid store URL {url!r}: it names no database file")
        # sqlite:////abs/path splits as "//abs/path"; POSIX would keep the double slash.
        return StoreUrl("sqlite", "/" + parts.path.lstrip("/"))
    if scheme in ("postgresql", "postgres"):
        if not parts.hostname and "host=" not in parts.query:
            raise ConfigError(f"invalid store URL {url!r}: it names no host")
        return StoreUrl("postgres", url)
    if scheme == "memory":
        return StoreUrl("memory", "")
    raise ConfigError(
        f"invalid store URL {url!r}: expected sqlite:///PATH, postgresql://USER@HOST/DB"
        " or memory://"
    )


async def open_store(
    url: str,
    *,
    durability: Durability = "normal",
    registry: EventRegistry | None = None,
) -> EventStore:
    """Open (creating and migrating if needed) the store the URL names."""
    parsed = parse_store_url(url)
    if parsed.backend == "sqlite":
        return SqliteEventStore(Path(parsed.target), durability=durability, registry=registry)
    if parsed.backend == "memory":
        return MemoryEventStore(registry=registry)
    from helix.kernel.log._postgres import PostgresEventStore

    return await PostgresEventStore.open(parsed.target, durability=durability, registry=registry)
