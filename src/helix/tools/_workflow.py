"""``edit_workflow``: change a workspace's workflow definition with edit operations.

The tool only knows the ``WorkflowEditor`` interface: whoever built the engine (a
server, an embedded ``LocalApi``) supplies one per run, which applies the operations
to the workflow's latest version and stores the result as a new version made by the
run (``helix.workflows``). A tools layer that imported the store would invert the
layers. The workflow is outside the world, so the tool's effect is ``external``: it
passes the approval gate like any consequential tool (asked by default; a chat box's
run is started with a rule allowing it, since the person typed the request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ._tool import ToolContext, ToolResult, tool


@dataclass(frozen=True, slots=True)
class WorkflowEdit:
    """What an edit made: the new version's number, what changed, the definition's YAML."""

    name: str
    version: int
    change: str
    text: str


class WorkflowEditor(Protocol):
    """Applies one ``edit_workflow`` call's operations to a workflow of the run's workspace."""

    async def edit(
        self, workflow: str, operations: list[dict[str, Any]], *, base_version: int | None
    ) -> WorkflowEdit:
        """Store the edited definition as a new version.

        ``HelixError`` explains a refusal: an unknown workflow or step, an operation that
        breaks the definition, a stale ``base_version``, a workflow this run may not edit.
        """
        ...


@tool(effect="external")
async def edit_workflow(
    ctx: ToolContext,
    workflow: str,
    operations: list[dict[str, Any]],
    base_version: int | None = None,
) -> ToolResult:
    """Edit a workflow of this workspace with a list of operations, saved as a new version.

    ``workflow`` is its name. Each operation is an object with ``op``:
    ``add_step`` (``step``: {id, objective, kind?: agent|approval, model?, tools?,
    retries?, approve?, when?: {step, field?, equals, not_equals?}}, ``after``?: a step
    id: the new step goes between it and what followed it);
    ``remove_step`` (``step``: id; its predecessors then lead to its successors);
    ``connect`` / ``disconnect`` (``from``, ``to``: step ids);
    ``set_field`` (``step``, ``field``: objective|kind|model|tools|blueprint|retries|
    approve|report|when, ``value``; null resets it);
    ``set_workflow`` (``field``: description|model|tools|budget_usd|max_parallel, ``value``);
    ``move`` (``step``, ``x``, ``y``). Example: add a review step after tests:
    [{"op": "add_step", "after": "tests", "step": {"id": "review", "objective": "Review"}}].
    ``base_version``: the version you read (the edit is refused if it is stale).
    Returns the new version and the workflow's YAML.
    """
    if ctx.workflows is None:
        return ToolResult(ok=False, output="editing workflows is not available to this run")
    done = await ctx.workflows.edit(workflow, operations, base_version=base_version)
    return ToolResult(
        ok=True,
        output=f"workflow {done.name} is now version {done.version} ({done.change}):\n{done.text}",
    )
