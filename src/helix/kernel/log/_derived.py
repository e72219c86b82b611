"""The derived tables: data rebuilt from the log, never the source of truth.

``fold_snapshots`` keeps folds of a run's log at some seqs (see ``FoldSnapshot``);
``events_turn_ends`` is an index of each run's ``turn.ended`` rows by turn, so finding
where a turn ends is a lookup rather than a scan. Neither is part of the versioned
schema: both are created if missing whenever a store opens, either may be dropped at
any time (``DROP TABLE fold_snapshots``, ``DROP INDEX events_turn_ends``) and is rebuilt,
and an older Helix opening the database ignores them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from helix.errors import InvalidEventError

from ._records import LAST_SEQ, FoldSnapshot, Segment


class DerivedData(ABC):
    """The derived-data half of ``EventStore``: fold snapshots and the turn index."""

    snapshot_every: int
    """Keep a fold snapshot every this many events (0: keep and read none)."""

    async def put_snapshot(self, snapshot: FoldSnapshot) -> None:
        """Keep ``snapshot`` (replacing one of the same run, kind and seq).

        Snapshots are derived data: ``run_id`` must hold its own row at ``seq`` (the
        fold's last event), and dropping any of them loses nothing.
        """
        if snapshot.seq < 0 or not snapshot.kind or not snapshot.version:
            raise InvalidEventError(
                f"invalid snapshot of {snapshot.run_id!r}: a seq of 0 or more, a kind and a"
                " version are required"
            )
        await self._put_snapshot(snapshot)

    async def nearest_snapshot(
        self, run_id: str, kind: str, version: str, *, at_most: int | None = None
    ) -> FoldSnapshot | None:
        """Return the latest ``kind`` snapshot of ``version`` at or before ``at_most``.

        A fork's snapshots of its ancestors' stretch are theirs: the search walks the
        stitched log's segments from the newest, so it is a lookup per ancestor.
        """
        limit = LAST_SEQ if at_most is None else min(at_most, LAST_SEQ)
        for segment in reversed(await self._segments(run_id)):
            hi = limit if segment.last is None else min(limit, segment.last)
            if hi < segment.first:
                continue
            found = await self._get_snapshot(segment.run_id, kind, version, segment.first, hi)
            if found is not None:
                seq, data = found
                return FoldSnapshot(segment.run_id, seq, kind, version, data)
        return None

    async def drop_snapshots(self, run_id: str | None = None) -> None:
        """Forget the run's snapshots (every run's with ``None``): they are rebuilt on need."""
        await self._drop_snapshots(run_id)

    async def turn_end(self, run_id: str, turn: int) -> int | None:
        """Return the seq of the first ``turn.ended`` of ``turn`` in the run's stitched log.

        An index lookup per segment (the store keeps an index of turn boundaries), not
        a scan; ``None`` when the turn never ended.
        """
        for segment in await self._segments(run_id):
            hi = LAST_SEQ if segment.last is None else segment.last
            seq = await self._turn_end(segment.run_id, turn, segment.first, hi)
            if seq is not None:
                return seq
        return None

    @abstractmethod
    async def _segments(self, run_id: str) -> list[Segment]:
        """Split a run's stitched log into the stretches each ancestor holds."""

    @abstractmethod
    async def _put_snapshot(self, snapshot: FoldSnapshot) -> None:
        """Insert or replace the snapshot keyed by its run, kind and seq."""

    @abstractmethod
    async def _get_snapshot(
        self, run_id: str, kind: str, version: str, first: int, last: int
    ) -> tuple[int, bytes] | None:
        """Return (seq, data) of the run's latest such snapshot with ``first <= seq <= last``."""

    @abstractmethod
    async def _drop_snapshots(self, run_id: str | None) -> None:
        """Delete the run's snapshots, or every run's."""

    @abstractmethod
    async def _turn_end(self, run_id: str, turn: int, first: int, last: int) -> int | None:
        """Return the lowest seq of the run's own ``turn.ended`` rows of ``turn`` in range."""
