"""A run's world history, folded from its log: the manifest at its start, any turn, or last.

The log is the session: ``world.snapshotted`` events carry deltas (or name a stored
manifest to start again from), ``world.rolled_back`` and ``world.kept`` name the
manifest in force after them. Folding them in order, over the object store, gives the
world at any point; nothing else is needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from helix.errors import ConfigError, NotFoundError
from helix.kernel.events import Event
from helix.kernel.log import EventStore

from ._manifest import Entry, Manifest, load_manifest
from ._objects import ObjectStore

WORLD_EVENTS = frozenset({"world.snapshotted", "world.rolled_back", "world.kept"})

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
    """``world_at``, with the seq of the event that marks the point."""
    fold = WorldFold()
    turns: list[int] = []
    last = -1
    async for page in store.read_pages(run_id):
        for event in page:
            if event.type == "turn.ended":
                turns.append(event.data["turn"])
                if point == event.data["turn"]:
                    return _checked(fold, run_id), event.seq
                continue
            fold.apply(event, objects)
            own = event.type == "world.snapshotted" and event.run_id == run_id
            if own and point in ("start", 0):
                return fold.manifest, event.seq
            last = event.seq
    if point in ("now", "last"):
        return _checked(fold, run_id), last
    if point in ("start", 0):
        raise NotFoundError(f"run {run_id!r} has no snapshot of its world at its start")
    done = f"turns 1 to {max(turns)}" if turns else "no completed turn"
    raise NotFoundError(f"run {run_id!r} has no turn {point}: it has {done}")


def _checked(fold: WorldFold, run_id: str) -> Manifest:
    if fold.snapshots == 0:
        raise NotFoundError(f"run {run_id!r} has no snapshots of its world")
    return fold.manifest
