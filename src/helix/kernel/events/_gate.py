"""Gate decisions and approvals."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ._payload import Payload
from ._question import ApprovalQuestion


class GateDecided(Payload):
    """One gate of the pipeline decided on one tool call."""

    TYPE: ClassVar[str] = "gate.decided"

    call_id: str
    gate: str
    verdict: Literal["allow", "deny", "ask"]
    reason: str


class ApprovalRequested(Payload):
    """A tool call waits for a person's decision (or a person's answer to a question)."""

    TYPE: ClassVar[str] = "approval.requested"

    request_id: str
    call_id: str
    name: str
    args: dict[str, JsonValue]
    expires_at: str | None
    """ISO 8601 time after which the request is denied automatically."""
    question: ApprovalQuestion | None = None
    """What a tool source asks a person while the call runs (an MCP elicitation);
    ``None`` for a decision about a call or a connection."""


class ApprovalDecided(Payload):
    """An approval request was answered, by a person or by its deadline."""

    TYPE: ClassVar[str] = "approval.decided"

    request_id: str
    decision: Literal["allow", "deny"]
    by: str
    reason: str | None = None
    auto: bool = False
    """True when no person decided (the deadline passed, or auto-approve)."""
    answer: dict[str, JsonValue] | None = None
    """A question's answer (``allow`` only), valid against its schema; ``None`` otherwise."""


class EgressAttempts(BaseModel):
    """How often a command tried one host, and what the first attempt was answered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str
    verdict: Literal["allow", "deny"]
    """The decision every attempt at this host got (the first one's, reused)."""
    attempts: int = Field(ge=1)


class EgressCounted(Payload):
    """The connections a finished command attempted through the egress proxy (Helix's addition).

    Only the first attempt at each host (up to a number of hosts) has its own
    ``gate.decided``; this counts them all. Appended just before the command's
    ``tool.completed``, when it attempted any connection.
    """

    TYPE: ClassVar[str] = "egress.counted"

    call_id: str
    hosts: list[EgressAttempts]
    """Each host decided and logged on its own, in the order first attempted."""
    other_attempts: int = Field(default=0, ge=0)
    """Attempts at hosts past the ones logged: decided by the egress lists alone (an
    unlisted host refused without asking), neither logged nor listed one by one."""
