"""What a running server holds: the store, accounts, the engine, its executor, its supervisor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from typing_extensions import override

from helix.accounts import Accounts
from helix.api import StoreSpending
from helix.distributed import RayPlacer, ray_address_of
from helix.memory import RunMemory
from helix.runtime import (
    SYSTEM_CLOCK,
    Clock,
    Engine,
    Executor,
    LocalExecutor,
    Placer,
    ReplyHub,
    RunSetup,
    Supervisor,
)
from helix.tools import MemoryDoor, WorkflowEditor

from ._auth import Signer
from ._config import ServerConfig
from ._limits import AttemptLimiter
from ._metrics import Metrics
from ._stores import ServerStores, open_stores

if TYPE_CHECKING:
    from ._scheduler import Scheduler


class WorkspaceEngine(Engine):
    """The engine, with each run's ceiling narrowed by its workspace's stored policy."""

    def __init__(self, stores: ServerStores, accounts: Accounts, config: ServerConfig) -> None:
        self.workflows = stores.workflows
        """The workspaces' workflows (their ``edit_workflow`` calls go there)."""
        self.memory = stores.memory
        """People's and workspaces' memory (their runs' memory tools reach it)."""
        super().__init__(
            stores.events,
            home=config.home,
            env=config.env,
            scripts=config.scripts if config.scripts is not None else False,
            sources=config.sources,
            placer=_placer(config),
            workflows=self._editor,
            spending=StoreSpending(stores.budgets),
            memory=self._memory_door,
        )
        self.accounts = accounts

    def _editor(self, setup: RunSetup) -> WorkflowEditor | None:
        """A run's ``edit_workflow`` callback: its workspace's workflows."""
        return self.workflows.editor_for(setup.workspace, setup.run_id)

    def _memory_door(self, setup: RunSetup) -> MemoryDoor | None:
        """A run's memory: its person's (with their role now) and its workspace's."""
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
    async with open_stores(config) as stores:
        yield WorkspaceEngine(stores, Accounts(stores.accounts, config.hashing), config)


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
        stores: ServerStores,
        accounts: Accounts,
        signer: Signer,
        supervisor: Supervisor,
        metrics: Metrics,
    ) -> None:
        self.config = config
        self.automations = stores.automations
        self.clock: Clock = config.clock or SYSTEM_CLOCK
        """What time automations and webhooks read (``ServerConfig.clock``)."""
        self.store = stores.events
        self.accounts = accounts
        self.signer = signer
        self.supervisor = supervisor
        self.metrics = metrics
        self.workflows = stores.workflows
        """The workspaces' workflows (``helix.workflows``), in the same database."""
        self.budgets = stores.budgets
        """The workspaces' cumulative budgets (``helix.budgets``), in the same database."""
        self.memory = stores.memory
        """People's and workspaces' memory (``helix.memory``), in the same database."""
        self.replies = ReplyHub(config.ws_queue)
        """The pieces of runs' replies as they stream, for the views that watch them
        (``/runs/{id}/stream?replies=true``): runs driven here, or by the workers of the
        ``processes`` executor, stream while a view watches them."""
        self.engine = WorkspaceEngine(stores, accounts, config)
        self.engine.deltas = self.replies
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
