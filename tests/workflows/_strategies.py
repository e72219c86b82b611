"""Hypothesis strategies: random valid workflows, and random edit operations on one."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from helix.workflows import Workflow, from_data
from helix.workflows._model import ancestors

IDS = [f"s{i}" for i in range(8)] + ["tests", "review", "ship", "build-2", "a_b"]
MODELS = [None, "openai:gpt-4.1", "anthropic:claude-sonnet-4-5", "scripted:plan.yaml"]
TOOLS = ["read_file", "write_file", "run_command", "edit_workflow"]
TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() != "")
JSONISH = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["ok", "no"]))
COORD = st.floats(-5000, 5000, allow_nan=False).map(lambda f: round(f, 2))


@st.composite
def steps(draw: st.DrawFn, step_id: str, kind: str | None = None) -> dict[str, Any]:
    """A step's data (agent or approval) with random fields; no condition yet."""
    kind = kind or draw(st.sampled_from(["agent", "agent", "approval"]))
    step: dict[str, Any] = {"id": step_id, "objective": draw(TEXT)}
    if kind == "approval":
        step["kind"] = "approval"
        return step
    if (model := draw(st.sampled_from(MODELS))) is not None:
        step["model"] = model
    if draw(st.booleans()):
        step["tools"] = draw(st.lists(st.sampled_from(TOOLS), unique=True, max_size=3))
    if draw(st.booleans()):
        step["retries"] = draw(st.integers(0, 10))
    if draw(st.booleans()):
        step["approve"] = draw(st.booleans())
    if draw(st.booleans()):
        step["report"] = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    return step


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    """A random valid workflow: a DAG (edges from earlier to later steps), branches, layout."""
    ids = draw(st.lists(st.sampled_from(IDS), unique=True, min_size=1, max_size=7))
    data: dict[str, Any] = {"name": draw(st.sampled_from(["release", "wf-1", "a.b_c"]))}
    if draw(st.booleans()):
        data["description"] = draw(TEXT)
    if (model := draw(st.sampled_from(MODELS))) is not None:
        data["model"] = model
    if draw(st.booleans()):
        data["budget_usd"] = draw(st.sampled_from([0.5, 1, 2.25]))
    data["steps"] = [draw(steps(i)) for i in ids]
    pairs = [(a, b) for n, a in enumerate(ids) for b in ids[n + 1 :]]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    data["edges"] = [{"from": a, "to": b} for a, b in chosen]
    placed = draw(st.lists(st.sampled_from(ids), unique=True))
    data["layout"] = {i: {"x": draw(COORD), "y": draw(COORD)} for i in placed}
    workflow = from_data(data)
    # branches: an agent step may test an agent step before it
    for step in list(data["steps"]):
        if step.get("kind") == "approval":
            continue
        before = sorted(
            a for a in ancestors(workflow, step["id"]) if workflow.step(a).kind == "agent"
        )
        if before and draw(st.booleans()) is True:
            condition: dict[str, Any] = {"step": draw(st.sampled_from(before))}
            if draw(st.booleans()):
                condition["field"] = "ok"
            condition["equals"] = draw(JSONISH)
            if draw(st.booleans()):
                condition["not_equals"] = True
            step["when"] = condition
    return from_data(data)


@st.composite
def operations(draw: st.DrawFn, workflow: Workflow) -> dict[str, Any]:
    """One edit operation (as JSON) that names steps of ``workflow`` (it may still fail)."""
    ids = [s.id for s in workflow.steps]
    kind = draw(
        st.sampled_from(
            [
                "add_step",
                "remove_step",
                "connect",
                "disconnect",
                "set_field",
                "set_workflow",
                "move",
            ]
        )
    )
    if kind == "add_step":
        new = draw(st.sampled_from([i for i in IDS if i not in ids] or ["extra"]))
        op: dict[str, Any] = {"op": kind, "step": draw(steps(new))}
        if draw(st.booleans()):
            op["after"] = draw(st.sampled_from(ids))
        if draw(st.booleans()):
            op["x"], op["y"] = draw(COORD), draw(COORD)
        return op
    if kind == "remove_step":
        return {"op": kind, "step": draw(st.sampled_from(ids))}
    if kind in ("connect", "disconnect"):
        return {"op": kind, "from": draw(st.sampled_from(ids)), "to": draw(st.sampled_from(ids))}
    if kind == "set_field":
        field, value = draw(
            st.one_of(
                st.tuples(st.just("objective"), TEXT),
                st.tuples(st.just("model"), st.sampled_from(MODELS)),
                st.tuples(st.just("retries"), st.integers(0, 10)),
                st.tuples(st.just("approve"), st.booleans()),
                st.tuples(st.just("tools"), st.lists(st.sampled_from(TOOLS), unique=True)),
                st.tuples(st.just("kind"), st.sampled_from(["agent", "approval"])),
            )
        )
        return {"op": kind, "step": draw(st.sampled_from(ids)), "field": field, "value": value}
    if kind == "set_workflow":
        field, value = draw(
            st.one_of(
                st.tuples(st.just("description"), TEXT),
                st.tuples(st.just("model"), st.sampled_from(MODELS)),
                st.tuples(st.just("max_parallel"), st.integers(1, 8)),
            )
        )
        return {"op": kind, "field": field, "value": value}
    return {"op": kind, "step": draw(st.sampled_from(ids)), "x": draw(COORD), "y": draw(COORD)}
