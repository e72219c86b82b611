"""Memory and artifacts: ``/workspaces/{w}/memory`` and ``/workspaces/{w}/artifacts``.

Thin adapters over ``LocalApi``'s memory operations (``helix.api.MemoryOperations``):
a workspace the caller is not a member of is a 404 here; who may read or write which
scope is ``helix.memory``'s (a viewer's write: 403 ``memory_denied``; another person's
memory: 404 ``memory_not_found``; bad input: 422 ``invalid_memory``). An artifact is
downloaded as an attachment, never rendered: ``Content-Disposition: attachment``,
``X-Content-Type-Options: nosniff``, a sandboxing ``Content-Security-Policy``, and a
``Content-Type`` that is the stored one only for inert types (else
``application/octet-stream``).
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from helix.api import MemoryImported
from helix.memory import MAX_ARTIFACT_BYTES, MAX_QUERY, MAX_TEXT, Artifact, AuditEntry, Memory

from ._api import local_api
from ._auth import Caller
from ._deps import CallerDep, State
from ._errors import ApiError

router = APIRouter(tags=["memory"])

_WORKSPACE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
WorkspaceName = Annotated[str, Path(pattern=f"^{_WORKSPACE}$")]
MemoryId = Annotated[str, Path(pattern=r"^mem_[0-9a-f]{16}$")]
ArtifactName = Annotated[str, Path(min_length=1, max_length=200)]
ScopeArg = Literal["personal", "workspace"]

INERT_TYPES = frozenset(
    {
        "text/plain",
        "text/markdown",
        "text/csv",
        "application/json",
        "application/pdf",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    }
)
"""Types a browser shows without running anything: served as stored; others as bytes."""


def body_limits(api: str, import_bytes: int) -> list[tuple[str, int]]:
    """The request body limits of these routes (``BodyLimit``'s patterns)."""
    base = f"{api}/workspaces/{_WORKSPACE}"
    return [
        (f"{base}/artifacts/[^/]+", MAX_ARTIFACT_BYTES + 1024),
        (f"{base}/memory/import", import_bytes),
    ]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryList(BaseModel):
    """Memories, newest first (or best first, for a search)."""

    memories: list[Memory]


class ArtifactList(BaseModel):
    """The latest version of each artifact."""

    artifacts: list[Artifact]


class AuditList(BaseModel):
    """Changes people made through the door, newest first."""

    entries: list[AuditEntry]


class Deleted(BaseModel):
    """How many artifact versions were deleted."""

    deleted: int


class RememberBody(_Body):
    """``POST …/memory``."""

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    scope: ScopeArg = "personal"
    tags: list[str] = Field(default_factory=list, max_length=16)
    key: str | None = Field(default=None, max_length=200)


class UpdateBody(_Body):
    """``PATCH …/memory/ID``: the new text and/or tags."""

    text: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT)
    tags: list[str] | None = Field(default=None, max_length=16)


def _member(caller: Caller, workspace: str) -> str:
    if workspace not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {workspace!r}")
    return workspace


