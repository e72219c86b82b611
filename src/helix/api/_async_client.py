"""``helix.AsyncClient``: the SDK, embedded (a store on this machine) or against a server.

It is a ``HelixApi``: every operation is the chosen implementation's, unchanged.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncGenerator, Iterable, Mapping
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from helix.kernel.events import RunStatus
from helix.kernel.log import EventStore

from ._blueprint_client import AsyncClientBlueprints
from ._budget_client import AsyncClientBudgets
from ._choice_models import ChoiceCard, Chosen
from ._graph_models import GraphRun
from ._graphs import PlanArg
from ._live_models import ProcessList
from ._login import current_login
from ._memory_client import AsyncClientMemory
from ._models import (
    Approval,
    Comparison,
    Decided,
    Decision,
    FileEntry,
    Imported,
    Kept,
    Point,
    Rollback,
    Run,
    RunEvent,
    RunList,
    Spend,
)
from ._node_models import Drained, NodeList
from ._protocol import HelixApi
from ._reply_models import ReplyPiece
from ._trace_models import Span
from ._workflow_client import AsyncClientWorkflows

if TYPE_CHECKING:  # the runtime loads when a run is made, not when a door is chosen
    from helix.accounts import AccountStore
    from helix.automations import Automation, AutomationCreated, AutomationList, AutomationSpec
    from helix.runtime import Blueprint, CandidatePolicy, PolicyReplay


class AsyncClient(
    AsyncClientWorkflows, AsyncClientBudgets, AsyncClientBlueprints, AsyncClientMemory
):
    """Runs, from Python (async). Use it in ``async with``.

    ``AsyncClient()`` works embedded on the store ``HELIX_DB``/``HELIX_HOME`` name (runs
    are driven in this process while the client is open); ``AsyncClient(url, token=…)``
    talks to ``helix serve``; ``AsyncClient(store=…)`` uses a store you opened.
    ``AsyncClient.from_env()`` picks the server ``HELIX_SERVER`` names, if any.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        store: EventStore | None = None,
        home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
        api: HelixApi | None = None,
    ) -> None:
        """Choose the door.

        Args:
            url: A server's root URL (``http://127.0.0.1:8000``); None: embedded.
            token: The server's bearer token (an API token or a login's).
            store: Embedded: this store (it stays yours to close); default: the
                environment's (``HELIX_DB``), opened on entering and closed on leaving.
            home: Embedded: ``HELIX_HOME`` (the store, unless ``HELIX_DB`` names one; objects,
                worlds, locks); default: the environment's.
            env: Embedded: the settings (``HELIX_HOME``, ``HELIX_DB``, ``HELIX_USER``) and the
                variables models are opened with (keys, base URLs); default: ``os.environ``.
            user: Embedded: who the appends are by (``user:NAME``); default: ``HELIX_USER``
                or the login name.
            api: Any ``HelixApi`` to wrap instead (tests, other transports).
        """
        if url is not None and store is not None:
            raise ValueError("pass a server url or a store, not both")
        self._url, self._token, self._store = url, token, store
        self._home = None if home is None else Path(home)
        self._env = dict(os.environ if env is None else env)
        self._user = user
        self._api = api
        self._closing = contextlib.AsyncExitStack()
        """What an embedded client opened (store, workflows, budgets, memory, accounts)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AsyncClient:
        """The server ``HELIX_SERVER`` (+ ``HELIX_TOKEN``) or a ``helix login`` names; else here."""
        env = os.environ if env is None else env
        login = current_login(env)
        if login is not None:
            return cls(login.url, token=login.token)
        return cls(env=env)

    @property
    def api(self) -> HelixApi:
        """The implementation in use (``LocalApi`` or ``HttpApi``); open the client first."""
        if self._api is None:
            raise RuntimeError("open the client first: async with AsyncClient(…) as client")
        return self._api

    async def __aenter__(self) -> Self:
        if self._api is None:
            self._api = await self._open()
        return self

    async def _open(self) -> HelixApi:
        if self._url is not None:
            from ._http import HttpApi

            return HttpApi(self._url, token=self._token)
        from helix.config import Settings
        from helix.kernel.log import open_store
        from helix.runtime import Engine, ReplyHub

        from ._local import LocalApi

        overlay = {} if self._home is None else {"HELIX_HOME": str(self._home)}
        settings = Settings.from_env({**self._env, **overlay})  # the store under ``home``
        closing = self._closing
        store = self._store
        if store is None:
            store = await open_store(settings.db_url, durability=settings.durability)
            closing.push_async_callback(store.close)
        from helix.budgets import open_budgets
        from helix.memory import Memories, RunMemory, open_memory
        from helix.workflows import Workflows, open_workflows

        from ._budgets import StoreSpending

        url = settings.db_url
        workflows = Workflows(await open_workflows(url))
        closing.push_async_callback(workflows.store.close)
        memory = Memories(await open_memory(url))
        closing.push_async_callback(memory.store.close)
        spending = StoreSpending(lambda: open_budgets(url))  # opened on first need
        closing.push_async_callback(spending.aclose)
        engine = Engine(
            store,
            home=settings.home,
            env=self._env,
            workflows=lambda setup: workflows.editor_for(setup.workspace, setup.run_id),
            memory=lambda setup: RunMemory(
                memory, workspace=setup.workspace, run_id=setup.run_id, actor=setup.actor
            ),
            spending=spending,
            deltas=(replies := ReplyHub()),
        )
        user = self._user or self._env.get("HELIX_USER") or _login_name()
        local = LocalApi(
            engine,
            replies=replies,
            actor=f"user:{user}",
            workflows=workflows,
            accounts=partial(self._open_accounts, url),
            memory=memory,
            budgets=spending.store,
        )
        return await local.__aenter__()

    async def _open_accounts(self, url: str) -> AccountStore:
        """The account store of stored blueprints, opened when first needed (and closed)."""
        from helix.accounts import open_accounts

        accounts = await open_accounts(url)
        self._closing.push_async_callback(accounts.close)
        return accounts

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop driving runs here (their logs keep them), close what the client opened."""
        api, self._api = self._api, None
        try:
            if api is not None:
                await api.aclose()
        finally:
            closing, self._closing = self._closing, contextlib.AsyncExitStack()
            await closing.aclose()

    # -- the operations: HelixApi's, documented there ---------------------------------

    async def create(
        self,
        objective: str,
        *,
        model: str | None = None,
        blueprint: Blueprint | dict[str, Any] | str | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_tokens: int | None = None,
    ) -> Run:
        """Start a run; it is driven in the background (here, or by the server)."""
        return await self.api.create(
            objective, model=model, blueprint=blueprint, world=world, workspace=workspace,
            budget_usd=budget_usd, auto_approve=auto_approve, attended=attended,
            budget_tokens=budget_tokens,
        )  # fmt: skip

    async def runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunList:
        """A page of runs, newest first."""
        return await self.api.runs(status=status, workspace=workspace, limit=limit, cursor=cursor)

    async def get(self, run_id: str) -> Run:
        """One run."""
        return await self.api.get(run_id)

    def events(
        self, run_id: str, *, after: int = -1, follow: bool = False
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events after ``after``; with ``follow``, live ones until it ends."""
        return self.api.events(run_id, after=after, follow=follow)

    def replies(self, run_id: str) -> AsyncGenerator[ReplyPiece, None]:
        """The pieces of the run's replies as they stream, until the run ends."""
        return self.api.replies(run_id)

    async def wait(self, run_id: str) -> Run:
        """Wait until the run ends; the run as it ended."""
        async with contextlib.aclosing(self.events(run_id, follow=True)) as events:
            async for _event in events:
                pass
        return await self.get(run_id)

    async def approvals(self, run_id: str) -> list[Approval]:
        """The run's pending approval requests."""
        return await self.api.approvals(run_id)

    async def decide(
        self,
        run_id: str,
        request_id: str | None,
        decision: Decision,
        *,
        reason: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> Decided:
        """Allow or deny a pending request (``None``: the run's only one).

        A source's question (``Approval.question``) is answered by allowing it with
        ``answer`` (its fields) and declined by denying it.
        """
        return await self.api.decide(run_id, request_id, decision, reason=reason, answer=answer)

    async def steer(self, run_id: str, message: str) -> None:
        """Tell the agent something before its next model call."""
        await self.api.steer(run_id, message)

    async def choices(self, run_id: str) -> list[ChoiceCard]:
        """The run's options cards waiting for a person's choice."""
        return await self.api.choices(run_id)

    async def choose(self, run_id: str, component_id: str | None, choice: str) -> Chosen:
        """Choose an option (by id) on a waiting card (``None``: the run's only one)."""
        return await self.api.choose(run_id, component_id, choice)

    async def pause(self, run_id: str) -> Run:
        """Pause at the next safe point."""
        return await self.api.pause(run_id)

    async def resume(
        self,
        run_id: str,
        *,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        max_turns: int | None = None,
        max_seconds: float | None = None,
    ) -> Run:
        """Resume (with new caps, if given) and drive the run."""
        return await self.api.resume(
            run_id, budget_usd=budget_usd, budget_tokens=budget_tokens,
            max_turns=max_turns, max_seconds=max_seconds,
        )  # fmt: skip

    async def cancel(self, run_id: str) -> Run:
        """Cancel the run."""
        return await self.api.cancel(run_id)

    async def fork(
        self, run_id: str, *, turn: int, message: str | None = None, model: str | None = None
    ) -> Run:
        """Fork where a turn ended, with its own world; the fork is driven too."""
        return await self.api.fork(run_id, turn=turn, message=message, model=model)

    async def files(
        self, run_id: str, path: str | None = None, *, turn: Point = "now"
    ) -> list[FileEntry]:
        """The world's paths at or under ``path``, now or at a turn."""
        return await self.api.files(run_id, path, turn=turn)

    async def read(self, run_id: str, path: str, *, turn: Point = "now") -> bytes:
        """A file's content, now or at a turn."""
        return await self.api.read(run_id, path, turn=turn)

    async def diff(
        self, run_id: str, *, start: Point = "start", end: Point = "now", path: str | None = None
    ) -> str:
        """A unified diff of the world between two points."""
        return await self.api.diff(run_id, start=start, end=end, path=path)

    async def rollback(self, run_id: str, *, to: Point = "start") -> Rollback:
        """Restore the world to its start or a turn's end."""
        return await self.api.rollback(run_id, to=to)

    async def compare(self, run_a: str, run_b: str) -> Comparison:
        """Both runs and the diff from A's last world to B's."""
        return await self.api.compare(run_a, run_b)

    async def keep(self, run_id: str) -> Kept:
        """Make the original directory hold this branch's world."""
        return await self.api.keep(run_id)

    def export(self, run_id: str) -> AsyncGenerator[str, None]:
        """The run's log as JSON Lines."""
        return self.api.export(run_id)

    async def import_run(
        self, lines: Iterable[str], *, as_id: str | None = None, workspace: str | None = None
    ) -> Imported:
        """Import an exported log as a new run."""
        return await self.api.import_run(lines, as_id=as_id, workspace=workspace)

    async def spend(
        self,
        *,
        workspace: str | None = None,
        by: str = "model",
        bucket: str | None = None,
        since: str | None = None,
        until: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        blueprint: str | None = None,
        person: str | None = None,
    ) -> Spend:
        """What runs' own model calls cost, grouped and over time.

        Grouped ``by`` model, provider, blueprint, workspace, person or run, and per
        ``bucket`` (``day``/``hour``); ``since``/``until`` (a date, a UTC time or an age
        like ``7d``), ``model`` (``provider:model``), ``provider``, ``blueprint``,
        ``person`` and ``workspace`` filter the calls counted. A word it cannot take:
        ``ConfigError``.
        """
        return await self.api.spend(
            workspace=workspace,
            by=by,
            bucket=bucket,
            since=since,
            until=until,
            model=model,
            provider=provider,
            blueprint=blueprint,
            person=person,
        )

    async def processes(self, run_id: str) -> ProcessList:
        """The background processes of the run's live world (``HelixApi.processes``)."""
        return await self.api.processes(run_id)

    async def trace(self, run_id: str) -> Span:
        """The run's turns, model calls, gate checks and tool calls as timed spans."""
        return await self.api.trace(run_id)

    async def world_names(self, workspace: str) -> list[str]:
        """The folders of a workspace's worlds, by name."""
        return await self.api.world_names(workspace)

    async def policy_replay(self, run_id: str, policy: CandidatePolicy) -> PolicyReplay:
        """What ``policy`` would have done with the run's logged calls (nothing runs)."""
        return await self.api.policy_replay(run_id, policy)

    async def policy_replay_workspace(
        self, workspace: str, policy: CandidatePolicy
    ) -> list[PolicyReplay]:
        """The same over every run of a workspace, oldest first."""
        return await self.api.policy_replay_workspace(workspace, policy)

    async def create_graph(
        self,
        plan: PlanArg,
        *,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_usd: float | None = None,
    ) -> Run:
        """Start a task graph from a plan (a ``Plan``, its data, or a file's path)."""
        return await self.api.create_graph(
            plan, world=world, workspace=workspace, auto_approve=auto_approve,
            attended=attended, budget_usd=budget_usd,
        )  # fmt: skip

    async def graph(self, run_id: str) -> GraphRun:
        """The graph run and its tasks' states."""
        return await self.api.graph(run_id)

    async def retry_task(self, run_id: str, task: str) -> GraphRun:
        """Try a graph's failed task again (a paused graph is resumed)."""
        return await self.api.retry_task(run_id, task)

    async def nodes(self) -> NodeList:
        """Where runs are driven: each node's state, resources, labels and runs."""
        return await self.api.nodes()

    async def drain_node(self, node_id: str) -> Drained:
        """Stop giving the node runs; its runs move at their next turn boundary."""
        return await self.api.drain_node(node_id)

    async def automations(self, *, workspace: str | None = None) -> AutomationList:
        """The automations of your workspaces (or of ``workspace``), with next and last firing."""
        return await self.api.automations(workspace=workspace)

    async def automation(self, automation_id: str) -> Automation:
        """One automation."""
        return await self.api.automation(automation_id)

    async def add_automation(
        self, spec: AutomationSpec, *, workspace: str | None = None
    ) -> AutomationCreated:
        """Add an automation; a webhook's secret is in the answer, once."""
        return await self.api.add_automation(spec, workspace=workspace)

    async def pause_automation(self, automation_id: str) -> Automation:
        """Stop it firing."""
        return await self.api.pause_automation(automation_id)

    async def resume_automation(self, automation_id: str) -> Automation:
        """Fire it again from now on."""
        return await self.api.resume_automation(automation_id)

    async def remove_automation(self, automation_id: str) -> None:
        """Delete it (the runs it started stay)."""
        await self.api.remove_automation(automation_id)


def _login_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "local"
