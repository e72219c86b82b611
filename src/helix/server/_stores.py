"""The stores a server keeps, all in the one database ``HELIX_DB`` names.

Events, accounts, automations, workflows, budgets and memory each have their own
tables there; ``open_stores`` opens them together and closes them in reverse order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from helix.accounts import AccountStore, open_accounts
from helix.automations import AutomationStore, open_automations
from helix.budgets import BudgetStore, open_budgets
from helix.kernel.log import EventStore, open_store
from helix.memory import Memories, open_memory
from helix.workflows import Workflows, open_workflows

from ._config import ServerConfig


@dataclass(frozen=True, slots=True)
class ServerStores:
    """What a server process reads and writes, each over its own connection."""

    events: EventStore
    accounts: AccountStore
    automations: AutomationStore
    workflows: Workflows
    budgets: BudgetStore
    memory: Memories


@asynccontextmanager
async def open_stores(config: ServerConfig) -> AsyncIterator[ServerStores]:
    """Open every store in ``config.db_url``; closed in reverse order on leaving."""
    async with AsyncExitStack() as closing:
        events = await open_store(config.db_url, durability=config.durability)
        closing.push_async_callback(events.close)
        accounts = await open_accounts(config.db_url)
        closing.push_async_callback(accounts.close)
        automations = await open_automations(config.db_url)
        closing.push_async_callback(automations.close)
        workflows = Workflows(await open_workflows(config.db_url))
        closing.push_async_callback(workflows.store.close)
        budgets = await open_budgets(config.db_url)
        closing.push_async_callback(budgets.close)
        memory = Memories(await open_memory(config.db_url))
        closing.push_async_callback(memory.store.close)
        yield ServerStores(events, accounts, automations, workflows, budgets, memory)
