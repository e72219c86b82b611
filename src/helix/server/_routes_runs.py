"""Runs: start, list, show, read the log, export and import.

Thin adapters over ``LocalApi`` (``_api.py``): the caller's rights are checked here
(a run of another workspace is 404, a viewer cannot act), the work is the API's. The
one exception is a page of events, joined from the stored JSON (see ``get_events``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from helix.api import CreatedRun, EventPage, Imported, Run, RunCreate, RunList
from helix.kernel.events import RunStatus

from ._api import local_api
from ._deps import CallerDep, State
from ._errors import ApiError

router = APIRouter(tags=["runs"])


@router.post("/runs", response_model=CreatedRun, status_code=201)
async def start_run(body: RunCreate, caller: CallerDep, state: State) -> CreatedRun:
    """Create a run and drive it in the server (it resumes if the server restarts)."""
    workspace = body.workspace or caller.default_workspace()
    if workspace not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {workspace!r}")
    caller.require_act(workspace, "start runs")
    blueprint = body.blueprint
    if body.blueprint_version is not None:
        if not isinstance(blueprint, str) or "@" in blueprint:
            raise ApiError(
                422, "invalid_request", "blueprint_version goes with a stored blueprint's NAME"
            )
        blueprint = f"{blueprint}@{body.blueprint_version}"
    run = await local_api(state, caller).create(
        body.objective,
        blueprint=blueprint,
        model=body.model,
        world=body.world,
        budget_usd=body.budget_usd,
        budget_tokens=body.budget_tokens,
        auto_approve=body.auto_approve,
        attended=body.attended,
        workspace=workspace,
    )
    return CreatedRun(id=run.id, status=run.status)


@router.get("/runs", response_model=RunList)
async def list_runs(
    caller: CallerDep,
    state: State,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Annotated[str | None, Query(max_length=300)] = None,
    workspace: Annotated[str | None, Query(max_length=64)] = None,
) -> RunList:
    """Runs the caller may see, newest first; pass ``next_cursor`` back for the next page.

    Each run says whether a driver holds it now (``driven``: the server drives its own).
    """
    if workspace is not None and workspace not in caller.roles:
        return RunList(runs=[], next_cursor=None)
    api = local_api(state, caller)  # narrowed to the caller's workspaces in the store
    return await api.runs(status=status, workspace=workspace, limit=limit, cursor=cursor)


@router.get("/runs/{run_id}", response_model=Run)
async def get_run(run_id: str, caller: CallerDep, state: State) -> Run:
    """One run: status, model, counters."""
    run_id = (await caller.run(state.store, run_id)).id
    return await local_api(state, caller).get(run_id)


@router.get("/runs/{run_id}/events", response_model=EventPage)
async def get_events(
    run_id: str,
    caller: CallerDep,
    state: State,
    after: Annotated[int, Query(ge=-1)] = -1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Response:
    """Events with seq > ``after``, at most ``limit``; ``next_after`` continues."""
    run_id = (await caller.run(state.store, run_id)).id
    events = await state.store.read(run_id, after=after, limit=limit)
    next_after = events[-1].seq if events else after
    # Events are JSON already: join them rather than build RunEvents and serialise the
    # page (the same fields; the join serves more pages a second, docs/server.md).
    body = '{"events":[' + ",".join(e.to_json() for e in events) + f'],"next_after":{next_after}}}'
    return Response(body, media_type="application/json")


@router.get(
    "/runs/{run_id}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
async def export_run(run_id: str, caller: CallerDep, state: State) -> StreamingResponse:
    """The whole log as JSON Lines (``POST /runs/import`` takes it back)."""
    run_id = (await caller.run(state.store, run_id)).id
    exported = local_api(state, caller).export(run_id)

    async def lines() -> AsyncIterator[bytes]:
        async for line in exported:
            yield (line + "\n").encode()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.post(
    "/runs/import",
    response_model=Imported,
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "text/plain": {"schema": {"type": "string"}},
            },
        }
    },
)
async def import_run(
    request: Request,
    caller: CallerDep,
    state: State,
    workspace: Annotated[str | None, Query(max_length=64)] = None,
    as_id: Annotated[str | None, Query(alias="as", pattern=r"^[A-Za-z0-9_-]{1,64}$")] = None,
) -> Imported:
    """Import an exported log as a new run (checked whole before anything is written).

    The run works in a new, empty folder under the workspace's worlds, never in the
    file's; it is paused unless it had ended, and never auto-approves (docs/server.md).
    """
    target = workspace or caller.default_workspace()
    if target not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {target!r}")
    caller.require_act(target, "import runs")
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "bad_request", "the body is not UTF-8 text") from None
    api = local_api(state, caller)
    return await api.import_run(text.splitlines(), as_id=as_id, workspace=target)
