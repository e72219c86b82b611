"""The graph conductor: drives a graph run, starting each task as a child run when it may.

A graph run is driven like any run (one driver holding its lease, restarted by the
engine's supervisor, resumed from its log by any process), but its steps are not turns:
each step looks at the folded state and starts the tasks that are ready (their
dependencies completed and, where asked, approved; at most ``max_parallel`` at once;
within the graph's budget), asks a person about a report that needs approving, and
waits for the next event. Nothing is remembered between steps but the log, so an
incarnation after a crash carries on: a task logged ``task.completed`` is never run
again, a task logged ``task.started`` has its run found again and driven on.

A failed attempt is retried alone, as its task's ``retries`` allow; a task that failed
for good leaves its dependents waiting, and once nothing else can run the graph pauses
(``task_failed``) until a person retries the task (``retry_task``) or cancels the graph.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from helix.errors import (
    ConfigError,
    HelixError,
    NotAGraphError,
    RunNotFoundError,
    RunStateError,
    TaskNotFoundError,
)
from helix.kernel.events import (
    GraphPlanned,
    NewEvent,
    RunCompleted,
    RunPaused,
    RunResumed,
    RunStarted,
    TaskCompleted,
    TaskFailed,
    TaskRetried,
    TaskSkipped,
    TaskStarted,
)
from helix.kernel.log import new_run_id
from helix.kernel.session import SessionState, TaskState, replay_run

from ._asking import DEADLINE_PASSED, Question, answered_in_time, ask, settled, system_decision
from ._clock import scheduling_point
from ._control import resume
from ._delegation import cancel_quietly, load_in_world, narrowed, settle
from ._graph_tasks import copy_world, take_report, task_objective
from ._loop import TERMINAL
from ._session import LiveSession, append_checked, finished
from ._setup import RunSetup
from ._taskgraph import TaskGraph, TaskSpec
from ._until import Until, holds

if TYPE_CHECKING:
    from ._engine import Engine

APPROVAL_TOOL = "task"
"""The ``name`` of a task's approval request (its ``call_id`` is ``task:ID:RUN``)."""
MIN_SHARE_USD = 1e-6
"""Less than this free in the graph's budget is nothing: no attempt starts on it."""
UNATTENDED = "the report needs a person's approval, and the graph runs unattended"


