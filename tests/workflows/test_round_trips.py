"""Round trips are lossless: YAML ⇄ model, model ⇄ canvas, and the two editors agree.

Random workflows go through the YAML text and the canvas document and come back equal;
random edit sequences applied as ``edit_workflow`` operations (the chat tool's) and as
the canvas's own operations (what a person does on the dashboard, mirrored from
``static/workflow_canvas.js``) give equal definitions.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helix.errors import WorkflowError
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext, edit_workflow
from helix.workflows import (
    Canvas,
    Workflow,
    Workflows,
    apply_ops,
    canvas_add_node,
    canvas_connect,
    canvas_disconnect,
    canvas_move,
    canvas_remove_node,
    canvas_set_field,
    canvas_set_workflow,
    dump,
    from_canvas,
    load_text,
    open_workflows,
    parse_ops,
    to_canvas,
)

from ._strategies import operations, workflows

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(workflows())
def test_yaml_text_round_trips(workflow: Workflow) -> None:
    text = dump(workflow)
    assert load_text(text) == workflow
    assert dump(load_text(text)) == text


@SETTINGS
@given(workflows())
def test_the_canvas_document_round_trips(workflow: Workflow) -> None:
    canvas = to_canvas(workflow)
    assert from_canvas(copy.deepcopy(canvas)) == workflow
    assert to_canvas(from_canvas(canvas)) == canvas


def on_canvas(canvas: Canvas, op: dict[str, Any]) -> None:
    """What a person does on the canvas to make the same edit as ``op``."""
    kind = op["op"]
    if kind == "add_step":
        new = op["step"]["id"]
        canvas_add_node(canvas, op["step"], op.get("x"), op.get("y"))  # type: ignore[arg-type]
        if "after" in op:
            for edge in [e for e in canvas["edges"] if e["from"] == op["after"]]:
                canvas_disconnect(canvas, edge["from"], edge["to"])
                canvas_connect(canvas, new, edge["to"])
            canvas_connect(canvas, op["after"], new)
    elif kind == "remove_step":
        before = [e["from"] for e in canvas["edges"] if e["to"] == op["step"]]
        after = [e["to"] for e in canvas["edges"] if e["from"] == op["step"]]
        for source in before:
            for target in after:
                canvas_connect(canvas, source, target)
        canvas_remove_node(canvas, op["step"])
    elif kind == "connect":
        canvas_connect(canvas, op["from"], op["to"])
    elif kind == "disconnect":
        canvas_disconnect(canvas, op["from"], op["to"])
    elif kind == "set_field":
        canvas_set_field(canvas, op["step"], op["field"], op["value"])
    elif kind == "set_workflow":
        canvas_set_workflow(canvas, op["field"], op["value"])
    else:
        canvas_move(canvas, op["step"], op["x"], op["y"])


@SETTINGS
@given(st.data(), workflows())
def test_chat_operations_and_canvas_edits_give_the_same_definition(
    data: st.DataObject, start: Workflow
) -> None:
    by_chat = start
    canvas = to_canvas(start)
    applied = 0
    for _ in range(data.draw(st.integers(1, 8))):
        op = data.draw(operations(by_chat))
        try:
            after = apply_ops(by_chat, parse_ops([op]))
        except WorkflowError:
            continue  # refused (a cycle, an unknown step…): the canvas would not save it
        by_chat = after
        on_canvas(canvas, op)
        applied += 1
        by_canvas = from_canvas(copy.deepcopy(canvas))
        assert by_canvas == by_chat
        canvas = to_canvas(by_canvas)  # a save, then the page reloads the new version
    assert load_text(dump(by_chat)) == by_chat
    assert from_canvas(to_canvas(by_chat)) == by_chat


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), start=workflows())
def test_the_chat_tool_itself_stores_what_the_canvas_would(
    data: st.DataObject, start: Workflow, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same property through ``edit_workflow`` and the store: each call is a version."""
    folder = tmp_path_factory.mktemp("store")
    ops = [data.draw(operations(start)) for _ in range(data.draw(st.integers(1, 5)))]
    asyncio.run(_through_the_tool(folder, start, ops))


async def _through_the_tool(folder: Path, start: Workflow, ops: list[dict[str, Any]]) -> None:
    service = Workflows(await open_workflows(f"sqlite:///{folder / 'helix.db'}"))
    sandbox = ProcessSandbox()
    try:
        await service.save("team", start, base_version=0, by="user:ann", how="api")
        context = ToolContext("run-1", "call-1", folder, sandbox,
                              workflows=service.editor_for("team", "run-1"))  # fmt: skip
        canvas = to_canvas(start)
        version = 1
        for op in ops:
            args = {"workflow": start.name, "operations": [op], "base_version": version}
            try:  # the runtime turns a HelixError into a failed result for the model
                result = await edit_workflow.call(context, args)
            except WorkflowError:
                continue  # refused (nothing stored): the canvas would not save it either
            version += 1
            on_canvas(canvas, op)
            stored = await service.get("team", start.name)
            assert (stored.version, stored.by, stored.how) == (version, "run:run-1", "chat")
            assert stored.workflow == from_canvas(copy.deepcopy(canvas))
            assert result.output.endswith(dump(stored.workflow))
            canvas = to_canvas(stored.workflow)
        assert len(await service.history("team", start.name)) == version
    finally:
        sandbox.close()
        await service.store.close()
