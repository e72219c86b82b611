"""People at the controls: steer, approve or deny, pause, resume, cancel, fork.

Each is the runtime's own control function (an append checked against the run's
state), so a decision made here and one made from a terminal can never both land.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

import helix.runtime as runtime
from helix.errors import RunStateError
from helix.kernel.events import Budget
from helix.kernel.session import replay_run

from ._deps import CallerDep, State
from ._schemas import (
    Accepted,
    ApprovalList,
    ApprovalOut,
    DecisionBody,
    DecisionOut,
    ForkBody,
    ForkOut,
    ResumeBody,
    RunOut,
    SteerBody,
)

router = APIRouter(tags=["control"])


@router.post("/runs/{run_id}/steer", response_model=Accepted, status_code=202)
async def steer(run_id: str, body: SteerBody, caller: CallerDep, state: State) -> Accepted:
    """Tell the agent something; it reads it before its next model call."""
    await caller.run(state.store, run_id, act="steer runs")
    await runtime.steer(state.store, run_id, body.message, by=caller.actor)
    return Accepted()


@router.get("/runs/{run_id}/approvals", response_model=ApprovalList)
async def approvals(run_id: str, caller: CallerDep, state: State) -> ApprovalList:
    """The run's pending approval requests."""
    await caller.run(state.store, run_id)
    folded = await replay_run(state.store, run_id)
    pending = [
        ApprovalOut(
            request_id=p.request_id,
            call_id=p.call_id,
            name=p.name,
            args=p.args,
            expires_at=p.expires_at,
        )
        for p in folded.pending_approvals.values()
    ]
    return ApprovalList(approvals=pending)


@router.post(
    "/runs/{run_id}/approvals/{request_id}",
    response_model=DecisionOut,
    responses={409: {"description": "decided already, or expired"}},
)
async def decide(
    run_id: str, request_id: str, body: DecisionBody, caller: CallerDep, state: State
) -> DecisionOut:
    """Allow or deny a pending tool call; 409 if it was decided already or has expired."""
    await caller.run(state.store, run_id, act="approve or deny")
    decided = await runtime.decide(
        state.store, run_id, request_id, body.decision, by=caller.actor, reason=body.reason
    )
    return DecisionOut(request_id=decided, decision=body.decision)


@router.post("/runs/{run_id}/pause", response_model=RunOut)
async def pause(run_id: str, caller: CallerDep, state: State) -> RunOut:
    """Pause at the next safe point (a running tool finishes first)."""
    await caller.run(state.store, run_id, act="pause runs")
    await runtime.pause(state.store, run_id, by=caller.actor)
    return RunOut.of(await state.store.get_run(run_id))


@router.post("/runs/{run_id}/resume", response_model=RunOut)
async def resume(
    run_id: str,
    caller: CallerDep,
    state: State,
    body: Annotated[ResumeBody | None, Body()] = None,
) -> RunOut:
    """Resume a paused or interrupted run (with a new USD cap, if given) and drive it."""
    await caller.run(state.store, run_id, act="resume runs")
    folded = await replay_run(state.store, run_id)
    budget = None
    if body is not None and body.budget_usd is not None:
        budget = (folded.budget or Budget()).model_copy(update={"usd": body.budget_usd})
    elif folded.status == "paused" and folded.pause_reason == "budget":
        raise RunStateError(
            f"run {run_id!r} is paused at its budget cap: resume it with a higher budget_usd"
        )
    await runtime.resume(state.store, run_id, by=caller.actor, budget=budget)
    state.drive(run_id)
    return RunOut.of(await state.store.get_run(run_id))


@router.post("/runs/{run_id}/cancel", response_model=RunOut)
async def cancel(run_id: str, caller: CallerDep, state: State) -> RunOut:
    """Cancel: a running command is killed and the run ends ``cancelled``."""
    await caller.run(state.store, run_id, act="cancel runs")
    await runtime.cancel(state.store, run_id, by=caller.actor)
    return RunOut.of(await state.store.get_run(run_id))


@router.post("/runs/{run_id}/fork", response_model=ForkOut, status_code=201)
async def fork(run_id: str, body: ForkBody, caller: CallerDep, state: State) -> ForkOut:
    """Fork where a turn ended (0: the start), with its own world; it runs in the server."""
    await caller.run(state.store, run_id, act="fork runs")
    record = await runtime.fork_with_world(
        state.engine, run_id, body.turn, message=body.message, model=body.model, actor=caller.actor
    )
    state.drive(record.id)
    return ForkOut(id=record.id)
