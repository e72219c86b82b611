"""The conformance suite every ``EventStore`` backend must pass.

Subclass ``EventStoreConformance`` in a test module (its name must start with
``Test``) and provide two fixtures: ``store`` (a fresh, empty-looking store) and
``reopen`` (a coroutine function giving a second store over the same storage, with a
given event registry). Tests that list runs use a workspace of their own, so backends
may share one database between tests.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import pytest

from helix.errors import (
    ForkError,
    InvalidEventError,
    InvalidPayloadError,
    RunExistsError,
    RunNotFoundError,
    SeqConflictError,
    SubscriptionOverflowError,
    UnknownEventTypeError,
)
from helix.kernel.events import (
    Event,
    EventRegistry,
    NewEvent,
    Payload,
    RunPaused,
    SteerReceived,
    ToolCompleted,
    UiComponent,
    builtin_registry,
)
from helix.kernel.log import EventStore
from helix.kernel.session import fold, replay, replay_run
from helix.testing._sessions import run_created, session_events, turn_events

from ._derived_data import DerivedDataConformance
from ._lease import LeaseConformance
from ._run_lookup import RunLookupConformance

Reopen = Callable[[EventStore, EventRegistry], Awaitable[EventStore]]


class _NotInVocabulary(Payload):
    TYPE: ClassVar[str] = "test.not_in_vocabulary"


def _steer(text: str) -> NewEvent:
    return NewEvent(SteerReceived(message=text), actor="user:ann")


async def _collect(iterator: AsyncIterator[Event], count: int) -> list[Event]:
    out: list[Event] = []
    async with asyncio.timeout(10):
        async for event in iterator:
            out.append(event)
            if len(out) == count:
                break
    return out


class EventStoreConformance(RunLookupConformance, DerivedDataConformance, LeaseConformance):
    """Behaviour every event store backend shares. Subclass and provide fixtures."""

    @pytest.fixture
    def workspace(self) -> str:
        """Return a workspace name of this test's own."""
        return f"ws-{uuid.uuid4().hex[:10]}"

    async def _new_run(self, store: EventStore, workspace: str = "default") -> str:
        record = await store.create_run(run_created(), workspace=workspace)
        return record.id

    async def _run_with_turns(self, store: EventStore, turns: int) -> str:
        run_id = await self._new_run(store)
        await store.append(run_id, session_events(turns), expected_seq=1)
        return run_id

    # -- the log's basic contract ---------------------------------------------------

    async def test_create_run_writes_run_created_at_seq_0(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        events = await store.read(run_id)
        assert [(e.seq, e.type, e.run_id) for e in events] == [(0, "run.created", run_id)]
        assert events[0].data["objective"] == "tidy the README"
        assert events[0].v == store.registry.version("run.created")
        assert events[0].ts.endswith("Z")
        record = await store.get_run(run_id)
        assert (record.status, record.next_seq, record.head) == ("queued", 1, 0)

    async def test_duplicate_run_id_is_refused(self, store: EventStore) -> None:
        run_id = f"run-{uuid.uuid4().hex}"
        await store.create_run(run_created(), run_id=run_id)
        with pytest.raises(RunExistsError):
            await store.create_run(run_created(), run_id=run_id)
        assert len(await store.read(run_id)) == 1

    async def test_invalid_run_id_is_refused(self, store: EventStore) -> None:
        with pytest.raises(InvalidEventError):
            await store.create_run(run_created(), run_id="no spaces/or slashes")

    async def test_seqs_are_contiguous_from_zero(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        next_seq = 1
        for turn in range(1, 4):
            next_seq = await store.append(run_id, turn_events(turn), expected_seq=next_seq)
        events = await store.read(run_id)
        assert [e.seq for e in events] == list(range(next_seq))
        assert (await store.get_run(run_id)).next_seq == next_seq

    async def test_read_window(self, store: EventStore) -> None:
        run_id = await self._run_with_turns(store, 3)
        assert [e.seq for e in await store.read(run_id, after=4, to_seq=7)] == [5, 6, 7]
        assert [e.seq for e in await store.read(run_id, after=2, limit=2)] == [3, 4]
        assert await store.read(run_id, after=10_000) == []
        streamed = [e.seq async for e in store.iter_events(run_id, after=1)]
        assert streamed == [e.seq for e in await store.read(run_id)][2:]

    async def test_event_round_trips_exactly(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        payload = UiComponent(component="table", props={"rows": [[1, "a"], [2, None]], "ok": True})
        await store.append(run_id, [NewEvent(payload, actor="agent", turn=3)], expected_seq=1)
        (event,) = await store.read(run_id, after=0)
        assert event.to_dict() == {
            "run_id": run_id,
            "seq": 1,
            "type": "ui.component",
            "v": UiComponent.VERSION,
            "ts": event.ts,
            "turn": 3,
            "actor": "agent",
            "data": payload.model_dump(mode="json"),
        }
        assert store.registry.parse(event.type, event.data) == payload

    async def test_large_strings_round_trip_through_blobs(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        big = "x" * (store.blob_threshold + 1)
        nested = UiComponent(component="log", props={"lines": ["short", big], "a/b~c": big})
        events = [
            NewEvent(ToolCompleted(call_id="c1", ok=True, output=big, duration_ms=1)),
            NewEvent(ToolCompleted(call_id="c2", ok=True, output=big + "y", duration_ms=1)),
            NewEvent(nested),
        ]
        await store.append(run_id, events, expected_seq=1)
        read = await store.read(run_id, after=0)
        assert read[0].data["output"] == big
        assert read[1].data["output"] == big + "y"
        assert read[2].data == nested.model_dump(mode="json")

    async def test_append_events_returns_exactly_what_a_read_gives(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        big = "z" * (store.blob_threshold + 1)
        events = [
            NewEvent(UiComponent(component="t", props={"n": [1, None]}), actor="agent", turn=2),
            NewEvent(ToolCompleted(call_id="c1", ok=True, output=big, duration_ms=1)),
        ]
        committed = await store.append_events(run_id, events, expected_seq=1)
        assert committed == await store.read(run_id, after=0)
        assert await store.append_events(run_id, [], expected_seq=3) == []

    # -- refusals: typed errors, nothing written ------------------------------------

    async def test_wrong_expected_seq_conflicts_and_writes_nothing(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        for wrong in (0, 2, 99):
            with pytest.raises(SeqConflictError) as caught:
                await store.append(run_id, [_steer("hi")], expected_seq=wrong)
            assert (caught.value.expected, caught.value.actual) == (wrong, 1)
        assert [e.seq for e in await store.read(run_id)] == [0]

    async def test_append_to_missing_run(self, store: EventStore) -> None:
        with pytest.raises(RunNotFoundError):
            await store.append("run_missing", [_steer("hi")], expected_seq=0)
        with pytest.raises(RunNotFoundError):
            await store.get_run("run_missing")
        with pytest.raises(RunNotFoundError):
            await store.read("run_missing")

    async def test_unknown_event_type_writes_nothing(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        batch = [_steer("first"), NewEvent(_NotInVocabulary())]
        with pytest.raises(UnknownEventTypeError):
            await store.append(run_id, batch, expected_seq=1)
        with pytest.raises(UnknownEventTypeError):
            store.registry.new_event("no.such.type", {})
        assert [e.seq for e in await store.read(run_id)] == [0]
        assert (await store.get_run(run_id)).next_seq == 1

    async def test_payload_failing_its_schema_is_refused(self, store: EventStore) -> None:
        with pytest.raises(InvalidPayloadError):
            store.registry.new_event("run.paused", {"reason": 5})
        with pytest.raises(InvalidPayloadError):
            store.registry.new_event("tool.completed", {"call_id": "c"})
        with pytest.raises(InvalidEventError):
            NewEvent(RunPaused(reason="user"), actor="root")

    async def test_batch_is_atomic(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        await store.append(run_id, [_steer("a"), _steer("b")], expected_seq=1)
        with pytest.raises(SeqConflictError):
            await store.append(run_id, [_steer("c"), _steer("d"), _steer("e")], expected_seq=2)
        assert [e.data.get("message") for e in await store.read(run_id, after=0)] == ["a", "b"]

    # -- concurrency ------------------------------------------------------------------

    async def test_racing_writers_one_wins(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        results = await asyncio.gather(
            *(store.append(run_id, [_steer(f"w{i}")], expected_seq=1) for i in range(8)),
            return_exceptions=True,
        )
        assert sum(1 for r in results if r == 2) == 1
        assert sum(1 for r in results if isinstance(r, SeqConflictError)) == 7
        assert [e.seq for e in await store.read(run_id)] == [0, 1]

    async def test_retrying_writers_leave_no_gap_or_duplicate(self, store: EventStore) -> None:
        run_id = await self._new_run(store)

        async def writer(name: str, count: int) -> None:
            for i in range(count):
                while True:
                    head = (await store.get_run(run_id)).next_seq
                    try:
                        await store.append(run_id, [_steer(f"{name}-{i}")], expected_seq=head)
                        break
                    except SeqConflictError:
                        await asyncio.sleep(0)

        await asyncio.gather(*(writer(f"w{n}", 10) for n in range(4)))
        events = await store.read(run_id)
        assert [e.seq for e in events] == list(range(41))
        messages = [e.data["message"] for e in events[1:]]
        assert sorted(messages) == sorted(f"w{n}-{i}" for n in range(4) for i in range(10))

    # -- the run registry ---------------------------------------------------------------

    async def test_registry_follows_the_log(self, store: EventStore) -> None:
        run_id = await self._run_with_turns(store, 3)
        record = await store.get_run(run_id)
        state = await replay_run(store, run_id)
        assert record.status == state.status == "completed"
        assert record.turns == state.turn == 3
        assert record.input_tokens == state.own_usage.input_tokens == 600
        assert record.output_tokens == state.own_usage.output_tokens == 60
        assert record.cost_usd == pytest.approx(state.own_usage.cost_usd)
        assert record.cost_usd == pytest.approx(0.003)
        assert record.updated_at >= record.created_at

    async def test_list_runs_filters_and_pages(self, store: EventStore, workspace: str) -> None:
        ids = [await self._new_run(store, workspace) for _ in range(7)]
        done = ids[:3]
        for run_id in done:
            await store.append(run_id, session_events(1), expected_seq=1)
        seen: list[str] = []
        cursor = None
        while True:
            page = await store.list_runs(workspace=workspace, limit=3, cursor=cursor)
            seen += [r.id for r in page.runs]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert sorted(seen) == sorted(ids)
        assert len(seen) == 7
        completed = await store.list_runs(workspace=workspace, status="completed")
        assert sorted(r.id for r in completed.runs) == sorted(done)
        assert completed.next_cursor is None
        newest_first = [r.created_at for r in (await store.list_runs(workspace=workspace)).runs]
        assert newest_first == sorted(newest_first, reverse=True)

    async def test_list_runs_bad_input(self, store: EventStore) -> None:
        with pytest.raises(InvalidEventError):
            await store.list_runs(limit=0)
        with pytest.raises(InvalidEventError):
            await store.list_runs(cursor="garbage")

    # -- forks ----------------------------------------------------------------------------

    async def test_fork_reads_parent_history_without_copying(self, store: EventStore) -> None:
        parent = await self._run_with_turns(store, 3)
        parent_events = await store.read(parent)
        boundary = next(e.seq for e in parent_events if e.type == "turn.ended" and e.turn == 2)
        fork = await store.fork(parent, at_seq=boundary, message="try again", model="scripted:b")
        assert fork.parent is not None
        assert (fork.parent.run_id, fork.parent.seq) == (parent, boundary)
        assert (fork.next_seq, fork.turns, fork.model) == (boundary + 2, 2, "scripted:b")
        events = await store.read(fork.id)
        assert [e.to_dict() for e in events[: boundary + 1]] == [
            e.to_dict() for e in parent_events[: boundary + 1]
        ]
        forked = events[boundary + 1]
        assert (forked.run_id, forked.seq, forked.type) == (fork.id, boundary + 1, "run.forked")
        assert forked.data["parent"] == {"run_id": parent, "seq": boundary}
        assert forked.data["turn"] == 2
        assert len(events) == boundary + 2
        # Its own log continues the parent's numbering; the parent never sees it.
        own = turn_events(3, final=True)
        await store.append(fork.id, own, expected_seq=boundary + 2)
        assert [e.seq for e in await store.read(fork.id)] == list(range(len(events) + len(own)))
        assert await store.read(parent) == parent_events

    async def test_fork_state_equals_parent_prefix_plus_own(self, store: EventStore) -> None:
        parent = await self._run_with_turns(store, 2)
        boundary = next(e.seq for e in await store.read(parent) if e.type == "turn.ended")
        fork = await store.fork(parent, at_seq=boundary, message="again")
        await store.append(fork.id, turn_events(2, final=True), expected_seq=fork.next_seq)
        own = await store.read(fork.id, after=boundary)
        expected = fold(replay(await store.read(parent, to_seq=boundary)), own)
        assert await replay_run(store, fork.id) == expected
        assert (await store.get_run(fork.id)).status == "completed"

    async def test_fork_of_fork_and_fork_at_inherited_point(self, store: EventStore) -> None:
        root = await self._run_with_turns(store, 3)
        ends = [e.seq for e in await store.read(root) if e.type == "turn.ended"]
        first = await store.fork(root, at_seq=ends[1])
        await store.append(first.id, turn_events(3), expected_seq=first.next_seq)
        first_end = (await store.read(first.id))[-1].seq
        second = await store.fork(first.id, at_seq=first_end)
        assert [e.run_id for e in await store.read(second.id)] == (
            [root] * (ends[1] + 1) + [first.id] * (first_end - ends[1]) + [second.id]
        )
        inherited = await store.fork(first.id, at_seq=ends[0])
        stitched = await store.read(inherited.id)
        assert [e.run_id for e in stitched] == [root] * (ends[0] + 1) + [inherited.id]

    async def test_fork_refusals(self, store: EventStore) -> None:
        parent = await self._run_with_turns(store, 2)
        head = (await store.get_run(parent)).head
        with pytest.raises(ForkError, match="ends at seq"):
            await store.fork(parent, at_seq=head + 1)
        with pytest.raises(ForkError, match="not a turn"):
            await store.fork(parent, at_seq=3)
        with pytest.raises(ForkError):
            await store.fork(parent, at_seq=-1)
        with pytest.raises(RunNotFoundError):
            await store.fork("run_missing", at_seq=0)
        start = await store.fork(parent, at_seq=0)
        assert start.turns == 0

    # -- subscriptions ----------------------------------------------------------------

    async def test_subscription_backlog_then_live(self, store: EventStore) -> None:
        run_id = await self._run_with_turns(store, 1)
        head = (await store.get_run(run_id)).head
        async with store.subscribe(run_id, after=2) as sub:
            backlog = await _collect(sub, head - 2)
            assert [e.seq for e in backlog] == list(range(3, head + 1))
            await store.append(run_id, [_steer("live")], expected_seq=head + 1)
            (live,) = await _collect(sub, 1)
            assert (live.seq, live.data["message"]) == (head + 1, "live")

    async def test_a_writer_can_skip_its_own_appends(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        async with store.subscribe(run_id) as sub:
            (created,) = await _collect(sub, 1)
            sub.skip_through(3)  # what this subscriber is about to write itself
            await store.append(run_id, [_steer("a"), _steer("b"), _steer("c")], expected_seq=1)
            await store.append(run_id, [_steer("someone else")], expected_seq=4)
            (other,) = await _collect(sub, 1)
        assert (created.seq, other.seq, other.data["message"]) == (0, 4, "someone else")

    async def test_subscription_racing_appends_has_no_gap(self, store: EventStore) -> None:
        run_id = await self._new_run(store)

        async def append_many() -> None:
            seq = 1
            for i in range(200):
                seq = await store.append(run_id, [_steer(str(i))], expected_seq=seq)
                if i % 7 == 0:
                    await asyncio.sleep(0)

        async with asyncio.TaskGroup() as group:
            group.create_task(append_many())
            await asyncio.sleep(0)
            async with store.subscribe(run_id) as sub:
                got = await _collect(sub, 201)
        assert [e.seq for e in got] == list(range(201))

    async def test_slow_subscriber_catches_up_without_gaps(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        async with store.subscribe(run_id, max_queue=5) as sub:
            assert [e.seq for e in await _collect(sub, 1)] == [0]
            seq = 1
            for i in range(50):
                seq = await store.append(run_id, [_steer(str(i))], expected_seq=seq)
            got = await _collect(sub, 50)
            assert [e.seq for e in got] == list(range(1, 51))
            assert sub.overflows >= 1

    async def test_slow_subscriber_can_ask_to_be_told(self, store: EventStore) -> None:
        run_id = await self._new_run(store)
        async with store.subscribe(run_id, max_queue=3, resume_on_overflow=False) as sub:
            await _collect(sub, 1)
            await store.append(run_id, [_steer(str(i)) for i in range(5)], expected_seq=1)
            with pytest.raises(SubscriptionOverflowError) as caught:
                await _collect(sub, 1)
            assert caught.value.cursors == {run_id: 0}
        async with store.subscribe(run_id, after=0) as resumed:
            assert [e.seq for e in await _collect(resumed, 5)] == [1, 2, 3, 4, 5]

    async def test_subscription_to_fork_includes_inherited_backlog(self, store: EventStore) -> None:
        parent = await self._run_with_turns(store, 1)
        fork = await store.fork(parent, at_seq=0)
        parent_next = (await store.get_run(parent)).next_seq
        async with store.subscribe(fork.id) as sub:
            got = await _collect(sub, 2)
            assert [(e.run_id, e.type) for e in got] == [
                (parent, "run.created"),
                (fork.id, "run.forked"),
            ]
            await store.append(parent, [_steer("parent only")], expected_seq=parent_next)
            await store.append(fork.id, [_steer("fork only")], expected_seq=fork.next_seq)
            (live,) = await _collect(sub, 1)
            assert (live.run_id, live.data["message"]) == (fork.id, "fork only")

    async def test_subscribe_all_sees_every_run_in_order(self, store: EventStore) -> None:
        async with store.subscribe_all() as sub:
            first = await self._new_run(store)
            second = await self._new_run(store)
            await store.append(first, [_steer("a1"), _steer("a2")], expected_seq=1)
            await store.append(second, [_steer("b1")], expected_seq=1)
            got = await _collect(sub, 5)
        by_run: dict[str, list[int]] = {}
        for event in got:
            by_run.setdefault(event.run_id, []).append(event.seq)
        assert by_run == {first: [0, 1, 2], second: [0, 1]}

    # -- versions ---------------------------------------------------------------------

    async def test_old_versions_are_upcast_on_read(self, store: EventStore, reopen: Reopen) -> None:
        v1 = builtin_registry()
        v1.register(_NoteV1)
        writer = await reopen(store, v1)
        run_id = await self._new_run(writer)
        await writer.append(run_id, [NewEvent(_NoteV1(text="hello"))], expected_seq=1)
        v2 = builtin_registry()
        v2.register(_NoteV2)
        v2.register_upcaster("test.note", 1, _note_v1_to_v2)
        reader = await reopen(store, v2)
        (event,) = await reader.read(run_id, after=0)
        assert (event.v, event.data) == (2, {"text": "hello", "lang": "en"})
        assert v2.parse(event.type, event.data) == _NoteV2(text="hello", lang="en")
        (stored,) = await writer.read(run_id, after=0)
        assert (stored.v, stored.data) == (1, {"text": "hello"})


class _NoteV1(Payload):
    TYPE: ClassVar[str] = "test.note"
    VERSION: ClassVar[int] = 1
    text: str


class _NoteV2(Payload):
    TYPE: ClassVar[str] = "test.note"
    VERSION: ClassVar[int] = 2
    text: str
    lang: str


def _note_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "lang": "en"}
