"""The PostgreSQL backend: the conformance suite, and what the database guarantees.

Runs against a real server (see ``postgres_url`` in conftest.py): a failure in CI when
none answers, a skip elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from helix.errors import StoreUnavailableError, SubscriptionGapError, SubscriptionOverflowError
from helix.kernel.events import EventRegistry, NewEvent, ToolCompleted
from helix.kernel.log import EventStore, open_store
from helix.kernel.log._postgres import PostgresEventStore
from helix.testing import run_created, session_events
from helix.testing.conformance import EventStoreConformance, Reopen

from ._crash import appending_child, check_appends_survive_sigkill, check_racing_processes

pytestmark = pytest.mark.postgres


class TestPostgresConformance(EventStoreConformance):
    @pytest.fixture
    async def store(self, postgres_url: str) -> AsyncIterator[EventStore]:
        store = await PostgresEventStore.open(postgres_url)
        async with store:
            yield store

    @pytest.fixture
    async def reopen(self, postgres_url: str) -> AsyncIterator[Reopen]:
        opened: list[EventStore] = []

        async def reopen(store: EventStore, registry: EventRegistry) -> EventStore:
            other = await PostgresEventStore.open(postgres_url, registry=registry)
            opened.append(other)
            return other

        yield reopen
        for other in opened:
            await other.close()


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[PostgresEventStore]:
    store = await PostgresEventStore.open(postgres_url)
    async with store:
        yield store


async def _run(store: EventStore) -> str:
    run_id = (await store.create_run(run_created())).id
    await store.append(run_id, session_events(1), expected_seq=1)
    return run_id


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET data = '{}' WHERE run_id = $1",
        "DELETE FROM events WHERE run_id = $1",
        "UPDATE events SET seq = seq + 100 WHERE run_id = $1",
    ],
)
async def test_database_refuses_changing_events(store: PostgresEventStore, sql: str) -> None:
    import asyncpg

    run_id = await _run(store)
    before = await store.read(run_id)
    async with store.pool.acquire() as conn:
        with pytest.raises(asyncpg.PostgresError, match="append-only"):
            await conn.execute(sql, run_id)
    assert await store.read(run_id) == before


async def test_database_refuses_truncate_and_blob_changes(store: PostgresEventStore) -> None:
    import asyncpg

    run_id = (await store.create_run(run_created())).id
    big = "z" * (store.blob_threshold + 10)
    event = NewEvent(ToolCompleted(call_id="c", ok=True, output=big, duration_ms=1))
    await store.append(run_id, [event, event], expected_seq=1)
    async with store.pool.acquire() as conn:
        digest = await conn.fetchval("SELECT hash FROM blobs WHERE size = $1", len(big))
        assert digest is not None
        for sql in ("TRUNCATE events", "TRUNCATE blobs"):
            with pytest.raises(asyncpg.PostgresError):
                await conn.execute(sql)
        for sql in (
            "UPDATE blobs SET data = '' WHERE hash = $1",
            "DELETE FROM blobs WHERE hash = $1",
        ):
            with pytest.raises(asyncpg.PostgresError, match="immutable"):
                await conn.execute(sql, digest)
    (read,) = await store.read(run_id, after=1, to_seq=2)
    assert read.data["output"] == big


async def test_appends_survive_sigkill(store: PostgresEventStore, postgres_url: str) -> None:
    run_id = (await store.create_run(run_created())).id
    await check_appends_survive_sigkill(store, postgres_url, run_id)


async def test_racing_processes_never_gap_or_duplicate(
    store: PostgresEventStore, postgres_url: str
) -> None:
    run_id = (await store.create_run(run_created())).id
    await check_racing_processes(store, postgres_url, run_id)


async def test_subscriber_sees_another_process_append(
    store: PostgresEventStore, postgres_url: str
) -> None:
    run_id = (await store.create_run(run_created())).id
    async with store.subscribe(run_id) as sub:
        assert (await anext(sub)).seq == 0
        async with appending_child(postgres_url, run_id, 1):
            got = [await asyncio.wait_for(anext(sub), 10) for _ in range(20)]
    assert [e.seq for e in got] == list(range(1, 21))


@pytest.mark.parametrize(("durability", "setting"), [("normal", "off"), ("full", "on")])
async def test_durability_setting(postgres_url: str, durability: Any, setting: str) -> None:
    store = await open_store(postgres_url, durability=durability)
    assert isinstance(store, PostgresEventStore)
    async with store, store.pool.acquire() as conn:
        assert await conn.fetchval("SHOW synchronous_commit") == setting


async def test_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(StoreUnavailableError) as caught:
        await open_store("postgresql://helix:s3cret@127.0.0.1:1/nowhere")
    assert "s3cret" not in str(caught.value)


async def test_missing_database_is_a_clear_error(postgres_url: str) -> None:
    base = postgres_url.rsplit("/", 1)[0]
    with pytest.raises(StoreUnavailableError, match="helix_no_such_db"):
        await open_store(f"{base}/helix_no_such_db")


async def _drop_listener(store: PostgresEventStore, admin: PostgresEventStore) -> None:
    """Terminate the store's LISTEN backend; return once the store has noticed."""
    listener = store._listener
    assert listener is not None
    assert await admin.pool.fetchval("SELECT pg_terminate_backend($1)", listener.get_server_pid())
    async with asyncio.timeout(10):
        while store._listener is listener:  # noqa: ASYNC110 - a private attribute, no event
            await asyncio.sleep(0.01)


