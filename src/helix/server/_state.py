"""What a running server holds: the store, accounts, the engine, its executor, its supervisor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from typing_extensions import override

from helix.accounts import Accounts, open_accounts
from helix.api import StoreSpending
from helix.automations import AutomationStore
from helix.budgets import BudgetStore, open_budgets
from helix.distributed import RayPlacer, ray_address_of
from helix.kernel.log import EventStore, open_store
from helix.memory import Memories, RunMemory, open_memory
from helix.runtime import (
    SYSTEM_CLOCK,
    Clock,
    Engine,
    Executor,
    LocalExecutor,
    Placer,
    RunSetup,
    Supervisor,
)
from helix.tools import MemoryDoor, WorkflowEditor
from helix.workflows import Workflows, open_workflows

from ._auth import Signer
from ._config import ServerConfig
from ._limits import AttemptLimiter
from ._metrics import Metrics

if TYPE_CHECKING:
    from ._scheduler import Scheduler


class WorkspaceEngine(Engine):
    """The engine, with each run's ceiling narrowed by its workspace's stored policy."""

    def __init__(
        self,
        store: EventStore,
        accounts: Accounts,
        config: ServerConfig,
        workflows: Workflows | None = None,
        budgets: BudgetStore | None = None,
        memory: Memories | None = None,
    ) -> None:
        self.workflows = workflows
        """The workspaces' workflows (their ``edit_workflow`` calls go there)."""
        self.memory = memory
        """People's and workspaces' memory (their runs' memory tools reach it)."""
        super().__init__(
            store,
            home=config.home,
            env=config.env,
            scripts=config.scripts if config.scripts is not None else False,
            sources=config.sources,
            placer=_placer(config),
            workflows=self._editor,
            spending=None if budgets is None else StoreSpending(budgets),
            memory=self._memory_door if memory is not None else None,
        )
        self.accounts = accounts

    def _editor(self, setup: RunSetup) -> WorkflowEditor | None:
        """A run's ``edit_workflow`` callback: its workspace's workflows."""
        if self.workflows is None:
            return None
        return self.workflows.editor_for(setup.workspace, setup.run_id)

    def _memory_door(self, setup: RunSetup) -> MemoryDoor | None:
        """A run's memory: its person's (with their role now) and its workspace's."""
        if self.memory is None:
            return None
        return RunMemory(
            self.memory,
            workspace=setup.workspace,
            run_id=setup.run_id,
            actor=setup.actor,
            role_of=self._role_of,
        )

    async def _role_of(self, user: str, workspace: str) -> str | None:
        return (await self.accounts.store.roles(user)).get(workspace)

    @override
    async def setup(self, run_id: str) -> RunSetup:
        setup = await super().setup(run_id)
        ceiling = await self.accounts.policy(setup.workspace)
        setup.policy = ceiling.intersect(setup.policy)
        return setup


@asynccontextmanager
async def open_server_engine(config: ServerConfig) -> AsyncIterator[Engine]:
    """The server's engine, for another process (a worker, a Ray actor).

    Its own store and accounts connections, the server's settings: with
    ``functools.partial(open_server_engine, config)`` it is an ``EngineOpener``.
    """
    store = await open_store(config.db_url, durability=config.durability)
    try:
        account_store = await open_accounts(config.db_url)
        try:
            workflows = Workflows(await open_workflows(config.db_url))
            memory = Memories(await open_memory(config.db_url))
            try:
                budgets = await open_budgets(config.db_url)
                try:
                    accounts = Accounts(account_store, config.hashing)
                    yield WorkspaceEngine(store, accounts, config, workflows, budgets)
                finally:
                    await budgets.close()
                accounts = Accounts(account_store, config.hashing)
                yield WorkspaceEngine(store, accounts, config, workflows, memory)
            finally:
                await memory.store.close()
                await workflows.store.close()
        finally:
            await account_store.close()
    finally:
        await store.close()


def _placer(config: ServerConfig) -> Placer | None:
    """With the ray executor, a blueprint's ``placement`` puts its commands on nodes."""
    if config.executor != "ray":
        return None
    return RayPlacer(ray_address_of(config.ray_address or "", config.environment))


class ServerState:
    """Everything the routes share; one per app, built when the app starts."""

    def __init__(
        self,
        config: ServerConfig,
        store: EventStore,
        accounts: Accounts,
        signer: Signer,
        supervisor: Supervisor,
        metrics: Metrics,
        automations: AutomationStore,
        workflows: Workflows | None = None,
        budgets: BudgetStore | None = None,
        memory: Memories | None = None,
    ) -> None:
        self.config = config
        self.automations = automations
        self.clock: Clock = config.clock or SYSTEM_CLOCK
        """What time automations and webhooks read (``ServerConfig.clock``)."""
        self.store = store
        self.accounts = accounts
        self.signer = signer
        self.supervisor = supervisor
        self.metrics = metrics
        self.workflows = workflows
        """The workspaces' workflows (``helix.workflows``), in the same database."""
        self.budgets = budgets
        """The workspaces' cumulative budgets (``helix.budgets``), in the same database."""
        self.engine = WorkspaceEngine(store, accounts, config, workflows, budgets)
        self.memory = memory
        """People's and workspaces' memory (``helix.memory``), in the same database."""
        self.engine = WorkspaceEngine(store, accounts, config, workflows, memory)
        self.executor: Executor = LocalExecutor(self.engine, supervisor)
        """Where runs are driven (``helix.runtime.Executor``): the app's lifespan
        replaces it with the one ``config.executor`` names (``open_executor``)."""
        self.logins = AttemptLimiter(accounts.store, config.login_attempts_per_minute)
        self.scheduler: Scheduler | None = None
        """Fires automations (the app's lifespan makes it); webhooks fire through it too."""
        self.bootstrap_token: str | None = None
        """The first start's one-time login token (tests read it; people get the link)."""

    def drive(self, run_id: str) -> None:
        """Have the run driven by the executor, unless it is being driven already."""
        self.executor.submit(run_id)

    async def resume_all(self) -> None:
        """Drive every run left unfinished by a previous process (``Engine.unfinished``)."""
        for run_id in await self.engine.unfinished():
            self.executor.submit(run_id)

    def stop(self) -> None:
        """Stop driving runs (their logs keep them; the next start resumes them)."""
        for child in self.supervisor.children:
            self.supervisor.cancel_child(child)
