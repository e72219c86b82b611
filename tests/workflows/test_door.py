"""Through the door (``LocalApi``): a workflow run is its task graph, run to completion;
the chat tool (``edit_workflow``, called by a scripted model) edits the workflow."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.api import LocalApi
from helix.errors import ConfigError, WorkflowConflictError, WorkflowError
from helix.kernel.log import open_store
from helix.kernel.session import replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Engine, RunSetup
from helix.workflows import Workflows, dump, from_canvas, load_text, open_workflows, to_canvas

FLOW = """
name: release
description: Test, then ship or report
model: scripted:unused
steps:
  - id: tests
    objective: Run the tests
    report: {type: object, required: [passed], properties: {passed: {type: boolean}}}
  - {id: ship, objective: Ship it, when: {step: tests, field: passed, equals: true}}
  - {id: report, objective: Report the failure, when: {step: tests, field: passed,
     equals: true, not_equals: true}}
  - {id: done, objective: Write the summary}
edges:
  - {from: tests, to: ship}
  - {from: tests, to: report}
  - {from: ship, to: done}
  - {from: report, to: done}
"""

EDIT = [
    {"op": "add_step", "after": "tests", "step": {"id": "review", "objective": "Review the diff"}},
]


class Models:
    """A graph task's model replies its task's report; the chat run's calls edit_workflow."""

    def __init__(self) -> None:
        self.tasks: list[str] = []

    def __call__(self, setup: RunSetup) -> ModelAdapter:
        name = setup.blueprint.name
        if name == "workflow-chat":
            args = {"workflow": "release", "operations": EDIT, "base_version": 1}
            call = {"name": "edit_workflow", "args": args}
            steps = ({"text": "", "tool_calls": [call]}, {"text": "Added a review step."})
            return ScriptedModel(Scenario.of(*steps), label="chat")
        task = name.rsplit(".", 1)[-1]
        self.tasks.append(task)
        reply = json.dumps({"passed": True}) if task == "tests" else f"{task} done"
        return ScriptedModel(Scenario.of({"text": reply}), label="task")


@pytest.fixture
async def door(helix_home: Path, tmp_path: Path) -> AsyncIterator[tuple[LocalApi, Models]]:
    url = f"sqlite:///{helix_home / 'helix.db'}"
    store = await open_store(url)
    service = Workflows(await open_workflows(url))
    models = Models()
    engine = Engine(
        store, home=helix_home, model_factory=models, env={},
        workflows=lambda setup: service.editor_for(setup.workspace, setup.run_id),
    )  # fmt: skip
    try:
        async with LocalApi(engine, actor="user:ann", workflows=service) as api:
            yield api, models
    finally:
        await service.store.close()
        await store.close()


async def test_running_a_workflow_runs_its_task_graph_to_completion(
    door: tuple[LocalApi, Models], tmp_path: Path
) -> None:
    api, models = door
    saved = await api.save_workflow(FLOW, base_version=0, how="file")
    run = await api.run_workflow("release", world=tmp_path)
    state = await api.engine.drive(run.id)
    assert state.status == "completed", state.error
    assert state.plan is not None
    tasks = {task_id: task.status for task_id, task in state.tasks.items()}
    assert tasks == {"tests": "completed", "ship": "completed", "report": "skipped",
                     "done": "completed"}  # fmt: skip
    assert sorted(models.tasks) == ["done", "ship", "tests"]  # the skipped branch never ran
    log = await replay_run(api.store, run.id)
    assert log.status == "completed"
    events = [e async for e in api.events(run.id)]
    (skipped,) = [e for e in events if e.type == "task.skipped"]
    assert skipped.data["task"] == "report"
    assert "tests.passed is true" in skipped.data["reason"]
    assert f"version {saved.version}" in (await api.get(run.id)).objective


