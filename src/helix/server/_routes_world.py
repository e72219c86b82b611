"""The run's world over HTTP: list and read files at any turn, diff, roll back.

Thin on purpose: the world package answers (``WorldBrowser``) and the runtime acts
(``rollback``), exactly as for ``helix files|diff|rollback``. Points are ``start``,
``now`` or a turn number, as on the command line.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from helix.api import FileEntry as FileOut
from helix.api import FileList, RollbackBody
from helix.api import Rollback as RollbackOut
from helix.runtime import rollback as rollback_world
from helix.world import WorldBrowser, parse_point

from ._deps import CallerDep, State
from ._state import ServerState

router = APIRouter(tags=["world"])

PointQuery = Annotated[
    str | None, Query(max_length=20, description="start, now (the default) or a turn number")
]


def _browser(state: ServerState) -> WorldBrowser:
    return WorldBrowser(state.store, state.engine.objects)


@router.get("/runs/{run_id}/files", response_model=FileList)
async def list_files(
    run_id: str,
    caller: CallerDep,
    state: State,
    path: Annotated[str | None, Query(max_length=4096)] = None,
    turn: PointQuery = None,
) -> FileList:
    """The world's paths at or under ``path``, now or as they were at a turn."""
    await caller.run(state.store, run_id)
    browser = _browser(state)
    listing = await browser.files(run_id, path, parse_point(turn))
    return FileList(
        files=[
            FileOut(path=f.path, kind=f.kind, size=f.size, mode=f"{f.mode:o}", hash=f.hash)
            for f in listing
        ]
    )


@router.get(
    "/runs/{run_id}/files/{path:path}",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}}},
)
async def read_file(
    run_id: str, path: str, caller: CallerDep, state: State, turn: PointQuery = None
) -> Response:
    """A file's content, now or as it was at a turn (bytes, as stored)."""
    await caller.run(state.store, run_id)
    browser = _browser(state)
    content = await browser.read(run_id, path, parse_point(turn))
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
    await caller.run(state.store, run_id)
    browser = _browser(state)
    text = await browser.diff(run_id, parse_point(start), parse_point(end), path)
    return Response(text, media_type="text/plain; charset=utf-8")


@router.post("/runs/{run_id}/rollback", response_model=RollbackOut)
async def rollback(run_id: str, body: RollbackBody, caller: CallerDep, state: State) -> RollbackOut:
    """Restore the world to the start or a turn's end; 409 while the run runs."""
    await caller.run(state.store, run_id, act="roll back runs")
    marker = await rollback_world(
        state.engine, run_id, parse_point(body.to, "start"), by=caller.actor
    )
    data = marker.model_dump(mode="json")
    return RollbackOut.model_validate(data)
