"""``delegate``: child runs that do a sub-task in the parent's world and report back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ConfigError
from helix.kernel.events import AgentReported, AgentSpawned, Event, NewEvent
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import SessionState, apply, replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, cancel, rollback
from helix.runtime._delegation import MAX_DEPTH, ChildRuns, settle
from helix.runtime._session import LiveSession
from helix.tools import ToolContext, builtin_registry

SUBTASK = "write hello.txt"


def _delegating(args: dict[str, Any]) -> Scenario:
    call = {"id": "d1", "name": "delegate", "args": args}
    return Scenario.of({"text": "handing it over", "tool_calls": [call]}, {"text": "all done"})


CHILD = Scenario.of(
    {"text": "writing", "tool_calls": [
        {"name": "write_file", "args": {"path": "hello.txt", "content": "hi\n"}}]},
    {"text": "wrote hello.txt"},
)  # fmt: skip


def _engine(tmp_path: Path, parent: Scenario, child: Scenario = CHILD) -> Engine:
    def model(setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(parent if setup.depth == 0 else child, label="test")

    home = tmp_path / "home"
    return Engine(MemoryEventStore(), home=home, model_factory=model, env={})


def _world(tmp_path: Path) -> Path:
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    return world


async def _started(engine: Engine, world: Path, blueprint: Blueprint | None = None) -> str:
    blueprint = blueprint or Blueprint(model="scripted:t")
    record = await engine.create("plan and delegate", blueprint=blueprint, world=world)
    return record.id


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


async def test_a_child_does_the_sub_task_in_the_world_and_reports(tmp_path: Path) -> None:
    world = _world(tmp_path)
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK}))
    parent = await _started(engine, world)
    state = await engine.drive(parent)
    assert state.status == "completed"
    log = await engine.store.read(parent)
    (spawned,) = _of(log, "agent.spawned")
    (reported,) = _of(log, "agent.reported")
    (completed,) = _of(log, "tool.completed")
    child = spawned.data["child_run_id"]
    assert spawned.data == {"child_run_id": child, "objective": SUBTASK, "call_id": "d1"}
    assert reported.data["report"] == "wrote hello.txt"
    assert reported.data["status"] == "completed"
    assert spawned.seq < reported.seq < completed.seq
    assert completed.data["ok"] is True
    assert completed.data["output"] == f"child run {child} completed: wrote hello.txt"
    assert (world / "hello.txt").read_text() == "hi\n"
    assert state.children == [child]
    child_record = await engine.store.get_run(child)
    assert child_record.status == "completed"
    assert child_record.objective == SUBTASK
    assert Path(child_record.world) == world.resolve()
    first = await engine.store.event_at(child, 0)
    assert first is not None
    assert first.data["settings"]["depth"] == 1


async def test_a_re_run_call_finds_its_child_instead_of_starting_another(tmp_path: Path) -> None:
    world = _world(tmp_path)
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK}))
    parent = await _started(engine, world)
    await engine.drive(parent)
    (child,) = (await replay_run(engine.store, parent)).children

    session = await LiveSession.load(engine.store, parent)
    children = ChildRuns(engine, await engine.setup(parent), session)
    again = await children.delegate(SUBTASK, None, call_id="d1")
    assert (again.child_run_id, again.status, again.report) == (
        child,
        "completed",
        "wrote hello.txt",
    )
    assert len((await engine.store.list_runs()).runs) == 2
    assert len(_of(await engine.store.read(parent), "agent.reported")) == 1  # not counted twice


async def test_a_child_logged_but_never_created_is_created_on_the_re_run(tmp_path: Path) -> None:
    world = _world(tmp_path)
    engine = _engine(tmp_path, Scenario.of({"text": "nothing to do"}))
    parent = await _started(engine, world)
    await engine.drive(parent)
    session = await LiveSession.load(engine.store, parent)
    # The process died between logging the child's id and creating the child.
    spawned = AgentSpawned(child_run_id="run_lost_child", objective=SUBTASK, call_id="d9")
    await session.append([NewEvent(spawned)])
    children = ChildRuns(engine, await engine.setup(parent), session)
    done = await children.delegate(SUBTASK, None, call_id="d9")
    assert (done.child_run_id, done.status) == ("run_lost_child", "completed")
    assert (world / "hello.txt").exists()


async def test_a_child_someone_else_drives_is_waited_for(tmp_path: Path) -> None:
    world = _world(tmp_path)
    slow_child = Scenario.of({"text": "Done at last.", "delay_s": 0.5})
    engine = _engine(tmp_path, Scenario.of({"text": "nothing to do"}), slow_child)
    parent = await _started(engine, world)
    await engine.drive(parent)
    session = await LiveSession.load(engine.store, parent)
    children = ChildRuns(engine, await engine.setup(parent), session)
    child = await engine.create(
        SUBTASK, blueprint=Blueprint(model="scripted:t"), world=world, depth=1
    )
    spawned = AgentSpawned(child_run_id=child.id, objective=SUBTASK, call_id="d1")
    await session.append([NewEvent(spawned)])
    async with asyncio.TaskGroup() as group:
        # As a server resuming every unfinished run would: the child has a driver.
        group.create_task(engine.drive(child.id))
        for _ in range(500):
            if await engine.is_driven(child.id):
                break
            await asyncio.sleep(0.01)
        done = await children.delegate(SUBTASK, None, call_id="d1")
    assert (done.child_run_id, done.status, done.report) == (child.id, "completed", "Done at last.")


async def test_a_child_cannot_have_a_tool_its_parent_lacks(tmp_path: Path) -> None:
    world = _world(tmp_path)
    (world / "worker.yaml").write_text("tools: [read_file, run_command]\n")
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK, "blueprint": "worker.yaml"}))
    narrow = Blueprint(model="scripted:t", tools=("read_file", "write_file", "delegate"))
    parent = await _started(engine, world, narrow)
    await engine.drive(parent)
    log = await engine.store.read(parent)
    (completed,) = _of(log, "tool.completed")
    assert completed.data["ok"] is False
    assert "asks for tools this run does not have: run_command" in completed.data["output"]
    assert not _of(log, "agent.spawned")
    assert len((await engine.store.list_runs()).runs) == 1


@pytest.mark.parametrize(
    ("path", "problem"),
    [("../outside.yaml", "outside the world"), ("missing.yaml", "cannot read the blueprint")],
)
async def test_a_child_blueprint_must_be_a_file_in_the_world(
    tmp_path: Path, path: str, problem: str
) -> None:
    world = _world(tmp_path)
    (tmp_path / "outside.yaml").write_text("tools: [read_file]\n")
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK, "blueprint": path}))
    parent = await _started(engine, world)
    await engine.drive(parent)
    (completed,) = _of(await engine.store.read(parent), "tool.completed")
    assert completed.data["ok"] is False
    assert problem in completed.data["output"]


async def test_a_childs_blueprint_narrows_but_never_widens(tmp_path: Path) -> None:
    world = _world(tmp_path)
    (world / "worker.yaml").write_text(
        "system: You only write files.\ntools: [write_file]\n"
        "approvals: {rules: [{tool: '*', action: allow}]}\nbudget: {usd: 50}\n"
    )
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK, "blueprint": "worker.yaml"}))
    capped = Blueprint(model="scripted:t", budget={"usd": 2.0})
    parent = await _started(engine, world, capped)
    await engine.drive(parent)
    (child,) = (await replay_run(engine.store, parent)).children
    setup = await engine.setup(child)
    assert setup.blueprint.system == "You only write files."
    assert setup.tools.names == ["write_file"]
    assert setup.blueprint.approvals.rules == ()  # the parent's rules, not the child's
    assert setup.blueprint.budget.usd == 2.0  # what the parent had left, not 50
    assert setup.depth == 1


async def test_delegation_stops_nesting_at_the_limit(tmp_path: Path) -> None:
    world = _world(tmp_path)
    delegating = _delegating({"objective": SUBTASK})
    engine = _engine(tmp_path, delegating, delegating)
    record = await engine.create(
        "deep", blueprint=Blueprint(model="scripted:t"), world=world, depth=MAX_DEPTH
    )
    await engine.drive(record.id)
    (completed,) = _of(await engine.store.read(record.id), "tool.completed")
    assert completed.data["ok"] is False
    assert f"nested {MAX_DEPTH} deep" in completed.data["output"]
    assert len((await engine.store.list_runs()).runs) == 1


async def test_cancelling_the_parent_cancels_its_working_child(tmp_path: Path) -> None:
    world = _world(tmp_path)
    slow_child = Scenario.of({"text": "thinking", "delay_s": 30.0})
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK}), slow_child)
    parent = await _started(engine, world)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(parent))
        child = await _child_asking_its_model(engine, parent)
        await cancel(engine.store, parent, by="user:test")
    assert driving.result().status == "cancelled"
    assert (await engine.store.get_run(child)).status == "cancelled"


async def _child_asking_its_model(engine: Engine, parent: str) -> str:
    for _ in range(500):
        children = (await replay_run(engine.store, parent)).children
        if children and await engine.is_driven(children[0]):
            log = await engine.store.read(children[0])
            if _of(log, "model.requested"):
                return children[0]
        await asyncio.sleep(0.01)
    raise AssertionError("the child never called its model")


def test_what_children_report_spending_counts_against_the_parents_budget() -> None:
    state = SessionState(run_id="run_p")
    for seq, cost in enumerate((0.25, 0.5)):
        payload = AgentReported(child_run_id=f"run_c{seq}", report="ok", cost_usd=cost)
        apply(state, Event("run_p", seq, payload.TYPE, 1, "t", 1, "agent", payload.model_dump()))
    assert state.spent_usd == pytest.approx(0.75)
    assert state.children_reported == {"run_c0", "run_c1"}


async def test_the_tool_without_a_delegator_says_so(tmp_path: Path) -> None:
    from helix.sandbox import ProcessSandbox

    tool = builtin_registry().get("delegate")
    context = ToolContext("run_x", "c1", tmp_path, ProcessSandbox())
    result = await tool.call(context, {"objective": "anything"})
    assert (result.ok, result.output) == (False, "delegation is not available to this run")


async def test_the_parents_snapshots_hold_the_childs_changes(tmp_path: Path) -> None:
    world = _world(tmp_path)
    (world / "kept.txt").write_text("before\n")
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK}))
    parent = await _started(engine, world)
    await engine.drive(parent)
    assert (world / "hello.txt").exists()
    await rollback(engine, parent, "start", by="user:test")  # the parent's own history
    assert not (world / "hello.txt").exists()
    assert (world / "kept.txt").read_text() == "before\n"


async def test_a_paused_child_hands_control_back_to_its_parent(tmp_path: Path) -> None:
    world = _world(tmp_path)
    (world / "worker.yaml").write_text("budget: {max_turns: 1}\n")
    engine = _engine(tmp_path, _delegating({"objective": SUBTASK, "blueprint": "worker.yaml"}))
    parent = await _started(engine, world)
    state = await asyncio.wait_for(engine.drive(parent), timeout=30)
    assert state.status == "completed"  # not left waiting on the child
    (child,) = state.children
    assert (await engine.store.get_run(child)).status == "paused"
    log = await engine.store.read(parent)
    (reported,) = _of(log, "agent.reported")
    assert reported.data["status"] == "paused"
    assert "paused (max_turns)" in reported.data["report"]
    (completed,) = _of(log, "tool.completed")
    assert completed.data["ok"] is False
    assert f"helix resume {child} --max-turns N" in completed.data["output"]


async def test_a_log_naming_someone_elses_run_as_a_child_does_not_reach_it(
    tmp_path: Path,
) -> None:
    # An imported log can say anything: here, that its child is a run of another workspace.
    world = _world(tmp_path)
    engine = _engine(tmp_path, Scenario.of({"text": "nothing to do"}))
    parent = await _started(engine, world)
    await engine.drive(parent)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victims = [
        await engine.create(SUBTASK, blueprint=Blueprint(model="scripted:t"), world=world,
                            workspace="other"),
        await engine.create(SUBTASK, blueprint=Blueprint(model="scripted:t"), world=elsewhere),
    ]  # fmt: skip
    session = await LiveSession.load(engine.store, parent)
    children = ChildRuns(engine, await engine.setup(parent), session)
    for number, victim in enumerate(victims):
        spawned = AgentSpawned(child_run_id=victim.id, objective=SUBTASK, call_id=f"x{number}")
        await session.append([NewEvent(spawned)])
        with pytest.raises(ConfigError, match="not one of this run's children"):
            await children.delegate(SUBTASK, None, call_id=f"x{number}")
        assert len(await engine.store.read(victim.id)) == 1  # never driven: run.created only
    assert not (world / "hello.txt").exists()
    assert not (elsewhere / "hello.txt").exists()


async def test_a_child_held_by_a_driver_that_stopped_is_driven_once_its_lease_lapses(
    tmp_path: Path,
) -> None:
    """A lease nobody renews (a driver frozen, or cancelled as it took it) holds a child
    up for one lease's time, not for ever: its parent drives it once the lease lapses."""
    engine = _engine(tmp_path, CHILD, CHILD)
    child = await _started(engine, _world(tmp_path))
    frozen = "elsewhere/1/frozen"  # another host's driver, which never renews
    await engine.store.take_lease(child, frozen, ttl_s=0.5, now=engine.clock.now())
    state = await settle(engine, child, stop_when_paused=False)
    assert state.status == "completed"
    (taken,) = [e for e in await engine.store.read(child) if e.type == "lease.taken_over"]
    assert taken.data["previous_holder"] == frozen
    assert taken.data["reason"] == "expired"
