"""The ``ray`` executor on the session's real cluster, over a shared PostgreSQL log.

Each run's loop is a Ray actor that rebuilds the run from the log (the server's own
engine opener, ``open_server_engine``, in the actor's process); the model is the mock
model server in this process, which Ray's workers on this machine reach over HTTP.
A node that is killed (``remove_node``) or drained is one the test added itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from helix.distributed import RayExecutor
from helix.errors import LeaseLostError, NodeNotFoundError
from helix.kernel.events import Event, NewEvent, SupervisorRestarted
from helix.kernel.log import EventStore, open_store
from helix.providers import Scenario
from helix.runtime import Engine, Executor, open_supervisor, pause, resume
from helix.server import ServerConfig, open_server_engine
from helix.testing import MockModelServer

from .conftest import RayCluster

pytestmark = pytest.mark.timeout(300)

MODEL = "openai:gpt-4.1"
SECRET_KEY = "sk-helix-test-4f9c2e7a"
WAIT_S = 120.0


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[EventStore]:
    opened = await open_store(postgres_url)
    try:
        yield opened
    finally:
        await opened.close()


def _env(mock: MockModelServer) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": SECRET_KEY,
        "OPENAI_BASE_URL": mock.openai_base_url,
        "HELIX_LEASE_TTL_S": "5",
    }


async def _create(store: EventStore, home: Path, world: Path, mock: MockModelServer) -> str:
    engine = Engine(store, home=home, env=_env(mock))
    await asyncio.to_thread(world.mkdir, parents=True, exist_ok=True)
    record = await engine.create("write the files", model=MODEL, world=world, auto_approve=True)
    return record.id


def _opener(postgres_url: str, home: Path, mock: MockModelServer) -> Any:
    config = ServerConfig(db_url=postgres_url, home=home, env=_env(mock))
    return partial(open_server_engine, config)


async def _until(store: EventStore, run_id: str, *types: str) -> Event:
    """The run's first event of one of ``types`` (waiting for it to be appended)."""
    async with asyncio.timeout(WAIT_S), store.subscribe(run_id) as events:
        async for event in events:
            if event.type in types:
                return event
    raise AssertionError("the subscription ended")


