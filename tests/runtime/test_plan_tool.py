"""``plan``: a planner run splits its work into a task graph, run as its child."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helix.kernel.events import AgentSpawned, Event, NewEvent
from helix.kernel.log import MemoryEventStore, new_run_id
from helix.kernel.session import replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.runtime._planning import GraphChildren
from helix.runtime._session import LiveSession

TASKS: list[dict[str, Any]] = [
    {"id": "a", "objective": "write a.txt"},
    {"id": "b", "objective": "write b.txt", "depends_on": ["a"]},
    {"id": "c", "objective": "write c.txt", "inputs": {"first": "a"}},
]


def _planning(args: dict[str, Any]) -> Scenario:
    call = {"id": "p1", "name": "plan", "args": args}
    return Scenario.of({"text": "splitting it", "tool_calls": [call]}, {"text": "all planned"})


def _task(name: str) -> Scenario:
    call = {"name": "write_file", "args": {"path": f"{name}.txt", "content": name}}
    return Scenario.of({"text": "writing", "tool_calls": [call]}, {"text": f"{name} written"})


def _engine(tmp_path: Path, planner: Scenario) -> Engine:
    def model(setup: RunSetup) -> ModelAdapter:
        if setup.depth == 0:
            return ScriptedModel(planner, label="planner")
        return ScriptedModel(_task(setup.blueprint.name.rsplit(".", 1)[-1]), label="task")

    return Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})


async def _planner(engine: Engine, world: Path, blueprint: Blueprint | None = None) -> str:
    blueprint = blueprint or Blueprint(name="boss", model="scripted:t")
    record = await engine.create("do three things", blueprint=blueprint, world=world)
    return record.id


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


async def test_a_planner_runs_its_plan_as_a_child_graph_and_gets_its_summary(
    tmp_path: Path,
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(tmp_path, _planning({"tasks": TASKS, "objective": "three files"}))
    capped = Blueprint(
        name="boss",
        model="scripted:t",
        tools=("write_file", "read_file", "plan"),
        budget={"usd": 2.0},
    )
    planner = await _planner(engine, world, capped)
    state = await engine.drive(planner)
    assert state.status == "completed", state.error
    assert sorted(p.name for p in world.iterdir()) == ["a.txt", "b.txt", "c.txt"]

    log = await engine.store.read(planner)
    (spawned,) = _of(log, "agent.spawned")
    assert spawned.data["call_id"] == "p1"
    graph_id = spawned.data["child_run_id"]
    (completed,) = _of(log, "tool.completed")
    assert completed.data["ok"] is True
    assert completed.data["output"].startswith(f"graph run {graph_id} completed: 3 tasks")
    (reported,) = _of(log, "agent.reported")
    assert reported.data["status"] == "completed"

    graph = await replay_run(engine.store, graph_id)
    assert graph.status == "completed"
    assert list(graph.tasks) == ["a", "b", "c"]
    setup = await engine.setup(graph_id)
    assert setup.depth == 1
    assert setup.blueprint.name == "boss.plan"
    assert setup.tools.names == ["plan", "read_file", "write_file"]  # the planner's, no more
    assert setup.blueprint.budget.usd == 2.0  # within what the planner had left
    task_run = graph.tasks["b"].run_id
    assert task_run is not None
    assert (await engine.setup(task_run)).depth == 2


async def test_a_plan_that_is_not_one_is_refused_and_nothing_starts(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    cyclic = [
        {"id": "a", "objective": "a", "depends_on": ["b"]},
        {"id": "b", "objective": "b", "depends_on": ["a"]},
    ]
    engine = _engine(tmp_path, _planning({"tasks": cyclic}))
    planner = await _planner(engine, world)
    assert (await engine.drive(planner)).status == "completed"
    log = await engine.store.read(planner)
    (completed,) = _of(log, "tool.completed")
    assert completed.data["ok"] is False
    output = completed.data["output"]
    assert output.startswith("the plan was refused (nothing started)")
    assert "cycle: a -> b -> a" in output
    assert not _of(log, "agent.spawned")
    assert len((await engine.store.list_runs()).runs) == 1


async def test_a_plan_call_run_again_finds_its_graph(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(tmp_path, _planning({"tasks": TASKS}))
    planner = await _planner(engine, world)
    await engine.drive(planner)
    runs = len((await engine.store.list_runs()).runs)
    session = await LiveSession.load(engine.store, planner)
    children = GraphChildren(engine, await engine.setup(planner), session)
    again = await children.plan({"tasks": TASKS}, call_id="p1")  # as after a crash
    (spawned,) = _of(await engine.store.read(planner), "agent.spawned")
    assert again.graph_run_id == spawned.data["child_run_id"]
    assert again.status == "completed"
    assert len((await engine.store.list_runs()).runs) == runs  # no second graph, no task rerun


async def test_a_graph_logged_but_never_made_is_made_on_the_re_run(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(tmp_path, Scenario.of({"text": "nothing"}))
    planner = await _planner(engine, world)
    await engine.drive(planner)
    session = await LiveSession.load(engine.store, planner)
    graph_id = new_run_id()  # the process died between logging the id and creating it
    spawned = AgentSpawned(child_run_id=graph_id, objective="x", call_id="p9")
    await session.append([NewEvent(spawned)])
    children = GraphChildren(engine, await engine.setup(planner), session)
    done = await children.plan({"tasks": TASKS[:1]}, call_id="p9")
    assert (done.graph_run_id, done.status) == (graph_id, "completed")
    assert (world / "a.txt").read_text() == "a"
