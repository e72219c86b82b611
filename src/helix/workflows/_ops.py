"""Edit operations on a workflow: what ``edit_workflow`` takes (and the API's ``edit``).

An agent asked "add a review step after tests" sends
``[{"op": "add_step", "after": "tests", "step": {"id": "review", "objective": "…"}}]``.
Each operation is checked as it is applied: the result must be a valid workflow, or
``WorkflowError`` names the operation and the reason, and nothing is saved.

``add_step`` (``step``, ``after``?, ``x``?, ``y``?) adds a step; with ``after: X`` it
goes between X and X's successors. ``remove_step`` (``step``) removes one and its
edges, joining its predecessors to its successors. ``connect`` / ``disconnect``
(``from``, ``to``) add or remove an edge. ``set_field`` (``step``, ``field``, ``value``)
sets a step's field (``null``: its default); ``set_workflow`` (``field``, ``value``) one
of the workflow's own. ``move`` (``step``, ``x``, ``y``) moves its node on the canvas.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from helix._util import first_problem
from helix.errors import WorkflowError

from ._model import STEP_ID, Step, Workflow
from ._text import from_data

MAX_OPS = 100
"""The most operations one edit may hold."""
StepField = Literal[
    "kind", "objective", "model", "tools", "blueprint", "retries", "approve", "report", "when"
]
WorkflowField = Literal["description", "model", "tools", "budget_usd", "max_parallel"]


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class AddStep(_Op):
    """Add a step; ``after``: between that step and its successors."""

    op: Literal["add_step"] = "add_step"
    step: Step
    after: str | None = Field(default=None, pattern=STEP_ID)
    x: float | None = None
    y: float | None = None


class RemoveStep(_Op):
    """Remove a step and its edges; its predecessors then lead to its successors."""

    op: Literal["remove_step"] = "remove_step"
    step: str = Field(pattern=STEP_ID)


class Connect(_Op):
    """Add the edge ``from`` → ``to``."""

    op: Literal["connect"] = "connect"
    source: str = Field(alias="from", pattern=STEP_ID)
    target: str = Field(alias="to", pattern=STEP_ID)


class Disconnect(_Op):
    """Remove the edge ``from`` → ``to``."""

    op: Literal["disconnect"] = "disconnect"
    source: str = Field(alias="from", pattern=STEP_ID)
    target: str = Field(alias="to", pattern=STEP_ID)


class SetField(_Op):
    """Set one field of a step (``null``: its default)."""

    op: Literal["set_field"] = "set_field"
    step: str = Field(pattern=STEP_ID)
    field: StepField
    value: JsonValue = None


class SetWorkflow(_Op):
    """Set one of the workflow's own fields (``null``: its default)."""

    op: Literal["set_workflow"] = "set_workflow"
    field: WorkflowField
    value: JsonValue = None


class Move(_Op):
    """Move a step's node on the canvas."""

    op: Literal["move"] = "move"
    step: str = Field(pattern=STEP_ID)
    x: float
    y: float


EditOp = Annotated[
    AddStep | RemoveStep | Connect | Disconnect | SetField | SetWorkflow | Move,
    Field(discriminator="op"),
]
_OPS: TypeAdapter[list[EditOp]] = TypeAdapter(list[EditOp])


def parse_ops(data: object) -> list[EditOp]:
    """Check a JSON list of operations; ``WorkflowError`` names the first problem."""
    if not isinstance(data, list) or not data:
        raise WorkflowError("an edit is a non-empty list of operations")
    if len(data) > MAX_OPS:
        raise WorkflowError(f"an edit holds at most {MAX_OPS} operations")
    try:
        return _OPS.validate_python(data)
    except ValidationError as error:
        raise WorkflowError(f"operations.{first_problem(error)}") from None


def apply_ops(workflow: Workflow, ops: list[EditOp]) -> Workflow:
    """``workflow`` with ``ops`` applied in order; ``WorkflowError`` names the failing one."""
    for index, op in enumerate(ops):
        data = workflow.to_data()
        try:
            _apply(data, op)
        except WorkflowError as error:
            raise WorkflowError(f"operation {index} ({op.op}): {error}") from None
        workflow = from_data(data, source=f"operation {index} ({op.op})")
    return workflow


