"""A run's live world: its background processes (``helix.api``'s ``processes``)."""

from __future__ import annotations

from fastapi import APIRouter

from helix.api import ProcessList

from ._api import local_api
from ._deps import CallerDep, State

router = APIRouter(tags=["runs"])


@router.get("/runs/{run_id}/processes", response_model=ProcessList)
async def processes(run_id: str, caller: CallerDep, state: State) -> ProcessList:
    """The background processes of the run's live world, oldest first, from its log."""
    run_id = (await caller.run(state.store, run_id)).id
    return await local_api(state, caller).processes(run_id)
