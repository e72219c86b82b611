"""One live driver per run: two engines on one store, as two machines would be.

The store is one SQLite file, or one PostgreSQL database.

Each engine has a store of its own (its own connection) and a ``ManualClock`` of its own,
so a driver that stops renewing is a clock that does not move: no test waits for a
time to live to pass on the wall.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path

import pytest

from helix.errors import ConfigError, LeaseLostError, RunStateError
from helix.kernel.log import EventStore, SqliteEventStore, open_store
from helix.kernel.session import SessionState
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.testing import ManualClock

T0 = 1_800_000_000.0
TTL = 10.0


class HeldModel(ScriptedModel):
    """Answers "done"; its first call waits until ``go`` is set (a driver that hangs)."""

    def __init__(self, *, hold: bool) -> None:
        super().__init__(Scenario.of({"text": "done"}), label="t")
        self.calls = 0
        self.hold = hold
        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.hold:
            self.hold = False
            self.entered.set()
            await self.go.wait()
        return await super().request(request)


@dataclass
class Driver:
    """One "machine": an engine with its own connection, clock and model."""

    engine: Engine
    clock: ManualClock
    model: HeldModel


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def postgres(request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL database the engines share, or ``None`` for one SQLite file."""
    return request.getfixturevalue("postgres_url") if request.param == "postgres" else None


@pytest.fixture
async def machines(postgres: str | None, tmp_path: Path) -> AsyncIterator[tuple[Driver, Driver]]:
    made: list[Driver] = []
    for name, start, hold in (("a", T0, True), ("b", T0, False)):
        clock = ManualClock(start=start)
        model = HeldModel(hold=hold)

        def factory(_setup: RunSetup, model: ModelAdapter = model) -> ModelAdapter:
            return model

        store: EventStore
        if postgres is None:
            store = SqliteEventStore(tmp_path / "events.db")
        else:
            store = await open_store(postgres)
        engine = Engine(
            store,
            home=tmp_path / name,
            model_factory=factory,
            env={},
            clock=clock,
            lease_ttl_s=TTL,
            snapshots=False,
        )
        made.append(Driver(engine, clock, model))
    yield made[0], made[1]
    for driver in made:
        await driver.engine.store.close()


async def _run(driver: Driver, tmp_path: Path) -> str:
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    record = await driver.engine.create("o", blueprint=Blueprint(model="scripted:t"), world=world)
    return record.id


async def _outcome(drive: Awaitable[SessionState]) -> SessionState | Exception:
    """The drive's state, or the error it stopped with (not a crash of the test's group)."""
    try:
        return await drive
    except Exception as error:
        return error


async def _renewed_past(driver: Driver, run_id: str, expiry: float) -> None:
    """Wait until the run's lease expires after ``expiry`` (the driver renewed it)."""
    async with asyncio.timeout(10):
        while True:
            lease = await driver.engine.store.get_lease(run_id)
            if lease is not None and lease.expires_at > expiry:
                return
            await asyncio.sleep(0.005)


