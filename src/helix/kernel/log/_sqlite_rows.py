"""Writing an append's rows and blobs on a SQLite connection (in the caller's transaction)."""

from __future__ import annotations

import sqlite3
from itertools import chain

from ._records import EncodedEvent
from ._sql import EVENT_COLUMNS

APPEND = f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
"""One row."""

MULTI_ROWS = 32
"""Appends of up to this many rows are one multi-row ``INSERT`` (a statement per size)."""

_APPEND_MANY = {
    n: f"INSERT INTO events ({EVENT_COLUMNS}) VALUES "
    + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * n)
    for n in range(2, MULTI_ROWS + 1)
}


def insert(db: sqlite3.Connection, rows: list[EncodedEvent]) -> int:
    """Insert an append's rows, in order; the last one's position.

    A turn's append (a dozen rows) is one multi-row ``INSERT``: one statement where
    ``executemany`` and a last ``execute`` (``executemany`` does not tell the last
    position) would be two. A longer append takes those two.
    """
    count = len(rows)
    if 1 < count <= MULTI_ROWS:
        return db.execute(_APPEND_MANY[count], tuple(chain.from_iterable(rows))).lastrowid or 0
    if count > 1:
        db.executemany(APPEND, rows[:-1])
    return db.execute(APPEND, rows[-1]).lastrowid or 0


def put_blobs(db: sqlite3.Connection, blobs: dict[str, bytes]) -> None:
    """Store the append's moved-out strings (each content hash once)."""
    if blobs:
        db.executemany(
            "INSERT OR IGNORE INTO blobs (hash, size, data) VALUES (?, ?, ?)",
            [(h, len(d), d) for h, d in blobs.items()],
        )
