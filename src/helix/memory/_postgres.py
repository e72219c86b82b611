"""Memory in PostgreSQL: the database the events live in, tables of their own.

Recall is PostgreSQL's full text search: ``to_tsvector('english', text || tags)``
(a GIN index on it) against ``websearch_to_tsquery`` of the query's words, each quoted
(``"word"``), so no user text is an operator (``or``, ``-``, quotes); ``ts_rank``
ranks the matches.
"""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import override

from helix.errors import StoreUnavailableError

from ._model import Artifact, AuditEntry, Memory, Scope
from ._sqlite import _ART, _ITEM, SCHEMA, artifact_row, memory_row
from ._store import MemoryStore, Owners

_VECTOR = "to_tsvector('english', text || ' ' || replace(replace(tags, '\"', ' '), ',', ' '))"
INDEX = (
    "CREATE INDEX IF NOT EXISTS memory_items_fts ON memory_items USING gin"
    f" (({_VECTOR}));"
    "ALTER TABLE memory_audit ADD COLUMN IF NOT EXISTS n BIGSERIAL;"
)
_PG_SCHEMA = SCHEMA.replace("content BLOB", "content BYTEA")


def _owners(owners: Owners, first: int) -> tuple[str, list[str]]:
    if not owners:
        return "false", []
    parts = []
    args: list[str] = []
    for scope, owner in owners:
        n = first + len(args)
        parts.append(f"(scope = ${n} AND owner = ${n + 1})")
        args += [scope, owner]
    return "(" + " OR ".join(parts) + ")", args


def _query(words: list[str]) -> str:
    return " ".join('"' + word.replace('"', " ") + '"' for word in words)


