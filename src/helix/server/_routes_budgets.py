"""Cumulative budgets over HTTP: a workspace's budgets, their spend this period, set, remove.

Members and viewers read them; only the workspace's owners and admins set or remove
one (403 otherwise). A workspace the caller is not in is a 404. ``/budgets`` is the
caller's own workspace unless ``?workspace=`` names one; ``/workspaces/W/budgets`` the
same for W. The door (``helix.api``) does the rest.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from helix.accounts import AccountNotFoundError, can_administer
from helix.budgets import BudgetList, BudgetUsage

from ._api import local_api
from ._auth import Caller
from ._deps import CallerDep, State
from ._errors import ApiError

router = APIRouter(tags=["budgets"])


class BudgetBody(BaseModel):
    """A budget to set: whose calls it counts, its period, its caps."""

    kind: str = Field(description="workspace, blueprint or person")
    name: str | None = Field(default=None, description="the blueprint's or person's name")
    period: str = Field(default="month", description="day or month (UTC calendar)")
    usd: float | None = Field(default=None, description="the USD cap for the period")
    tokens: int | None = Field(default=None, description="the token cap (input + output)")


def _workspace(caller: Caller, workspace: str | None) -> str:
    where = workspace or caller.user
    if where not in caller.roles:
        if workspace is None:
            return caller.default_workspace()
        raise AccountNotFoundError(f"no workspace {where!r}")
    return where


def _administer(caller: Caller, workspace: str) -> None:
    if not can_administer(caller.roles.get(workspace)):
        raise ApiError(
            403, "forbidden", f"only owners and admins set budgets (workspace {workspace!r})"
        )


async def _list(workspace: str, caller: Caller, state: State) -> BudgetList:
    return await local_api(state, caller).budgets(workspace=workspace)


async def _set(workspace: str, body: BudgetBody, caller: Caller, state: State) -> BudgetUsage:
    _administer(caller, workspace)
    return await local_api(state, caller).set_budget(
        body.kind, name=body.name, period=body.period, usd=body.usd, tokens=body.tokens,
        workspace=workspace,
    )  # fmt: skip


async def _remove(
    workspace: str, kind: str, name: str | None, period: str, caller: Caller, state: State
) -> Response:
    _administer(caller, workspace)
    api = local_api(state, caller)
    await api.remove_budget(kind, name=name, period=period, workspace=workspace)
    return Response(status_code=204)


Word = Annotated[str, Query(max_length=64)]


@router.get("/budgets", response_model=BudgetList)
async def list_budgets(
    caller: CallerDep, state: State, workspace: Word | None = None
) -> BudgetList:
    """The workspace's budgets (default: yours), each with this period's spend and what is left."""
    return await _list(_workspace(caller, workspace), caller, state)


@router.put("/budgets", response_model=BudgetUsage)
async def set_budget(
    body: BudgetBody, caller: CallerDep, state: State, workspace: Word | None = None
) -> BudgetUsage:
    """Set (or replace) a budget of the workspace (owners and admins)."""
    return await _set(_workspace(caller, workspace), body, caller, state)


@router.delete("/budgets", status_code=204, response_class=Response)
async def remove_budget(
    caller: CallerDep,
    state: State,
    kind: Word,
    name: Word | None = None,
    period: Word = "month",
    workspace: Word | None = None,
) -> Response:
    """Remove a budget of the workspace (owners and admins; 404 if there is none)."""
    return await _remove(_workspace(caller, workspace), kind, name, period, caller, state)


@router.get("/workspaces/{workspace}/budgets", response_model=BudgetList)
async def list_workspace_budgets(workspace: str, caller: CallerDep, state: State) -> BudgetList:
    """``GET /budgets?workspace=W``."""
    return await _list(_workspace(caller, workspace), caller, state)


@router.put("/workspaces/{workspace}/budgets", response_model=BudgetUsage)
async def set_workspace_budget(
    workspace: str, body: BudgetBody, caller: CallerDep, state: State
) -> BudgetUsage:
    """``PUT /budgets?workspace=W``."""
    return await _set(_workspace(caller, workspace), body, caller, state)


@router.delete("/workspaces/{workspace}/budgets", status_code=204, response_class=Response)
async def remove_workspace_budget(
    workspace: str,
    caller: CallerDep,
    state: State,
    kind: Word,
    name: Word | None = None,
    period: Word = "month",
) -> Response:
    """``DELETE /budgets?workspace=W&kind=…``."""
    return await _remove(_workspace(caller, workspace), kind, name, period, caller, state)
