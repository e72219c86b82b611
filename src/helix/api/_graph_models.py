"""The wire models of task graphs: ``GET /runs/{id}/graph`` and ``POST /graphs``.

A graph is a run (``Run``) with tasks; each task's state is folded from the graph's
``graph.planned`` and ``task.*`` events (``SessionState.tasks``) and its plan, so it
looks the same through every door. See docs/graphs.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, JsonValue

from helix.kernel.session import SessionState

from ._models import Run, _Body, _Out

TaskStatusName = Literal["pending", "running", "completed", "failed", "skipped"]


class GraphTask(_Out):
    """One task of a graph, as its log tells it now."""

    id: str
    objective: str
    """The task's objective as planned (its runs were given it with their inputs)."""
    status: TaskStatusName
    """``pending`` (waiting for what it needs, or to be retried), ``running`` (an attempt's
    run is under way), ``completed`` (its report was accepted), ``failed`` (for good: a
    person may retry it)."""
    depends_on: list[str]
    """The dependencies the plan names."""
    needs: list[str]
    """Every task it waits for: its dependencies and its inputs' tasks."""
    approve: bool
    """Whether a person approves its report before its dependents start."""
    approved: bool
    """Its report was approved (or it asks no approval) and its dependents may start."""
    waiting_for_approval: bool
    """Completed, and its report waits for a person's decision (``approval_request``)."""
    approval_request: str | None
    """The pending approval request's id (decide it with ``decide(run, request)``)."""
    attempts: int
    """Attempts started since the task was planned or last retried by a person."""
    retries: int
    """Further attempts its plan allows after a failed one."""
    run_id: str | None
    """The run of its latest attempt."""
    runs: list[str]
    """Every attempt's run, oldest first."""
    report: JsonValue = None
    """Its accepted report (``completed``): JSON matching its schema, else the reply's text."""
    error: str | None = None
    """Why its latest attempt failed."""
    cost_usd: float
    """What its finished attempts spent."""
    budget_usd: float | None
    """The budget set aside for its running attempt (``None``: none running, or no cap)."""


class GraphRun(_Out):
    """A graph run and its tasks, in plan order (``GET /runs/{id}/graph``)."""

    run: Run
    max_parallel: int
    """How many tasks may run at once."""
    pause_reason: str | None
    """Why the graph is paused (``task_failed: a, b``, ``budget``, ``user``), while it is."""
    tasks: list[GraphTask]

    @property
    def finished(self) -> bool:
        """Whether the graph has ended (completed, failed or cancelled)."""
        return self.run.finished

    def task(self, task_id: str) -> GraphTask:
        """The task with that id (``KeyError`` if none)."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    @classmethod
    def of(cls, run: Run, state: SessionState, plan: dict[str, Any]) -> GraphRun:
        """From the graph's run, its folded log and its plan (``TaskGraph`` as JSON)."""
        specs = {spec["id"]: spec for spec in plan.get("tasks") or ()}
        tasks = [_task(task_id, specs.get(task_id, {}), state) for task_id in state.tasks]
        return cls(
            run=run,
            max_parallel=int(plan.get("max_parallel") or 4),
            pause_reason=state.pause_reason if state.status == "paused" else None,
            tasks=tasks,
        )


def _task(task_id: str, spec: dict[str, Any], state: SessionState) -> GraphTask:
    task = state.tasks[task_id]
    depends_on = [str(d) for d in spec.get("depends_on") or ()]
    inputs = [str(s).split(".", 1)[0] for s in (spec.get("inputs") or {}).values()]
    approve = bool(spec.get("approve"))
    from helix.runtime import approval_call  # the conductor's own name for it

    call = approval_call(task_id, task.run_id)
    request = state.approval_calls.get(call) if approve else None
    waiting = (
        task.status == "completed" and request is not None and request in state.pending_approvals
    )
    approved = task.status == "completed" and (not approve or call in state.approved_calls)
    return GraphTask(
        id=task_id,
        objective=str(spec.get("objective") or ""),
        status=task.status,
        depends_on=depends_on,
        needs=list(dict.fromkeys([*depends_on, *inputs])),
        approve=approve,
        approved=approved,
        waiting_for_approval=waiting,
        approval_request=request if waiting else None,
        attempts=task.attempts,
        retries=int(spec.get("retries") or 0),
        run_id=task.run_id,
        runs=list(task.runs),
        report=task.report,
        error=task.error,
        cost_usd=task.cost_usd,
        budget_usd=task.budget_usd,
    )


class GraphCreate(_Body):
    """``POST /graphs``'s body: a plan (docs/graphs.md) and how to run it."""

    plan: dict[str, JsonValue]
    """The plan: ``objective``, ``tasks`` (and ``max_parallel``) and blueprint settings."""
    world: str | None = None
    """A folder name under the workspace's worlds (created if missing); default: a new one."""
    workspace: str | None = None
    auto_approve: bool = False
    """Allow every approval at once (a task's report too)."""
    attended: bool = True
    """``False``: nobody will answer, so a report that needs approving is denied."""
    budget_usd: float | None = Field(default=None, ge=0)
    """The whole graph's USD cap (over the plan's ``budget.usd``)."""
