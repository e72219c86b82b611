"""Workflows: list, get a version, save, edit, history, run, chat; the canvas's document.

Thin adapters over ``LocalApi``'s workflow operations (``helix.api.WorkflowDoor``):
the caller's rights are checked here (viewers read; members who may act edit and run),
the work is the API's. ``?workspace=`` picks the workspace (default: the caller's own,
else the first they belong to). Bad definitions and edits are 422 (``invalid_workflow``),
a missing workflow or version 404 (``workflow_not_found``), a save on a stale version
409 (``stale_workflow_version``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from helix.api import CreatedRun
from helix.errors import WorkflowError
from helix.workflows import (
    MAX_TEXT,
    WorkflowSummary,
    WorkflowVersion,
    from_canvas,
    from_data,
    load_text,
    to_canvas,
)

from ._api import local_api
from ._auth import Caller
from ._deps import CallerDep, State
from ._errors import ApiError

router = APIRouter(tags=["workflows"])

WorkflowName = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
WorkspaceQuery = Annotated[str | None, Query(max_length=64)]
_MOST = 2**62
"""The largest version number a request may name (the stores' integers hold 64 bits)."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorkflowList(BaseModel):
    """A workspace's workflows, each at its latest version."""

    workflows: list[WorkflowSummary]


class WorkflowHistory(BaseModel):
    """Every version of a workflow, oldest first (without their definitions)."""

    versions: list[WorkflowVersion]


class WorkflowSave(_Body):
    """``PUT /workflows/NAME``: the definition as JSON (``workflow``) or YAML (``text``)."""

    workflow: dict[str, JsonValue] | None = None
    text: str | None = Field(default=None, max_length=MAX_TEXT)
    base_version: int | None = Field(default=None, ge=0, le=_MOST)
    """The version the edit was made on (0: a new workflow); stale: 409. None: the latest."""
    how: Literal["canvas", "chat", "file", "api"] = "api"


class WorkflowEditBody(_Body):
    """``POST /workflows/NAME/edit``: edit operations (docs/workflows.md)."""

    operations: list[dict[str, JsonValue]] = Field(min_length=1, max_length=100)
    base_version: int | None = Field(default=None, ge=0, le=_MOST)


class WorkflowImport(_Body):
    """``POST /workflows/import``: a workflow file in one of the workspace's worlds."""

    world: str = Field(min_length=1, max_length=200)
    path: str = Field(min_length=1, max_length=1000)
    base_version: int | None = Field(default=0, ge=0, le=_MOST)


class CanvasDocument(BaseModel):
    """The canvas's document of one version (what the dashboard's editor draws)."""

    name: str
    version: int
    canvas: dict[str, Any]
    text: str
    """The same definition as YAML."""


class CanvasSave(_Body):
    """``PUT /workflows/NAME/canvas``: the edited document, on the version it was read at."""

    canvas: dict[str, JsonValue]
    base_version: int = Field(ge=0, le=_MOST)


class WorkflowRunBody(_Body):
    """``POST /workflows/NAME/runs``."""

    version: int | None = Field(default=None, ge=1, le=_MOST)
    world: str | None = Field(default=None, max_length=200)
    budget_usd: float | None = Field(default=None, ge=0, le=_MOST)
    auto_approve: bool = False
    attended: bool = True


class WorkflowChatBody(_Body):
    """``POST /workflows/NAME/chat``: what the person wants changed."""

    message: str = Field(min_length=1, max_length=20_000)
    model: str | None = Field(default=None, max_length=200)


def _workspace(caller: Caller, workspace: str | None, act: str | None = None) -> str:
    """The workspace asked for (404 if not the caller's); with ``act``, 403 for viewers."""
    if workspace is None:
        owned = caller.user if caller.roles.get(caller.user) == "owner" else None
        workspace = owned or (sorted(caller.roles)[0] if caller.roles else None)
    if workspace is None or workspace not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {workspace!r}")
    if act is not None:
        caller.require_act(workspace, act)
    return workspace


@router.get("/workflows", response_model=WorkflowList)
async def list_workflows(
    caller: CallerDep, state: State, workspace: WorkspaceQuery = None
) -> WorkflowList:
    """The workspace's workflows, by name."""
    where = _workspace(caller, workspace)
    return WorkflowList(workflows=await local_api(state, caller).workflows(workspace=where))


@router.post("/workflows/import", response_model=WorkflowVersion)
async def import_workflow(
    body: WorkflowImport, caller: CallerDep, state: State, workspace: WorkspaceQuery = None
) -> WorkflowVersion:
    """Save a workflow file of one of the workspace's worlds (``how: file``)."""
    where = _workspace(caller, workspace, "edit workflows")
    return await local_api(state, caller).import_workflow(
        body.path, world=body.world, base_version=body.base_version, workspace=where
    )


@router.get("/workflows/{name}", response_model=WorkflowVersion)
async def get_workflow(
    name: WorkflowName,
    caller: CallerDep,
    state: State,
    version: Annotated[int | None, Query(ge=1, le=_MOST)] = None,
    workspace: WorkspaceQuery = None,
) -> WorkflowVersion:
    """One version of a workflow (default: the latest)."""
    where = _workspace(caller, workspace)
    return await local_api(state, caller).workflow(name, version=version, workspace=where)


@router.put("/workflows/{name}", response_model=WorkflowVersion)
async def save_workflow(
    name: WorkflowName,
    body: WorkflowSave,
    caller: CallerDep,
    state: State,
    workspace: WorkspaceQuery = None,
) -> WorkflowVersion:
    """Save a definition as the workflow's next version (its name must be ``name``)."""
    where = _workspace(caller, workspace, "edit workflows")
    if (body.workflow is None) == (body.text is None):
        raise WorkflowError("give the definition as workflow (JSON) or as text (YAML), one of them")
    definition = (
        load_text(body.text, source="text") if body.text is not None else from_data(body.workflow)
    )
    if definition.name != name:
        raise WorkflowError(f"the definition is named {definition.name!r}, not {name!r}")
    return await local_api(state, caller).save_workflow(
        definition, base_version=body.base_version, how=body.how, workspace=where
    )


@router.post("/workflows/{name}/edit", response_model=WorkflowVersion)
async def edit_workflow(
    name: WorkflowName,
    body: WorkflowEditBody,
    caller: CallerDep,
    state: State,
    workspace: WorkspaceQuery = None,
) -> WorkflowVersion:
    """Apply edit operations to the latest version and save the result."""
    where = _workspace(caller, workspace, "edit workflows")
    operations: list[dict[str, Any]] = list(body.operations)
    return await local_api(state, caller).edit_workflow(
        name, operations, base_version=body.base_version, workspace=where
    )


@router.get("/workflows/{name}/history", response_model=WorkflowHistory)
async def workflow_history(
    name: WorkflowName, caller: CallerDep, state: State, workspace: WorkspaceQuery = None
) -> WorkflowHistory:
    """Every version: who made it, how, when, what changed."""
    where = _workspace(caller, workspace)
    versions = await local_api(state, caller).workflow_history(name, workspace=where)
    return WorkflowHistory(versions=versions)


@router.get("/workflows/{name}/canvas", response_model=CanvasDocument)
async def get_canvas(
    name: WorkflowName,
    caller: CallerDep,
    state: State,
    version: Annotated[int | None, Query(ge=1, le=_MOST)] = None,
    workspace: WorkspaceQuery = None,
) -> CanvasDocument:
    """The canvas document of a version (the dashboard's editor reads this)."""
    from helix.workflows import dump

    where = _workspace(caller, workspace)
    found = await local_api(state, caller).workflow(name, version=version, workspace=where)
    assert found.workflow is not None
    return CanvasDocument(
        name=name,
        version=found.version,
        canvas=to_canvas(found.workflow),
        text=dump(found.workflow),
    )


@router.put("/workflows/{name}/canvas", response_model=WorkflowVersion)
async def save_canvas(
    name: WorkflowName,
    body: CanvasSave,
    caller: CallerDep,
    state: State,
    workspace: WorkspaceQuery = None,
) -> WorkflowVersion:
    """Save the canvas's document as the next version (``how: canvas``)."""
    where = _workspace(caller, workspace, "edit workflows")
    definition = from_canvas(body.canvas)
    if definition.name != name:
        raise WorkflowError(f"the canvas holds the workflow {definition.name!r}, not {name!r}")
    return await local_api(state, caller).save_workflow(
        definition, base_version=body.base_version, how="canvas", workspace=where
    )


@router.post("/workflows/{name}/runs", response_model=CreatedRun, status_code=201)
async def run_workflow(
    name: WorkflowName,
    body: WorkflowRunBody,
    caller: CallerDep,
    state: State,
    workspace: WorkspaceQuery = None,
) -> CreatedRun:
    """Start the workflow's task graph as a run (the server drives it)."""
    where = _workspace(caller, workspace, "run workflows")
    run = await local_api(state, caller).run_workflow(
        name,
        version=body.version,
        world=body.world,
        workspace=where,
        budget_usd=body.budget_usd,
        auto_approve=body.auto_approve,
        attended=body.attended,
    )
    return CreatedRun(id=run.id, status=run.status)


@router.post("/workflows/{name}/chat", response_model=CreatedRun, status_code=201)
async def chat_workflow(
    name: WorkflowName,
    body: WorkflowChatBody,
    caller: CallerDep,
    state: State,
    workspace: WorkspaceQuery = None,
) -> CreatedRun:
    """Start an agent run that edits this workflow as the message asks."""
    where = _workspace(caller, workspace, "edit workflows")
    run = await local_api(state, caller).chat_workflow(
        name, body.message, model=body.model, workspace=where
    )
    return CreatedRun(id=run.id, status=run.status)
