"""``LocalApi``: the protocol over the engine and the store, in this process.

Every operation is the runtime's own function (``Engine.create``/``drive``, ``decide``,
``fork_with_world``, ``retry_task``…), so this door adds no behaviour of its own: the
CLI's embedded mode and the server's routes are thin adapters over it. Runs it starts
are driven by a supervisor it owns (``async with``), or by its ``drive`` callback.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Iterable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeAlias

from helix.errors import NotFoundError, RunStateError
from helix.kernel.events import TERMINAL_EVENTS, TERMINAL_STATUSES, Payload, RunStatus
from helix.kernel.log import EventStore, RunRecord, export_lines
from helix.kernel.session import replay_run
from helix.world import parse_point

from ._analysis import RunAnalysis
from ._automations import AutomationDoor, AutomationSetup
from ._blueprint_door import AccountsSource, LocalBlueprints, recorded_version
from ._budgets import BudgetSource, LocalBudgets, raised_caps
from ._choice_models import ChoiceCard, Chosen
from ._graphs import GraphDoor
from ._ids import resolve_run
from ._importing import import_run
from ._memory_door import LocalMemory, MemorySource
from ._models import (
    Approval,
    Comparison,
    Decided,
    Decision,
    Imported,
    Kept,
    Point,
    Rollback,
    Run,
    RunEvent,
    RunList,
)
from ._nodes import NodeDoor
from ._replies_door import LocalReplies
from ._workflow_door import LocalWorkflows, WorkflowsSource
from ._world_reads import WorldReads
from ._worlds import list_world_names, run_folder

if TYPE_CHECKING:  # the runtime loads when a run is made or changed, not to read runs
    from helix.runtime import Blueprint, Engine, Executor, ReplyHub, Supervisor

BlueprintLookup = Callable[[str, str], Awaitable["Blueprint"]]
"""(workspace, name) → the workspace's stored blueprint (a server's accounts hold them)."""
BlueprintArg: TypeAlias = "Blueprint | dict[str, Any] | str | None"

_PAGE = 1000


class LocalApi(
    NodeDoor,
    AutomationDoor,
    LocalWorkflows,
    LocalBudgets,
    LocalBlueprints,
    LocalMemory,
    WorldReads,
    LocalReplies,
    RunAnalysis,
    GraphDoor,
):
    """The engine and its store behind ``HelixApi``, acting as ``actor``."""

    def __init__(
        self,
        engine: Engine | Callable[[], Engine],
        *,
        store: EventStore | None = None,
        home: Path | None = None,
        actor: str = "user:local",
        workspace: str = "default",
        worlds: Path | None = None,
        world_paths: bool = True,
        blueprints: BlueprintLookup | None = None,
        drive: Callable[[str], None] | None = None,
        workspaces: Collection[str] | None = None,
        executor: Executor | None = None,
        automations: AutomationSetup | None = None,
        workflows: WorkflowsSource | None = None,
        budgets: BudgetSource | None = None,
        accounts: AccountsSource | None = None,
        memory: MemorySource | None = None,
        replies: ReplyHub | Callable[[], ReplyHub] | None = None,
    ) -> None:
        """An API over ``engine``.

        Args:
            engine: Creates and drives runs; its store is the log. Or a function that
                makes it when first needed (then give its ``store`` and ``home``):
                reading runs then loads no engine (a command line starts faster).
            store: With an engine function: the store the engine will have.
            home: With an engine function: the ``HELIX_HOME`` the engine will have.
            actor: Who the appends are by (``user:NAME``).
            workspace: Where runs go when a call names none.
            worlds: The folder of named worlds (``worlds/WORKSPACE/NAME``); default
                ``HELIX_HOME/worlds``.
            world_paths: Whether ``world`` may also be a path on this machine (a server
                says no: its callers name folders under their workspace's worlds).
            blueprints: Finds a blueprint by name; default: a name is a file's path.
            drive: Drives a run in the background; default: this object's supervisor.
            workspaces: The workspaces whose runs the caller may see (a server's caller);
                default: every run. Others are not found, by id, prefix or ``last``.
            executor: Where runs are driven (a server's), for ``nodes`` and
                ``drain_node``; default: this machine as one node, ``local``.
            automations: Their store, blueprints and clock; ``None``: none here.
            workflows: The workflows (``helix.workflows.Workflows``, or a function
                opening them when first needed); default: none (``ConfigError``).
            budgets: The budget store (``helix.budgets``, or a function opening it);
                default: the engine's ``StoreSpending``'s, if it has one.
            accounts: The account store of stored blueprints (or a function opening it);
                with it (and no ``blueprints``) a name given to ``create`` is a stored
                blueprint's (``NAME`` or ``NAME@N``; see ``names_stored``), its version
                recorded in the run.
            memory: Memory (``helix.memory.Memories``, or a function opening it); the
                caller's roles are ``workspaces`` when it maps names to roles.
            replies: Where the engine's runs stream their replies (the ``ReplyHub``
                that is its ``deltas``, or a function making it when first needed), for
                ``replies``; default: none (nothing streams to this door's callers).
        """
        if callable(engine):
            if store is None or home is None:
                raise ValueError("an engine function needs the store and home it will have")
            self._engine: Engine | None = None
            self._make_engine: Callable[[], Engine] | None = engine
        else:
            self._engine, self._make_engine = engine, None
            store, home = engine.store, engine.home
        self.store: EventStore = store
        self.actor = actor
        self.workspace = workspace
        self.worlds = worlds if worlds is not None else home / "worlds"
        self.world_paths = world_paths
        self._blueprints = blueprints
        self._drive = drive
        self.visible = None if workspaces is None else frozenset(workspaces)
        self.roles = dict(workspaces) if isinstance(workspaces, Mapping) else None
        self.executor, self.automation_setup = executor, automations
        self._workflow_source, self.budget_source = workflows, budgets
        self.accounts_source, self._memory_source = accounts, memory
        self._reply_source = replies
        self._stack: AsyncExitStack | None = None
        self._supervisor: Supervisor | None = None

    @property
    def engine(self) -> Engine:
        """The engine (made now if it was given as a function)."""
        if self._engine is None:
            assert self._make_engine is not None
            self._engine = self._make_engine()
        return self._engine

    async def __aenter__(self) -> Self:
        if self._drive is None and self._supervisor is None:
            from helix.runtime import open_supervisor

            self._stack = AsyncExitStack()
            self._supervisor = await self._stack.enter_async_context(open_supervisor())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop driving the runs this object started (their logs keep them)."""
        supervisor, stack = self._supervisor, self._stack
        self._supervisor = self._stack = None
        if supervisor is not None and stack is not None:
            for child in supervisor.children:
                supervisor.cancel_child(child)
            await stack.aclose()

    def drive(self, run_id: str) -> None:
        """Drive the run in the background, unless this object drives it already."""
        if self._drive is not None:
            self._drive(run_id)
            return
        if self._supervisor is None:
            raise RunStateError("LocalApi drives runs only inside `async with LocalApi(…)`")
        from helix.runtime import ChildSpec

        child = f"run:{run_id}"
        if child not in self._supervisor.children:
            start = partial(self._drive_run, run_id)
            self._supervisor.start_child(ChildSpec(id=child, start=start, restart="temporary"))

    async def _drive_run(self, run_id: str) -> None:
        with contextlib.suppress(RunStateError):  # another process drives it
            await self.engine.drive(run_id)

    # -- runs -------------------------------------------------------------------------

    async def create(
        self,
        objective: str,
        *,
        model: str | None = None,
        blueprint: BlueprintArg = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_tokens: int | None = None,
        why: Payload | None = None,
    ) -> Run:
        """Start a run and drive it in the background (``HelixApi.create``)."""
        workspace = workspace or self.workspace
        loaded, version = await self._blueprint(blueprint, workspace)
        folder, made = run_folder(self.worlds, workspace, world, paths=self.world_paths)
        try:
            record = await self.engine.create(
                objective,
                blueprint=loaded,
                model=model,
                world=folder,
                budget_usd=budget_usd,
                budget_tokens=budget_tokens,
                auto_approve=auto_approve,
                attended=attended,
                workspace=workspace,
                actor=self.actor,
                blueprint_version=version,
            )
        except BaseException:
            if made:  # a refused run leaves no empty world behind
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        await self.record_why(record, why)  # before it is driven: what started it
        self.drive(record.id)
        return await self._run(record)

    async def _blueprint(
        self, blueprint: BlueprintArg, workspace: str
    ) -> tuple[Blueprint | None, int | None]:
        """The blueprint to run, and its version if it is a stored one."""
        from helix.runtime import Blueprint

        if blueprint is None or isinstance(blueprint, Blueprint):
            return blueprint, None
        if isinstance(blueprint, dict):
            return Blueprint.parse(blueprint, source="invalid blueprint"), None
        if self._blueprints is not None:
            return await self._blueprints(workspace, blueprint), None
        if self.names_stored(blueprint):
            return await self.stored_run_blueprint(workspace, blueprint)
        return Blueprint.load(blueprint), None

    async def world_names(self, workspace: str) -> list[str]:
        """The folders of the workspace's worlds, by name (what ``create``'s ``world`` names)."""
        if self.visible is not None and workspace not in self.visible:
            raise NotFoundError(f"no workspace {workspace!r}")
        return list_world_names(self.worlds, workspace)

    async def runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunList:
        """A page of runs, newest first."""
        page = await self.store.list_runs(
            status=status, workspace=workspace, limit=limit, cursor=cursor,
            workspaces=self.visible,
        )  # fmt: skip
        runs = [await self._run(r) for r in page.runs]
        return RunList(runs=runs, next_cursor=page.next_cursor)

    async def get(self, run_id: str) -> Run:
        """One run: by its id, a unique prefix of it, or ``last`` (the newest)."""
        return await self._run(await self.resolve(run_id))

    async def resolve(self, run_id: str) -> RunRecord:
        """The run an id, a unique prefix or ``last`` names, among the visible ones.

        ``RunNotFoundError`` if none; ``AmbiguousRunError`` if the prefix names several.
        """
        return await resolve_run(self.store, run_id, workspaces=self.visible)

    async def _id(self, run_id: str) -> str:
        return (await self.resolve(run_id)).id

    async def _run(self, record: RunRecord) -> Run:
        """The wire model: whether a driver holds the run (if it is live), a fork's turn."""
        driven: bool | None = None  # an ended run has no driver to ask about
        if record.status not in TERMINAL_STATUSES:
            now = time.time() if self._engine is None else self._engine.clock.now()
            lease = await self.store.get_lease(record.id)
            driven = lease is not None and lease.held(now)
        turn = None
        if record.parent is not None:  # its run.forked says at the end of which turn
            forked = await self.store.event_at(record.id, record.parent.seq + 1)
            turn = forked.turn if forked is not None else None
        version = await recorded_version(self.store, record)
        return Run.of(record, driven=driven, fork_turn=turn, blueprint_version=version)

    async def events(
        self, run_id: str, *, after: int = -1, follow: bool = False
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events after ``after``; with ``follow``, live ones until it ends."""
        record = await self.resolve(run_id)
        run_id = record.id
        if not follow:
            while page := await self.store.read(run_id, after=after, limit=_PAGE):
                for event in page:
                    yield RunEvent.of(event)
                after = page[-1].seq
            return
        # An ended run never runs again: once it has ended, its head is the end.
        ended = record.status in TERMINAL_STATUSES
        if ended and after >= record.head:
            return
        async with self.store.subscribe(run_id, after=after) as live:
            async for event in live:
                yield RunEvent.of(event)
                ended = ended or event.type in TERMINAL_EVENTS
                if ended and await self._at_head(run_id, event.seq):
                    return

    async def _at_head(self, run_id: str, seq: int) -> bool:
        return (await self.store.get_run(run_id)).head <= seq

    # -- control ----------------------------------------------------------------------

    async def approvals(self, run_id: str) -> list[Approval]:
        """The run's pending approval requests."""
        folded = await replay_run(self.store, await self._id(run_id))
        return [Approval.of(p) for p in folded.pending_approvals.values()]

    async def decide(
        self,
        run_id: str,
        request_id: str | None,
        decision: Decision,
        *,
        reason: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> Decided:
        """Allow or deny a pending request (``None``: the only one); a question's ``answer``."""
        import helix.runtime as runtime

        run_id = await self._id(run_id)
        decided = await runtime.decide(
            self.store, run_id, request_id, decision, by=self.actor, reason=reason, answer=answer
        )
        return Decided(request_id=decided, decision=decision)

    async def steer(self, run_id: str, message: str) -> None:
        """Tell the agent something before its next model call."""
        import helix.runtime as runtime

        await runtime.steer(self.store, await self._id(run_id), message, by=self.actor)

    async def choices(self, run_id: str) -> list[ChoiceCard]:
        """The run's options cards waiting for a choice."""
        folded = await replay_run(self.store, await self._id(run_id))
        ended = folded.status in TERMINAL_STATUSES
        return [] if ended else [ChoiceCard.of(p) for p in folded.pending_choices.values()]

    async def choose(self, run_id: str, component_id: str | None, choice: str) -> Chosen:
        """Choose an option on a waiting card (``None``: the only one)."""
        import helix.runtime as runtime

        chosen = await runtime.choose(
            self.store, await self._id(run_id), component_id, choice, by=self.actor
        )
        return Chosen(component_id=chosen, choice=choice)

    async def pause(self, run_id: str) -> Run:
        """Pause at the next safe point."""
        import helix.runtime as runtime

        run_id = await self._id(run_id)
        await runtime.pause(self.store, run_id, by=self.actor)
        return await self.get(run_id)

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
        import helix.runtime as runtime

        run_id = await self._id(run_id)
        folded = await replay_run(self.store, run_id)
        budget = raised_caps(
            run_id, folded, budget_usd, budget_tokens, max_turns=max_turns, max_seconds=max_seconds
        )
        if folded.status not in TERMINAL_STATUSES:  # a finished one: refused as before
            await self.engine.check_ready(run_id)  # no SDK or key: said now, run left as is
        await runtime.resume(self.store, run_id, by=self.actor, budget=budget)
        self.drive(run_id)
        return await self.get(run_id)

    async def cancel(self, run_id: str) -> Run:
        """Cancel the run."""
        import helix.runtime as runtime

        run_id = await self._id(run_id)
        await runtime.cancel(self.store, run_id, by=self.actor)
        return await self.get(run_id)

    async def fork(
        self, run_id: str, *, turn: int, message: str | None = None, model: str | None = None
    ) -> Run:
        """Fork where a turn ended, with its own world, and drive the fork."""
        import helix.runtime as runtime

        run_id = await self._id(run_id)
        record = await runtime.fork_with_world(
            self.engine, run_id, turn, message=message, model=model, actor=self.actor
        )
        self.drive(record.id)
        return await self._run(record)

    # -- the world --------------------------------------------------------------------

    async def rollback(self, run_id: str, *, to: Point = "start") -> Rollback:
        """Restore the world to its start or a turn's end."""
        import helix.runtime as runtime

        point = parse_point(to)
        run_id = await self._id(run_id)
        marker = await runtime.rollback(self.engine, run_id, point, by=self.actor)
        return Rollback.model_validate(marker.model_dump(mode="json"))

    async def compare(self, run_a: str, run_b: str) -> Comparison:
        """Both runs and the diff from A's last world to B's."""
        import helix.runtime as runtime

        run_a, run_b = await self._id(run_a), await self._id(run_b)
        first, second, text = await runtime.compare(self.engine, run_a, run_b)
        return Comparison(runs=[await self._run(first), await self._run(second)], diff=text)

    async def keep(self, run_id: str) -> Kept:
        """Make the original directory hold this branch's world."""
        import helix.runtime as runtime

        return Kept.of(await runtime.keep(self.engine, await self._id(run_id), by=self.actor))

    # -- the log as a file -------------------------------------------------------

    async def export(self, run_id: str) -> AsyncGenerator[str, None]:
        """The run's log as JSON Lines."""
        async for line in export_lines(self.store, await self._id(run_id)):
            yield line

    async def import_run(
        self, lines: Iterable[str], *, as_id: str | None = None, workspace: str | None = None
    ) -> Imported:
        """Import an exported log as a new run, in a new empty world under the worlds.

        Checked whole before anything is written, its settings as a blueprint file is.
        It keeps the exported run's id unless a run has it already: then, unless
        ``as_id`` was given (``RunExistsError``), a fresh id, and ``original_id`` says so.
        """
        return await import_run(
            self.store, list(lines), worlds=self.worlds, workspace=workspace or self.workspace,
            actor=self.actor, as_id=as_id,
        )  # fmt: skip
