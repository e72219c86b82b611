"""Events of steering, budgets, delegation, generative UI, supervision and driving."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue

from ._payload import Payload


class SteerReceived(Payload):
    """A person sent the agent a message while it runs."""

    TYPE: ClassVar[str] = "steer.received"

    message: str


class BudgetExceeded(Payload):
    """A model call would have taken a budget past its cap: the run's own, or a cumulative one.

    Without ``scope`` it is the run's own USD cap (as before). ``scope`` names the
    budget passed: ``run`` (the run's own cap), ``workspace:NAME``, ``blueprint:NAME`` or
    ``person:NAME`` (a cumulative budget of the run's workspace, for ``period``).
    """

    TYPE: ClassVar[str] = "budget.exceeded"

    cap_usd: float | None = Field(default=None, ge=0)
    """The USD cap passed; ``null`` when the cap passed is a token cap."""
    spent_usd: float = Field(ge=0)
    """What the budget had spent (and, cumulative, held for calls in flight), in USD."""
    scope: str | None = None
    """Which budget: ``run``, ``workspace:W``, ``blueprint:B``, ``person:P``; absent: ``run``."""
    period: Literal["day", "month"] | None = None
    """A cumulative budget's period (UTC calendar day or month); ``null`` for the run's."""
    cap_tokens: int | None = Field(default=None, ge=0)
    """The token cap passed (input + output tokens); ``null`` when it is the USD cap."""
    spent_tokens: int | None = Field(default=None, ge=0)
    """The tokens the budget had used (and held) when the cap was passed."""


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
    """The agent showed a generative UI component (its kind's schema accepted the props).

    Version 2 added ``id`` and ``call_id``; ``upcast_ui_component_v1`` fills them with
    ``null`` for a version 1 event.
    """

    TYPE: ClassVar[str] = "ui.component"
    VERSION: ClassVar[int] = 2

    component: str
    """The kind: ``table``, ``diff``, ``options``, ``markdown``, ``chart``, a plugin's
    ``package.kind``."""
    props: dict[str, JsonValue]
    id: str | None = None
    """The component's id in the run (``cmp_…``): what a choice names."""
    call_id: str | None = None
    """The tool call that showed it."""


def upcast_ui_component_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version 1 ``ui.component`` had no id and no call: both ``null``."""
    return {**data, "id": data.get("id"), "call_id": data.get("call_id")}


class UiAsked(Payload):
    """An options card waits for a person's choice (an ``ask_choice`` call): the run waits."""

    TYPE: ClassVar[str] = "ui.asked"

    component_id: str
    call_id: str
    expires_at: str | None = None
    """When the wait ends without a choice (ISO 8601, UTC); ``None``: no deadline."""


class UiChosen(Payload):
    """A choice was made on an options card that waited for one (or its wait was closed)."""

    TYPE: ClassVar[str] = "ui.chosen"

    component_id: str
    choice: str | None
    """The chosen option's id; ``None``: closed without a choice (its deadline passed)."""
    by: str
    """Who chose (``user:<id>``), or ``system`` for a closed wait."""
    reason: str | None = None
    """Why the wait was closed without a choice."""
    auto: bool = False
    """True when no person chose."""


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
