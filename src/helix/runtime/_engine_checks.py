"""What the engine refuses before it creates a run: a world holding its data, unbound caps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from helix.errors import ConfigError
from helix.kernel.log import EventStore, SqliteEventStore
from helix.providers import PriceBook, parse_model_name


def refuse_own_data(home: Path, store: EventStore, world: Path) -> None:
    """``ConfigError`` if ``world`` holds Helix's own data (its home, its SQLite store).

    A run's snapshots, tools and file views read and write its world: they would
    copy the store into the object store, let the agent rewrite it, and (by opening
    and closing the database file in the process holding it) drop SQLite's locks,
    so that another process's connection may reset the write-ahead log under it.
    """
    own = [home.resolve()]
    if isinstance(store, SqliteEventStore):
        own.append(store.path.resolve())
    for path in own:
        if path == world or path.is_relative_to(world):
            raise ConfigError(
                f"the world {world} holds Helix's own data ({path}): a run may not see"
                " or change it; choose a folder that does not contain it, or keep"
                " HELIX_HOME and HELIX_DB elsewhere"
            )


def require_prices(prices: PriceBook, names: Sequence[str]) -> None:
    """Refuse a USD cap that could not bind: a model with no known price costs ``null``."""
    for name in names:
        if not prices.knows(*parse_model_name(name)):
            raise ConfigError(
                f"{name} has no known price, so a USD budget cannot bind it: give its price"
                f' in the blueprint (prices: {{"{name}": {{input: …, output: …}}}}, USD per'
                " million tokens) or drop the USD cap"
            )