def _steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["steps"]  # type: ignore[no-any-return]


def _find(data: dict[str, Any], step_id: str) -> dict[str, Any]:
    for step in _steps(data):
        if step["id"] == step_id:
            return step
    raise WorkflowError(f"no step {step_id!r}")


def _apply(data: dict[str, Any], op: EditOp) -> None:
    data.setdefault("edges", [])
    data.setdefault("layout", {})
    if isinstance(op, AddStep):
        _add(data, op)
    elif isinstance(op, RemoveStep):
        _remove(data, op.step)
    elif isinstance(op, Connect):
        if not _has_edge(data, op.source, op.target):
            data["edges"].append({"from": op.source, "to": op.target})
    elif isinstance(op, Disconnect):
        if not _has_edge(data, op.source, op.target):
            raise WorkflowError(f"there is no edge {op.source} -> {op.target}")
        data["edges"] = [
            e for e in data["edges"] if not (e["from"] == op.source and e["to"] == op.target)
        ]
    elif isinstance(op, SetField | SetWorkflow):
        target = _find(data, op.step) if isinstance(op, SetField) else data
        if op.value is None:
            target.pop(op.field, None)
        else:
            target[op.field] = op.value
    else:
        _find(data, op.step)
        data["layout"][op.step] = {"x": op.x, "y": op.y}


def _has_edge(data: dict[str, Any], source: str, target: str) -> bool:
    return any(e["from"] == source and e["to"] == target for e in data["edges"])


def _add(data: dict[str, Any], op: AddStep) -> None:
    step = op.step.model_dump(mode="json", exclude_defaults=True, by_alias=True)
    if op.after is not None:
        _find(data, op.after)
        for edge in data["edges"]:
            if edge["from"] == op.after:
                edge["from"] = op.step.id
        data["edges"].append({"from": op.after, "to": op.step.id})
    _steps(data).append(step)
    if op.x is not None and op.y is not None:
        data["layout"][op.step.id] = {"x": op.x, "y": op.y}


def _remove(data: dict[str, Any], step_id: str) -> None:
    _find(data, step_id)
    edges = data["edges"]
    before = [e["from"] for e in edges if e["to"] == step_id]
    after = [e["to"] for e in edges if e["from"] == step_id]
    data["steps"] = [s for s in _steps(data) if s["id"] != step_id]
    data["edges"] = [e for e in edges if step_id not in (e["from"], e["to"])]
    for source in before:
        for target in after:
            if not _has_edge(data, source, target):
                data["edges"].append({"from": source, "to": target})
    data["layout"].pop(step_id, None)


def describe_change(old: Workflow | None, new: Workflow) -> str:
    """What changed from ``old`` to ``new``, in one line (``created`` for a first version)."""
    if old is None:
        return f"created with {len(new.steps)} steps"
    parts: list[str] = []
    old_steps = {s.id: s for s in old.steps}
    new_steps = {s.id: s for s in new.steps}
    parts += [f"added step {i}" for i in new_steps if i not in old_steps]
    parts += [f"removed step {i}" for i in old_steps if i not in new_steps]
    for step_id, step in new_steps.items():
        before = old_steps.get(step_id)
        if before is not None and before != step:
            changed = [f for f in Step.model_fields if getattr(before, f) != getattr(step, f)]
            parts.append(f"changed {step_id}.{'/'.join(changed)}")
    old_edges = {(e.source, e.target) for e in old.edges}
    new_edges = {(e.source, e.target) for e in new.edges}
    parts += [f"connected {a} -> {b}" for a, b in sorted(new_edges - old_edges)]
    parts += [f"disconnected {a} -> {b}" for a, b in sorted(old_edges - new_edges)]
    for field in ("description", "model", "tools", "budget_usd", "max_parallel"):
        if getattr(old, field) != getattr(new, field):
            parts.append(f"changed {field}")
    if old.layout != new.layout and not parts:
        parts.append("moved steps")
    return "; ".join(parts) or "no change"
