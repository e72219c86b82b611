"""A run's trace: its turns, model calls, gates and tools as timed spans (``helix.api``)."""

from __future__ import annotations

from fastapi import APIRouter

from helix.api import Span

from ._api import local_api
from ._deps import CallerDep, State

router = APIRouter(tags=["runs"])


@router.get("/runs/{run_id}/trace", response_model=Span)
async def trace(run_id: str, caller: CallerDep, state: State) -> Span:
    """The run's spans (a waterfall's rows), its child runs nested under their calls."""
    run_id = (await caller.run(state.store, run_id)).id
    return await local_api(state, caller).trace(run_id)