async def test_the_chat_tool_edits_the_workflow_as_a_new_version_by_the_run(
    door: tuple[LocalApi, Models],
) -> None:
    api, _ = door
    await api.save_workflow(FLOW, base_version=0, how="canvas")
    run = await api.chat_workflow("release", "add a review step after tests")
    state = await api.engine.drive(run.id)
    assert state.status == "completed", state.error
    latest = await api.workflow("release")
    assert latest.version == 2
    assert (latest.by, latest.how) == (f"run:{run.id}", "chat")
    assert latest.change.startswith("added step review")
    assert latest.workflow is not None
    assert latest.workflow.after("tests") == ["review"]
    assert latest.workflow.after("review") == ["report", "ship"]
    # lossless both ways, after the chat's edit
    assert load_text(dump(latest.workflow)) == latest.workflow
    assert from_canvas(to_canvas(latest.workflow)) == latest.workflow
    history = await api.workflow_history("release")
    assert [(v.version, v.how) for v in history] == [(1, "canvas"), (2, "chat")]


async def test_a_chat_run_edits_only_its_own_workflow(door: tuple[LocalApi, Models]) -> None:
    api, _ = door
    await api.save_workflow(FLOW, base_version=0)
    await api.save_workflow(FLOW.replace("name: release", "name: other"), base_version=0)
    run = await api.chat_workflow("other", "add a review step")
    state = await api.engine.drive(run.id)  # its model edits "release": refused
    events = [e async for e in api.events(run.id) if e.type == "tool.completed"]
    assert events
    assert events[0].data["ok"] is False
    assert "edits the workflow 'other' only" in events[0].data["output"]
    assert state.status == "completed"
    assert (await api.workflow("release")).version == 1


async def test_bad_input_through_the_door(door: tuple[LocalApi, Models]) -> None:
    api, _ = door
    with pytest.raises(WorkflowError, match="does not parse"):
        await api.save_workflow("name: [")
    await api.save_workflow(FLOW, base_version=0)
    with pytest.raises(WorkflowConflictError):
        await api.save_workflow(FLOW, base_version=0)
    with pytest.raises(WorkflowError, match="cycle"):
        await api.edit_workflow("release", [{"op": "connect", "from": "done", "to": "tests"}])
    with pytest.raises(ConfigError, match="empty"):
        await api.chat_workflow("release", "  ")


async def test_a_door_without_a_workflow_store_says_so(helix_home: Path) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'x.db'}")
    try:
        api = LocalApi(Engine(store, home=helix_home, env={}))
        with pytest.raises(ConfigError, match="no workflow store"):
            await api.workflows()
    finally:
        await store.close()


async def test_a_workflow_file_of_a_world_is_imported_never_through_a_link_out(
    door: tuple[LocalApi, Models], tmp_path: Path
) -> None:
    api, _ = door
    world = api.worlds / "default" / "repo"
    (world / "flows").mkdir(parents=True)
    (world / "flows" / "release.yaml").write_text(FLOW)
    outside = tmp_path / "outside.yaml"
    outside.write_text(FLOW.replace("name: release", "name: stolen"))
    (world / "flows" / "link.yaml").symlink_to(outside)
    saved = await api.import_workflow("flows/release.yaml", world="repo")
    assert (saved.name, saved.version, saved.how) == ("release", 1, "file")
    for path in ("flows/link.yaml", "../../../outside.yaml", str(outside), "."):
        with pytest.raises(WorkflowError, match="not a file in the world"):
            await api.import_workflow(path, world="repo")
    assert [w.name for w in await api.workflows()] == ["release"]


async def test_edit_workflow_passes_the_gates_like_any_consequential_tool(
    door: tuple[LocalApi, Models], tmp_path: Path
) -> None:
    """Outside the chat box, nobody allowed it: an unattended run's call is refused."""
    from helix.runtime import Blueprint
    from helix.tools import edit_workflow

    api, _ = door
    assert edit_workflow.facets.effect == "external"
    assert not edit_workflow.read_only
    assert "edit_workflow" in api.engine.tools
    await api.save_workflow(FLOW, base_version=0)
    blueprint = Blueprint(name="workflow-chat", model="scripted:unused")  # the model edits
    run = await api.create("tidy the release workflow", blueprint=blueprint, world=tmp_path,
                           attended=False)  # fmt: skip
    await api.engine.drive(run.id)
    events = [e async for e in api.events(run.id)]
    decided = [e for e in events if e.type == "gate.decided" and e.data.get("gate") == "approval"]
    assert decided
    assert decided[0].data["verdict"] == "ask"
    assert (await api.workflow("release")).version == 1
