"""Memory in SQLite: the file the events live in, tables of their own, FTS5 for recall.

A search's words are each quoted as an FTS5 string (``"word"``, a quote doubled), so
no user text is ever FTS5 syntax; ``bm25`` ranks the matches.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import Artifact, AuditEntry, Memory, Scope
from ._store import MemoryStore, Owners

SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_items (
    id TEXT PRIMARY KEY, scope TEXT NOT NULL, owner TEXT NOT NULL, mkey TEXT,
    text TEXT NOT NULL, tags TEXT NOT NULL, by_actor TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS memory_items_key ON memory_items (scope, owner, mkey)
    WHERE mkey IS NOT NULL;
CREATE INDEX IF NOT EXISTS memory_items_owner ON memory_items (scope, owner, updated_at);
CREATE TABLE IF NOT EXISTS memory_artifacts (
    scope TEXT NOT NULL, owner TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
    media_type TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
    by_actor TEXT NOT NULL, at TEXT NOT NULL, content BLOB NOT NULL,
    PRIMARY KEY (scope, owner, name, version));
CREATE TABLE IF NOT EXISTS memory_audit (
    at TEXT NOT NULL, by_actor TEXT NOT NULL, action TEXT NOT NULL, scope TEXT NOT NULL,
    owner TEXT NOT NULL, target TEXT NOT NULL);
"""
FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    id UNINDEXED, text, tags, tokenize = 'porter unicode61');
"""
T = TypeVar("T")
_ITEM = "id, scope, owner, mkey, text, tags, by_actor, created_at, updated_at"
_ART = "scope, owner, name, version, media_type, size, sha256, by_actor, at"


def memory_row(row: Any, rank: float | None = None) -> Memory:
    """A ``Memory`` from a row of ``_ITEM`` columns (both backends)."""
    return Memory(
        id=row[0],
        scope=row[1],
        owner=row[2],
        key=row[3],
        text=row[4],
        tags=json.loads(row[5]),
        by=row[6],
        created_at=row[7],
        updated_at=row[8],
        rank=rank,
    )


def artifact_row(row: Any) -> Artifact:
    """An ``Artifact`` from a row of ``_ART`` columns (both backends)."""
    return Artifact(
        scope=row[0],
        owner=row[1],
        name=row[2],
        version=int(row[3]),
        media_type=row[4],
        size=int(row[5]),
        sha256=row[6],
        by=row[7],
        at=row[8],
    )


def _quoted(words: list[str]) -> str:
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def _owners(owners: Owners, alias: str = "") -> tuple[str, list[str]]:
    if not owners:
        return "0", []
    clause = " OR ".join(f"({alias}scope = ? AND {alias}owner = ?)" for _ in owners)
    return f"({clause})", [part for pair in owners for part in pair]


class SqliteMemoryStore(MemoryStore):
    """Memory in a SQLite file (WAL, shared with the event store)."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA + FTS)
        except (OSError, sqlite3.Error) as error:
            raise StoreUnavailableError(f"cannot open the memory store {path}: {error}") from None

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql, args in statements:
                db.execute(sql, args)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @override
    async def put(self, memory: Memory) -> tuple[Memory, bool]:
        return self._in_transaction(lambda: self._put(memory))

    def _in_transaction(self, work: Callable[[], T]) -> T:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            done = work()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return done

    def _put(self, memory: Memory) -> tuple[Memory, bool]:
        db = self._db
        old = None
        if memory.key is not None:
            old = db.execute(
                f"SELECT {_ITEM} FROM memory_items WHERE scope = ? AND owner = ? AND mkey = ?",
                (memory.scope, memory.owner, memory.key),
            ).fetchone()
        if old is not None:
            memory = memory.model_copy(update={"id": old[0], "created_at": old[7]})
            db.execute("DELETE FROM memory_items WHERE id = ?", (old[0],))
            db.execute("DELETE FROM memory_fts WHERE id = ?", (old[0],))
        m = memory
        db.execute(
            f"INSERT INTO memory_items ({_ITEM}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                m.id,
                m.scope,
                m.owner,
                m.key,
                m.text,
                json.dumps(m.tags),
                m.by,
                m.created_at,
                m.updated_at,
            ),
        )
        db.execute(
            "INSERT INTO memory_fts (id, text, tags) VALUES (?, ?, ?)",
            (m.id, m.text, " ".join(m.tags)),
        )
        return memory, old is not None

    @override
    async def load(self, memories: list[Memory], artifacts: list[tuple[Artifact, bytes]]) -> None:
        def work() -> None:
            for memory in memories:
                self._put(memory)
            for artifact, content in artifacts:
                self._add_artifact(artifact, content)

        self._in_transaction(work)

    @override
    async def update(
        self, memory_id: str, *, text: str, tags: list[str], by: str, at: str
    ) -> Memory | None:
        if await self.get(memory_id) is None:
            return None
        self._write(
            [
                (
                    "UPDATE memory_items SET text = ?, tags = ?, by_actor = ?, updated_at = ?"
                    " WHERE id = ?",
                    (text, json.dumps(tags), by, at, memory_id),
                ),
                ("DELETE FROM memory_fts WHERE id = ?", (memory_id,)),
                (
                    "INSERT INTO memory_fts (id, text, tags) VALUES (?, ?, ?)",
                    (memory_id, text, " ".join(tags)),
                ),
            ]
        )
        return await self.get(memory_id)

    @override
    async def get(self, memory_id: str) -> Memory | None:
        row = self._db.execute(
            f"SELECT {_ITEM} FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else memory_row(row)

    @override
    async def delete(self, memory_id: str) -> bool:
        found = await self.get(memory_id) is not None
        self._write(
            [
                ("DELETE FROM memory_items WHERE id = ?", (memory_id,)),
                ("DELETE FROM memory_fts WHERE id = ?", (memory_id,)),
            ]
        )
        return found

    @override
    async def search(self, owners: Owners, words: list[str], limit: int) -> list[Memory]:
        where, args = _owners(owners, "m.")
        if not words:
            rows = self._db.execute(
                f"SELECT {_ITEM} FROM memory_items m WHERE {where}"
                " ORDER BY updated_at DESC, id LIMIT ?",
                (*args, limit),
            ).fetchall()
            return [memory_row(row) for row in rows]
        columns = ", ".join(f"m.{c.strip()}" for c in _ITEM.split(","))
        rows = self._db.execute(
            f"SELECT {columns}, bm25(memory_fts) AS score FROM memory_fts"
            f" JOIN memory_items m ON m.id = memory_fts.id"
            f" WHERE memory_fts MATCH ? AND {where} ORDER BY score, m.updated_at DESC LIMIT ?",
            (_quoted(words), *args, limit),
        ).fetchall()
        return [memory_row(row, rank=-float(row[9])) for row in rows]

    @override
    async def add_artifact(self, artifact: Artifact, content: bytes) -> Artifact:
        return self._in_transaction(lambda: self._add_artifact(artifact, content))

    def _add_artifact(self, artifact: Artifact, content: bytes) -> Artifact:
        db = self._db
        row = db.execute(
            "SELECT max(version) FROM memory_artifacts WHERE scope = ? AND owner = ? AND name = ?",
            (artifact.scope, artifact.owner, artifact.name),
        ).fetchone()
        a = artifact.model_copy(update={"version": int(row[0] or 0) + 1})
        db.execute(
            f"INSERT INTO memory_artifacts ({_ART}, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                a.scope,
                a.owner,
                a.name,
                a.version,
                a.media_type,
                a.size,
                a.sha256,
                a.by,
                a.at,
                content,
            ),
        )
        return a

    @override
    async def artifact(
        self, scope: Scope, owner: str, name: str, version: int | None = None
    ) -> tuple[Artifact, bytes] | None:
        where = "scope = ? AND owner = ? AND name = ?"
        if version is None:
            row = self._db.execute(
                f"SELECT {_ART}, content FROM memory_artifacts WHERE {where}"
                " ORDER BY version DESC LIMIT 1",
                (scope, owner, name),
            ).fetchone()
        else:
            row = self._db.execute(
                f"SELECT {_ART}, content FROM memory_artifacts WHERE {where} AND version = ?",
                (scope, owner, name, version),
            ).fetchone()
        return None if row is None else (artifact_row(row), bytes(row[9]))

    @override
    async def artifacts(self, owners: Owners) -> list[Artifact]:
        where, args = _owners(owners, "a.")
        rows = self._db.execute(
            f"SELECT {_ART} FROM memory_artifacts a WHERE {where} AND version ="
            " (SELECT max(version) FROM memory_artifacts b WHERE b.scope = a.scope"
            "  AND b.owner = a.owner AND b.name = a.name) ORDER BY scope, owner, name",
            args,
        ).fetchall()
        return [artifact_row(row) for row in rows]

    @override
    async def delete_artifact(self, scope: Scope, owner: str, name: str) -> int:
        cursor = self._db.execute(
            "DELETE FROM memory_artifacts WHERE scope = ? AND owner = ? AND name = ?",
            (scope, owner, name),
        )
        return int(cursor.rowcount)

    @override
    async def audit(self, entry: AuditEntry) -> None:
        e = entry
        self._db.execute(
            "INSERT INTO memory_audit VALUES (?, ?, ?, ?, ?, ?)",
            (e.at, e.by, e.action, e.scope, e.owner, e.target),
        )

    @override
    async def audit_trail(self, owners: Owners, limit: int = 100) -> list[AuditEntry]:
        where, args = _owners(owners)
        rows = self._db.execute(
            "SELECT at, by_actor, action, scope, owner, target FROM memory_audit"
            f" WHERE {where} ORDER BY rowid DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [
            AuditEntry(at=r[0], by=r[1], action=r[2], scope=r[3], owner=r[4], target=r[5])
            for r in rows
        ]

    @override
    async def close(self) -> None:
        self._db.close()
