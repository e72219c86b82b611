"""Turning events into stored rows and back, with large strings kept out of line.

A string in a payload longer than the store's threshold (16 KiB by default) is moved to
the content-addressed blob table and replaced by an empty string; the row's ``ext``
column records where it was. Identical outputs are stored once, events stay small, and
reading puts every string back before anyone sees the event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from pydantic_core import from_json, to_json

from helix.errors import StoreDamagedError
from helix.kernel.events import Event, EventRegistry, NewEvent

from ._records import EncodedEvent, RawRow

DEFAULT_BLOB_THRESHOLD = 16 * 1024


def encode(
    run_id: str,
    seq: int,
    event: NewEvent,
    ts: str,
    registry: EventRegistry,
    threshold: int,
    blobs: dict[str, bytes],
) -> EncodedEvent:
    """Encode one new event; any blob it needs is added to ``blobs``."""
    payload = event.payload
    registry.check(payload)
    text = payload.__pydantic_serializer__.to_json(payload).decode()
    ext: str | None = None
    # A JSON document no longer than the threshold cannot hold a longer string.
    if len(text) > threshold:
        data = payload.model_dump(mode="json")
        moved: dict[str, str] = {}
        _move_out(data, "", threshold, moved, blobs)
        if moved:
            text = to_json(data).decode()
            ext = to_json(moved).decode()
    return EncodedEvent(
        run_id,
        seq,
        payload.TYPE,
        payload.VERSION,
        event.ts or ts,
        event.turn,
        event.actor,
        text,
        ext,
    )


_new_tuple = tuple.__new__
"""Builds a named tuple without its ``__new__`` (a Python function) on the hot path."""


def encode_batch(
    run_id: str,
    first_seq: int,
    events: Sequence[NewEvent],
    ts: str,
    registry: EventRegistry,
    threshold: int,
    blobs: dict[str, bytes],
    stored: list[Event] | None = None,
) -> list[EncodedEvent]:
    """``encode`` every event of one append, seqs from ``first_seq``: the append's inner loop.

    The same rows as ``encode`` makes one by one; flat, since every event of every turn
    passes here (a payload longer than the threshold takes ``encode``'s path). Given a
    ``stored`` list, the events as ``committed_batch`` would rebuild them from the rows
    are added to it in the same pass (for the caller to hand out once they commit).
    """
    known = registry.types
    rows: list[EncodedEvent] = []
    append = rows.append
    keep = None if stored is None else stored.append
    seq = first_seq
    for event in events:
        payload = event.payload
        model = type(payload)
        kind = model.TYPE
        text = model.__pydantic_serializer__.to_json(payload).decode()
        if known.get(kind) is not model or len(text) > threshold:
            encoded = encode(run_id, seq, event, ts, registry, threshold, blobs)
            append(encoded)
            if keep is not None:
                keep(committed_batch([encoded], [event])[0])
        else:
            at = event.ts or ts
            turn = event.turn
            actor = event.actor
            version = model.VERSION
            row = (run_id, seq, kind, version, at, turn, actor, text, None)
            append(_new_tuple(EncodedEvent, row))
            if keep is not None:
                data = from_json(text)
                keep(_new_tuple(Event, (run_id, seq, kind, version, at, turn, actor, data)))
        seq += 1
    return rows


def committed_batch(rows: list[EncodedEvent], events: Sequence[NewEvent]) -> list[Event]:
    """The events as stored, from their encoded rows (no second encoding of what was sent).

    A string moved out to a blob is still whole in the payload: dumping it beats a
    blob lookup.
    """
    out: list[Event] = []
    append = out.append
    for row, event in zip(rows, events, strict=True):
        run_id, seq, kind, v, ts, turn, actor, text, ext = row
        data = from_json(text) if ext is None else event.payload.model_dump(mode="json")
        append(_new_tuple(Event, (run_id, seq, kind, v, ts, turn, actor, data)))
    return out


_DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, UnicodeError)
"""What reading a damaged row raises (bad JSON, a missing blob, a value of another type)."""


def blob_hashes(rows: Sequence[RawRow]) -> set[str]:
    """Every blob hash the rows refer to; ``StoreDamagedError`` for an unreadable one."""
    hashes: set[str] = set()
    for row in rows:
        if row[8] is not None:
            try:
                hashes.update(from_json(row[8]).values())
            except _DAMAGE as error:
                raise _damaged(row, error) from None
    return hashes


def decode_rows(
    rows: Sequence[RawRow], registry: EventRegistry, blobs: dict[str, bytes]
) -> list[Event]:
    """Decode stored rows, restoring moved-out strings and upcasting old versions.

    This is replay's inner loop, so it stays flat: no per-row helper calls unless a
    row needs a blob or an upcast. A row that cannot be decoded (a damaged store) is
    ``StoreDamagedError`` naming it.
    """
    versions = registry.versions
    out: list[Event] = []
    append = out.append
    try:
        for run_id, seq, event_type, v, ts, turn, actor, text, ext in rows:
            data: dict[str, Any] = from_json(text)
            if ext is not None:
                for pointer, digest in from_json(ext).items():
                    _put(data, pointer, blobs[digest].decode())
            if not isinstance(data, dict):
                raise TypeError("its data is not a JSON object")
            if v != versions.get(event_type, v):
                v, data = registry.upcast(event_type, v, data)
            append(Event(run_id, seq, event_type, v, ts, turn, actor, data))
    except _DAMAGE as error:
        raise _damaged(rows[len(out)], error) from None
    return out


def _damaged(row: Sequence[object], error: BaseException) -> StoreDamagedError:
    where = f"event {str(row[1])[:20]} of run {str(row[0])[:80]!r}" if len(row) > 1 else "an event"
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    return StoreDamagedError(f"the store is damaged: {where} cannot be read back ({detail})")


def _move_out(
    node: Any, pointer: str, threshold: int, moved: dict[str, str], blobs: dict[str, bytes]
) -> Any:
    if isinstance(node, str):
        raw = node.encode()
        if len(raw) <= threshold:
            return node
        digest = hashlib.sha256(raw).hexdigest()
        blobs[digest] = raw
        moved[pointer] = digest
        return ""
    if isinstance(node, dict):
        for key, value in node.items():
            node[key] = _move_out(value, f"{pointer}/{_escape(key)}", threshold, moved, blobs)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            node[index] = _move_out(value, f"{pointer}/{index}", threshold, moved, blobs)
    return node


def _put(data: dict[str, Any], pointer: str, value: str) -> None:
    parts = [_unescape(p) for p in pointer.split("/")[1:]]
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")
