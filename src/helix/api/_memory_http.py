"""``HttpApi``'s memory operations: ``/api/v1/workspaces/{w}/memory`` and ``/artifacts``."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ._memory_door import MemoryImported

if TYPE_CHECKING:
    import httpx

    from helix.memory import Artifact, AuditEntry, Memory


def _params(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class HttpMemory:
    """``HttpApi``'s memory operations (a mixin over its ``_json`` and ``_send``)."""

    if TYPE_CHECKING:

        async def _json(self, method: str, path: str, **kwargs: Any) -> Any: ...

        async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response: ...

    memory_workspace: str | None = None
    """The workspace used when a call names none (default: the caller's own)."""

    async def _base(self, workspace: str | None) -> str:
        chosen = workspace or self.memory_workspace
        if chosen is None:  # the caller's own workspace, else the first they belong to
            me = await self._json("GET", "/me")
            roles: dict[str, str] = me.get("workspaces") or {}
            own = me.get("user") if roles.get(me.get("user")) == "owner" else None
            chosen = own or (sorted(roles)[0] if roles else None)
            if chosen is None:
                from helix.errors import NotFoundError

                raise NotFoundError("you belong to no workspace")
        return f"/workspaces/{quote(chosen, safe='')}"

    async def memories(
        self,
        *,
        scope: str | None = None,
        query: str | None = None,
        limit: int = 50,
        workspace: str | None = None,
    ) -> builtins.list[Memory]:
        """Memories (``GET …/memory``)."""
        from helix.memory import Memory

        params = _params(scope=scope, q=query, limit=limit)
        raw = await self._json("GET", f"{await self._base(workspace)}/memory", params=params)
        return [Memory.model_validate(item) for item in raw["memories"]]

    async def memory(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """One memory (``GET …/memory/ID``)."""
        from helix.memory import Memory

        path = f"{await self._base(workspace)}/memory/{quote(memory_id, safe='')}"
        return Memory.model_validate(await self._json("GET", path))

    async def remember(
        self,
        text: str,
        *,
        scope: str = "personal",
        tags: builtins.list[str] | None = None,
        key: str | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Store a memory (``POST …/memory``)."""
        from helix.memory import Memory

        body = {"text": text, "scope": scope, "tags": tags or [], "key": key}
        raw = await self._json("POST", f"{await self._base(workspace)}/memory", json=body)
        return Memory.model_validate(raw)

    async def update_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: builtins.list[str] | None = None,
        workspace: str | None = None,
    ) -> Memory:
        """Edit a memory (``PATCH …/memory/ID``)."""
        from helix.memory import Memory

        path = f"{await self._base(workspace)}/memory/{quote(memory_id, safe='')}"
        raw = await self._json("PATCH", path, json=_params(text=text, tags=tags))
        return Memory.model_validate(raw)

    async def forget(self, memory_id: str, *, workspace: str | None = None) -> Memory:
        """Delete a memory (``DELETE …/memory/ID``)."""
        from helix.memory import Memory

        path = f"{await self._base(workspace)}/memory/{quote(memory_id, safe='')}"
        return Memory.model_validate(await self._json("DELETE", path))

    async def artifacts(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[Artifact]:
        """Artifacts (``GET …/artifacts``)."""
        from helix.memory import Artifact

        path = f"{await self._base(workspace)}/artifacts"
        raw = await self._json("GET", path, params=_params(scope=scope))
        return [Artifact.model_validate(item) for item in raw["artifacts"]]

    async def artifact(
        self,
        name: str,
        *,
        scope: str | None = None,
        version: int | None = None,
        workspace: str | None = None,
    ) -> tuple[Artifact, bytes]:
        """An artifact's bytes (``GET …/artifacts/NAME``, its headers the metadata)."""
        from helix.memory import Artifact

        path = f"{await self._base(workspace)}/artifacts/{quote(name, safe='')}"
        answer = await self._send("GET", path, params=_params(scope=scope, version=version))
        h = answer.headers
        artifact = Artifact(
            scope=h["x-helix-scope"],
            owner=h["x-helix-owner"],
            name=name,
            version=int(h["x-helix-version"]),
            media_type=h["x-helix-media-type"],
            size=len(answer.content),
            sha256=h["x-helix-sha256"],
            by=h["x-helix-by"],
            at=h["x-helix-at"],
        )
        return artifact, answer.content

    async def save_artifact(
        self,
        name: str,
        content: bytes,
        *,
        scope: str = "personal",
        media_type: str | None = None,
        workspace: str | None = None,
    ) -> Artifact:
        """Store a version (``PUT …/artifacts/NAME``, the bytes as the body)."""
        from helix.memory import Artifact

        path = f"{await self._base(workspace)}/artifacts/{quote(name, safe='')}"
        params = _params(scope=scope, media_type=media_type)
        headers = {"Content-Type": "application/octet-stream"}
        raw = await self._json("PUT", path, params=params, content=content, headers=headers)
        return Artifact.model_validate(raw)

    async def delete_artifact(
        self, name: str, *, scope: str = "personal", workspace: str | None = None
    ) -> int:
        """Delete an artifact (``DELETE …/artifacts/NAME``)."""
        path = f"{await self._base(workspace)}/artifacts/{quote(name, safe='')}"
        return int((await self._json("DELETE", path, params={"scope": scope}))["deleted"])

    async def export_memory(self, *, personal: bool = False, workspace: str | None = None) -> str:
        """JSON Lines (``GET …/memory/export``)."""
        path = f"{await self._base(workspace)}/memory/export"
        answer = await self._send("GET", path, params={"personal": str(personal).lower()})
        return answer.text

    async def import_memory(
        self, data: bytes | str, *, workspace: str | None = None
    ) -> MemoryImported:
        """Store an export (``POST …/memory/import``, the lines as the body)."""
        body = data.encode("utf-8") if isinstance(data, str) else data
        path = f"{await self._base(workspace)}/memory/import"
        headers = {"Content-Type": "application/x-ndjson"}
        raw = await self._json("POST", path, content=body, headers=headers)
        return MemoryImported.model_validate(raw)

    async def memory_audit(
        self, *, scope: str | None = None, workspace: str | None = None
    ) -> builtins.list[AuditEntry]:
        """The door's changes (``GET …/memory/audit``)."""
        from helix.memory import AuditEntry

        path = f"{await self._base(workspace)}/memory/audit"
        raw = await self._json("GET", path, params=_params(scope=scope))
        return [AuditEntry.model_validate(item) for item in raw["entries"]]
