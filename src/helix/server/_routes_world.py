"""The run's world over HTTP: list and read files at any turn, diff, roll back.

Thin adapters over ``LocalApi`` (``_api.py``), exactly as ``helix files|diff|rollback``:
the caller's rights are checked here, the world package answers and the runtime acts.
Points are ``start``, ``now`` or a turn number, as on the command line.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from helix.accounts import AccountNotFoundError
from helix.api import FileList, Rollback, RollbackBody, WorldList
from helix.world import parse_point

from ._api import local_api
from ._deps import CallerDep, State

router = APIRouter(tags=["world"])

PointQuery = Annotated[
    str | None, Query(max_length=20, description="start, now (the default) or a turn number")
]


@router.get("/runs/{run_id}/files", response_model=FileList)
async def list_files(
    run_id: str,
    caller: CallerDep,
    state: State,
    path: Annotated[str | None, Query(max_length=4096)] = None,
    turn: PointQuery = None,
) -> FileList:
    """The world's paths at or under ``path``, now or as they were at a turn."""
    run_id = (await caller.run(state.store, run_id)).id
    api = local_api(state, caller)
    return FileList(files=await api.files(run_id, path, turn=parse_point(turn)))


@router.get(
    "/runs/{run_id}/files/{path:path}",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}}},
)
async def read_file(
    run_id: str, path: str, caller: CallerDep, state: State, turn: PointQuery = None
) -> Response:
    """A file's content, now or as it was at a turn (bytes, as stored)."""
    run_id = (await caller.run(state.store, run_id)).id
    content = await local_api(state, caller).read(run_id, path, turn=parse_point(turn))
    return Response(content, media_type="application/octet-stream")


@router.get(
    "/runs/{run_id}/diff",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
)
async def diff(
    run_id: str,
    caller: CallerDep,
    state: State,
    start: Annotated[str, Query(alias="from", max_length=20)] = "start",
    end: Annotated[str, Query(alias="to", max_length=20)] = "now",
    path: Annotated[str | None, Query(max_length=4096)] = None,
) -> Response:
    """A unified diff of the world between two points (binary files as sizes)."""
    run_id = (await caller.run(state.store, run_id)).id
    api = local_api(state, caller)
    text = await api.diff(run_id, start=parse_point(start), end=parse_point(end), path=path)
    return Response(text, media_type="text/plain; charset=utf-8")


@router.post("/runs/{run_id}/rollback", response_model=Rollback)
async def rollback(run_id: str, body: RollbackBody, caller: CallerDep, state: State) -> Rollback:
    """Restore the world to the start or a turn's end; 409 while the run runs."""
    run_id = (await caller.run(state.store, run_id, act="roll back runs")).id
    to = parse_point(body.to, "start")
    return await local_api(state, caller).rollback(run_id, to=to)


@router.get("/workspaces/{workspace}/worlds", response_model=WorldList, tags=["workspaces"])
async def list_worlds(workspace: str, caller: CallerDep, state: State) -> WorldList:
    """The folders of the workspace's worlds: what ``POST /runs``'s ``world`` may name."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    return WorldList(worlds=await local_api(state, caller).world_names(workspace))
