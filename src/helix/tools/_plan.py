"""``plan``: split the work into a task graph, run it as a child, and get its summary.

Like ``delegate``, the tool only knows an interface (``Planner``); the runtime supplies
one that checks the plan, starts a graph run as this run's child (its settings this
run's, narrowed as a delegated child's are), waits for it to end and records
``agent.spawned``/``agent.reported`` in this run's log. See docs/graphs.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import Field

from helix.errors import ConfigError

from ._tool import ToolContext, ToolResult, tool


@dataclass(frozen=True, slots=True)
class Planned:
    """How a plan's graph run ended: its id, its final status, and its summary."""

    graph_run_id: str
    status: str
    report: str


class Planner(Protocol):
    """Starts (or, after a crash, finds again) the graph run of one ``plan`` call."""

    async def plan(self, plan: dict[str, Any], *, call_id: str) -> Planned:
        """Check the plan and run its graph to its end.

        ``ConfigError`` (a ``BlueprintError`` for the plan itself) says why not; nothing
        is started then.
        """
        ...


# Idempotent because the planner finds the graph a call already started (by call id)
# and waits for it: re-running the call after a crash never starts a second graph.
@tool(idempotent=True, effect="world", delegates=True)
async def plan(
    ctx: ToolContext,
    tasks: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=1000)],
    objective: str | None = None,
    max_parallel: Annotated[int | None, Field(ge=1, le=256)] = None,
) -> ToolResult:
    """Split work into tasks with dependencies and run them as a task graph.

    Each task is an object: ``id`` (letters, digits, - and _), ``objective`` (what its
    agent is asked; it starts fresh), and optionally ``depends_on`` (ids that must be
    done first), ``inputs`` (name → ``TASK`` or ``TASK.field``: that task's report,
    given to this one), ``report`` (a JSON Schema the task's final reply must match),
    ``retries`` (further attempts after a failure), ``approve`` (a person approves its
    report first), ``world`` (``shared`` or ``own``), ``budget_usd``. Ready tasks run
    side by side (at most ``max_parallel``), each in this directory by default. Returns
    the graph's summary when every task is done; a plan that is not one (a cycle, an
    unknown dependency) is refused with the reason and nothing is started.
    """
    if ctx.planner is None:
        return ToolResult(ok=False, output="planning a task graph is not available to this run")
    data: dict[str, Any] = {"tasks": tasks}
    if objective is not None:
        data["objective"] = objective
    if max_parallel is not None:
        data["max_parallel"] = max_parallel
    try:
        done = await ctx.planner.plan(data, call_id=ctx.call_id)
    except ConfigError as error:  # a plan that is not one: said, nothing started
        return ToolResult(ok=False, output=f"the plan was refused (nothing started): {error}")
    ok = done.status == "completed"
    return ToolResult(ok=ok, output=f"graph run {done.graph_run_id} {done.status}: {done.report}")
