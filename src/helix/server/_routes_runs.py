"""Runs: start, list, show, read the log, export and import."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from helix.kernel.events import RunStatus
from helix.kernel.log import export_lines, import_lines
from helix.runtime import Blueprint, blueprint_of

from ._deps import CallerDep, State
from ._errors import ApiError
from ._routes_blueprints import checked_blueprint, stored_blueprint
from ._schemas import EventPage, ImportOut, NewRunOut, RunCreate, RunList, RunOut

router = APIRouter(tags=["runs"])

_MAX_SCANNED_PAGES = 20
"""A caller in some workspaces only: pages of other runs skipped before answering."""


@router.post("/runs", response_model=NewRunOut, status_code=201)
async def start_run(body: RunCreate, caller: CallerDep, state: State) -> NewRunOut:
    """Create a run and drive it in the server (it resumes if the server restarts)."""
    workspace = body.workspace or caller.default_workspace()
    if workspace not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {workspace!r}")
    caller.require_act(workspace, "start runs")
    blueprint: Blueprint | None = None
    if isinstance(body.blueprint, str):
        blueprint = await stored_blueprint(state.accounts, workspace, body.blueprint)
    elif body.blueprint:
        blueprint = checked_blueprint(body.blueprint)
    world = state.config.worlds / workspace / (body.world or secrets.token_hex(6))
    made = not world.exists()
    world.mkdir(parents=True, exist_ok=True)
    try:
        record = await state.engine.create(
            body.objective,
            blueprint=blueprint,
            model=body.model,
            world=world,
            budget_usd=body.budget_usd,
            auto_approve=body.auto_approve,
            attended=True,
            workspace=workspace,
        )
    except BaseException:
        if made:  # a refused run leaves no empty world behind
            with contextlib.suppress(OSError):
                world.rmdir()
        raise
    state.drive(record.id)
    return NewRunOut(id=record.id, status=record.status)


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

    A page may hold fewer than ``limit`` runs while ``next_cursor`` is not null.
    """
    if workspace is not None and workspace not in caller.roles:
        return RunList(runs=[], next_cursor=None)
    only = workspace or (next(iter(caller.roles)) if len(caller.roles) == 1 else None)
    found: list[RunOut] = []
    for _ in range(_MAX_SCANNED_PAGES):
        page = await state.store.list_runs(
            status=status, workspace=only, limit=limit, cursor=cursor
        )
        found += [RunOut.of(r) for r in page.runs if r.workspace in caller.roles]
        cursor = page.next_cursor
        if found or cursor is None:
            break
    return RunList(runs=found, next_cursor=cursor)


@router.get("/runs/{run_id}", response_model=RunOut)
async def get_run(run_id: str, caller: CallerDep, state: State) -> RunOut:
    """One run: status, model, counters."""
    return RunOut.of(await caller.run(state.store, run_id))


@router.get("/runs/{run_id}/events", response_model=EventPage)
async def get_events(
    run_id: str,
    caller: CallerDep,
    state: State,
    after: Annotated[int, Query(ge=-1)] = -1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Response:
    """Events with seq > ``after``, at most ``limit``; ``next_after`` continues."""
    await caller.run(state.store, run_id)
    events = await state.store.read(run_id, after=after, limit=limit)
    next_after = events[-1].seq if events else after
    # Events are JSON already: join them rather than parse and re-serialise each.
    body = '{"events":[' + ",".join(e.to_json() for e in events) + f'],"next_after":{next_after}}}'
    return Response(body, media_type="application/json")


@router.get(
    "/runs/{run_id}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
async def export_run(run_id: str, caller: CallerDep, state: State) -> StreamingResponse:
    """The whole log as JSON Lines (``POST /runs/import`` takes it back)."""
    await caller.run(state.store, run_id)

    async def lines() -> AsyncIterator[bytes]:
        async for line in export_lines(state.store, run_id):
            yield (line + "\n").encode()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.post(
    "/runs/import",
    response_model=ImportOut,
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
) -> ImportOut:
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
    world = state.config.worlds / target / f"imported-{secrets.token_hex(6)}"
    world.mkdir(parents=True)
    try:
        record = await import_lines(
            state.store,
            text.splitlines(),
            world=str(world.resolve()),
            run_id=as_id,
            workspace=target,
            by=caller.actor,
            check_settings=blueprint_of,
        )
    except BaseException:
        with contextlib.suppress(OSError):  # a refused import leaves no empty world behind
            world.rmdir()
        raise
    return ImportOut(id=record.id, status=record.status, events=record.next_seq)