async def _placed(executor: RayExecutor, run_id: str) -> str:
    """The id of the node whose actor drives the run (waiting for it to be placed)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            for node in await executor.nodes():
                if run_id in node.runs:
                    return node.id
            await asyncio.sleep(0.05)


def _write(path: str, text: str) -> dict[str, Any]:
    call = {"name": "write_file", "args": {"path": path, "content": text}}
    return {"text": f"Writing {path}.", "tool_calls": [call]}


def _types(log: list[Event]) -> list[str]:
    return [e.type for e in log]


async def test_a_run_driven_by_an_actor_pauses_freeing_it_then_completes_and_its_node_lists_it(
    ray_cluster: RayCluster,
    postgres_url: str,
    store: EventStore,
    helix_home: Path,
    tmp_path: Path,
    mock: MockModelServer,
) -> None:
    mock.play(Scenario.of(_write("a.txt", "a\n"), {"text": "Wrote a.txt."}))
    mock.hold()  # the first reply waits for the pause
    run_id = await _create(store, helix_home, tmp_path / "world", mock)
    async with open_supervisor() as supervisor:
        executor = RayExecutor(
            ray_cluster.address, _opener(postgres_url, helix_home, mock), supervisor
        )
        assert isinstance(executor, Executor)
        assert executor.kind == "ray"
        executor.submit(run_id)
        executor.submit(run_id)  # already driven here: nothing more
        node_id = await _placed(executor, run_id)
        (node,) = [n for n in await executor.nodes() if n.id == node_id]
        assert node.state == "alive"
        assert node.executor == "ray"
        assert node.resources["CPU"] > 0
        assert "ray.io/node-id" in node.labels
        await _requests(mock, 1)
        await pause(store, run_id, by="user:test")  # while the model call is in flight
        mock.release()
        await _unplaced(executor, run_id)  # the paused run's actor is freed
        assert (await store.get_run(run_id)).status == "paused"
        assert await resume(store, run_id, by="user:test")
        executor.submit(run_id)
        await _until(store, run_id, "run.completed")
        with pytest.raises(NodeNotFoundError):
            await executor.drain("no-such-node")
        await executor.close()
    log = await store.read(run_id)
    assert _types(log)[-1] == "run.completed"
    assert (tmp_path / "world" / "a.txt").read_text() == "a\n"
    assert len(mock.requests) == 2
    assert not any(run_id in n.runs for n in await executor.nodes())  # its actor is freed
    # Neither the cluster's token nor the provider key reached the log or Ray's logs.
    assert SECRET_KEY not in str([e.data for e in log])
    logs = Path(ray_cluster.cluster.head_node.get_logs_dir_path())
    written = await asyncio.to_thread(_read_all, logs)
    assert written  # Ray did log (its workers' output among it)
    for secret in (SECRET_KEY, ray_cluster.address.token):
        assert secret not in written


async def test_a_killed_node_s_run_continues_on_another_node_losing_and_repeating_nothing(
    ray_cluster: RayCluster,
    postgres_url: str,
    store: EventStore,
    helix_home: Path,
    tmp_path: Path,
    mock: MockModelServer,
) -> None:
    victim = ray_cluster.add_node(num_cpus=1, labels={"helix.role": "victim"})
    mock.play(
        Scenario.of(
            _write("a.txt", "a\n"),
            {"text": "The lost node's answer.", "delay_s": 3600},  # held: the kill comes first
            {"text": "Done after the move."},
        )
    )
    run_id = await _create(store, helix_home, tmp_path / "world", mock)
    async with open_supervisor() as supervisor:
        executor = RayExecutor(
            ray_cluster.address, _opener(postgres_url, helix_home, mock), supervisor
        )
        executor.submit(run_id, prefer=victim.node_id)
        assert await _placed(executor, run_id) == victim.node_id
        await _until(store, run_id, "tool.completed")
        await _requests(mock, 2)  # the second model call is in flight on the victim
        stale = await store.get_lease(run_id)
        assert stale is not None
        ray_cluster.cluster.remove_node(victim)
        # It goes on on another node: how soon is actor_restart_to_resumed_s's business.
        await _until(store, run_id, "lease.taken_over")
        await _until(store, run_id, "run.completed")
        await executor.close()

    log = await store.read(run_id)
    assert [e.seq for e in log] == list(range(len(log)))  # 0 lost, no gap
    assert _types(log)[-1] == "run.completed"
    (taken,) = [e for e in log if e.type == "lease.taken_over"]
    # The lost actor's process of this host ended (else its lease expired: TTL 5 s here).
    assert taken.data["reason"] in ("holder_gone", "expired")
    assert taken.data["previous_epoch"] == stale.epoch
    replies = [e.data["text"] for e in log if e.type == "model.responded"]
    assert replies == ["Writing a.txt.", "Done after the move."]
    assert len(mock.requests) == 3  # only the interrupted call was asked again
    assert len([e for e in log if e.type == "tool.completed"]) == 1
    assert "run.failed" not in _types(log)
    # The lost driver's lease is stale: an append made with it is refused by epoch.
    head = len(log)
    late = [NewEvent(SupervisorRestarted(component="run loop", reason="late", attempt=1))]
    with pytest.raises(LeaseLostError):
        await store.append(run_id, late, expected_seq=head, lease=stale)
    assert len(await store.read(run_id)) == head


async def test_a_drained_node_s_run_moves_at_its_next_turn_boundary_and_finishes(
    ray_cluster: RayCluster,
    postgres_url: str,
    store: EventStore,
    helix_home: Path,
    tmp_path: Path,
    mock: MockModelServer,
) -> None:
    leaving = ray_cluster.add_node(num_cpus=1, labels={"helix.role": "leaving"})
    mock.play(
        Scenario.of(
            _write("a.txt", "a\n"),  # held: the drain is asked while this call waits
            _write("b.txt", "b\n"),
            {"text": "Wrote both."},
        )
    )
    mock.hold()
    run_id = await _create(store, helix_home, tmp_path / "world", mock)
    try:
        async with open_supervisor() as supervisor:
            executor = RayExecutor(
                ray_cluster.address, _opener(postgres_url, helix_home, mock), supervisor
            )
            executor.submit(run_id, prefer=leaving.node_id)
            assert await _placed(executor, run_id) == leaving.node_id
            await _until(store, run_id, "model.requested")
            assert await executor.drain(leaving.node_id) == [run_id]
            states = {n.id: n.state for n in await executor.nodes()}
            assert states[leaving.node_id] == "draining"
            mock.release()
            moved_to = await _placed_after(executor, run_id, leaving.node_id)
            assert moved_to != leaving.node_id
            await _until(store, run_id, "run.completed")
            await executor.close()
    finally:
        ray_cluster.cluster.remove_node(leaving)

    log = await store.read(run_id)
    assert [e.seq for e in log] == list(range(len(log)))
    (resumed,) = [e for e in log if e.type == "run.resumed"]  # the new actor's drive
    assert log[resumed.seq - 1].type == "turn.ended"  # right at a turn boundary
    assert "lease.taken_over" not in _types(log)  # released at the boundary, not lost
    assert len(mock.requests) == 3
    assert (tmp_path / "world" / "a.txt").read_text() == "a\n"
    assert (tmp_path / "world" / "b.txt").read_text() == "b\n"


async def _unplaced(executor: RayExecutor, run_id: str) -> None:
    """Wait until no node lists the run (its actor was freed)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            if not any(run_id in n.runs for n in await executor.nodes()):
                return
            await asyncio.sleep(0.05)


async def _placed_after(executor: RayExecutor, run_id: str, old: str) -> str:
    """The node the run's new actor sits on, once it is not ``old``."""
    async with asyncio.timeout(WAIT_S):
        while True:
            for node in await executor.nodes():
                if run_id in node.runs and node.id != old:
                    return node.id
            await asyncio.sleep(0.05)


async def _requests(mock: MockModelServer, count: int) -> None:
    """Wait until the mock model has received ``count`` requests."""
    async with asyncio.timeout(WAIT_S):
        while True:
            if len(mock.requests) >= count:
                return
            await asyncio.sleep(0.02)


def _read_all(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())
