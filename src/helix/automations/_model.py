"""What an automation is: a workspace's trigger, the target it starts, its missed-slot policy.

Every shape is a closed pydantic model (unknown fields are refused); the trigger and the
target are unions discriminated by ``kind``. These are the REST API's wire models too.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from helix.errors import ConfigError

from ._cron import CronSchedule

MissedPolicy = Literal["skip", "once", "all"]
"""What a schedule does with the slots that passed while no server ran (docs/automations.md)."""
RunEventType = Literal["run.failed", "run.completed", "run.cancelled"]
"""The run endings an ``event`` trigger can follow."""
MISSED_ALL_CAP = 100
"""``all`` fires at most this many missed slots (the latest ones) after a restart."""
MISSED_LOOKBACK_S = 7 * 86400.0
"""Missed slots older than this (a week) are never fired, whatever the policy."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CronTrigger(_Closed):
    """Fire at each slot of a five-field cron expression, in ``timezone`` (default UTC)."""

    kind: Literal["cron"] = "cron"
    cron: str
    timezone: str = "UTC"

    @model_validator(mode="after")
    def _parses(self) -> CronTrigger:
        try:
            parsed = CronSchedule.parse(self.cron, self.timezone)
        except ConfigError as error:
            raise ValueError(str(error)) from None
        object.__setattr__(self, "cron", parsed.expression)
        return self

    def schedule(self) -> CronSchedule:
        """The parsed expression."""
        return CronSchedule.parse(self.cron, self.timezone)


class WebhookTrigger(_Closed):
    """Fire on a ``POST /api/v1/hooks/{id}`` signed with the automation's secret."""

    kind: Literal["webhook"] = "webhook"


class EventTrigger(_Closed):
    """Fire when a run of the workspace ends with ``event`` (optionally, of one blueprint).

    Runs that an automation started never trigger one (no chains, no loops).
    """

    kind: Literal["event"] = "event"
    event: RunEventType = "run.failed"
    blueprint: str | None = None
    """Only runs of the blueprint with this name (``run.created.blueprint``)."""


Trigger = Annotated[CronTrigger | WebhookTrigger | EventTrigger, Field(discriminator="kind")]


class BlueprintTarget(_Closed):
    """Start a run of the workspace's stored blueprint ``blueprint`` on ``objective``."""

    kind: Literal["blueprint"] = "blueprint"
    blueprint: str
    objective: str = Field(min_length=1, max_length=20_000)
    model: str | None = None
    """Overrides the blueprint's model."""

    @field_validator("objective")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the objective is empty: say what the agent should do")
        return value


class WorkflowTarget(_Closed):
    """Start a run of the workspace's workflow ``workflow`` (not wired yet: refused)."""

    kind: Literal["workflow"] = "workflow"
    workflow: str
    objective: str | None = None


class GraphTarget(_Closed):
    """Start the task graph of the workspace's stored plan ``plan`` (a blueprint with tasks)."""

    kind: Literal["graph"] = "graph"
    plan: str
    objective: str | None = None


Target = Annotated[BlueprintTarget | WorkflowTarget | GraphTarget, Field(discriminator="kind")]


class AutomationSpec(_Closed):
    """What ``add`` takes: a name unique in the workspace, a trigger, a target, a policy."""

    name: str
    trigger: Trigger
    target: Target
    missed: MissedPolicy = "once"

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "a name is 1-64 letters, digits, '_', '.', '-', starting with a letter or digit"
            )
        return value


class Firing(_Closed):
    """One claimed slot of an automation: when, why, and the run it started (or the error)."""

    slot: str
    """What fired: ``cron:ISO`` (the slot), ``webhook:…``, ``event:RUN:TYPE``."""
    fired_at: str
    run_id: str | None = None
    error: str | None = None


class Automation(_Closed):
    """A stored automation (never its webhook secret)."""

    id: str
    workspace: str
    name: str
    owner: str
    """Who added it (``user:NAME``): its runs are started as them."""
    trigger: Trigger
    target: Target
    missed: MissedPolicy
    paused: bool = False
    created_at: str
    active_since: float
    """POSIX seconds since when its schedule counts slots (creation, or the last resume)."""
    next_firing: str | None = None
    """The next cron slot (``None`` for other triggers, or while paused)."""
    last_firing: Firing | None = None


class AutomationList(_Closed):
    """``GET /automations``: the automations of the caller's workspaces."""

    automations: list[Automation]


class AutomationCreated(_Closed):
    """``POST /automations``: the automation, and (webhooks only) its secret, shown once."""

    automation: Automation
    secret: str | None = None
    """The webhook's signing secret: shown here once, never again."""
