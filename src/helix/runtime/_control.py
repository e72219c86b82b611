"""What people do to a run: each is an append to its log, checked against its state.

These work from any process: the process driving the run sees the append through the
log's subscriptions. Each reads the run's state, checks the action still makes sense,
and appends at the seq it read; if someone else appended first, it reads again and
checks again, so a decision can never land on an approval that was closed meanwhile
(``append_checked``, the runtime's one optimistic append).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helix.errors import ApprovalClosedError, InvalidAnswerError, RunStateError
from helix.kernel.events import (
    TERMINAL_STATUSES,
    ApprovalDecided,
    Budget,
    NewEvent,
    RunCancelled,
    RunPaused,
    RunResumed,
    SteerReceived,
    answer_problem,
    parse_iso,
)
from helix.kernel.log import EventStore
from helix.kernel.session import PendingApproval, SessionState

from ._clock import SYSTEM_CLOCK, Clock
from ._session import append_checked


def _not_finished(state: SessionState, run_id: str, action: str) -> None:
    if state.status in TERMINAL_STATUSES:
        raise RunStateError(f"run {run_id!r} is {state.status}: it cannot be {action}")


async def steer(store: EventStore, run_id: str, message: str, *, by: str) -> None:
    """Send the agent a message; it is delivered before the next model call."""
    if not message.strip():
        raise RunStateError("the steering message is empty")

    def build(state: SessionState) -> list[NewEvent]:
        _not_finished(state, run_id, "steered")
        return [NewEvent(SteerReceived(message=message), actor=by)]

    await append_checked(store, run_id, build)


async def decide(
    store: EventStore,
    run_id: str,
    request_id: str | None,
    decision: str,
    *,
    by: str,
    reason: str | None = None,
    answer: Mapping[str, Any] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> str:
    """Allow or deny a pending approval; returns the request id decided.

    With no ``request_id``, the run's one pending request is meant (an error if there
    are several). ``ApprovalClosedError`` if it was decided already or has expired (its
    deadline passed on ``clock``). A source's question is answered by allowing it with
    ``answer`` (its fields; none for a plain yes) and declined by denying it;
    ``InvalidAnswerError`` (nothing written) if the answer does not fit the question.
    """
    if decision not in ("allow", "deny"):
        raise RunStateError(f"decision must be allow or deny, not {decision!r}")
    chosen: list[str] = []

    def build(state: SessionState) -> list[NewEvent]:
        _not_finished(state, run_id, "approved or denied")
        pending = state.pending_approvals
        target = request_id
        if target is None:
            if not pending:
                raise ApprovalClosedError(f"run {run_id!r} has no pending approval")
            if len(pending) > 1:
                raise RunStateError(
                    f"run {run_id!r} has {len(pending)} pending approvals: name one of"
                    f" {', '.join(sorted(pending))}"
                )
            target = next(iter(pending))
        request = pending.get(target)
        if request is None:
            raise ApprovalClosedError(
                f"approval {target!r} of run {run_id!r} is not pending: it was decided"
                " already, expired, or never existed"
            )
        if request.expires_at is not None and parse_iso(request.expires_at) <= clock.now():
            raise ApprovalClosedError(f"approval {target!r} expired at {request.expires_at}")
        chosen[:] = [target]
        decided = ApprovalDecided(
            request_id=target,
            decision=decision,
            by=by,
            reason=reason,
            auto=False,
            answer=_checked_answer(request, decision, answer),
        )
        events = [NewEvent(decided, actor=by)]
        if state.status == "paused":  # a decision sets the status to running: stay paused
            events.append(NewEvent(RunPaused(reason="user"), actor=by))
        return events

    await append_checked(store, run_id, build)
    return chosen[0]


def _checked_answer(
    request: PendingApproval, decision: str, answer: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The answer to record with ``decision`` (``InvalidAnswerError`` if it does not fit)."""
    where = f"approval {request.request_id!r}"
    if request.question is None:
        if answer is not None:
            raise InvalidAnswerError(f"{where} asks about {request.name}: it takes no answer")
        return None
    if decision == "deny":
        if answer:
            raise InvalidAnswerError(f"{where}: a decline takes no answer")
        return None
    content = dict(answer or {})
    problem = answer_problem(request.question.get("schema") or {}, content)
    if problem is not None:
        raise InvalidAnswerError(f"{where}: {problem}")
    return content


async def pause(store: EventStore, run_id: str, *, by: str) -> None:
    """Pause the run at its next safe point (between steps; a running tool finishes)."""

    def build(state: SessionState) -> list[NewEvent]:
        _not_finished(state, run_id, "paused")
        if state.status == "paused":
            raise RunStateError(f"run {run_id!r} is already paused")
        return [NewEvent(RunPaused(reason="user"), actor=by)]

    await append_checked(store, run_id, build)


async def resume(store: EventStore, run_id: str, *, by: str, budget: Budget | None = None) -> bool:
    """Resume a paused run (with new caps, if given); False if it was not paused."""
    resumed: list[bool] = []

    def build(state: SessionState) -> list[NewEvent]:
        _not_finished(state, run_id, "resumed")
        resumed[:] = [state.status == "paused"]
        if state.status != "paused" and budget is None:
            return []
        return [NewEvent(RunResumed(budget=budget, by=by), actor=by)]

    await append_checked(store, run_id, build)
    return bool(resumed and resumed[0])


async def cancel(store: EventStore, run_id: str, *, by: str) -> None:
    """Cancel the run: a running command is killed and the run ends ``cancelled``."""

    def build(state: SessionState) -> list[NewEvent]:
        _not_finished(state, run_id, "cancelled")
        return [NewEvent(RunCancelled(by=by), actor=by)]

    await append_checked(store, run_id, build)
