"""What the engine refuses before it creates a run: a world holding its data, unbound caps.

And a tool choice the run's tools cannot meet.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from helix.errors import ConfigError
from helix.kernel.events import Budget, person_of
from helix.kernel.log import EventStore, SqliteEventStore
from helix.providers import PriceBook, parse_model_name
from helix.tools import ToolRegistry

from ._forced import require_offered
from ._spending import Spending

if TYPE_CHECKING:
    from ._blueprint import Blueprint


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


async def require_bound(
    blueprint: Blueprint,
    prices: PriceBook,
    names: Sequence[str],
    budget: Budget,
    spending: Spending | None,
    workspace: str,
    actor: str,
) -> None:
    """Refuse a run one of whose USD caps could not bind its models: its own, or a cumulative one.

    ``prices``: the engine's (the blueprint's ``prices`` are added here). A cumulative
    budget (``spending``) with a USD cap that applies to the run (its workspace's, its
    blueprint's, its person's) binds only models with a known price, as the run's own.
    """
    book = blueprint.price_book(prices)
    if budget.usd is not None:
        require_prices(book, names)
    unpriced = [name for name in names if not book.knows(*parse_model_name(name))]
    if spending is None or not unpriced:
        return
    capped = await spending.usd_capped(workspace, blueprint.name, person_of(actor))
    if capped:
        name = unpriced[0]
        raise ConfigError(
            f"{name} has no known price, so the USD budget {capped[0]} cannot bind it: give"
            f' its price in the blueprint (prices: {{"{name}": {{input: …, output: …}}}}, USD'
            " per million tokens), or run it where no USD budget applies"
        )


def require_tool_choice(blueprint: Blueprint, tools: ToolRegistry, sources: bool) -> None:
    """Refuse a ``tool_choice`` naming a tool the run will not have (or ``required``, none).

    ``tools``: the engine's; the run offers the blueprint's ``tools`` of them (all, when
    it names none). ``sources``: the run has tool sources (MCP servers, plugins, the
    engine's own), whose tools are known only once its loop opens them: its loop checks
    then (``runtime/_forced.py``), and nothing is refused here.
    """
    if sources:
        return
    offered = blueprint.tools if blueprint.tools is not None else tools.names
    require_offered(blueprint.tool_choice, offered)