class GraphConductor:
    """Drives one graph run; ``run()`` is one incarnation, as ``RunLoop.run`` is."""

    def __init__(self, setup: RunSetup) -> None:
        graph = setup.blueprint.graph
        if graph is None or setup.engine is None:
            raise ConfigError("a graph conductor needs a graph run of an engine")
        self.setup, self.graph, self.engine = setup, graph, setup.engine
        self._running: dict[str, asyncio.Task[None]] = {}
        self._deciding: dict[str, asyncio.Task[None]] = {}
        self._approving = [spec.id for spec in graph.tasks if spec.approve]
        """The tasks whose reports a person approves (the only ones a review looks at)."""

    async def run(self, until: Until | None = None, *, steps: int | None = None) -> SessionState:
        """Replay the log and conduct the graph until it ends (or ``until`` holds)."""
        setup = self.setup
        session = await LiveSession.load(
            setup.store, setup.run_id, clock=setup.clock, lease=setup.lease
        )
        self._running, self._deciding = {}, {}
        async with asyncio.TaskGroup() as group:
            watcher = group.create_task(session.watch())
            # raising, the group cancels every child once; returning, they are cancelled
            # here (twice would cut a task's run short in the middle of its cleanup)
            await self._conduct(session, group, until, steps)
            watcher.cancel()
            for task in [*self._running.values(), *self._deciding.values()]:
                task.cancel()
        return session.state

    async def _conduct(
        self,
        session: LiveSession,
        group: asyncio.TaskGroup,
        until: Until | None,
        steps: int | None,
    ) -> None:
        if session.state.status in TERMINAL:
            return
        await self._begin(session)
        taken = 0
        while True:
            await scheduling_point()  # others run, a cancel gets in
            state = session.state
            self._running = {t: a for t, a in self._running.items() if not a.done()}
            if state.status in TERMINAL or (until is not None and holds(until, state)):
                return
            if steps is not None and taken >= steps:
                return
            taken += 1
            if state.status == "paused":
                await session.wait_until(lambda s: s.status != "paused", None)
                continue
            for task_id, task in state.tasks.items():  # attempts a dead process left
                if task.status == "running" and task_id not in self._running:
                    self._attempt_in(group, session, task_id)
            if await self._review(session):
                continue  # an approval asked or refused: look again
            self._deadlines_in(group, session)
            if self._done(state):
                summary = _summary(self.graph, state)
                await session.append([NewEvent(RunCompleted(summary=summary))], unless=finished)
                return
            if await self._skip_unmet(session):
                continue  # a branch not taken: look again
            started = await self._start_ready(session, group)
            if not self._running and not started and not self._awaiting_person(state):
                await session.append([NewEvent(RunPaused(reason=self._stuck(state)))])
                continue
            await session.wait_until(_after(session.state.head), None)

    async def _begin(self, session: LiveSession) -> None:
        """Log the plan (once), and that the graph started or resumed."""
        state = session.state
        events: list[NewEvent] = []
        if state.plan is None:
            events.append(NewEvent(GraphPlanned(plan=self.graph.model_dump(mode="json"))))
        if state.status == "queued":
            events.append(NewEvent(RunStarted()))
        elif state.status != "paused":
            last = await session.store.event_at(session.run_id, state.head)
            if last is None or last.type != "run.resumed":
                events.append(NewEvent(RunResumed()))
        if events:
            await session.append(events)

    def _ready(self, state: SessionState) -> list[TaskSpec]:
        """Tasks that may start now: pending, every task they need done and approved."""
        return [
            spec
            for spec in self.graph.tasks
            if state.tasks[spec.id].status == "pending"
            and spec.id not in self._running
            and all(self._passed(state, need) for need in spec.needs)
        ]

    async def _skip_unmet(self, session: LiveSession) -> bool:
        """Log ``task.skipped`` for each ready task whose condition does not hold.

        True if it appended something.
        """
        skipped: list[NewEvent] = []
        state = session.state
        for spec in self._ready(state):
            if spec.when is None or state.tasks[spec.when.step].status != "completed":
                continue  # a skipped task's report is nothing to test: its branch runs
            holds, reason = spec.when.test(state.tasks[spec.when.step].report)
            if not holds:
                skipped.append(NewEvent(TaskSkipped(task=spec.id, reason=reason)))
        if skipped:
            await session.append(skipped)
        return bool(skipped)

    def _passed(self, state: SessionState, task_id: str) -> bool:
        task = state.tasks[task_id]
        if task.status == "skipped":
            return True
        if task.status != "completed":
            return False
        return not self._asks_approval(task_id) or approval_call(task_id, task.run_id) in (
            state.approved_calls
        )

    def _asks_approval(self, task_id: str) -> bool:
        return self.graph.by_id[task_id].approve

    def _done(self, state: SessionState) -> bool:
        return all(self._passed(state, spec.id) for spec in self.graph.tasks)

    def _awaiting_person(self, state: SessionState) -> bool:
        return any(
            task.status == "completed"
            and state.approval_calls.get(approval_call(task_id, task.run_id))
            in state.pending_approvals
            for task_id, task in ((t, state.tasks[t]) for t in self._approving)
        )

    def _stuck(self, state: SessionState) -> str:
        failed = [task_id for task_id, task in state.tasks.items() if task.status == "failed"]
        if failed:
            return f"task_failed: {', '.join(failed)}"
        return "budget"

    async def _review(self, session: LiveSession) -> bool:
        """Ask a person about each report that needs approving; fail the ones denied.

        True if it appended something (the state changed: look again).
        """
        state = session.state
        for task_id in self._approving:
            task = state.tasks[task_id]
            if task.status != "completed":
                continue
            call = approval_call(task_id, task.run_id)
            if call in state.approved_calls:
                continue
            if call in state.denied_calls:
                reason = f"its report was {state.denied_calls[call]}"
                await session.append([NewEvent(self._failure(task_id, task, reason, 0.0))])
                return True
            if call not in state.approval_calls:
                await session.append(self._question(task_id, task).events)
                return True
        return False

    def _deadlines_in(self, group: asyncio.TaskGroup, session: LiveSession) -> None:
        """Keep one waiter on each task approval's deadline (a new incarnation's too)."""
        for request_id, pending in session.state.pending_approvals.items():
            if pending.name == APPROVAL_TOOL and request_id not in self._deciding:
                self._deciding[request_id] = group.create_task(
                    self._await_decision(session, request_id), name=f"decision:{request_id}"
                )

    def _question(self, task_id: str, task: TaskState) -> Question:
        declined = None if self.setup.attended else UNATTENDED
        args = {"task": task_id, "run_id": task.run_id, "report": task.report}
        return ask(
            self.setup,
            approval_call(task_id, task.run_id),
            APPROVAL_TOOL,
            args,
            0,
            declined=declined,
        )

    async def _await_decision(self, session: LiveSession, request_id: str) -> None:
        """Wait for a person's decision on a report, or its deadline (which denies)."""
        if not await answered_in_time(self.setup, session, request_id):
            closing = system_decision(request_id, "deny", DEADLINE_PASSED, 0)
            await session.append([closing], unless=settled(request_id))

    def _failure(self, task_id: str, task: TaskState, error: str, cost: float) -> TaskFailed:
        retrying = task.attempts <= self.graph.task(task_id).retries
        run_id = task.run_id or ""
        return TaskFailed(
            task=task_id,
            run_id=run_id,
            attempt=max(task.attempts, 1),
            error=error,
            retrying=retrying,
            cost_usd=cost,
        )

    async def _start_ready(self, session: LiveSession, group: asyncio.TaskGroup) -> int:
        """Start what may start now, within ``max_parallel`` and the budget left."""
        ready = self._ready(session.state)[: self.graph.max_parallel - len(self._running)]
        started = 0
        for index, spec in enumerate(ready):
            state = session.state
            budget = _share(state, spec, len(ready) - index)
            if budget is not None and budget < MIN_SHARE_USD:
                break
            task = state.tasks[spec.id]
            event = TaskStarted(
                task=spec.id,
                run_id=new_run_id(),
                attempt=task.attempts + 1,
                objective=task_objective(spec, state),
                budget_usd=budget,
            )
            if not await session.append([NewEvent(event)], unless=finished):
                break
            self._attempt_in(group, session, spec.id)
            started += 1
        return started

    def _attempt_in(self, group: asyncio.TaskGroup, session: LiveSession, task_id: str) -> None:
        self._running[task_id] = group.create_task(
            self._attempt(session, task_id), name=f"task:{task_id}"
        )

    async def _attempt(self, session: LiveSession, task_id: str) -> None:
        """Take one attempt of a task (logged started) to its end, and log how it went."""
        task = session.state.tasks[task_id]
        spec = self.graph.task(task_id)
        child_id = task.run_id
        assert child_id is not None
        try:
            await self._create_unless_exists(session, spec, task, child_id)
            final = await settle(self.engine, child_id, stop_when_paused=False)
        except asyncio.CancelledError:
            if finished(session.state):  # the graph was cancelled: so are its tasks
                await asyncio.shield(cancel_quietly(self.engine, child_id))
            raise
        except HelixError as error:  # refused: a blueprint it names, a model it cannot open
            await self._log_end(session, task_id, child_id, None, str(error), 0.0)
            return
        if final.status == "completed":
            report, problem = take_report(spec, final.summary)
        else:
            report, problem = None, f"its run {final.status}: {final.error or 'no error given'}"
        await self._log_end(session, task_id, child_id, report, problem, final.spent_usd)

    async def _log_end(
        self,
        session: LiveSession,
        task_id: str,
        child_id: str,
        report: object,
        problem: str | None,
        cost: float,
    ) -> None:
        def build(state: SessionState) -> list[NewEvent] | None:
            task = state.tasks[task_id]
            if finished(state) or task.run_id != child_id or task.status != "running":
                return None  # logged already (by an incarnation before this one)
            if problem is not None:
                return [NewEvent(self._failure(task_id, task, problem, cost))]
            done = TaskCompleted(task=task_id, run_id=child_id, report=report, cost_usd=cost)
            return [NewEvent(done)]

        await session.append_built(build)

    async def _create_unless_exists(
        self, session: LiveSession, spec: TaskSpec, task: TaskState, child_id: str
    ) -> None:
        setup = self.setup
        try:
            record = await self.engine.store.get_run(child_id)
        except RunNotFoundError:
            pass  # logged as started, but the process died before creating it
        else:
            if record.workspace != setup.workspace or record.parent is not None:
                raise ConfigError(
                    f"the log names run {child_id} as task {spec.id}'s, but that run is not"
                    " one this graph could have started: not touched"
                )
            return
        own = (
            load_in_world(setup.world, spec.blueprint, "the task's blueprint")
            if (spec.blueprint)
            else setup.blueprint.model_copy(update={"name": f"{setup.blueprint.name}.{spec.id}"})
        )
        named = spec.model or (own.role_model("main") if spec.blueprint else None)
        settings = narrowed(
            setup, own, tools=spec.tools or own.tools, usd_left=task.budget_usd, model=named
        )
        world = setup.world
        if spec.world == "own":
            world = self.engine.home / "worlds" / child_id
            await copy_world(self.engine.objects, setup.world, world)
        await self.engine.create(
            task.objective or spec.objective,
            blueprint=settings,
            world=world,
            auto_approve=setup.auto_approve,
            attended=setup.attended,
            workspace=setup.workspace,
            run_id=child_id,
            depth=setup.depth + 1,
            role="worker",
        )


