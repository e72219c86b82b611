"""Blueprints stored by name, per workspace, in versions (the contract's "or by name").

``POST /runs {"blueprint": "NAME"}`` runs the workspace's stored blueprint at its latest
version (``NAME@N`` or ``"blueprint_version": N``: an older one); an object there is
still an inline blueprint. Every save is a new version; a rollback saves an old one's
fields as the next. Thin adapters over ``LocalApi``'s ``BlueprintDoor``: members who
may act save and roll back, viewers read, anyone else finds no workspace (404).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from helix.accounts import AccountNotFoundError
from helix.api import BlueprintDiff, BlueprintInfo, BlueprintVersion

from ._api import checked_blueprint, local_api
from ._auth import Caller
from ._deps import CallerDep, State

router = APIRouter(tags=["workspaces"])

BlueprintName = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
VersionPath = Annotated[str, Path(pattern=r"^([1-9][0-9]{0,8}|latest)$")]
Version = Annotated[int, Query(ge=1, le=999_999_999)]


class BlueprintList(BaseModel):
    """A workspace's stored blueprints: their names (and, if asked, each one's latest version)."""

    blueprints: list[str]
    latest: list[BlueprintInfo] | None = None


class BlueprintHistory(BaseModel):
    """Every version of a stored blueprint, oldest first (without their fields)."""

    versions: list[BlueprintInfo]


class BlueprintRollbackBody(BaseModel):
    """``POST …/rollback``: the version whose fields become the next version."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1, le=999_999_999)
    expected_version: int | None = Field(default=None, ge=0)
    """The latest version the person saw; stale: 409. ``None``: whatever is latest."""


def _member(caller: Caller, workspace: str) -> None:
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")


@router.get(
    "/workspaces/{workspace}/blueprints",
    response_model=BlueprintList,
    response_model_exclude_none=True,
)
async def list_blueprints(
    workspace: str, caller: CallerDep, state: State, latest: bool = False
) -> BlueprintList:
    """The workspace's stored blueprints, by name; ``?latest=true``: with their latest versions."""
    _member(caller, workspace)
    found = await local_api(state, caller).blueprints(workspace=workspace)
    names = [info.name for info in found]
    return BlueprintList(blueprints=names, latest=found if latest else None)


@router.get("/workspaces/{workspace}/blueprints/{name}")
async def get_blueprint(
    workspace: str,
    name: BlueprintName,
    caller: CallerDep,
    state: State,
    version: Version | None = None,
) -> dict[str, Any]:
    """One stored blueprint (its latest version, or ``?version=N``), as its fields."""
    _member(caller, workspace)
    found = await local_api(state, caller).blueprint(name, version=version, workspace=workspace)
    return checked_blueprint(found.blueprint, name).model_dump(mode="json")


@router.put("/workspaces/{workspace}/blueprints/{name}", response_model=BlueprintVersion)
async def put_blueprint(
    workspace: str,
    name: BlueprintName,
    body: dict[str, Any],
    caller: CallerDep,
    state: State,
    expected_version: Annotated[int | None, Query(ge=0, le=999_999_999)] = None,
    note: Annotated[str | None, Query(max_length=200)] = None,
) -> BlueprintVersion:
    """Save a blueprint as the next version of ``name``, checked as a blueprint file is."""
    _member(caller, workspace)
    caller.require_act(workspace, "store blueprints")
    return await local_api(state, caller).save_blueprint(
        name, body, expected_version=expected_version, note=note, workspace=workspace
    )


@router.get("/workspaces/{workspace}/blueprints/{name}/versions", response_model=BlueprintHistory)
async def blueprint_history(
    workspace: str, name: BlueprintName, caller: CallerDep, state: State
) -> BlueprintHistory:
    """Every version of the blueprint, oldest first: who saved it, when, its note."""
    _member(caller, workspace)
    history = await local_api(state, caller).blueprint_history(name, workspace=workspace)
    return BlueprintHistory(versions=history)


@router.get(
    "/workspaces/{workspace}/blueprints/{name}/versions/{version}",
    response_model=BlueprintVersion,
)
async def blueprint_version(
    workspace: str, name: BlueprintName, version: VersionPath, caller: CallerDep, state: State
) -> BlueprintVersion:
    """One version (``latest``: the latest) with who saved it, when, its note, its fields."""
    _member(caller, workspace)
    number = None if version == "latest" else int(version)
    return await local_api(state, caller).blueprint(name, version=number, workspace=workspace)


@router.get("/workspaces/{workspace}/blueprints/{name}/diff", response_model=BlueprintDiff)
async def blueprint_diff(
    workspace: str, name: BlueprintName, a: Version, b: Version, caller: CallerDep, state: State
) -> BlueprintDiff:
    """Version ``a`` to version ``b``: a unified diff of their canonical YAML, fields changed."""
    _member(caller, workspace)
    return await local_api(state, caller).blueprint_diff(name, a, b, workspace=workspace)


@router.post("/workspaces/{workspace}/blueprints/{name}/rollback", response_model=BlueprintVersion)
async def rollback_blueprint(
    workspace: str,
    name: BlueprintName,
    body: BlueprintRollbackBody,
    caller: CallerDep,
    state: State,
) -> BlueprintVersion:
    """Save version ``version``'s fields as the next version, noted ``rollback to vN``."""
    _member(caller, workspace)
    caller.require_act(workspace, "roll blueprints back")
    return await local_api(state, caller).rollback_blueprint(
        name, body.version, expected_version=body.expected_version, workspace=workspace
    )
