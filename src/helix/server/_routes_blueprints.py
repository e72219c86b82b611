"""Blueprints stored in the server by name, per workspace (the contract's "or by name").

``POST /runs {"blueprint": "NAME"}`` runs the workspace's stored blueprint; an object
there is still an inline blueprint. Members store them, viewers read them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel

from helix.accounts import AccountNotFoundError, Accounts
from helix.runtime import Blueprint

from ._deps import CallerDep, State

router = APIRouter(tags=["workspaces"])

BlueprintName = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]


class BlueprintList(BaseModel):
    """The names of a workspace's stored blueprints."""

    blueprints: list[str]


def checked_blueprint(body: dict[str, Any], name: str | None = None) -> Blueprint:
    """``body`` as a blueprint (named ``name`` unless it names itself), or a 422."""
    return Blueprint.parse(body, source="invalid blueprint", name=name)


async def stored_blueprint(accounts: Accounts, workspace: str, name: str) -> Blueprint:
    """The workspace's blueprint called ``name`` (404 if there is none)."""
    return checked_blueprint(await accounts.blueprint(workspace, name), name)


@router.get("/workspaces/{workspace}/blueprints", response_model=BlueprintList)
async def list_blueprints(workspace: str, caller: CallerDep, state: State) -> BlueprintList:
    """The workspace's stored blueprints, by name."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    return BlueprintList(blueprints=await state.accounts.blueprint_names(workspace))


@router.get("/workspaces/{workspace}/blueprints/{name}")
async def get_blueprint(
    workspace: str, name: BlueprintName, caller: CallerDep, state: State
) -> dict[str, Any]:
    """One stored blueprint, as its fields."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    blueprint = await stored_blueprint(state.accounts, workspace, name)
    return blueprint.model_dump(mode="json")


@router.put("/workspaces/{workspace}/blueprints/{name}")
async def put_blueprint(
    workspace: str, name: BlueprintName, body: dict[str, Any], caller: CallerDep, state: State
) -> dict[str, Any]:
    """Store (or replace) a blueprint under ``name``, checked as a blueprint file is."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    caller.require_act(workspace, "store blueprints")
    blueprint = checked_blueprint(body, name).check(state.engine.tools)
    stored = blueprint.model_dump(mode="json", exclude_defaults=True)
    await state.accounts.put_blueprint(workspace, name, {**stored, "name": blueprint.name})
    return blueprint.model_dump(mode="json")
