"""What a running server holds: the store, accounts, the engine, and its supervisor."""

from __future__ import annotations

import contextlib
from functools import partial

from typing_extensions import override

from helix.accounts import Accounts
from helix.errors import RunStateError
from helix.kernel.log import EventStore
from helix.runtime import ChildSpec, Engine, RunSetup, Supervisor

from ._auth import Signer
from ._config import ServerConfig
from ._limits import AttemptLimiter
from ._metrics import Metrics


class WorkspaceEngine(Engine):
    """The engine, with each run's ceiling narrowed by its workspace's stored policy."""

    def __init__(self, store: EventStore, accounts: Accounts, config: ServerConfig) -> None:
        super().__init__(
            store,
            home=config.home,
            env=config.env,
            scripts=config.scripts if config.scripts is not None else False,
            sources=config.sources,
        )
        self.accounts = accounts

    @override
    async def setup(self, run_id: str) -> RunSetup:
        setup = await super().setup(run_id)
        ceiling = await self.accounts.policy(setup.workspace)
        setup.policy = ceiling.intersect(setup.policy)
        return setup


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
    ) -> None:
        self.config = config
        self.store = store
        self.accounts = accounts
        self.signer = signer
        self.supervisor = supervisor
        self.metrics = metrics
        self.engine = WorkspaceEngine(store, accounts, config)
        self.logins = AttemptLimiter(accounts.store, config.login_attempts_per_minute)
        self.bootstrap_token: str | None = None
        """The first start's one-time login token (tests read it; people get the link)."""

    def drive(self, run_id: str) -> None:
        """Drive the run in this process, supervised, unless it is being driven already."""
        child = f"run:{run_id}"
        if child in self.supervisor.children:
            return
        spec = ChildSpec(id=child, start=partial(self._drive, run_id), restart="temporary")
        self.supervisor.start_child(spec)

    async def _drive(self, run_id: str) -> None:
        with contextlib.suppress(RunStateError):  # another process (or a resume) drives it
            await self.engine.drive(run_id)

    async def resume_all(self) -> None:
        """Drive every run left unfinished by a previous process (``Engine.resume_all``)."""
        await self.engine.resume_all()

    def stop(self) -> None:
        """Stop driving runs (their logs keep them; the next start resumes them)."""
        for child in self.supervisor.children:
            self.supervisor.cancel_child(child)
