"""The canvas document: what the dashboard's workflow editor draws and edits.

``to_canvas`` gives nodes (a step's fields and its place) and edges; ``from_canvas``
reads one back. ``from_canvas(to_canvas(w)) == w`` for every workflow, and the
canvas's own operations (``canvas_*``, mirrored by ``static/workflow_canvas.js``) edit
the document the way a person does on the dashboard: add a node, connect two nodes,
disconnect them, remove a node, set a node's field, move it.
"""

from __future__ import annotations

from typing import Any

from helix.errors import WorkflowError

from ._model import Workflow
from ._text import from_data

_WORKFLOW_FIELDS = ("name", "description", "model", "tools", "budget_usd", "max_parallel")
Canvas = dict[str, Any]
"""``{"workflow": {name, description, …}, "nodes": [{id, x, y, step}], "edges": [{from, to}]}``."""


def _place(workflow: Workflow, step_id: str) -> tuple[float | None, float | None]:
    position = workflow.layout.get(step_id)
    return (None, None) if position is None else (position.x, position.y)


def to_canvas(workflow: Workflow) -> Canvas:
    """The canvas document of ``workflow``: a node per step (``x``/``y`` null if unplaced)."""
    data: dict[str, Any] = workflow.to_data()
    nodes = []
    for step in data["steps"]:
        x, y = _place(workflow, step["id"])
        nodes.append({"id": step["id"], "x": x, "y": y, "step": step})
    head = {key: data[key] for key in _WORKFLOW_FIELDS if key in data}
    return {"workflow": head, "nodes": nodes, "edges": data.get("edges", [])}


def from_canvas(canvas: object) -> Workflow:
    """The workflow a canvas document holds; ``WorkflowError`` says what is wrong."""
    if not isinstance(canvas, dict):
        raise WorkflowError("canvas: must be an object with workflow, nodes and edges")
    head = canvas.get("workflow")
    nodes = canvas.get("nodes")
    edges = canvas.get("edges", [])
    if not isinstance(head, dict) or not isinstance(nodes, list) or not isinstance(edges, list):
        raise WorkflowError("canvas: must be an object with workflow, nodes and edges")
    steps: list[Any] = []
    layout: dict[str, Any] = {}
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("step"), dict):
            raise WorkflowError(f"canvas: nodes.{index}: must be {{id, x, y, step}}")
        step = dict(node["step"])
        if node.get("id") != step.get("id"):
            raise WorkflowError(f"canvas: nodes.{index}: its id and its step's id differ")
        steps.append(step)
        if node.get("x") is not None or node.get("y") is not None:
            layout[str(step.get("id"))] = {"x": node.get("x"), "y": node.get("y")}
    data = {**head, "steps": steps, "edges": edges}
    if layout:
        data["layout"] = layout
    return from_data(data, source="canvas")


def _node(canvas: Canvas, step_id: str) -> dict[str, Any]:
    for node in canvas["nodes"]:
        if node["id"] == step_id:
            return node  # type: ignore[no-any-return]
    raise WorkflowError(f"canvas: no node {step_id!r}")


def canvas_add_node(canvas: Canvas, step: dict[str, Any], x: float, y: float) -> None:
    """Add a node holding ``step`` at ``(x, y)``."""
    canvas["nodes"].append({"id": step["id"], "x": x, "y": y, "step": dict(step)})


def canvas_remove_node(canvas: Canvas, step_id: str) -> None:
    """Remove a node and every edge touching it."""
    _node(canvas, step_id)
    canvas["nodes"] = [n for n in canvas["nodes"] if n["id"] != step_id]
    canvas["edges"] = [e for e in canvas["edges"] if step_id not in (e["from"], e["to"])]


def canvas_connect(canvas: Canvas, source: str, target: str) -> None:
    """Draw an edge from ``source`` to ``target`` (nothing if it is there)."""
    if not any(e["from"] == source and e["to"] == target for e in canvas["edges"]):
        canvas["edges"].append({"from": source, "to": target})


def canvas_disconnect(canvas: Canvas, source: str, target: str) -> None:
    """Remove the edge from ``source`` to ``target``."""
    canvas["edges"] = [
        e for e in canvas["edges"] if not (e["from"] == source and e["to"] == target)
    ]


def canvas_set_field(canvas: Canvas, step_id: str, field: str, value: Any) -> None:
    """Set a field of a node's step (``None`` clears it back to its default)."""
    step = _node(canvas, step_id)["step"]
    if value is None:
        step.pop(field, None)
    else:
        step[field] = value


def canvas_move(canvas: Canvas, step_id: str, x: float, y: float) -> None:
    """Move a node."""
    node = _node(canvas, step_id)
    node["x"], node["y"] = x, y


def canvas_set_workflow(canvas: Canvas, field: str, value: Any) -> None:
    """Set one of the workflow's own fields (``None`` clears it)."""
    if value is None:
        canvas["workflow"].pop(field, None)
    else:
        canvas["workflow"][field] = value
