"""Branches and spend: compare two runs, keep a branch, what runs cost.

Thin adapters over ``LocalApi`` (``_api.py``): the caller's rights are checked here,
the work is the API's.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from helix.api import Comparison, Kept, Spend

from ._api import local_api
from ._deps import CallerDep, State

router = APIRouter(tags=["branches"])


@router.get("/runs/{run_id}/compare/{other_id}", response_model=Comparison)
async def compare(run_id: str, other_id: str, caller: CallerDep, state: State) -> Comparison:
    """Both runs (outcome, turns, cost) and a diff from the first's last world to the other's."""
    run_id = (await caller.run(state.store, run_id)).id
    other_id = (await caller.run(state.store, other_id)).id
    return await local_api(state, caller).compare(run_id, other_id)


@router.post("/runs/{run_id}/keep", response_model=Kept)
async def keep(run_id: str, caller: CallerDep, state: State) -> Kept:
    """Make the original run's folder hold this branch's world; 409 while either runs."""
    run_id = (await caller.run(state.store, run_id, act="keep branches")).id
    return await local_api(state, caller).keep(run_id)


@router.get("/spend", response_model=Spend)
async def spend(
    caller: CallerDep,
    state: State,
    workspace: Annotated[str | None, Query(max_length=64)] = None,
    by: Annotated[str, Query(max_length=32)] = "model",
    bucket: Annotated[str | None, Query(max_length=32)] = None,
    since: Annotated[str | None, Query(alias="from", max_length=64)] = None,
    until: Annotated[str | None, Query(alias="to", max_length=64)] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    provider: Annotated[str | None, Query(max_length=100)] = None,
    blueprint: Annotated[str | None, Query(max_length=200)] = None,
    person: Annotated[str | None, Query(max_length=200)] = None,
) -> Spend:
    """What runs' own model calls cost in the caller's workspaces: grouped and over time.

    ``by`` model|provider|blueprint|workspace|person|run|role; ``bucket`` day|hour; ``from``
    and ``to`` a date, a UTC time or an age (``7d``); the rest filter. A bad word: 422.
    Another workspace (one the caller is not in) has no spend to show: an empty answer.
    """
    api = local_api(state, caller)
    answer = await api.spend(
        workspace=workspace,
        by=by,
        bucket=bucket,
        since=since,
        until=until,
        model=model,
        provider=provider,
        blueprint=blueprint,
        person=person,
    )
    return answer
