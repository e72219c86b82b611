"""A run's world history, folded from its log: the manifest at its start, any turn, or last.

The log is the session: ``world.snapshotted`` events carry deltas (or name a stored
manifest to start again from), ``world.rolled_back`` and ``world.kept`` name the
manifest in force after them. Folding them in order, over the object store, gives the
world at any point; nothing else is needed.

So that this costs the events since a recent point rather than the whole history,
the fold itself is kept every ``store.snapshot_every`` events as a ``world`` fold
snapshot (its manifest saved in the object store): derived data, read only by the same
fold code, ignored when it does not load, rebuilt by the next fold that passes by.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic_core import from_json, to_json

from helix.errors import ConfigError, HelixError, NotFoundError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, FoldSnapshot

from ._manifest import Entry, Manifest, load_manifest, save_manifest
from ._objects import ObjectStore

KIND = "world"
"""The ``kind`` of world fold snapshots in the store."""

_log = logging.getLogger(__name__)

WORLD_EVENTS = frozenset({"world.snapshotted", "world.rolled_back", "world.kept"})

FOLDED_TYPES = WORLD_EVENTS | {"world.file_skipped"}
"""The event types ``WorldFold.apply`` reads (it ignores every other)."""

Point = int | Literal["start", "now", "last"]
"""A point in a run's world: its start, the end of a turn, now (the directory as it
is), or the last snapshot recorded."""


def parse_point(text: str | int | None, default: Point = "now") -> Point:
    """``start``, ``now``, ``last`` or a turn number; ``ConfigError`` otherwise."""
    if text is None:
        return default
    if isinstance(text, int):
        point: Point = text
    elif text in ("start", "now", "last"):
        point = text  # type: ignore[assignment]
    elif text.strip().isascii() and text.strip().isdecimal():  # not "²": int() refuses it
        point = int(text)
    else:
        raise ConfigError(f"{text!r} is not a point of a run: say start, now, or a turn number")
    if isinstance(point, int) and point < 0:
        raise ConfigError(f"turn must be 0 or more, not {point}")
    return point


@dataclass
class WorldFold:
    """The world folded from events: the current manifest and what the fold has seen."""

    manifest: Manifest = field(default_factory=dict[str, Entry])
    snapshots: int = 0
    """How many snapshot events were folded."""
    skipped: set[str] = field(default_factory=set[str])
    """Paths a ``world.file_skipped`` named (reported once, not at every turn)."""

    def apply(self, event: Event, objects: ObjectStore) -> None:
        """Fold one event (other types are ignored)."""
        data = event.data
        if event.type == "world.snapshotted":
            if data.get("base"):
                self.manifest = load_manifest(objects, data["base"])
            for path, entry in data["changes"].items():
                if entry is None:
                    self.manifest.pop(path, None)
                else:
                    self.manifest[path] = Entry.from_event(entry)
                    self.skipped.discard(path)
            self.snapshots += 1
        elif event.type == "world.rolled_back" or (
            event.type == "world.kept" and data["world_changed"]
        ):
            self.manifest = load_manifest(objects, data["manifest"])
        elif event.type == "world.file_skipped":
            self.skipped.add(data["path"])

    def copy(self) -> WorldFold:
        """A fold that later events applied to this one leave alone."""
        return WorldFold(dict(self.manifest), self.snapshots, set(self.skipped))


def fold_world(events: Iterable[Event], objects: ObjectStore) -> WorldFold:
    """Fold every world event of ``events``."""
    fold = WorldFold()
    for event in events:
        fold.apply(event, objects)
    return fold


async def world_at(store: EventStore, objects: ObjectStore, run_id: str, point: Point) -> Manifest:
    """The recorded manifest at ``point`` (``now`` means the last recorded here).

    ``start`` is the run's own first snapshot (a fork's: the world it was given);
    turn N is the snapshot recorded just before turn N ended. ``NotFoundError`` when
    the run has no such point.
    """
    manifest, _seq = await world_and_seq_at(store, objects, run_id, point)
    return manifest


async def world_and_seq_at(
    store: EventStore, objects: ObjectStore, run_id: str, point: Point
) -> tuple[Manifest, int]:
    """``world_at``, with the seq of the event that marks the point.

    A turn's end is found in the store's index of turn boundaries and the world folded
    from the nearest world snapshot before it, so the cost is bounded by the events
    since that snapshot, not by the run's length.
    """
    if isinstance(point, int) and point > 0:
        seq = await store.turn_end(run_id, point)
        if seq is None:  # not in the index: a malformed import, or no such turn
            seq = await _scanned_end(store, run_id, point)
        fold, _head = await folded_world(store, objects, run_id, to_seq=seq)
        return _checked(fold, run_id), seq
    if point in ("now", "last"):
        fold, head = await folded_world(store, objects, run_id)
        return _checked(fold, run_id), head
    # The start: the run's own first snapshot, just past its fork point if it is a fork.
    parent = (await store.get_run(run_id)).parent
    fold, head = (
        (WorldFold(), -1)
        if parent is None
        else await folded_world(store, objects, run_id, to_seq=parent.seq)
    )
    async for page in store.read_pages(run_id, after=head):
        for event in page:
            fold.apply(event, objects)
            if event.type == "world.snapshotted" and event.run_id == run_id:
                return fold.manifest, event.seq
    raise NotFoundError(f"run {run_id!r} has no snapshot of its world at its start")


async def folded_world(
    store: EventStore, objects: ObjectStore, run_id: str, *, to_seq: int | None = None
) -> tuple[WorldFold, int]:
    """Fold the run's world up to ``to_seq`` (the end: ``None``), from the nearest snapshot.

    Returns the fold and the seq of the last event it covers (-1 for none). At each
    snapshot point it passes (every ``store.snapshot_every`` events) it keeps the fold
    there, so the next fold of this stretch starts close to where it is asked for.
    """
    fold, head = await _load_world(store, objects, run_id, to_seq)
    every = store.snapshot_every
    async for page in store.read_pages(run_id, after=head, to_seq=to_seq):
        for event in page:
            fold.apply(event, objects)
            if every > 0 and event.seq % every == 0 and event.seq > 0:
                await keep_world(store, objects, event, fold)
        head = page[-1].seq
    return fold, head


async def keep_world(store: EventStore, objects: ObjectStore, at: Event, fold: WorldFold) -> None:
    """Keep ``fold`` as the world snapshot at ``at`` (its manifest into the object store).

    Best effort, as every snapshot: one that cannot be kept is logged and skipped.
    """
    try:
        digest, _added = save_manifest(objects, fold.manifest)
        data = {"manifest": digest, "snapshots": fold.snapshots, "skipped": sorted(fold.skipped)}
        snapshot = FoldSnapshot(at.run_id, at.seq, KIND, world_fold_version(), to_json(data))
        await store.put_snapshot(snapshot)
    except (HelixError, OSError) as error:
        _log.warning("no world snapshot of %s at %d: %s", at.run_id, at.seq, error)


async def _load_world(
    store: EventStore, objects: ObjectStore, run_id: str, to_seq: int | None
) -> tuple[WorldFold, int]:
    """The nearest usable world snapshot at or before ``to_seq``, else an empty fold."""
    if store.snapshot_every <= 0:  # snapshots are off: neither kept nor read
        return WorldFold(), -1
    found = await store.nearest_snapshot(run_id, KIND, world_fold_version(), at_most=to_seq)
    if found is None:
        return WorldFold(), -1
    try:
        data = from_json(found.data)
        manifest = load_manifest(objects, data["manifest"])
        fold = WorldFold(manifest, int(data["snapshots"]), {str(p) for p in data["skipped"]})
    except (HelixError, ValueError, KeyError, TypeError) as error:
        _log.warning("ignoring the world snapshot of %s at %d: %s", run_id, found.seq, error)
        return WorldFold(), -1
    return fold, found.seq


@cache
def world_fold_version() -> str:
    """The fingerprint of the world fold: a hash of the code that defines it."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("_history.py", "_manifest.py"):
        digest.update(_source(here / name))
    return f"world-{digest.hexdigest()[:16]}"


async def _scanned_end(store: EventStore, run_id: str, turn: int) -> int:
    """Where ``turn`` ends, by a scan (when the turn index has no row for it).

    A ``turn.ended`` whose row lacks its turn number (an imported log) is found by its
    payload; ``NotFoundError`` names the turns there are.
    """
    turns: list[int] = []
    async for event in store.iter_events(run_id):
        if event.type == "turn.ended":
            if event.data["turn"] == turn:
                return event.seq
            turns.append(event.data["turn"])
    done = f"turns 1 to {max(turns)}" if turns else "no completed turn"
    raise NotFoundError(f"run {run_id!r} has no turn {turn}: it has {done}")


def _checked(fold: WorldFold, run_id: str) -> Manifest:
    if fold.snapshots == 0:
        raise NotFoundError(f"run {run_id!r} has no snapshots of its world")
    return fold.manifest


def _source(path: Path) -> bytes:
    """The file's bytes; where sources are not shipped, the installed version's number."""
    try:
        return path.read_bytes()
    except OSError:
        try:
            return importlib.metadata.version("helix-harness").encode()
        except importlib.metadata.PackageNotFoundError:
            return b"unknown"
