"""Events of steering, budgets, delegation, generative UI, supervision and driving."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, JsonValue

from ._payload import Payload


class SteerReceived(Payload):
    """A person sent the agent a message while it runs."""

    TYPE: ClassVar[str] = "steer.received"

    message: str


class BudgetExceeded(Payload):
    """A step would have taken the run past its spending cap."""

    TYPE: ClassVar[str] = "budget.exceeded"

    cap_usd: float = Field(ge=0)
    spent_usd: float = Field(ge=0)


class AgentSpawned(Payload):
    """The run delegated work to a child run."""

    TYPE: ClassVar[str] = "agent.spawned"

    child_run_id: str
    objective: str
    call_id: str | None = None
    """The ``delegate`` call that started it (how a resumed call finds its child again)."""


class AgentReported(Payload):
    """A child run handed back its report."""

    TYPE: ClassVar[str] = "agent.reported"

    child_run_id: str
    report: str
    status: str = "completed"
    """How the child ended: ``completed``, ``failed``, ``cancelled``, or ``paused``."""
    cost_usd: float = Field(default=0.0, ge=0)
    """What the child (and its own children) spent: it counts against this run's budget."""


class UiComponent(Payload):
    """The agent showed a generative UI component."""

    TYPE: ClassVar[str] = "ui.component"

    component: str
    props: dict[str, JsonValue]


class SupervisorRestarted(Payload):
    """The supervisor restarted a crashed component of the run."""

    TYPE: ClassVar[str] = "supervisor.restarted"

    component: str
    reason: str
    attempt: int = Field(ge=1)


class LeaseTakenOver(Payload):
    """A driver took the run over from one that neither finished nor released it.

    Appended by the new driver, first thing, when the lease it took was still held: its
    holder let it expire (hung, partitioned) or is a process of this host that ended.
    """

    TYPE: ClassVar[str] = "lease.taken_over"

    holder: str
    epoch: int = Field(ge=1)
    previous_holder: str
    previous_epoch: int = Field(ge=0)
    reason: Literal["expired", "holder_gone"]