class PostgresMemoryStore(MemoryStore):
    """Memory in PostgreSQL, through a small asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str) -> PostgresMemoryStore:
        """Connect and create the tables if they are missing."""
        import asyncpg

        try:
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise StoreUnavailableError(f"cannot reach PostgreSQL for memory: {error}") from None
        async with pool.acquire() as conn:
            await conn.execute("SELECT pg_advisory_lock(7240719)")
            try:
                await conn.execute(_PG_SCHEMA + INDEX)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(7240719)")
        return cls(pool)

    @override
    async def put(self, memory: Memory) -> tuple[Memory, bool]:
        async with self._pool.acquire() as conn, conn.transaction():
            return await _put(conn, memory)

    @override
    async def load(self, memories: list[Memory], artifacts: list[tuple[Artifact, bytes]]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            for memory in memories:
                await _put(conn, memory)
            for artifact, content in artifacts:
                await _add_artifact(conn, artifact, content)

    @override
    async def update(
        self, memory_id: str, *, text: str, tags: list[str], by: str, at: str
    ) -> Memory | None:
        row = await self._pool.fetchrow(
            "UPDATE memory_items SET text = $1, tags = $2, by_actor = $3, updated_at = $4"
            f" WHERE id = $5 RETURNING {_ITEM}",
            text,
            json.dumps(tags),
            by,
            at,
            memory_id,
        )
        return None if row is None else memory_row(row)

    @override
    async def get(self, memory_id: str) -> Memory | None:
        row = await self._pool.fetchrow(
            f"SELECT {_ITEM} FROM memory_items WHERE id = $1", memory_id
        )
        return None if row is None else memory_row(row)

    @override
    async def delete(self, memory_id: str) -> bool:
        done = await self._pool.execute("DELETE FROM memory_items WHERE id = $1", memory_id)
        return bool(done != "DELETE 0")

    @override
    async def search(self, owners: Owners, words: list[str], limit: int) -> list[Memory]:
        if not words:
            where, args = _owners(owners, 1)
            rows = await self._pool.fetch(
                f"SELECT {_ITEM} FROM memory_items WHERE {where}"
                f" ORDER BY updated_at DESC, id LIMIT ${len(args) + 1}",
                *args,
                limit,
            )
            return [memory_row(row) for row in rows]
        where, args = _owners(owners, 2)
        rows = await self._pool.fetch(
            f"SELECT {_ITEM}, ts_rank({_VECTOR}, q) AS score"
            " FROM memory_items, websearch_to_tsquery('english', $1) AS q"
            f" WHERE {_VECTOR} @@ q AND {where}"
            f" ORDER BY score DESC, updated_at DESC LIMIT ${len(args) + 2}",
            _query(words),
            *args,
            limit,
        )
        return [memory_row(row, rank=float(row[9])) for row in rows]

    @override
    async def add_artifact(self, artifact: Artifact, content: bytes) -> Artifact:
        async with self._pool.acquire() as conn, conn.transaction():
            return await _add_artifact(conn, artifact, content)

    @override
    async def artifact(
        self, scope: Scope, owner: str, name: str, version: int | None = None
    ) -> tuple[Artifact, bytes] | None:
        where = "scope = $1 AND owner = $2 AND name = $3"
        if version is None:
            row = await self._pool.fetchrow(
                f"SELECT {_ART}, content FROM memory_artifacts WHERE {where}"
                " ORDER BY version DESC LIMIT 1",
                scope,
                owner,
                name,
            )
        else:
            row = await self._pool.fetchrow(
                f"SELECT {_ART}, content FROM memory_artifacts WHERE {where} AND version = $4",
                scope,
                owner,
                name,
                version,
            )
        return None if row is None else (artifact_row(row), bytes(row[9]))

    @override
    async def artifacts(self, owners: Owners) -> list[Artifact]:
        where, args = _owners(owners, 1)
        rows = await self._pool.fetch(
            f"SELECT DISTINCT ON (scope, owner, name) {_ART} FROM memory_artifacts"
            f" WHERE {where} ORDER BY scope, owner, name, version DESC",
            *args,
        )
        return [artifact_row(row) for row in rows]

    @override
    async def delete_artifact(self, scope: Scope, owner: str, name: str) -> int:
        done = await self._pool.execute(
            "DELETE FROM memory_artifacts WHERE scope = $1 AND owner = $2 AND name = $3",
            scope,
            owner,
            name,
        )
        return int(str(done).split()[-1])

    @override
    async def audit(self, entry: AuditEntry) -> None:
        e = entry
        await self._pool.execute(
            "INSERT INTO memory_audit (at, by_actor, action, scope, owner, target)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            e.at,
            e.by,
            e.action,
            e.scope,
            e.owner,
            e.target,
        )

    @override
    async def audit_trail(self, owners: Owners, limit: int = 100) -> list[AuditEntry]:
        where, args = _owners(owners, 1)
        rows = await self._pool.fetch(
            "SELECT at, by_actor, action, scope, owner, target FROM memory_audit"
            f" WHERE {where} ORDER BY n DESC LIMIT ${len(args) + 1}",
            *args,
            limit,
        )
        return [
            AuditEntry(at=r[0], by=r[1], action=r[2], scope=r[3], owner=r[4], target=r[5])
            for r in rows
        ]

    @override
    async def close(self) -> None:
        await self._pool.close()


async def _put(conn: Any, memory: Memory) -> tuple[Memory, bool]:
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))", f"{memory.scope}/{memory.owner}"
    )
    old = None
    if memory.key is not None:
        old = await conn.fetchrow(
            f"SELECT {_ITEM} FROM memory_items WHERE scope = $1 AND owner = $2 AND mkey = $3",
            memory.scope,
            memory.owner,
            memory.key,
        )
    if old is not None:
        memory = memory.model_copy(update={"id": old[0], "created_at": old[7]})
        await conn.execute("DELETE FROM memory_items WHERE id = $1", old[0])
    m = memory
    await conn.execute(
        f"INSERT INTO memory_items ({_ITEM}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        m.id,
        m.scope,
        m.owner,
        m.key,
        m.text,
        json.dumps(m.tags),
        m.by,
        m.created_at,
        m.updated_at,
    )
    return memory, old is not None


async def _add_artifact(conn: Any, artifact: Artifact, content: bytes) -> Artifact:
    a = artifact
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))", f"{a.scope}/{a.owner}/{a.name}"
    )
    latest = await conn.fetchval(
        "SELECT coalesce(max(version), 0) FROM memory_artifacts"
        " WHERE scope = $1 AND owner = $2 AND name = $3",
        a.scope,
        a.owner,
        a.name,
    )
    a = a.model_copy(update={"version": int(latest) + 1})
    await conn.execute(
        f"INSERT INTO memory_artifacts ({_ART}, content)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
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
    )
    return a
