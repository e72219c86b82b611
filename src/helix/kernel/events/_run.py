"""Run lifecycle events: creation, forking, and every status change."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, StrictInt

from ._payload import ForkPoint, Payload


class Budget(BaseModel):
    """Hard caps a run may not exceed; ``None`` means no cap."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float | None = Field(default=None, ge=0)
    max_turns: int | None = Field(default=None, ge=0)
    max_seconds: float | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)
    """Input plus output tokens of the run's own model calls (Helix's addition)."""


class RunSettings(BaseModel):
    """How a run was set up, so that any process (and any later Helix) can resume it.

    Part of ``run.created`` since its version 2 (version 1 held an untyped mapping, or
    nothing: ``upcast_run_created_v1`` reads both). Never holds secrets: keys stay in
    the environment.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    blueprint: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])
    """The resolved blueprint as JSON. The kernel keeps it as data; the runtime validates
    it (``helix.runtime.Blueprint``) when it creates, imports or resumes the run. Empty:
    the default blueprint, with the run's ``model``."""
    auto_approve: StrictBool = False
    """Whether the run allows what the gates would ask a person about."""
    attended: StrictBool = True
    """Whether a person may answer questions (else a question is a denial)."""
    depth: StrictInt = Field(default=0, ge=0)
    """How many delegations lie above the run (0: a person started it)."""
    role: str | None = Field(default=None, max_length=32)
    """The role the run's own turns serve for the run that made it (Helix's addition):
    ``worker`` (a delegated child, a graph's task), ``judge`` (a tree of thoughts'
    judge run); ``None``: ``main``. Its model calls log it (``model.requested.role``)."""


class RunCreated(Payload):
    """The first event of every run that is not a fork."""

    TYPE: ClassVar[str] = "run.created"
    VERSION: ClassVar[int] = 2

    objective: str
    """What the person asked the agent to do."""
    model: str
    """The model as ``provider:model``."""
    world: str
    """The directory the run works in."""
    blueprint: str | None = None
    """The blueprint's name, or ``None`` for an ad-hoc run."""
    blueprint_version: StrictInt | None = Field(default=None, ge=1)
    """The version of the workspace's stored blueprint the run was made from; ``None``:
    not a stored one (a file, inline fields, none), or a log from before versions."""
    parent: ForkPoint | None = None
    """For a child run started by delegation, where its parent was; else ``None``."""
    budget: Budget | None = None
    settings: RunSettings = Field(default_factory=RunSettings)
    """The resolved blueprint and run options (Helix's addition), so that any process
    can resume the run from its log alone."""


def upcast_run_created_v1(data: dict[str, Any]) -> dict[str, Any]:
    """``run.created`` v1 → v2: ``settings`` was a mapping or ``null``; ``null`` is the defaults.

    A v1 mapping written by Helix has exactly v2's keys (``depth`` only when not 0), so
    it passes as it is; anything else in it is refused where the event is validated.
    """
    settings = data.get("settings")
    return {**data, "settings": {} if settings is None else settings}


class RunForked(Payload):
    """The first own event of a fork; everything before it is read from the parent."""

    TYPE: ClassVar[str] = "run.forked"

    parent: ForkPoint
    turn: int = Field(ge=0)
    """The turn boundary the fork starts from."""
    message: str | None = None
    """A message the fork starts with (a different instruction from that point)."""
    model: str | None = None
    """A different model for the fork, or ``None`` to keep the parent's."""
    world: str | None = None
    """The fork's own world directory (Helix's addition), materialised from the
    parent's snapshot at the fork point; ``None``: it shares the parent's."""
    budget: Budget | None = None
    """The fork's own caps (Helix's addition: a strategy's branch gets one), in force
    from here, for what the fork itself spends; ``None``: its parent's."""


class RunStarted(Payload):
    """The run's loop began executing."""

    TYPE: ClassVar[str] = "run.started"


class RunResumed(Payload):
    """The run's loop continued after a pause or a restart of the process."""

    TYPE: ClassVar[str] = "run.resumed"

    budget: Budget | None = None
    """New caps, when the run is resumed with a raised budget (Helix's addition)."""
    by: str | None = None
    """Who resumed it; ``None`` when the process did, restarting."""


class RunPaused(Payload):
    """The run stopped between steps and waits to be resumed."""

    TYPE: ClassVar[str] = "run.paused"

    reason: str
    """Why: ``user``, ``budget``, ``supervisor``, ``model_errors``, …"""
    detail: str | None = None
    """More on why, in words (Helix's addition): for ``model_errors``, how many replies
    in a row went wrong and the last mistake; ``None`` for most reasons."""


class RunCompleted(Payload):
    """The model ended the run with a reply that asked for no tool."""

    TYPE: ClassVar[str] = "run.completed"

    summary: str


class RunFailed(Payload):
    """The run stopped on an error it could not recover from."""

    TYPE: ClassVar[str] = "run.failed"

    error: str


class RunCancelled(Payload):
    """Someone cancelled the run."""

    TYPE: ClassVar[str] = "run.cancelled"

    by: str