def _after(head: int) -> Callable[[SessionState], bool]:
    return lambda state: state.head != head


def approval_call(task_id: str, run_id: str | None) -> str:
    """The ``call_id`` of the approval of a task's attempt (its run's): ``task:ID:RUN``."""
    return f"task:{task_id}:{run_id}"


def _share(state: SessionState, spec: TaskSpec, ready: int) -> float | None:
    """The budget set aside for a task starting now: its own cap, within what is free.

    Free: the graph's cap less what finished attempts spent and what running ones hold,
    so the tasks together never exceed the graph. A task without its own cap gets an
    even share of what is free among the tasks starting with it.
    """
    cap = state.budget.usd if state.budget is not None else None
    if cap is None:
        return spec.budget_usd
    held = sum(t.budget_usd or 0.0 for t in state.tasks.values() if t.status == "running")
    free = max(0.0, cap - state.spent_usd - held)
    if spec.budget_usd is not None:
        return min(spec.budget_usd, free)
    return free / max(ready, 1)


def _summary(graph: TaskGraph, state: SessionState) -> str:
    """What the graph did: its tasks' count and the reports of its last tasks."""
    needed = {need for spec in graph.tasks for need in spec.needs}
    last = [spec.id for spec in graph.tasks if spec.id not in needed]
    skipped = [t for t, task in state.tasks.items() if task.status == "skipped"]
    done = len(graph.tasks) - len(skipped)
    lines = [f"{done} tasks completed" + (f", {len(skipped)} skipped." if skipped else ".")]
    for task_id in last:
        if state.tasks[task_id].status == "skipped":
            continue
        report = state.tasks[task_id].report
        text = report if isinstance(report, str) else repr(report)
        lines.append(f"{task_id}: {text[:2000]}")
    return "\n".join(lines)


async def retry_task(engine: Engine, run_id: str, task_id: str, *, by: str) -> SessionState:
    """Try a graph's failed task again (and resume the graph if it paused for it).

    ``NotAGraphError`` for a run that is not a graph; ``TaskNotFoundError`` for a task
    the graph does not have; ``RunStateError`` unless the graph has not ended and the
    task failed for good.
    """
    store = engine.store

    def build(state: SessionState) -> list[NewEvent]:
        if state.plan is None:
            raise NotAGraphError(f"run {run_id} is not a task graph")
        task = state.tasks.get(task_id)
        if task is None:
            known = ", ".join(state.tasks)
            raise TaskNotFoundError(f"graph {run_id} has no task {task_id!r} (its tasks: {known})")
        if finished(state):
            raise RunStateError(f"graph {run_id} has ended ({state.status}): nothing to retry")
        if task.status != "failed":
            raise RunStateError(f"task {task_id} has not failed (it is {task.status})")
        return [NewEvent(TaskRetried(task=task_id, by=by), actor=by)]

    state = await append_checked(store, run_id, build)
    if state.status == "paused":
        await resume(store, run_id, by=by)
    return await replay_run(store, run_id)