@router.get("/workspaces/{workspace}/memory", response_model=MemoryList)
async def list_memory(
    workspace: WorkspaceName,
    caller: CallerDep,
    state: State,
    scope: ScopeArg | None = None,
    q: Annotated[str | None, Query(max_length=MAX_QUERY)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> MemoryList:
    """Memories the caller may read; with ``q``, those holding every word, best first."""
    where = _member(caller, workspace)
    found = await local_api(state, caller).memories(
        scope=scope, query=q, limit=limit, workspace=where
    )
    return MemoryList(memories=found)


@router.post("/workspaces/{workspace}/memory", response_model=Memory, status_code=201)
async def remember(
    workspace: WorkspaceName, body: RememberBody, caller: CallerDep, state: State
) -> Memory:
    """Store a memory (one with the same ``key`` in the scope is replaced)."""
    where = _member(caller, workspace)
    return await local_api(state, caller).remember(
        body.text, scope=body.scope, tags=body.tags, key=body.key, workspace=where
    )


@router.get("/workspaces/{workspace}/memory/export")
async def export_memory(
    workspace: WorkspaceName, caller: CallerDep, state: State, personal: bool = False
) -> Response:
    """The workspace's memory and artifacts as JSON Lines (the caller's own too, if asked)."""
    where = _member(caller, workspace)
    text = await local_api(state, caller).export_memory(personal=personal, workspace=where)
    filename = f"memory-{where}.jsonl"
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(text, media_type="application/x-ndjson", headers=headers)


@router.post("/workspaces/{workspace}/memory/import", response_model=MemoryImported)
async def import_memory(
    workspace: WorkspaceName, request: Request, caller: CallerDep, state: State
) -> MemoryImported:
    """Store an export's entries (the body: its lines): all of them, or none."""
    where = _member(caller, workspace)
    raw = await request.body()
    return await local_api(state, caller).import_memory(raw, workspace=where)


@router.get("/workspaces/{workspace}/memory/audit", response_model=AuditList)
async def memory_audit(
    workspace: WorkspaceName, caller: CallerDep, state: State, scope: ScopeArg | None = None
) -> AuditList:
    """The latest changes people made to memory through the door."""
    where = _member(caller, workspace)
    entries = await local_api(state, caller).memory_audit(scope=scope, workspace=where)
    return AuditList(entries=entries)


@router.get("/workspaces/{workspace}/memory/{memory_id}", response_model=Memory)
async def get_memory(
    workspace: WorkspaceName, memory_id: MemoryId, caller: CallerDep, state: State
) -> Memory:
    """One memory."""
    where = _member(caller, workspace)
    return await local_api(state, caller).memory(memory_id, workspace=where)


@router.patch("/workspaces/{workspace}/memory/{memory_id}", response_model=Memory)
async def update_memory(
    workspace: WorkspaceName,
    memory_id: MemoryId,
    body: UpdateBody,
    caller: CallerDep,
    state: State,
) -> Memory:
    """Change a memory's text and/or tags."""
    where = _member(caller, workspace)
    return await local_api(state, caller).update_memory(
        memory_id, text=body.text, tags=body.tags, workspace=where
    )


@router.delete("/workspaces/{workspace}/memory/{memory_id}", response_model=Memory)
async def forget(
    workspace: WorkspaceName, memory_id: MemoryId, caller: CallerDep, state: State
) -> Memory:
    """Delete a memory; the memory it was."""
    where = _member(caller, workspace)
    return await local_api(state, caller).forget(memory_id, workspace=where)


@router.get("/workspaces/{workspace}/artifacts", response_model=ArtifactList)
async def list_artifacts(
    workspace: WorkspaceName, caller: CallerDep, state: State, scope: ScopeArg | None = None
) -> ArtifactList:
    """The latest version of each artifact the caller may read."""
    where = _member(caller, workspace)
    found = await local_api(state, caller).artifacts(scope=scope, workspace=where)
    return ArtifactList(artifacts=found)


@router.get("/workspaces/{workspace}/artifacts/{name}")
async def get_artifact(
    workspace: WorkspaceName,
    name: ArtifactName,
    caller: CallerDep,
    state: State,
    scope: ScopeArg | None = None,
    version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> Response:
    """An artifact's bytes, as an attachment (its metadata in ``X-Helix-*`` headers)."""
    where = _member(caller, workspace)
    artifact, content = await local_api(state, caller).artifact(
        name, scope=scope, version=version, workspace=where
    )
    media = artifact.media_type if artifact.media_type in INERT_TYPES else None
    headers = {
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(artifact.name, safe='')}",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "no-store",
        "X-Helix-Scope": artifact.scope,
        "X-Helix-Owner": artifact.owner,
        "X-Helix-Version": str(artifact.version),
        "X-Helix-Media-Type": artifact.media_type,
        "X-Helix-Sha256": artifact.sha256,
        "X-Helix-By": artifact.by,
        "X-Helix-At": artifact.at,
    }
    return Response(content, media_type=media or "application/octet-stream", headers=headers)


@router.put("/workspaces/{workspace}/artifacts/{name}", response_model=Artifact, status_code=201)
async def save_artifact(
    workspace: WorkspaceName,
    name: ArtifactName,
    request: Request,
    caller: CallerDep,
    state: State,
    scope: ScopeArg = "personal",
    media_type: Annotated[str | None, Query(max_length=130)] = None,
) -> Artifact:
    """Store the body (at most 10 MiB) as the artifact's next version."""
    where = _member(caller, workspace)
    content = await request.body()
    return await local_api(state, caller).save_artifact(
        name, content, scope=scope, media_type=media_type, workspace=where
    )


@router.delete("/workspaces/{workspace}/artifacts/{name}", response_model=Deleted)
async def delete_artifact(
    workspace: WorkspaceName,
    name: ArtifactName,
    caller: CallerDep,
    state: State,
    scope: ScopeArg = "personal",
) -> Deleted:
    """Delete every version of an artifact."""
    where = _member(caller, workspace)
    count = await local_api(state, caller).delete_artifact(name, scope=scope, workspace=where)
    return Deleted(deleted=count)
