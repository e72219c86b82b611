"""Folded-state snapshots: a run's ``SessionState`` kept every N events, as derived data.

Replaying a long log costs its length; starting from the nearest snapshot costs only
the events after it. A snapshot is never the truth: it carries ``FOLD_VERSION``, a
fingerprint of the fold's code and of the state's shape, so one written by another
Helix is simply not found; one that does not decode is ignored (the replay then folds
from the start); all of them may be dropped (``EventStore.drop_snapshots``) and are
rebuilt by ``snapshot_run`` or, lazily, by replays.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import zlib
from functools import cache
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from helix.errors import HelixError
from helix.kernel.events import DEFAULT_REGISTRY
from helix.kernel.log import EventStore, FoldSnapshot

from ._state import SessionState

KIND = "session"
"""The ``kind`` of session snapshots in the store."""

_log = logging.getLogger(__name__)
_FOLD_SOURCES = (
    "_state.py",
    "_replay.py",
    "_mistakes.py",
    "_snapshot.py",
    "_strategy.py",
    "_live.py",
)
_LEVEL = 1
"""zlib's fastest level: most of the size saved for a fraction of the time."""


@cache
def fold_version() -> str:
    """The fingerprint of the fold: a hash of the code that defines and fills the state.

    Any change to ``SessionState``, to a fold handler, to this codec or to a built-in
    event's version changes it, so a snapshot is read back only by the very code that
    wrote it.
    """
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in _FOLD_SOURCES:
        digest.update(_source(here / name))
    # An event's new VERSION comes with an upcaster: what the fold reads may change.
    versions = sorted(DEFAULT_REGISTRY.versions.items())
    digest.update(repr(versions).encode())
    return f"session-{digest.hexdigest()[:16]}"


@cache
def _adapter() -> TypeAdapter[SessionState]:
    return TypeAdapter(SessionState)


def encode_state(state: SessionState) -> bytes:
    """Serialise ``state`` faithfully (tuples, sets, nested records, models, floats).

    JSON, compressed: a state holds the whole conversation, which compresses well,
    and snapshots of one run repeat most of it.
    """
    return zlib.compress(_adapter().dump_json(state), _LEVEL)


def decode_state(data: bytes) -> SessionState:
    """Rebuild a state from ``encode_state``'s bytes; ``ValueError`` if they are not one."""
    try:
        return _adapter().validate_json(zlib.decompress(data))
    except zlib.error as error:
        raise ValueError(f"not a session snapshot: {error}") from None
    except ValidationError as error:
        raise ValueError(f"not a session snapshot: {error.error_count()} errors") from None


async def load_snapshot(
    store: EventStore, run_id: str, *, at_most: int | None = None
) -> SessionState | None:
    """The nearest usable session snapshot at or before ``at_most``, or ``None``.

    A snapshot that does not decode, or whose head is not its seq, is skipped as if
    absent (it is derived data: the log is still there to fold).
    """
    found = await store.nearest_snapshot(run_id, KIND, fold_version(), at_most=at_most)
    if found is None:
        return None
    try:
        state = decode_state(found.data)
    except ValueError as error:
        _log.warning("ignoring the snapshot of %s at seq %d: %s", found.run_id, found.seq, error)
        return None
    if state.head != found.seq:
        _log.warning("ignoring the snapshot of %s at seq %d: it ends elsewhere", run_id, found.seq)
        return None
    return state


async def save_snapshot(store: EventStore, owner: str, state: SessionState) -> bool:
    """Keep ``state`` as the snapshot at its head; ``owner`` holds the row at that seq.

    Best effort: a state that will not encode (a lone surrogate an imported log
    smuggled in) or a store that refuses (read-only, unreachable) is logged and False
    is returned; a snapshot is only ever a shortcut.
    """
    try:
        data = encode_state(state)
        await store.put_snapshot(FoldSnapshot(owner, state.head, KIND, fold_version(), data))
    except (HelixError, ValueError) as error:
        _log.warning("no snapshot of %s at seq %d: %s", owner, state.head, error)
        return False
    return True


def _source(path: Path) -> bytes:
    """The file's bytes; where sources are not shipped, the installed version's number."""
    try:
        return path.read_bytes()
    except OSError:
        try:
            return importlib.metadata.version("helix-harness").encode()
        except importlib.metadata.PackageNotFoundError:
            return b"unknown"
