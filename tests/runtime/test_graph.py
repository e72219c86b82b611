"""Task graphs: a graph run starts its tasks as child runs, in dependency order, durably."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helix.errors import BlueprintError, RunStateError, TaskNotFoundError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, open_store
from helix.kernel.session import replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Engine, RunSetup, decide
from helix.runtime._graph import retry_task
from helix.runtime._plan import Plan

SIX = {
    "name": "six",
    "model": "scripted:t",
    "tasks": [
        {"id": "fetch", "objective": "fetch the data"},
        {"id": "left", "objective": "clean the left half", "depends_on": ["fetch"]},
        {"id": "left2", "objective": "check the left half", "depends_on": ["left"]},
        {"id": "right", "objective": "clean the right half", "depends_on": ["fetch"]},
        {"id": "right2", "objective": "check the right half", "depends_on": ["right"]},
        {"id": "join", "objective": "join both", "depends_on": ["left2", "right2"]},
    ],
}


def _writes(name: str, reply: str | None = None) -> Scenario:
    """A task's run: writes NAME.txt, then replies (its report)."""
    call = {"name": "write_file", "args": {"path": f"{name}.txt", "content": name}}
    return Scenario.of({"text": "working", "tool_calls": [call]}, {"text": reply or f"{name} ok"})


class Models:
    """Scripted models per task (by the task run's blueprint name ``GRAPH.TASK``)."""

    def __init__(self, replies: dict[str, list[str]] | None = None) -> None:
        self.replies = replies or {}
        self.seen: dict[str, list[str]] = {}
        """Task → the runs its model was opened for (a resumed run's again)."""

    @property
    def runs(self) -> Counter[str]:
        """Task → how many runs it had (attempts), whichever process drove them."""
        return Counter({task: len(set(runs)) for task, runs in self.seen.items()})

    def __call__(self, setup: RunSetup) -> ModelAdapter:
        task = setup.blueprint.name.rsplit(".", 1)[-1]
        runs = self.seen.setdefault(task, [])
        if setup.run_id not in runs:
            runs.append(setup.run_id)
        attempt = runs.index(setup.run_id)
        given = self.replies.get(task)
        reply = given[min(attempt, len(given) - 1)] if given else None
        return ScriptedModel(_writes(task, reply), label="test")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, helix_home: Path) -> str:
    """One SQLite file, or the session's PostgreSQL database (run ids never collide)."""
    if request.param == "sqlite":
        return f"sqlite:///{helix_home / 'graph.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


_OPEN: list[EventStore] = []


@pytest.fixture(autouse=True)
async def _close_stores() -> AsyncIterator[None]:
    yield
    while _OPEN:
        await _OPEN.pop().close()


async def _store(url: str) -> EventStore:
    store = await open_store(url)
    _OPEN.append(store)
    return store


async def _engine(url: str, home: Path, models: Models) -> Engine:
    return Engine(await _store(url), home=home, model_factory=models, env={})


async def _graph(engine: Engine, plan: dict[str, Any], world: Path, **options: Any) -> str:
    parsed = Plan.parse(plan, source="test")
    record = await engine.create(
        parsed.objective, blueprint=parsed.blueprint, world=world, **options
    )
    return record.id


def _of(log: list[Event], kind: str, task: str | None = None) -> list[Event]:
    return [e for e in log if e.type == kind and (task is None or e.data.get("task") == task)]


def _seq(log: list[Event], kind: str, task: str) -> int:
    (event,) = _of(log, kind, task)
    return event.seq