async def test_a_dropped_listener_reads_what_it_missed_from_the_log(postgres_url: str) -> None:
    """Appends committed while nobody listened reach a run's subscribers all the same.

    The last events of a run may land in the gap: no later notice would reveal it, so
    the store, listening again, has every subscriber read the log from where it was.
    """
    async with (
        await PostgresEventStore.open(postgres_url) as reader,
        await PostgresEventStore.open(postgres_url) as writer,
    ):
        run_id = (await writer.create_run(run_created())).id
        async with reader.subscribe(run_id) as sub:
            assert (await asyncio.wait_for(anext(sub), 10)).seq == 0
            for _ in range(3):
                head = (await reader.get_run(run_id)).next_seq
                # Held: the store cannot listen again until the appends are in.
                async with reader._listen_lock:
                    await _drop_listener(reader, writer)
                    await writer.append(run_id, session_events(1), expected_seq=head)
                new_head = (await reader.get_run(run_id)).next_seq
                got = [await asyncio.wait_for(anext(sub), 10) for _ in range(head, new_head)]
                assert [e.seq for e in got] == list(range(head, new_head))
            assert reader._listener is not None


async def test_an_all_runs_subscriber_is_told_of_a_dropped_listener(postgres_url: str) -> None:
    """Every run's stream has no log to read on a gap: it is told, with its cursors."""
    async with (
        await PostgresEventStore.open(postgres_url) as reader,
        await PostgresEventStore.open(postgres_url) as writer,
        reader.subscribe_all() as every,
    ):
        run_id = (await writer.create_run(run_created())).id
        assert (await asyncio.wait_for(anext(every), 10)).run_id == run_id
        async with reader._listen_lock:
            await _drop_listener(reader, writer)
            await writer.append(run_id, session_events(1), expected_seq=1)
        with pytest.raises(SubscriptionGapError) as told:
            await asyncio.wait_for(anext(every), 10)
        assert told.value.cursors == {run_id: 0}
        assert isinstance(told.value, SubscriptionOverflowError)  # what followers catch


async def test_a_long_id_and_a_big_commit_reach_another_process(postgres_url: str) -> None:
    """A notice names a run and two seqs, never the events, whatever the batch.

    So PostgreSQL's 8,000-byte payload limit always holds (the longest id included);
    the other process reads the events themselves from the log.
    """
    async with (
        await PostgresEventStore.open(postgres_url) as reader,
        await PostgresEventStore.open(postgres_url) as writer,
    ):
        run_id = (await writer.create_run(run_created(), run_id="r" * 128)).id
        async with reader.subscribe(run_id) as sub:
            assert (await asyncio.wait_for(anext(sub), 10)).seq == 0
            done = [ToolCompleted(call_id=f"c{i}", ok=True, output="x" * 100, duration_ms=1)
                    for i in range(5000)]  # fmt: skip
            batch = [NewEvent(payload) for payload in done]
            head = await writer.append(run_id, batch, expected_seq=1)
            got = [await asyncio.wait_for(anext(sub), 10) for _ in range(1, head)]
        assert [e.seq for e in got] == list(range(1, head))
        assert head == 5001