async def test_a_second_driver_is_refused_while_the_first_renews(
    machines: tuple[Driver, Driver], tmp_path: Path
) -> None:
    a, b = machines
    run_id = await _run(a, tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(a.engine.drive(run_id))
        await a.model.entered.wait()
        assert await b.engine.is_driven(run_id)
        with pytest.raises(RunStateError, match="being driven by another process"):
            await b.engine.drive(run_id)
        for _ in range(3):  # a renews every third of the TTL: b stays out past the first TTL
            await a.clock.sleeping()
            a.clock.advance(TTL / 3)
        await _renewed_past(a, run_id, T0 + TTL)
        b.clock.advance(TTL + 1)
        assert await b.engine.is_driven(run_id)
        with pytest.raises(RunStateError, match="being driven by another process"):
            await b.engine.drive(run_id)
        a.model.go.set()
        state = await driving
    assert state.status == "completed"
    assert await b.engine.store.get_lease(run_id) is None  # released at the end
    assert not await b.engine.is_driven(run_id)
    types = [e.type for e in await b.engine.store.read(run_id)]
    assert "lease.taken_over" not in types  # one driver from start to end


async def test_a_hung_driver_loses_the_run_and_its_late_append_is_refused(
    machines: tuple[Driver, Driver], tmp_path: Path
) -> None:
    a, b = machines
    run_id = await _run(a, tmp_path)
    async with asyncio.TaskGroup() as group:
        stale = group.create_task(_outcome(a.engine.drive(run_id)))
        await a.model.entered.wait()  # a hangs in its model call and renews no more
        b.clock.advance(TTL + 0.5)  # a's lease has expired by b's clock
        assert not await b.engine.is_driven(run_id)
        async with b.engine.lock(run_id):  # b takes the run over (logs lease.taken_over)
            head = (await b.engine.store.get_run(run_id)).next_seq
            a.model.go.set()  # a wakes and appends its model's answer, with its old lease
            lost = await stale
            assert (await b.engine.store.get_run(run_id)).next_seq == head  # nothing written
        state = await b.engine.drive(run_id)  # and b finishes the run
    assert state.status == "completed"
    assert isinstance(lost, LeaseLostError)
    assert (lost.epoch, lost.current) == (1, 2)
    log = await b.engine.store.read(run_id)
    types = [e.type for e in log]
    assert types[-1] == "run.completed"
    assert "supervisor.restarted" not in types  # a stopped cleanly, no crash loop
    assert "run.failed" not in types
    assert types.count("model.responded") == 1  # b's: a's answer never landed
    (taken,) = [e for e in log if e.type == "lease.taken_over"]
    assert taken.data["reason"] == "expired"
    assert (taken.data["previous_epoch"], taken.data["epoch"]) == (1, 2)
    assert taken.data["previous_holder"] != taken.data["holder"]
    assert [e.seq for e in log] == list(range(len(log)))


async def test_a_driver_that_finds_its_lease_taken_stops_at_once(
    machines: tuple[Driver, Driver], tmp_path: Path
) -> None:
    a, b = machines
    run_id = await _run(a, tmp_path)
    async with asyncio.TaskGroup() as group:
        stale = group.create_task(_outcome(a.engine.drive(run_id)))
        await a.model.entered.wait()
        b.clock.advance(TTL + 0.5)
        async with b.engine.lock(run_id):
            await a.clock.sleeping()
            a.clock.advance(TTL / 3)  # a's renewal finds the lease taken: its drive stops
            assert isinstance(await stale, LeaseLostError)
        await b.engine.drive(run_id)
    assert a.model.calls == 1  # stopped in its (cancelled) model call, never answered
    types = [e.type for e in await b.engine.store.read(run_id)]
    assert types[-1] == "run.completed"
    assert "run.failed" not in types


async def test_one_process_drives_a_run_once(
    machines: tuple[Driver, Driver], tmp_path: Path
) -> None:
    a, _b = machines
    run_id = await _run(a, tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(a.engine.drive(run_id))
        await a.model.entered.wait()
        with pytest.raises(RunStateError, match="being driven by another process"):
            await a.engine.step(run_id)
        a.model.go.set()
        await driving


async def test_a_cancelled_drive_releases_its_lease(
    machines: tuple[Driver, Driver], tmp_path: Path
) -> None:
    a, b = machines
    run_id = await _run(a, tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(a.engine.drive(run_id))
        await a.model.entered.wait()
        driving.cancel()
    assert await a.engine.store.get_lease(run_id) is None
    assert (await b.engine.drive(run_id)).status == "completed"  # at once, no TTL to wait
    types = [e.type for e in await b.engine.store.read(run_id)]
    assert "lease.taken_over" not in types  # released: taken, not taken over


@pytest.mark.parametrize("setting", ["0", "-1", "soon", "1e9"])
def test_a_bad_lease_ttl_is_refused(tmp_path: Path, setting: str) -> None:
    from helix.kernel.log import MemoryEventStore

    with pytest.raises(ConfigError, match=r"lease|HELIX_LEASE_TTL_S"):
        Engine(MemoryEventStore(), home=tmp_path, env={"HELIX_LEASE_TTL_S": setting})


def test_the_lease_ttl_comes_from_the_environment(tmp_path: Path) -> None:
    from helix.kernel.log import MemoryEventStore

    engine = Engine(MemoryEventStore(), home=tmp_path, env={"HELIX_LEASE_TTL_S": "2.5"})
    assert engine.lease_ttl_s == 2.5
    assert Engine(MemoryEventStore(), home=tmp_path, env={}).lease_ttl_s == 10.0
