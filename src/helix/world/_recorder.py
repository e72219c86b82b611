"""Recording a run's world as it goes: at its start and at the end of turns that changed it.

The recorder holds the world's last recorded manifest (folded from the log once, then
kept current) and turns a scan into the events to append: a ``world.snapshotted`` with
only the delta, and a ``world.file_skipped`` for each file newly left out. The caller
appends them with its own events (the ``turn.ended`` of the turn), and calls ``reset``
if an append may not have happened, so the next use folds the log again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from helix.kernel.events import NewEvent, Payload, WorldFileSkipped, WorldSnapshotted
from helix.kernel.log import EventStore

from ._history import WorldFold, folded_world
from ._manifest import Delta, Manifest, apply_delta, delta, save_manifest
from ._objects import ObjectStore
from ._scan import DEFAULT_MAX_FILE_BYTES, Scanner, ScanResult
from ._watch import WorldWatcher

INLINE_PATHS = 8
"""Refreshing at most this many paths runs on the event loop; more go to a thread."""


class WorldRecorder:
    """Turns the state of one run's world directory into snapshot events."""

    def __init__(
        self,
        store: EventStore,
        run_id: str,
        root: Path,
        objects: ObjectStore,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.root = root
        self.objects = objects
        self.scanner = Scanner(root, objects, max_file_bytes=max_file_bytes)
        self._fold: WorldFold | None = None
        self._watcher: WorldWatcher | None = None
        self.walks = 0
        """How many snapshots walked the whole world (the rest read only what changed)."""

    async def manifest(self) -> Manifest:
        """The last recorded manifest (after any snapshot this recorder made)."""
        return (await self._loaded()).manifest

    def reset(self) -> None:
        """Forget the folded world (read the log again on next use), and walk next time."""
        self._fold = None
        self.close()

    def close(self) -> None:
        """Stop watching the world (the next snapshot that needs it walks again)."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    async def snapshot(self, turn: int, paths: Iterable[str] | None = None) -> list[NewEvent]:
        """The events recording the world now: walked whole, or just ``paths``.

        Nothing when nothing changed. The first snapshot of a run stores the whole
        manifest as an object and names it (``base``); later ones carry deltas. Asked
        to walk, it reads instead just the paths the watcher saw change, while the
        watcher can vouch for them (``WorldWatcher``).
        """
        fold = await self._loaded()
        first = fold.snapshots == 0
        walk = first or paths is None
        if walk and not first and self._watcher is not None:
            seen = self._watcher.changes()
            if seen is not None:
                walk, paths = False, seen
        if walk:
            result = await asyncio.to_thread(self._walk, fold.manifest)
            changes = delta(fold.manifest, result.manifest)
        else:
            assert paths is not None
            wanted = list(paths)
            if not wanted:
                return []
            if len(wanted) <= INLINE_PATHS:
                result = self.scanner.refresh(fold.manifest, wanted)
            else:
                result = await asyncio.to_thread(self.scanner.refresh, fold.manifest, wanted)
            changes = result.changes(fold.manifest)
        events = self._skipped(fold, result, turn)
        if first:
            events.append(await self._base(fold, result.manifest, result.bytes_added, turn))
        elif changes:
            apply_delta(fold.manifest, changes)
            events.append(_delta_event(turn, changes, len(fold.manifest), result.bytes_added, walk))
        if events:
            fold.snapshots += 1
        return events

    def _walk(self, previous: Manifest) -> ScanResult:
        """Scan the whole world, watching it first: what changes meanwhile is seen next time."""
        self.close()
        self._watcher = WorldWatcher.start(self.root)
        self.walks += 1
        return self.scanner.scan(previous)

    async def _base(
        self, fold: WorldFold, manifest: Manifest, bytes_added: int, turn: int
    ) -> NewEvent:
        digest, added = await asyncio.to_thread(save_manifest, self.objects, manifest)
        fold.manifest = manifest
        base = WorldSnapshotted(
            turn=turn,
            base=digest,
            files=len(manifest),
            bytes_added=bytes_added + added,
            scanned=True,
        )
        return NewEvent(base, turn=turn)

    def _skipped(self, fold: WorldFold, result: ScanResult, turn: int) -> list[NewEvent]:
        events: list[NewEvent] = []
        for path, (size, reason) in sorted(result.skipped.items()):
            if path in fold.skipped:
                continue
            fold.skipped.add(path)
            limit = self.scanner.max_file_bytes if reason == "too_large" else None
            skipped = WorldFileSkipped(path=path, size=size, reason=reason, limit=limit)
            events.append(NewEvent(skipped, turn=turn))
        return events

    async def _loaded(self) -> WorldFold:
        if self._fold is None:
            self._fold, _head = await folded_world(self.store, self.objects, self.run_id)
        return self._fold


def _delta_event(
    turn: int, changes: Delta, files: int, bytes_added: int, scanned: bool
) -> NewEvent:
    payload: Payload = WorldSnapshotted(
        turn=turn,
        changes={p: None if e is None else e.to_event() for p, e in changes.items()},
        files=files,
        bytes_added=bytes_added,
        scanned=scanned,
    )
    return NewEvent(payload, turn=turn)
