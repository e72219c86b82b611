"""Gate decisions and approvals."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import JsonValue

from ._payload import Payload


class GateDecided(Payload):
    """One gate of the pipeline decided on one tool call."""

    TYPE: ClassVar[str] = "gate.decided"

    call_id: str
    gate: str
    verdict: Literal["allow", "deny", "ask"]
    reason: str


class ApprovalRequested(Payload):
    """A tool call waits for a person's decision."""

    TYPE: ClassVar[str] = "approval.requested"

    request_id: str
    call_id: str
    name: str
    args: dict[str, JsonValue]
    expires_at: str | None
    """ISO 8601 time after which the request is denied automatically."""


class ApprovalDecided(Payload):
    """An approval request was answered, by a person or by its deadline."""

    TYPE: ClassVar[str] = "approval.decided"

    request_id: str
    decision: Literal["allow", "deny"]
    by: str
    reason: str | None = None
    auto: bool = False
    """True when no person decided (the deadline passed, or auto-approve)."""