async def test_a_six_task_graph_runs_its_branches_after_their_dependencies(
    store_url: str, helix_home: Path, tmp_path: Path
) -> None:
    models = Models()
    engine = await _engine(store_url, helix_home, models)
    graph = await _graph(engine, SIX, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed", state.error
    log = await engine.store.read(graph)
    assert [e.type for e in log[:3]] == ["run.created", "graph.planned", "run.started"]
    for task in ("left", "right"):
        assert _seq(log, "task.completed", "fetch") < _seq(log, "task.started", task)
    assert _seq(log, "task.completed", "left") < _seq(log, "task.started", "left2")
    for task in ("left2", "right2"):
        assert _seq(log, "task.completed", task) < _seq(log, "task.started", "join")
    # both branches were started before either finished: they ran side by side
    assert _seq(log, "task.started", "right") < _seq(log, "task.completed", "left")
    assert models.runs == dict.fromkeys(state.tasks, 1)
    for task in state.tasks:
        assert (tmp_path / f"{task}.txt").read_text() == task  # the shared world
        child = await engine.store.get_run(state.tasks[task].run_id or "")
        assert child.status == "completed"
        assert child.workspace == "default"
    assert set(state.children) == {task.run_id for task in state.tasks.values()}


async def test_inputs_and_report_schemas_pass_structured_reports_along(
    helix_home: Path, tmp_path: Path
) -> None:
    plan = {
        "model": "scripted:t",
        "tasks": [
            {
                "id": "count",
                "objective": "count the rows",
                "report": {"type": "object", "required": ["rows"]},
            },
            {"id": "use", "objective": "use the count", "inputs": {"n": "count.rows"}},
        ],
    }
    models = Models({"count": ['Here:\n```json\n{"rows": 42}\n```']})
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed"
    assert state.tasks["count"].report == {"rows": 42}
    log = await engine.store.read(graph)
    (started,) = _of(log, "task.started", "use")
    assert '"n": 42' in started.data["objective"]
    child = await replay_run(engine.store, started.data["run_id"])
    assert child.objective == started.data["objective"]


async def test_a_failed_task_is_retried_alone(helix_home: Path, tmp_path: Path) -> None:
    plan = {
        "model": "scripted:t",
        "tasks": [
            {"id": "a", "objective": "a"},
            {"id": "b", "objective": "b", "report": {"type": "object"}, "retries": 1},
            {"id": "c", "objective": "c", "depends_on": ["a", "b"]},
        ],
    }
    models = Models({"b": ["not json", '{"fine": true}']})
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed"
    assert models.runs == {"a": 1, "b": 2, "c": 1}
    log = await engine.store.read(graph)
    (failed,) = _of(log, "task.failed", "b")
    assert failed.data["retrying"] is True
    assert failed.data["attempt"] == 1
    assert "not JSON" in failed.data["error"]
    assert len(state.tasks["b"].runs) == 2
    assert state.tasks["b"].attempts == 2


async def test_a_task_failed_for_good_pauses_the_graph_until_it_is_retried(
    helix_home: Path, tmp_path: Path
) -> None:
    plan = {
        "model": "scripted:t",
        "tasks": [
            {"id": "a", "objective": "a", "report": {"type": "object"}},
            {"id": "b", "objective": "b"},
            {"id": "c", "objective": "c", "depends_on": ["a"]},
        ],
    }
    models = Models({"a": ["no", '{"now": "yes"}']})
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph, until=lambda s: s.status == "paused")
    assert state.status == "paused"
    assert state.tasks["a"].status == "failed"
    assert state.tasks["b"].status == "completed"
    assert state.tasks["c"].status == "pending"
    record = await engine.store.get_run(graph)
    assert record.status == "paused"
    log = await engine.store.read(graph)
    assert _of(log, "run.paused")[-1].data["reason"] == "task_failed: a"
    with pytest.raises(RunStateError, match="has not failed"):
        await retry_task(engine, graph, "b", by="user:ann")
    with pytest.raises(TaskNotFoundError, match="no task 'zz'"):
        await retry_task(engine, graph, "zz", by="user:ann")
    await retry_task(engine, graph, "a", by="user:ann")
    state = await engine.drive(graph)
    assert state.status == "completed"
    assert models.runs == {"a": 2, "b": 1, "c": 1}
    (retried,) = _of(await engine.store.read(graph), "task.retried")
    assert retried.data == {"task": "a", "by": "user:ann"}
    assert retried.actor == "user:ann"


