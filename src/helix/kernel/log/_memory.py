"""The in-memory event store: the reference backend and the test double.

It keeps rows encoded exactly as the database backends do, so it exercises the same
codec, and it is what the conformance suite's expectations are first checked against.
"""

from __future__ import annotations

import bisect
from dataclasses import replace

from helix.errors import (
    LeaseHeldError,
    LeaseLostError,
    RunExistsError,
    RunNotFoundError,
    SeqConflictError,
)
from helix.kernel.events import EventRegistry, RunStatus

from ._codec import DEFAULT_BLOB_THRESHOLD
from ._records import EncodedEvent, FoldSnapshot, Lease, RunDelta, RunRecord
from ._store import EventStore


class MemoryEventStore(EventStore):
    """An ``EventStore`` that lives and dies with the process."""

    def __init__(
        self,
        *,
        registry: EventRegistry | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
    ) -> None:
        super().__init__(registry=registry, blob_threshold=blob_threshold)
        self._runs: dict[str, RunRecord] = {}
        self._rows: dict[str, list[EncodedEvent]] = {}
        self._blobs: dict[str, bytes] = {}
        self._snapshots: dict[tuple[str, str], dict[int, FoldSnapshot]] = {}
        self._turn_ends: dict[str, dict[int, list[int]]] = {}
        self._leases: dict[str, Lease] = {}
        """Each leased run's last lease (``holder`` empty once released)."""

    def view(self, registry: EventRegistry) -> MemoryEventStore:
        """Return a second store over the same memory that reads with ``registry``."""
        other = MemoryEventStore(registry=registry, blob_threshold=self.blob_threshold)
        other._runs, other._rows, other._blobs = self._runs, self._rows, self._blobs
        other._snapshots, other._turn_ends = self._snapshots, self._turn_ends
        other._leases = self._leases
        return other

    async def _insert_run(
        self, record: RunRecord, first: EncodedEvent, blobs: dict[str, bytes]
    ) -> None:
        if record.id in self._runs:
            raise RunExistsError(record.id)
        self._runs[record.id] = record
        self._rows[record.id] = [first]
        self._blobs.update(blobs)
        self._index_turn_ends(record.id, [first])

    async def _append_rows(
        self,
        run_id: str,
        expected_seq: int,
        rows: list[EncodedEvent],
        blobs: dict[str, bytes],
        delta: RunDelta,
        ts: str,
        epoch: int | None,
    ) -> None:
        record = self._runs.get(run_id)
        if record is None:
            raise RunNotFoundError(run_id)
        if epoch is not None and epoch != self._epoch(run_id):
            raise LeaseLostError(run_id, epoch, self._epoch(run_id))
        if record.next_seq != expected_seq:
            raise SeqConflictError(run_id, expected_seq, record.next_seq)
        self._rows[run_id].extend(rows)
        self._blobs.update(blobs)
        self._index_turn_ends(run_id, rows)
        self._runs[run_id] = replace(
            record,
            next_seq=expected_seq + len(rows),
            status=delta.status or record.status,
            turns=max(record.turns, delta.turns or 0),
            input_tokens=record.input_tokens + delta.input_tokens,
            output_tokens=record.output_tokens + delta.output_tokens,
            cost_usd=record.cost_usd + delta.cost_usd,
            updated_at=ts,
        )

    async def _take_lease(
        self, run_id: str, holder: str, now: float, expires_at: float, stale: Lease | None
    ) -> Lease:
        if run_id not in self._runs:
            raise RunNotFoundError(run_id)
        current = self._leases.get(run_id)
        taken_over = stale is not None and current is not None and stale.epoch == current.epoch
        if current is not None and current.holder and current.live(now) and not taken_over:
            raise LeaseHeldError(run_id, current.holder, current.expires_at)
        lease = Lease(run_id, holder, self._epoch(run_id) + 1, expires_at)
        self._leases[run_id] = lease
        return lease

    async def _renew_lease(self, lease: Lease, expires_at: float) -> int:
        epoch = self._epoch(lease.run_id)
        if epoch == lease.epoch:
            self._leases[lease.run_id] = Lease(lease.run_id, lease.holder, epoch, expires_at)
        return epoch

    async def _release_lease(self, lease: Lease) -> None:
        if self._epoch(lease.run_id) == lease.epoch:
            self._leases[lease.run_id] = Lease(lease.run_id, "", lease.epoch, 0.0)

    async def _get_lease(self, run_id: str) -> Lease | None:
        if run_id not in self._runs:
            raise RunNotFoundError(run_id)
        lease = self._leases.get(run_id)
        return lease if lease is not None and lease.holder else None

    def _epoch(self, run_id: str) -> int:
        lease = self._leases.get(run_id)
        return 0 if lease is None else lease.epoch

    async def _load_run(self, run_id: str) -> RunRecord | None:
        return self._runs.get(run_id)

    async def _query_runs(
        self,
        status: RunStatus | None,
        workspaces: frozenset[str] | None,
        parent_id: str | None,
        limit: int,
        after: tuple[str, str] | None,
    ) -> list[RunRecord]:
        runs = sorted(self._runs.values(), key=lambda r: (r.created_at, r.id), reverse=True)
        out = []
        for run in runs:
            if after is not None and (run.created_at, run.id) >= after:
                continue
            if status is not None and run.status != status:
                continue
            if workspaces is not None and run.workspace not in workspaces:
                continue
            if parent_id is not None and (run.parent is None or run.parent.run_id != parent_id):
                continue
            out.append(run)
            if len(out) == limit:
                break
        return out

    async def _query_prefix(
        self, prefix: str, workspaces: frozenset[str] | None, limit: int
    ) -> list[RunRecord]:
        found = sorted(
            (r for r in self._runs.values() if r.id.startswith(prefix)), key=lambda r: r.id
        )
        return [r for r in found if workspaces is None or r.workspace in workspaces][:limit]

    async def _read_rows(
        self, run_id: str, after: int, to_seq: int | None, limit: int | None
    ) -> list[EncodedEvent]:
        rows = self._rows.get(run_id, [])
        # A fork's own rows start past its fork point, so seq is not the list index.
        start = bisect.bisect_right(rows, after, key=lambda r: r.seq)
        stop = (
            len(rows) if to_seq is None else bisect.bisect_right(rows, to_seq, key=lambda r: r.seq)
        )
        if limit is not None:
            stop = min(stop, start + limit)
        return rows[start:stop]

    async def _get_blobs(self, hashes: set[str]) -> dict[str, bytes]:
        return {h: self._blobs[h] for h in hashes if h in self._blobs}

    async def _put_snapshot(self, snapshot: FoldSnapshot) -> None:
        self._snapshots.setdefault((snapshot.run_id, snapshot.kind), {})[snapshot.seq] = snapshot

    async def _get_snapshot(
        self, run_id: str, kind: str, version: str, first: int, last: int
    ) -> tuple[int, bytes] | None:
        kept = self._snapshots.get((run_id, kind), {})
        seqs = [s for s, snap in kept.items() if first <= s <= last and snap.version == version]
        return (max(seqs), kept[max(seqs)].data) if seqs else None

    async def _drop_snapshots(self, run_id: str | None) -> None:
        for key in [k for k in self._snapshots if run_id is None or k[0] == run_id]:
            del self._snapshots[key]

    async def _turn_end(self, run_id: str, turn: int, first: int, last: int) -> int | None:
        seqs = self._turn_ends.get(run_id, {}).get(turn, [])
        return next((s for s in seqs if first <= s <= last), None)

    def _index_turn_ends(self, run_id: str, rows: list[EncodedEvent]) -> None:
        """Keep the index of turn boundaries current (what the databases' index does)."""
        for row in rows:
            if row.type == "turn.ended" and row.turn is not None:
                self._turn_ends.setdefault(run_id, {}).setdefault(row.turn, []).append(row.seq)
