"""People at the controls: steer, approve or deny, choose, pause, resume, cancel, fork.

Thin adapters over ``LocalApi`` (``_api.py``): the caller's rights are checked here
(a run of another workspace is 404, a viewer cannot act), the work is the API's, which
calls the runtime's own control functions (appends checked against the run's state),
so a decision made here and one made from a terminal can never both land.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from helix.api import (
    Accepted,
    ApprovalList,
    ChoiceBody,
    ChoiceCardList,
    Chosen,
    Decided,
    DecisionBody,
    ForkBody,
    Forked,
    ResumeBody,
    Run,
    SteerBody,
)

from ._api import local_api
from ._deps import CallerDep, State

router = APIRouter(tags=["control"])


@router.post("/runs/{run_id}/steer", response_model=Accepted, status_code=202)
async def steer(run_id: str, body: SteerBody, caller: CallerDep, state: State) -> Accepted:
    """Tell the agent something; it reads it before its next model call."""
    run_id = (await caller.run(state.store, run_id, act="steer runs")).id
    await local_api(state, caller).steer(run_id, body.message)
    return Accepted()


@router.get("/runs/{run_id}/approvals", response_model=ApprovalList)
async def approvals(run_id: str, caller: CallerDep, state: State) -> ApprovalList:
    """The run's pending approval requests."""
    run_id = (await caller.run(state.store, run_id)).id
    return ApprovalList(approvals=await local_api(state, caller).approvals(run_id))


@router.post(
    "/runs/{run_id}/approvals/{request_id}",
    response_model=Decided,
    responses={409: {"description": "decided already, or expired"}},
)
async def decide(
    run_id: str, request_id: str, body: DecisionBody, caller: CallerDep, state: State
) -> Decided:
    """Allow or deny a pending request; 409 if decided already or expired.

    A source's question is answered by ``allow`` with ``answer`` (422 if it does not fit
    the question's schema: nothing is written) and declined by ``deny``.
    """
    run_id = (await caller.run(state.store, run_id, act="approve or deny")).id
    api = local_api(state, caller)
    return await api.decide(
        run_id, request_id, body.decision, reason=body.reason, answer=body.answer
    )


@router.get("/runs/{run_id}/choices", response_model=ChoiceCardList)
async def choices(run_id: str, caller: CallerDep, state: State) -> ChoiceCardList:
    """The run's options cards waiting for a person's choice (``ask_choice`` calls)."""
    run_id = (await caller.run(state.store, run_id)).id
    return ChoiceCardList(cards=await local_api(state, caller).choices(run_id))


@router.post(
    "/runs/{run_id}/components/{component_id}/choose",
    response_model=Chosen,
    responses={
        404: {"description": "no such run, or the run showed no such component"},
        409: {"description": "answered already, waits for no choice, or the run has ended"},
        422: {"description": "not one of the card's choices"},
    },
)
async def choose(
    run_id: str, component_id: str, body: ChoiceBody, caller: CallerDep, state: State
) -> Chosen:
    """Choose an option on an options card that waits for one; the waiting call gets it."""
    run_id = (await caller.run(state.store, run_id, act="answer choices")).id
    return await local_api(state, caller).choose(run_id, component_id, body.choice)


@router.post("/runs/{run_id}/pause", response_model=Run)
async def pause(run_id: str, caller: CallerDep, state: State) -> Run:
    """Pause at the next safe point (a running tool finishes first)."""
    run_id = (await caller.run(state.store, run_id, act="pause runs")).id
    return await local_api(state, caller).pause(run_id)


@router.post("/runs/{run_id}/resume", response_model=Run)
async def resume(
    run_id: str,
    caller: CallerDep,
    state: State,
    body: Annotated[ResumeBody | None, Body()] = None,
) -> Run:
    """Resume a paused or interrupted run (with new caps, if given) and drive it.

    A run paused at its own USD cap resumes only with a ``budget_usd``, at its own token
    cap only with a ``budget_tokens``, at its turn or time limit only with a higher
    ``max_turns`` or a ``max_seconds`` (409 without); at a cumulative budget, as it is.
    """
    run_id = (await caller.run(state.store, run_id, act="resume runs")).id
    body = body or ResumeBody()
    return await local_api(state, caller).resume(
        run_id, budget_usd=body.budget_usd, budget_tokens=body.budget_tokens,
        max_turns=body.max_turns, max_seconds=body.max_seconds,
    )  # fmt: skip


@router.post("/runs/{run_id}/cancel", response_model=Run)
async def cancel(run_id: str, caller: CallerDep, state: State) -> Run:
    """Cancel: a running command is killed and the run ends ``cancelled``."""
    run_id = (await caller.run(state.store, run_id, act="cancel runs")).id
    return await local_api(state, caller).cancel(run_id)


@router.post("/runs/{run_id}/fork", response_model=Forked, status_code=201)
async def fork(run_id: str, body: ForkBody, caller: CallerDep, state: State) -> Forked:
    """Fork where a turn ended (0: the start), with its own world; it runs in the server."""
    run_id = (await caller.run(state.store, run_id, act="fork runs")).id
    api = local_api(state, caller)
    forked = await api.fork(run_id, turn=body.turn, message=body.message, model=body.model)
    return Forked(id=forked.id)
