"""Run ids and the cursors of run listings."""

from __future__ import annotations

import uuid

from helix.errors import InvalidEventError

from ._records import RunRecord


def new_run_id() -> str:
    """Return a fresh run id: ``run_`` and 20 hex digits."""
    return f"run_{uuid.uuid4().hex[:20]}"


def check_id(run_id: str) -> None:
    if not run_id or len(run_id) > 128 or not run_id.replace("-", "").replace("_", "").isalnum():
        raise InvalidEventError(f"invalid run id {run_id!r}: use 1-128 letters, digits, '-' or '_'")


def min_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def encode_cursor(record: RunRecord) -> str:
    return f"{record.created_at}|{record.id}"


def decode_cursor(cursor: str | None) -> tuple[str, str] | None:
    if cursor is None:
        return None
    created_at, sep, run_id = cursor.partition("|")
    if not sep or not created_at or not run_id:
        raise InvalidEventError(f"invalid cursor {cursor!r}")
    return created_at, run_id