async def test_a_graph_stopped_mid_way_resumes_without_rerunning_finished_tasks(
    store_url: str, helix_home: Path, tmp_path: Path
) -> None:
    models = Models()
    engine = await _engine(store_url, helix_home, models)
    graph = await _graph(engine, SIX, tmp_path)
    stopped = await engine.drive(graph, until=lambda s: s.tasks["left"].status == "completed")
    assert stopped.status == "running"
    done_before = {t for t, task in stopped.tasks.items() if task.status == "completed"}
    assert {"fetch", "left"} <= done_before
    assert "join" not in done_before
    lengths = {t: len(await engine.store.read(stopped.tasks[t].run_id or "")) for t in done_before}
    # another process (a new engine on the same store) carries on
    again = await _engine(store_url, helix_home, models)
    state = await again.drive(graph)
    assert state.status == "completed"
    assert all(n == 1 for n in models.runs.values()), models.runs
    for task, length in lengths.items():
        assert len(await again.store.read(state.tasks[task].run_id or "")) == length
    log = await again.store.read(graph)
    assert len(_of(log, "task.started")) == 6
    assert len(_of(log, "run.resumed")) == 1


async def test_an_edge_approval_from_another_process_lets_the_dependents_start(
    helix_home: Path, tmp_path: Path
) -> None:
    plan = {
        "model": "scripted:t",
        "tasks": [
            {"id": "draft", "objective": "draft it", "approve": True},
            {"id": "ship", "objective": "ship it", "depends_on": ["draft"]},
        ],
    }
    url = f"sqlite:///{helix_home / 'g.db'}"
    models = Models()
    engine = await _engine(url, helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    driving = asyncio.create_task(engine.drive(graph))
    other = await _store(url)  # a second connection, as another process has
    async with other.subscribe(graph) as events:
        async for event in events:
            if event.type == "approval.requested":
                asked = event
                break
    assert asked.data["name"] == "task"
    assert asked.data["args"]["task"] == "draft"
    assert (await other.get_run(graph)).status == "waiting"
    assert models.runs == {"draft": 1}  # the dependent waits for the person
    await decide(other, graph, asked.data["request_id"], "allow", by="user:ann")
    state = await driving
    assert state.status == "completed"
    assert models.runs == {"draft": 1, "ship": 1}


async def test_a_denied_report_fails_its_attempt(helix_home: Path, tmp_path: Path) -> None:
    plan = {
        "model": "scripted:t",
        "tasks": [{"id": "draft", "objective": "draft it", "approve": True, "retries": 1}],
    }
    models = Models()
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph, until=lambda s: bool(s.pending_approvals))
    (request,) = state.pending_approvals
    await decide(engine.store, graph, request, "deny", by="user:ann", reason="too short")
    state = await engine.drive(graph, until=lambda s: len(s.pending_approvals) == 1 and
                               s.tasks["draft"].attempts == 2)  # fmt: skip
    (failed,) = _of(await engine.store.read(graph), "task.failed", "draft")
    assert "denied by user:ann: too short" in failed.data["error"]
    assert failed.data["retrying"] is True
    (second,) = state.pending_approvals
    await decide(engine.store, graph, second, "allow", by="user:ann")
    assert (await engine.drive(graph)).status == "completed"


async def test_own_world_tasks_work_on_a_copy(helix_home: Path, tmp_path: Path) -> None:
    (tmp_path / "base.txt").write_text("base")
    plan = {"model": "scripted:t", "tasks": [{"id": "solo", "objective": "x", "world": "own"}]}
    models = Models()
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, models)
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed"
    child = await engine.store.get_run(state.tasks["solo"].run_id or "")
    own = Path(child.world)
    assert own.parent == helix_home / "worlds"
    assert (own / "base.txt").read_text() == "base"
    assert (own / "solo.txt").exists()
    assert not (tmp_path / "solo.txt").exists()


