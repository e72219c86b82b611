"""``delegate``: hand a sub-task to a child run and get its report back.

The tool only knows the ``Delegator`` interface; the runtime supplies one that creates
the child run, drives it to its end and records ``agent.spawned``/``agent.reported`` in
the parent's log. A tool layer that knew about runs and engines would invert the layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ._tool import ToolContext, ToolResult, tool


@dataclass(frozen=True, slots=True)
class Delegation:
    """How a child run ended: its id, its final status, and what it reported."""

    child_run_id: str
    status: str
    report: str


class Delegator(Protocol):
    """Starts (or, after a crash, finds again) the child run of one ``delegate`` call."""

    async def delegate(self, objective: str, blueprint: str | None, *, call_id: str) -> Delegation:
        """Run the child to its end; ``HelixError`` explains a refusal."""
        ...


# Idempotent because the delegator finds the child a call already started (by call id)
# and waits for it: re-running the call after a crash never starts a second child.
@tool(idempotent=True, effect="world", delegates=True, paths={"blueprint": "read"})
async def delegate(ctx: ToolContext, objective: str, blueprint: str | None = None) -> ToolResult:
    """Hand a self-contained sub-task to a child agent working in the same directory.

    The child starts fresh (it sees only ``objective``), works until done, and its
    final report is returned. ``blueprint`` is the path of a blueprint file in the
    world for the child (a different model, system prompt or narrower tools); the
    child can never have more tools or budget than this run.
    """
    if ctx.delegator is None:
        return ToolResult(ok=False, output="delegation is not available to this run")
    done = await ctx.delegator.delegate(objective, blueprint, call_id=ctx.call_id)
    ok = done.status == "completed"
    return ToolResult(ok=ok, output=f"child run {done.child_run_id} {done.status}: {done.report}")
