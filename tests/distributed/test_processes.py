"""The ``processes`` executor: real worker processes, a real store, a real HTTP model.

Each test starts workers with the spawn method; they open their own engines on the
store (one SQLite file, or one PostgreSQL database) and call the mock model server of
this process over HTTP, which counts every model request. Waits are for events in the
log (a subscription in this process), bounded by ``WAIT_S``; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from helix.distributed import ProcessExecutor, open_executor, parse_executor, parse_workers
from helix.errors import ConfigError, LeaseLostError, NodeNotFoundError, NodeStateError
from helix.kernel.events import Event, NewEvent, RunResumed
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import Scenario
from helix.runtime import Blueprint, Engine, open_supervisor
from helix.testing import MockModelServer

from ._engines import open_broken_engine, open_test_engine

MODEL = "openai:gpt-4.1"
WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""
"""The issue's bound: a run whose worker died continues on another within it."""

LOOK = {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, helix_home: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{helix_home / 'helix.db'}"


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
async def engine(db_url: str, helix_home: Path, model_server: MockModelServer) -> Any:
    """This process's engine on the shared store: it creates runs and reads their logs."""
    async with open_test_engine(db_url, helix_home, model_server.openai_base_url) as made:
        yield made


def _world(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    (path / "notes.txt").write_text("hello\n")
    return path


async def _create(engine: Engine, world: Path) -> str:
    record = await engine.create("look around", blueprint=Blueprint(model=MODEL), world=world)
    return record.id


async def _until(store: EventStore, run_id: str, event_type: str, seen: list[Event]) -> Event:
    """Read the run's events into ``seen`` until one of ``event_type`` arrives."""
    after = seen[-1].seq if seen else -1
    async with asyncio.timeout(WAIT_S), store.subscribe(run_id, after=after) as events:
        async for event in events:
            seen.append(event)
            if event.type == event_type:
                return event
    raise AssertionError(f"the subscription of {run_id} ended before {event_type}")


def _types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def _model_requests(server: MockModelServer) -> int:
    return len([r for r in server.requests if r.api == "openai"])


async def _requests_reach(server: MockModelServer, count: int) -> None:
    """Wait until the mock model has received ``count`` requests (it has no event to await)."""

    def wait() -> None:
        deadline = time.monotonic() + WAIT_S
        while _model_requests(server) < count:
            assert time.monotonic() < deadline, f"the model got fewer than {count} requests"
            time.sleep(0.01)

    await asyncio.to_thread(wait)


async def _pid_of(store: EventStore, run_id: str) -> int:
    lease = await store.get_lease(run_id)
    assert lease is not None, "the run is not being driven"
    return int(lease.holder.split("/")[1])


async def test_a_run_whose_worker_is_killed_mid_model_call_continues_on_another(
    engine: Engine, db_url: str, helix_home: Path, model_server: MockModelServer, tmp_path: Path
) -> None:
    model_server.play(
        Scenario.of(
            LOOK,
            {"text": "Slow thoughts.", "delay_s": 30.0},  # in flight when its worker dies
            LOOK,
            {"text": "Done."},
        )
    )
    run_id = await _create(engine, _world(tmp_path / "world"))
    opener = partial(open_test_engine, db_url, helix_home, model_server.openai_base_url)
    async with (
        open_supervisor() as supervisor,
        open_executor(
            "processes", engine=engine, supervisor=supervisor, opener=opener, workers=2
        ) as executor,
    ):
        assert isinstance(executor, ProcessExecutor)
        before = {n.id: n for n in await executor.nodes()}
        assert [n.state for n in before.values()] == ["alive", "alive"]
        executor.submit(run_id)
        executor.submit(run_id)  # nothing: it is driven already
        seen: list[Event] = []
        await _until(engine.store, run_id, "model.requested", seen)
        await _until(engine.store, run_id, "model.requested", seen)  # the slow one
        await _requests_reach(model_server, 2)  # in flight at the model, not just logged
        stale = await engine.store.get_lease(run_id)
        assert stale is not None
        pid = await _pid_of(engine.store, run_id)
        (driver,) = [n for n in await executor.nodes() if run_id in n.runs]
        assert driver.labels["pid"] == str(pid)

        os.kill(pid, signal.SIGKILL)
        # It goes on elsewhere: how soon is a figure (helix bench distributed,
        # lease_takeover_s of a killed driver), not a test's wall-clock limit.
        taken = await _until(engine.store, run_id, "lease.taken_over", seen)
        await _until(engine.store, run_id, "run.completed", seen)

        after = {n.id: n for n in await executor.nodes()}
        assert after[driver.id].labels["pid"] != str(pid)  # started again
        assert [n.state for n in after.values()] == ["alive", "alive"]

    assert taken.data["reason"] == "holder_gone"
    assert taken.data["previous_holder"] == stale.holder
    log = [e async for e in engine.store.iter_events(run_id)]
    assert [e.seq for e in log] == list(range(len(log)))  # 0 lost events
    assert [e.seq for e in log] == [e.seq for e in seen] or seen[0].seq == 1
    kinds = _types(log)
    # The cut-off call was asked again, as on any resume; no answered call was repeated.
    assert kinds.count("model.requested") == kinds.count("model.responded") + 1 == 4
    assert _model_requests(model_server) == kinds.count("model.requested")
    completed = [e.data["call_id"] for e in log if e.type == "tool.completed"]
    started = [e.data["call_id"] for e in log if e.type == "tool.started"]
    assert len(completed) == len(set(completed)) == len(started) == 2  # none run twice
    # The dead driver's lease is fenced off: its late append is refused, nothing written.
    with pytest.raises(LeaseLostError):
        await engine.store.append(
            run_id, [NewEvent(RunResumed())], expected_seq=len(log), lease=stale
        )
    assert len([e async for e in engine.store.iter_events(run_id)]) == len(log)


async def test_draining_a_worker_moves_its_run_at_the_next_turn_boundary(
    engine: Engine, db_url: str, helix_home: Path, model_server: MockModelServer, tmp_path: Path
) -> None:
    model_server.play(Scenario.of(LOOK, LOOK, LOOK, {"text": "Done."}))
    run_id = await _create(engine, _world(tmp_path / "world"))
    opener = partial(open_test_engine, db_url, helix_home, model_server.openai_base_url)
    async with (
        open_supervisor() as supervisor,
        open_executor(
            "processes", engine=engine, supervisor=supervisor, opener=opener, workers=2
        ) as executor,
    ):
        executor.submit(run_id)
        seen: list[Event] = []
        await _until(engine.store, run_id, "tool.requested", seen)  # inside turn 1
        (driver,) = [n for n in await executor.nodes() if run_id in n.runs]
        (other,) = [n for n in await executor.nodes() if n.id != driver.id]
        assert await executor.drain(driver.id) == [run_id]
        await _until(engine.store, run_id, "run.resumed", seen)  # driven elsewhere
        assert await _pid_of(engine.store, run_id) == int(other.labels["pid"])
        await _until(engine.store, run_id, "run.completed", seen)
        nodes = {n.id: n for n in await executor.nodes()}
        assert (nodes[driver.id].state, nodes[driver.id].runs) == ("draining", ())
        executor.submit(run_id)  # an ended run: its drive stops at once
        with pytest.raises(NodeStateError):  # nowhere left to move the other's runs
            await executor.drain(other.id)
        with pytest.raises(NodeNotFoundError):
            await executor.drain("worker-9")

    log = [e async for e in engine.store.iter_events(run_id)]
    kinds = _types(log)
    assert [e.seq for e in log] == list(range(len(log)))
    moved_at = kinds.index("run.resumed")
    assert kinds[moved_at - 1] == "turn.ended"  # it moved between turns, not inside one
    assert "lease.taken_over" not in kinds  # the drained driver released it
    assert kinds.count("model.requested") == kinds.count("model.responded") == 4
    assert _model_requests(model_server) == 4
    completed = [e.data["call_id"] for e in log if e.type == "tool.completed"]
    assert len(completed) == len(set(completed)) == 3


async def test_bad_executor_settings_are_refused_with_their_reason(
    engine: Engine, helix_home: Path
) -> None:
    with pytest.raises(ConfigError, match="not one of local, processes, ray"):
        parse_executor("threads")
    assert parse_executor(" Processes ") == "processes"
    for bad, reason in (("0", "between 1 and 256"), ("many", "not a whole number")):
        with pytest.raises(ConfigError, match=reason):
            parse_workers(bad)
    assert parse_workers("") == (os.cpu_count() or 1)
    async with open_supervisor() as supervisor:
        with pytest.raises(ConfigError, match="needs an engine opener"):
            async with open_executor("processes", engine=engine, supervisor=supervisor):
                pass
        memory = Engine(MemoryEventStore(), home=helix_home)
        with pytest.raises(ConfigError, match="not memory://"):
            async with open_executor(
                "processes", engine=memory, supervisor=supervisor, opener=open_broken_engine
            ):
                pass
        # A worker that cannot open its engine stops the start, saying why.
        with pytest.raises(ConfigError, match="the database is unreachable"):
            async with open_executor(
                "processes",
                engine=engine,
                supervisor=supervisor,
                opener=open_broken_engine,
                workers=1,
            ):
                pass
        async with open_executor("local", engine=engine, supervisor=supervisor) as local:
            assert local.kind == "local"


async def _worker_pid(executor: ProcessExecutor, worker_id: str, not_pid: str) -> str:
    """The worker's pid once it is ready again with a pid other than ``not_pid``."""
    deadline = time.monotonic() + WAIT_S
    for _ in range(int(WAIT_S / 0.02)):
        (node,) = [n for n in await executor.nodes() if n.id == worker_id]
        if node.labels["pid"] not in ("", not_pid) or node.state == "dead":
            return node.labels["pid"]
        assert time.monotonic() < deadline, f"{worker_id} did not come back"
        await asyncio.sleep(0.02)
    raise AssertionError(f"{worker_id} did not come back")


async def test_a_worker_that_keeps_dying_is_restarted_within_limits_then_left_dead(
    engine: Engine, db_url: str, helix_home: Path, model_server: MockModelServer, tmp_path: Path
) -> None:
    model_server.play(Scenario.of({"text": "Done."}))
    opener = partial(open_test_engine, db_url, helix_home, model_server.openai_base_url)
    executor = ProcessExecutor(opener, 2, max_restarts=1)
    await executor.start()
    try:
        first = await _worker_pid(executor, "worker-1", "")
        os.kill(int(first), signal.SIGKILL)
        second = await _worker_pid(executor, "worker-1", first)  # restarted once
        assert second != first
        os.kill(int(second), signal.SIGKILL)
        await _worker_pid(executor, "worker-1", second)
        nodes = {n.id: n for n in await executor.nodes()}
        assert nodes["worker-1"].state == "dead"  # past its limit: not started again
        with pytest.raises(NodeStateError, match="dead"):
            await executor.drain("worker-1")
        run_id = await _create(engine, _world(tmp_path / "world"))
        executor.submit(run_id)  # goes to the live one
        await _until(engine.store, run_id, "run.completed", [])
        assert {n.id for n in await executor.nodes() if n.state == "alive"} == {"worker-2"}
    finally:
        await executor.close()
