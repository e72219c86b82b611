"""Asking a person: the one way an approval request is made, waited on and closed.

A tool call the gates ask about, a command's connection to an unlisted host, a tool
source's question (MCP elicitation) and its sampling request are asked the same way:
an ``approval.requested`` with a fresh id and the run's deadline (blueprint
``approvals.timeout_s``, on the engine's clock), answered at once when the run
auto-approves; the wait ends at a decision (any process may write it), at the end of
the run, or at the deadline, which the waiter closes as a denial by ``system``.

Auto-approve answers a question only when it asks for nothing but yes (no fields): a
question with fields wants content only a person can give, so it is still asked.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from helix.kernel.events import (
    TERMINAL_STATUSES,
    ApprovalDecided,
    ApprovalQuestion,
    ApprovalRequested,
    NewEvent,
    parse_iso,
)
from helix.kernel.session import SessionState

from ._clock import iso_after
from ._session import LiveSession
from ._setup import RunSetup

DEADLINE_PASSED = "no decision before the deadline"


@dataclass(frozen=True)
class Question:
    """An approval request about to be logged: its id and the events that make it."""

    request_id: str
    events: list[NewEvent]


def ask(
    setup: RunSetup,
    call_id: str,
    name: str,
    args: dict[str, Any],
    turn: int,
    *,
    question: ApprovalQuestion | None = None,
    declined: str | None = None,
) -> Question:
    """The events that ask about ``name(args)`` (and answer it, if the run auto-approves).

    With ``question``, a source's question to answer; ``declined`` (why nobody can
    answer it) closes it at once as a denial by ``system``, so the log says it was asked.
    """
    request_id = f"apr_{uuid.uuid4().hex[:12]}"
    asked = ApprovalRequested(
        request_id=request_id,
        call_id=call_id,
        name=name,
        args=args,
        expires_at=iso_after(setup.clock, setup.blueprint.approvals.timeout_s),
        question=question,
    )
    events = [NewEvent(asked, turn=turn)]
    if declined is not None:
        events.append(system_decision(request_id, "deny", declined, turn))
    elif setup.auto_approve and (question is None or not question.fields.get("properties")):
        answer: dict[str, Any] | None = None if question is None else {}
        events.append(system_decision(request_id, "allow", "auto-approve", turn, answer=answer))
    return Question(request_id, events)


def system_decision(
    request_id: str,
    decision: Literal["allow", "deny"],
    reason: str,
    turn: int | None,
    *,
    answer: dict[str, Any] | None = None,
) -> NewEvent:
    """A decision the system makes (auto-approve, a deadline, a command that ended)."""
    decided = ApprovalDecided(
        request_id=request_id,
        decision=decision,
        by="system",
        reason=reason,
        auto=True,
        answer=answer,
    )
    return NewEvent(decided, turn=turn)


def settled(request_id: str) -> Callable[[SessionState], bool]:
    """A condition on the state: the request is answered, or the run has ended."""

    def check(state: SessionState) -> bool:
        return request_id not in state.pending_approvals or state.status in TERMINAL_STATUSES

    return check


async def answered_in_time(setup: RunSetup, session: LiveSession, request_id: str) -> bool:
    """Wait for the request to be settled; ``False`` if its deadline passed first."""
    pending = session.state.pending_approvals.get(request_id)
    if pending is None:
        return True
    expires = None if pending.expires_at is None else parse_iso(pending.expires_at)
    remaining = None if expires is None else max(0.0, expires - setup.clock.now())
    return await session.wait_until(settled(request_id), remaining)
