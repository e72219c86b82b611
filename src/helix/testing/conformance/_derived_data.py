"""Conformance: the derived data every event store keeps beside the log.

Fold snapshots (``put_snapshot``/``nearest_snapshot``/``drop_snapshots``) and the index
of turn boundaries (``turn_end``) are the store's: each backend must find them by the
same rules, across a fork's stitched log too, and never let them touch the events.
Mixed into ``EventStoreConformance``; it uses that suite's ``store`` and ``reopen``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from helix.errors import InvalidEventError
from helix.kernel.events import EventRegistry
from helix.kernel.log import EventStore, FoldSnapshot
from helix.kernel.session import fold_version, replay, replay_run, save_snapshot
from helix.testing._sessions import run_created, session_events, turn_events

_Reopen = Callable[[EventStore, EventRegistry], Awaitable[EventStore]]


async def _run(store: EventStore, turns: int) -> str:
    run_id = (await store.create_run(run_created())).id
    await store.append(run_id, session_events(turns), expected_seq=1)
    return run_id


def _snap(run_id: str, seq: int, data: bytes = b"x", *, kind: str = "k") -> FoldSnapshot:
    return FoldSnapshot(run_id, seq, kind, "v1", data)


async def _scanned_ends(store: EventStore, run_id: str) -> dict[int, int]:
    ends: dict[int, int] = {}
    for event in await store.read(run_id):
        if event.type == "turn.ended":
            ends.setdefault(event.data["turn"], event.seq)
    return ends


class DerivedDataConformance:
    """Fold snapshots and the turn index, the same on every backend."""

    async def test_nearest_snapshot_is_the_latest_at_or_before(self, store: EventStore) -> None:
        run_id = await _run(store, 3)
        for seq in (5, 10, 20):
            await store.put_snapshot(_snap(run_id, seq, str(seq).encode()))
        await store.put_snapshot(FoldSnapshot(run_id, 15, "k", "v2", b"other version"))
        await store.put_snapshot(_snap(run_id, 16, b"other kind", kind="j"))
        found = await store.nearest_snapshot(run_id, "k", "v1", at_most=19)
        assert found == FoldSnapshot(run_id, 10, "k", "v1", b"10")
        assert (await store.nearest_snapshot(run_id, "k", "v1", at_most=10)) == found
        latest = await store.nearest_snapshot(run_id, "k", "v1")
        assert latest is not None
        assert latest.seq == 20
        assert await store.nearest_snapshot(run_id, "k", "v1", at_most=4) is None
        assert await store.nearest_snapshot(run_id, "k", "v3") is None
        assert (await store.nearest_snapshot(run_id, "j", "v1")) == _snap(
            run_id, 16, b"other kind", kind="j"
        )
        await store.put_snapshot(_snap(run_id, 10, b"again"))  # the same point: replaced
        again = await store.nearest_snapshot(run_id, "k", "v1", at_most=12)
        assert again is not None
        assert again.data == b"again"

    async def test_a_snapshot_holds_binary_data_whole(self, store: EventStore) -> None:
        run_id = await _run(store, 1)
        data = bytes(range(256)) * 300
        await store.put_snapshot(_snap(run_id, 3, data))
        found = await store.nearest_snapshot(run_id, "k", "v1")
        assert found is not None
        assert found.data == data

    async def test_a_fork_reads_its_parents_snapshots_only_up_to_its_fork_point(
        self, store: EventStore
    ) -> None:
        parent = await _run(store, 3)
        ends = await _scanned_ends(store, parent)
        await store.put_snapshot(_snap(parent, ends[1] - 1, b"before"))
        await store.put_snapshot(_snap(parent, ends[2], b"after the fork point"))
        fork = await store.fork(parent, at_seq=ends[1])
        found = await store.nearest_snapshot(fork.id, "k", "v1")
        assert found == FoldSnapshot(parent, ends[1] - 1, "k", "v1", b"before")
        await store.append(fork.id, turn_events(2), expected_seq=fork.next_seq)
        await store.put_snapshot(_snap(fork.id, fork.next_seq + 1, b"own"))
        own = await store.nearest_snapshot(fork.id, "k", "v1")
        assert own == FoldSnapshot(fork.id, fork.next_seq + 1, "k", "v1", b"own")
        inherited = await store.nearest_snapshot(fork.id, "k", "v1", at_most=fork.next_seq)
        assert inherited is not None
        assert inherited.run_id == parent
        parents = await store.nearest_snapshot(parent, "k", "v1")
        assert parents is not None
        assert parents.data == b"after the fork point"

    async def test_dropping_snapshots_leaves_the_log_alone(self, store: EventStore) -> None:
        one, two = await _run(store, 2), await _run(store, 2)
        before = await store.read(one)
        for run_id in (one, two):
            await store.put_snapshot(_snap(run_id, 4))
        await store.drop_snapshots(one)
        assert await store.nearest_snapshot(one, "k", "v1") is None
        assert await store.nearest_snapshot(two, "k", "v1") is not None
        await store.drop_snapshots()
        assert await store.nearest_snapshot(two, "k", "v1") is None
        assert await store.read(one) == before

    async def test_bad_snapshots_are_refused(self, store: EventStore) -> None:
        run_id = await _run(store, 1)
        for bad in (_snap(run_id, -1), FoldSnapshot(run_id, 1, "", "v1", b"x")):
            with pytest.raises(InvalidEventError):
                await store.put_snapshot(bad)
        with pytest.raises(InvalidEventError):
            await store.put_snapshot(FoldSnapshot(run_id, 1, "k", "", b"x"))
        assert await store.nearest_snapshot(run_id, "k", "v1") is None

    async def test_snapshots_outlive_the_store_object(
        self, store: EventStore, reopen: _Reopen
    ) -> None:
        run_id = await _run(store, 1)
        await store.put_snapshot(_snap(run_id, 2, b"kept"))
        other = await reopen(store, store.registry)
        try:
            found = await other.nearest_snapshot(run_id, "k", "v1")
            assert found is not None
            assert found.data == b"kept"
        finally:
            if other is not store:
                await other.close()

    async def test_turn_end_is_where_a_scan_finds_it(self, store: EventStore) -> None:
        run_id = await _run(store, 4)
        ends = await _scanned_ends(store, run_id)
        assert {t: await store.turn_end(run_id, t) for t in ends} == ends
        assert await store.turn_end(run_id, 5) is None
        assert await store.turn_end(run_id, 0) is None  # no turn.ended for turn 0

    async def test_turn_end_follows_a_forks_stitched_log(self, store: EventStore) -> None:
        parent = await _run(store, 3)
        ends = await _scanned_ends(store, parent)
        fork = await store.fork(parent, at_seq=ends[1])
        assert await store.turn_end(fork.id, 1) == ends[1]
        assert await store.turn_end(fork.id, 2) is None  # the parent's turn 2 is not the fork's
        await store.append(fork.id, turn_events(2), expected_seq=fork.next_seq)
        assert await store.turn_end(fork.id, 2) == (await _scanned_ends(store, fork.id))[2]
        assert await store.turn_end(fork.id, 2) != ends[2]
        assert await store.turn_end(parent, 2) == ends[2]

    async def test_replay_from_a_snapshot_equals_the_full_fold(self, store: EventStore) -> None:
        store.snapshot_every = 7
        parent = await _run(store, 6)
        ends = await _scanned_ends(store, parent)
        fork = await store.fork(parent, at_seq=ends[4], message="again")
        await store.append(fork.id, turn_events(5, final=True), expected_seq=fork.next_seq)
        for run_id in (parent, fork.id):
            events = await store.read(run_id)
            for to_seq in range(len(events)):
                expected = replay(events, to_seq=to_seq)
                expected.run_id = run_id
                assert await replay_run(store, run_id, to_seq=to_seq) == expected
        assert await store.nearest_snapshot(fork.id, "session", fold_version()) is not None

    async def test_a_damaged_or_foreign_snapshot_falls_back_to_the_log(
        self, store: EventStore
    ) -> None:
        run_id = await _run(store, 3)
        events = await store.read(run_id)
        expected = replay(events)
        wrong = replay(events, to_seq=5)
        wrong.objective = "not this run's"
        await save_snapshot(store, run_id, wrong)  # a lie: read back, and it ends at seq 5
        lied = await replay_run(store, run_id)
        assert lied.objective == "not this run's"  # proof that snapshots are read at all
        await store.drop_snapshots(run_id)
        version = fold_version()
        await store.put_snapshot(FoldSnapshot(run_id, 8, "session", version, b"\x00garbage"))
        await store.put_snapshot(FoldSnapshot(run_id, 9, "session", "session-old", b"{}"))
        assert await replay_run(store, run_id) == expected
        assert await replay_run(store, run_id, turn=2) == replay(
            events, to_seq=(await _scanned_ends(store, run_id))[2]
        )
