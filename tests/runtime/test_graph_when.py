"""Branches in a task graph: a task whose ``when`` does not hold is skipped (``task.skipped``),
its dependents go on, and the fold keeps it skipped when the graph is read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helix.errors import BlueprintError
from helix.kernel.session import replay_run
from helix.runtime._plan import Plan

from .test_graph import Models, _engine, _graph, _of, store_url  # noqa: F401 (a fixture)

BRANCHED = {
    "name": "branched",
    "model": "scripted:t",
    "tasks": [
        {"id": "check", "objective": "check",
         "report": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
        {"id": "fix", "objective": "fix it", "when": {"step": "check", "field": "ok",
                                                     "equals": False}},
        {"id": "ship", "objective": "ship it", "when": {"step": "check", "field": "ok",
                                                       "equals": True}},
        {"id": "tell", "objective": "tell", "depends_on": ["fix", "ship"]},
    ],
}  # fmt: skip


async def test_a_branch_not_taken_is_skipped_and_its_dependents_go_on(
    store_url: str,  # noqa: F811 (the fixture)
    helix_home: Path,
    tmp_path: Path,
) -> None:
    models = Models({"check": [json.dumps({"ok": True})]})
    engine = await _engine(store_url, helix_home, models)
    graph = await _graph(engine, BRANCHED, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed", state.error
    assert {t: s.status for t, s in state.tasks.items()} == {
        "check": "completed", "fix": "skipped", "ship": "completed", "tell": "completed",
    }  # fmt: skip
    assert sorted(models.runs) == ["check", "ship", "tell"]
    log = await engine.store.read(graph)
    (skipped,) = _of(log, "task.skipped")
    assert skipped.data == {"task": "fix", "reason": "check.ok is true, not == false"}
    assert state.summary is not None
    assert "3 tasks completed, 1 skipped." in state.summary
    again = await replay_run(engine.store, graph)
    assert again.tasks["fix"].status == "skipped"
    assert again.tasks["fix"].error == skipped.data["reason"]


def test_a_condition_names_a_task_of_the_plan() -> None:
    first: list[object] = list(BRANCHED["tasks"])[:1]
    plan = dict(BRANCHED, tasks=[*first, {"id": "x", "objective": "x", "when": {"step": "nope"}}])
    with pytest.raises(BlueprintError, match="unknown task 'nope'"):
        Plan.parse(plan, source="test")
