"""The one door every run command goes through, chosen once from the environment.

A server when ``HELIX_SERVER`` (+ ``HELIX_TOKEN``) or ``helix login`` names one
(``HttpApi``); else the store here (``LocalApi``, as the person at this terminal).
Commands take a ``Door`` and call its ``api``; what differs between the two is only
where a run is driven: the server drives its own, and a run started here is driven in
this process while it is shown (``watch``), or in a process of its own (``detach``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from helix.config import Settings

from ._common import who

if TYPE_CHECKING:
    from helix.accounts import AccountStore
    from helix.api import HelixApi, LocalApi, Run
    from helix.kernel.session import SessionState
    from helix.memory import Memories
    from helix.runtime import Blueprint, ReplyHub
    from helix.telemetry import OtelSettings
    from helix.workflows import Workflows

T = TypeVar("T")


class Door:
    """The ``HelixApi`` in use, and the runs it asked this process to drive."""

    def __init__(
        self,
        api: HelixApi,
        local: LocalApi | None = None,
        here: list[str] | None = None,
        otel: OtelSettings | None = None,
    ) -> None:
        self.api = api
        self.local = local
        self.here = [] if here is None else here
        """Runs the local door started or resumed: driven by ``watch``, or ``detach``."""
        self.otel = otel
        """Where the runs driven here export their traces (docs/telemetry.md); ``None``: off."""

    async def drive_exporting(self, run_id: str, work: Awaitable[T]) -> T:
        """Await ``work`` (driving ``run_id`` here), exporting its trace if that is on."""
        if self.local is None or self.otel is None:
            return await work
        from helix.telemetry import export_while

        return await export_while(self.local.store, self.otel, run_id, work)

    def world(self, directory: str | None) -> str | Path | None:
        """``--dir``: a path here (default: the current directory).

        With a server: the name of a folder of the workspace's worlds (default: a new one).
        """
        if self.local is None:
            return directory
        return Path(directory).expanduser() if directory else Path.cwd()

    async def create(
        self,
        objective: str,
        *,
        model: str | None,
        blueprint: Blueprint | str | None,
        world: str | Path | None,
        budget_usd: float | None,
        auto_approve: bool,
        unattended: bool,
        detach: bool = False,
        workspace: str | None = None,
        budget_tokens: int | None = None,
    ) -> Run:
        """Start a run; ``unattended``: nobody answers it, so its asks are refused at once.

        Any other run (detached or not) waits for an answer from any client until the
        approval's deadline. ``detach`` here: the background process will notify
        ``HELIX_NOTIFY``, so that setting is checked first. ``workspace``: the one a
        trusted project file names (default: the door's own).
        """
        if detach and self.local is not None:
            from ._notices import check_notices

            check_notices(Settings.from_env())
        return await self.api.create(
            objective, model=model, blueprint=blueprint, world=world, workspace=workspace,
            budget_usd=budget_usd, auto_approve=auto_approve, attended=not unattended,
            budget_tokens=budget_tokens,
        )  # fmt: skip

    async def driven_elsewhere(self, run_id: str) -> bool:
        """Whether another process drives the run (a server always drives its own)."""
        return self.local is not None and await self.local.engine.is_driven(run_id)

    def detach(self, run_id: str) -> None:
        """Leave the run to be driven: by the server, or by a background process here."""
        if run_id in self.here:
            self.here.remove(run_id)
            subprocess.Popen(  # --wait: a pause waits for a resume, as the run's driver
                [sys.executable, "-m", "helix", "resume", run_id, "--wait"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )

    async def watch(self, run_id: str, *, json: bool, after: int, wait: bool = False) -> int:
        """Show the run live (driving it here if it is this process's) until it ends.

        Exit 0 when it completed; 1 when it failed or was cancelled, or a question went
        unanswered; 5 when it paused, said why and how to resume (``wait``: wait at a
        pause for a resume from elsewhere instead); 130 when the person left with Ctrl-C
        (a run driven here is paused).
        """
        from ._live import Driving, asking, drive_while_showing

        ask = asking(json)
        driving: Driving | None = None
        local = self.local
        engine = None
        if local is not None and run_id in self.here:
            engine = local.engine
            self.here.remove(run_id)

            async def drive(until: Callable[[SessionState], bool]) -> None:
                await self.drive_exporting(
                    run_id, self._drive(local, run_id, until=until, tell=not ask)
                )

            driving = drive
        return await drive_while_showing(
            self.api, run_id, driving, json=json, after=after, ask=ask, wait=wait, engine=engine
        )

    @staticmethod
    async def _drive(
        local: LocalApi, run_id: str, *, until: Callable[[SessionState], bool], tell: bool
    ) -> None:
        """Drive the run here; ``tell``: nobody asks here, so ``HELIX_NOTIFY`` is told."""
        if not tell:
            await local.engine.drive(run_id, until=until)
            return
        from ._notices import drive_telling

        await drive_telling(local.store, run_id, local.engine.drive(run_id, until=until))


async def with_door(use: Callable[[Door], Awaitable[T]]) -> T:
    """Open the door the environment names, use it, close it."""
    from helix.api import current_login

    login = current_login()
    if login is not None:
        from helix.api import HttpApi

        remote = HttpApi(login.url, token=login.token)
        try:
            return await use(Door(remote))
        finally:
            await remote.aclose()
    from helix.api import LocalApi, StoreSpending
    from helix.budgets import open_budgets
    from helix.kernel.log import open_store
    from helix.telemetry import read_otel_settings

    from ._live import engine_for

    settings = Settings.from_env()
    otel = read_otel_settings()  # a bad setting is an error before anything is done
    store = await open_store(settings.db_url, durability=settings.durability)
    async with AsyncExitStack() as closing:  # what the command opened, closed in reverse
        closing.push_async_callback(store.close)
        spending = StoreSpending(lambda: open_budgets(settings.db_url))  # opened on first need
        closing.push_async_callback(spending.aclose)

        async def workflows() -> Workflows:  # only the workflow commands open their store
            from helix.workflows import Workflows, open_workflows

            opened = Workflows(await open_workflows(settings.db_url))
            closing.push_async_callback(opened.store.close)
            return opened

        async def accounts() -> AccountStore:  # only the blueprint commands open accounts
            from helix.accounts import open_accounts

            opened = await open_accounts(settings.db_url)
            closing.push_async_callback(opened.close)
            return opened

        memories: list[Memories] = []
        memory_lock = asyncio.Lock()

        async def memory() -> Memories:  # opened once a command or a run's tool needs it
            async with memory_lock:
                if not memories:
                    from helix.memory import Memories, open_memory

                    memories.append(Memories(await open_memory(settings.db_url)))
                    closing.push_async_callback(memories[0].store.close)
            return memories[0]

        @cache
        def replies() -> ReplyHub:  # made with the engine: its runs stream to the door's views
            from helix.runtime import ReplyHub

            return ReplyHub()

        here: list[str] = []  # the runs the door asks to drive: driven by the command
        local = LocalApi(
            lambda: engine_for(store, spending=spending, memory=memory, deltas=replies()),
            store=store, home=settings.home, actor=who(), drive=here.append,
            workflows=workflows, budgets=spending.store, accounts=accounts, memory=memory,
            replies=replies,
        )  # fmt: skip
        return await use(Door(local, local, here, otel))
