"""Request and response bodies: the OpenAPI document is generated from these."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from helix.kernel.events import RunStatus
from helix.kernel.log import RunRecord

Text = Field(min_length=1, max_length=100_000)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(_Body):
    """``POST /auth/login``."""

    username: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=1000)


class LinkBody(_Body):
    """``POST /auth/link``: a one-time login token, as in the first start's link."""

    token: str = Field(min_length=1, max_length=200)


class TokenOut(BaseModel):
    """A signed token and when it expires."""

    token: str
    expires_at: str


class RunCreate(_Body):
    """``POST /runs``."""

    objective: str = Field(min_length=1, max_length=100_000)
    blueprint: dict[str, Any] | str | None = Field(default=None)
    """A blueprint: inline (the fields of a blueprint file), or the name of one stored in
    the workspace (``PUT /workspaces/{workspace}/blueprints/{name}``)."""
    model: str | None = Field(default=None, min_length=1, max_length=500)
    world: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """A folder name under the workspace's worlds (created if missing); default: a new one."""
    budget_usd: float | None = Field(default=None, ge=0, le=1e9)
    auto_approve: bool = False
    workspace: str | None = Field(default=None, max_length=64)
    """Default: the caller's personal workspace, else the first they may act in."""


class NewRunOut(BaseModel):
    """A new run."""

    id: str
    status: RunStatus


class ForkPointOut(BaseModel):
    """Where a fork branched off."""

    run_id: str
    seq: int


class RunOut(BaseModel):
    """A run, as ``GET /runs/{id}`` shows it."""

    id: str
    status: RunStatus
    objective: str
    model: str
    blueprint: str | None
    world: str
    parent: ForkPointOut | None
    workspace: str
    turns: int
    cost_usd: float
    input_tokens: int
    output_tokens: int
    events: int
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, record: RunRecord) -> RunOut:
        """From the run registry's row."""
        parent = record.parent
        return cls(
            id=record.id,
            status=record.status,
            objective=record.objective,
            model=record.model,
            blueprint=record.blueprint,
            world=record.world,
            parent=None if parent is None else ForkPointOut(run_id=parent.run_id, seq=parent.seq),
            workspace=record.workspace,
            turns=record.turns,
            cost_usd=record.cost_usd,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            events=record.next_seq,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class RunList(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunOut]
    next_cursor: str | None


class EventOut(BaseModel):
    """One event: the contract's JSON object."""

    run_id: str
    seq: int
    type: str
    v: int
    ts: str
    turn: int | None
    actor: str
    data: dict[str, Any]


class EventPage(BaseModel):
    """Events with seq > after, and the ``after`` of the next page."""

    events: list[EventOut]
    next_after: int


class SteerBody(_Body):
    """``POST /runs/{id}/steer``."""

    message: str = Field(min_length=1, max_length=100_000)


class Accepted(BaseModel):
    """The request was recorded in the run's log."""

    status: Literal["accepted"] = "accepted"


class ApprovalOut(BaseModel):
    """A pending approval request."""

    request_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    expires_at: str | None


class ApprovalList(BaseModel):
    """The run's pending approval requests."""

    approvals: list[ApprovalOut]


class DecisionBody(_Body):
    """``POST /runs/{id}/approvals/{request_id}``."""

    decision: Literal["allow", "deny"]
    reason: str | None = Field(default=None, max_length=10_000)


class DecisionOut(BaseModel):
    """A recorded decision."""

    request_id: str
    decision: Literal["allow", "deny"]


class ResumeBody(_Body):
    """``POST /runs/{id}/resume``: optionally with a new USD cap."""

    budget_usd: float | None = Field(default=None, ge=0, le=1e9)


class ForkBody(_Body):
    """``POST /runs/{id}/fork``."""

    turn: int = Field(ge=0, le=10_000_000)
    message: str | None = Field(default=None, max_length=100_000)
    model: str | None = Field(default=None, min_length=1, max_length=500)


class ForkOut(BaseModel):
    """A new fork."""

    id: str


class Health(BaseModel):
    """``GET /health``."""

    status: Literal["ok"] = "ok"
    version: str


class ApiTokenOut(BaseModel):
    """A new API token: shown once, stored hashed."""

    token: str


class Me(BaseModel):
    """The caller and their roles."""

    user: str
    workspaces: dict[str, str]


class ImportOut(BaseModel):
    """An imported run."""

    id: str
    status: RunStatus
    events: int
