"""``/automations``: a workspace's triggers (cron, webhook, run event) and what they start.

Members of a workspace (viewers too) list its automations; those who may act there
(not viewers) add, pause, resume and remove them. Each route is a thin adapter over
``LocalApi`` as the caller (docs/automations.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from helix.automations import Automation, AutomationCreated, AutomationList, AutomationSpec

from ._api import local_api
from ._auth import Caller
from ._deps import CallerDep, State
from ._state import ServerState

router = APIRouter(tags=["automations"])

AutomationId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


class AutomationCreate(AutomationSpec):
    """``POST /automations``: an automation, and the workspace it belongs to."""

    workspace: str | None = None
    """Default: the caller's personal workspace (or the first they may act in)."""


async def _acting(state: ServerState, caller: Caller, automation_id: str, what: str) -> str:
    """The automation's id, once the caller may see it (404) and act on it (403)."""
    found = await local_api(state, caller).automation(automation_id)
    caller.require_act(found.workspace, what)
    return found.id


@router.get("/automations", response_model=AutomationList)
async def list_automations(
    caller: CallerDep, state: State, workspace: Annotated[str | None, Query()] = None
) -> AutomationList:
    """The automations of the caller's workspaces, with their next and last firing."""
    return await local_api(state, caller).automations(workspace=workspace)


@router.post("/automations", response_model=AutomationCreated, status_code=201)
async def add_automation(
    body: AutomationCreate, caller: CallerDep, state: State
) -> AutomationCreated:
    """Add an automation; a webhook's signing secret is in this answer, and never again."""
    workspace = body.workspace or caller.default_workspace()
    api = local_api(state, caller)
    if workspace in caller.roles:
        caller.require_act(workspace, "add automations")
    spec = AutomationSpec.model_validate(body.model_dump(exclude={"workspace"}))
    return await api.add_automation(spec, workspace=workspace)


@router.get("/automations/{automation_id}", response_model=Automation)
async def get_automation(
    automation_id: AutomationId, caller: CallerDep, state: State
) -> Automation:
    """One automation."""
    return await local_api(state, caller).automation(automation_id)


@router.post("/automations/{automation_id}/pause", response_model=Automation)
async def pause_automation(
    automation_id: AutomationId, caller: CallerDep, state: State
) -> Automation:
    """Stop it firing; slots while it is paused are never fired."""
    found = await _acting(state, caller, automation_id, "pause automations")
    return await local_api(state, caller).pause_automation(found)


@router.post("/automations/{automation_id}/resume", response_model=Automation)
async def resume_automation(
    automation_id: AutomationId, caller: CallerDep, state: State
) -> Automation:
    """Fire it again from now on."""
    found = await _acting(state, caller, automation_id, "resume automations")
    return await local_api(state, caller).resume_automation(found)


@router.delete("/automations/{automation_id}", status_code=204, response_class=Response)
async def remove_automation(
    automation_id: AutomationId, caller: CallerDep, state: State
) -> Response:
    """Delete it and the record of its firings (the runs it started stay)."""
    found = await _acting(state, caller, automation_id, "remove automations")
    await local_api(state, caller).remove_automation(found)
    return Response(status_code=204)
