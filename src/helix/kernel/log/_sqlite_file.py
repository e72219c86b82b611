"""An SQLite store's file: opened with Helix's settings, migrated, written in transactions.

``connect`` opens (WAL, a busy timeout, the durability asked for) and brings the schema
up to date, derived tables included; ``transaction`` takes the write lock up front;
``damage`` tells a damaged file from a busy one.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from helix.errors import AppendOnlyError, StoreUnavailableError

from ._derived_sql import SQLITE_DERIVED
from ._records import Durability
from ._sqlite_schema import MIGRATIONS


def damage(error: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file itself is damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "malformed" in str(error) or "not a database" in str(error)
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def connect(path: Path, durability: Durability) -> sqlite3.Connection:
    if durability not in ("normal", "full"):
        raise StoreUnavailableError(f"unknown durability {durability!r}: use 'normal' or 'full'")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {durability.upper()}")
        db.execute("PRAGMA foreign_keys = ON")
        _migrate(db)
    except (OSError, sqlite3.Error) as error:
        raise StoreUnavailableError(f"cannot open the SQLite store at {path}: {error}") from None
    return db


def _migrate(db: sqlite3.Connection) -> None:
    with transaction(db):
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreUnavailableError(
                f"the store's schema (version {version}) is newer than this Helix understands"
                f" ({len(MIGRATIONS)}): upgrade Helix"
            )
        for target in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[target]):
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        for statement in _statements(SQLITE_DERIVED):
            db.execute(statement)


def _statements(script: str) -> list[str]:
    """Split a migration script into statements, keeping trigger bodies whole."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Any:
    """Run the block in ``BEGIN IMMEDIATE`` … ``COMMIT``.

    Taking the write lock up front makes the seq check and the insert see the same
    state, even with other processes writing.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except sqlite3.IntegrityError as error:
        db.execute("ROLLBACK")
        if "append-only" in str(error) or "immutable" in str(error):
            raise AppendOnlyError(str(error)) from None
        raise
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
