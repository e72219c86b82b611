"""A workflow run is a task graph: ``to_plan`` turns a definition into a ``Plan``.

Each agent step becomes a task (its id, objective, model, tools, blueprint, retries,
report schema and condition). Edges become dependencies. An approval step is a gate,
not a task: the steps before it ask a person to approve their reports
(``TaskSpec.approve``), and the steps after it depend on the steps before it. A
condition (``when``) becomes the task's ``when``: its step is a dependency too, and
the graph skips the task when it does not hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from helix.errors import BlueprintError, WorkflowError

from ._model import Step, Workflow

if TYPE_CHECKING:  # the runtime loads when a workflow is run, not when one is read
    from helix.runtime import Plan


def _agent_sources(workflow: Workflow, step_id: str) -> list[str]:
    """The agent steps ``step_id`` waits for, seeing through approval steps."""
    found: list[str] = []
    for source in workflow.before(step_id):
        if workflow.step(source).kind == "approval":
            found += _agent_sources(workflow, source)
        else:
            found.append(source)
    return list(dict.fromkeys(found))


def _task(workflow: Workflow, step: Step, gated: set[str]) -> dict[str, Any]:
    """The task (plan data) of one agent step."""
    task: dict[str, Any] = {"id": step.id, "objective": step.objective}
    needs = _agent_sources(workflow, step.id)
    if needs:
        task["depends_on"] = needs
    for key in ("model", "blueprint", "report"):
        if getattr(step, key) is not None:
            task[key] = getattr(step, key)
    if step.tools is not None:
        task["tools"] = list(step.tools)
    if step.retries:
        task["retries"] = step.retries
    if step.approve or step.id in gated:
        task["approve"] = True
    if step.when is not None:
        task["when"] = step.when.model_dump(mode="json", exclude_defaults=True)
    return task


def to_plan(workflow: Workflow, *, objective: str | None = None) -> Plan:
    """The task graph that runs ``workflow`` (``WorkflowError`` if it has no agent step)."""
    gated = {
        source
        for step in workflow.steps
        if step.kind == "approval"
        for source in _agent_sources(workflow, step.id)
    }
    tasks = [_task(workflow, step, gated) for step in workflow.steps if step.kind == "agent"]
    if not tasks:
        raise WorkflowError(f"workflow {workflow.name}: has no agent step to run")
    data: dict[str, Any] = {
        "name": workflow.name,
        "objective": objective or workflow.description or f"Run the workflow {workflow.name}",
        "tasks": tasks,
        "max_parallel": workflow.max_parallel,
    }
    if workflow.model is not None:
        data["model"] = workflow.model
    if workflow.tools is not None:
        data["tools"] = list(workflow.tools)
    if workflow.budget_usd is not None:
        data["budget"] = {"usd": workflow.budget_usd}
    from helix.runtime import Plan

    try:
        return Plan.parse(data, source=f"workflow {workflow.name}", name=workflow.name)
    except BlueprintError as error:
        raise WorkflowError(str(error)) from None