async def test_a_graph_budget_is_shared_so_its_tasks_never_exceed_it(
    helix_home: Path, tmp_path: Path
) -> None:
    plan = {
        "model": "scripted:t",
        "budget": {"usd": 1.0},
        "prices": {"scripted:t": {"input": 1, "output": 1}},
        "tasks": [{"id": f"t{i}", "objective": "x"} for i in range(4)],
    }
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, Models())
    graph = await _graph(engine, plan, tmp_path)
    state = await engine.drive(graph)
    assert state.status == "completed"
    log = await engine.store.read(graph)
    held = [e.data["budget_usd"] for e in _of(log, "task.started")]
    assert sum(held) <= 1.0 + 1e-9
    assert all(h > 0 for h in held)


@pytest.mark.parametrize(
    ("tasks", "problem"),
    [
        ([{"id": "a", "objective": "x", "depends_on": ["a"]}], "depends on itself"),
        ([{"id": "a", "objective": "x", "depends_on": ["b"]}], "unknown task 'b'"),
        ([{"id": "a", "objective": "x"}, {"id": "a", "objective": "y"}], "two tasks"),
        (
            [
                {"id": "a", "objective": "x", "depends_on": ["c"]},
                {"id": "b", "objective": "x", "depends_on": ["a"]},
                {"id": "c", "objective": "x", "inputs": {"v": "b"}},
            ],
            "cycle: a -> c -> b -> a",
        ),
        ([{"id": "a", "objective": "x", "report": {"type": 7}}], "not a JSON Schema"),
        ([{"id": "a b", "objective": "x"}], "tasks.0.id"),
        ([], "tasks"),
        ([{"id": "a", "objective": "x", "inputs": {"v": "a."}}], "not TASK or TASK.field"),
    ],
)
def test_a_bad_plan_is_refused_with_its_reason(tasks: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(BlueprintError, match=problem.replace(".", r"\.")):
        Plan.parse({"model": "scripted:t", "tasks": tasks}, source="plan.yaml")


async def test_a_plan_is_checked_before_anything_is_logged(
    helix_home: Path, tmp_path: Path
) -> None:
    engine = await _engine(f"sqlite:///{helix_home / 'g.db'}", helix_home, Models())
    no_model = Plan.parse({"tasks": [{"id": "a", "objective": "x"}]}, source="p")
    with pytest.raises(BlueprintError, match="no model"):
        await engine.create(no_model.objective, blueprint=no_model.blueprint, world=tmp_path)
    outside = Plan.parse(
        {"model": "scripted:t", "tasks": [{"id": "a", "objective": "x", "blueprint": "../x.yaml"}]},
        source="p",
    )
    with pytest.raises(BlueprintError, match="outside the world"):
        await engine.create(outside.objective, blueprint=outside.blueprint, world=tmp_path)
    wrong_tool = Plan.parse(
        {"model": "scripted:t", "tools": ["read_file"],
         "tasks": [{"id": "a", "objective": "x", "tools": ["write_file"]}]},
        source="p",
    )  # fmt: skip
    with pytest.raises(BlueprintError, match="does not offer write_file"):
        await engine.create(wrong_tool.objective, blueprint=wrong_tool.blueprint, world=tmp_path)
    assert (await engine.store.list_runs()).runs == []


def test_a_plan_round_trips_through_its_data() -> None:
    plan = Plan.parse({"objective": "ship", **SIX}, source="p")
    again = Plan.parse(json.loads(json.dumps(plan.to_data())), source="p")
    assert again == plan
    assert again.objective == "ship"


def test_tasks_are_looked_up_by_id() -> None:
    graph = Plan.parse(SIX, source="p").blueprint.graph
    assert graph is not None
    assert graph.task("join").needs == ("left2", "right2")
    assert graph.task("join") is graph.by_id["join"]
    with pytest.raises(KeyError):
        graph.task("nope")
    assert [t.id for t in graph.dependents("fetch")] == ["left", "right"]
