"""The arguments of each MCP tool, as pydantic models: one schema, one validation.

Each model is the tool's ``inputSchema`` (``schema_of``) and what a call's arguments are
checked against before anything is done, so a bad argument is refused with the field
and the reason, and nothing unknown is taken silently (``extra="forbid"``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from helix.kernel.events import RunStatus


def _run_id() -> Any:
    return Field(
        min_length=1,
        max_length=200,
        description="The run: its id, a unique prefix of it, or `last` (the newest run).",
    )


TurnPoint = int | Literal["start", "now", "last"]
"""A point of a run's world: ``start``, ``now`` (``last``: the same), or a turn's end."""

EVENTS_PAGE = 500
"""The most events one ``run_events`` call returns."""
WAIT_MAX_S = 60.0
"""The longest one ``run_events`` call waits for a new event."""
READ_MAX_BYTES = 4 * 1024 * 1024
"""The most bytes of a file one ``read_file`` call returns."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StartRunArgs(_Args):
    objective: str = Field(
        min_length=1, max_length=100_000, description="What the agent is to do, in words."
    )
    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="The model as `provider:model` (e.g. `openai:gpt-4.1`); default: the"
        " blueprint's, else the store's default.",
    )
    blueprint: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="A blueprint: the path of a blueprint file here (embedded), or the name"
        " of one stored in the workspace (against a server).",
    )
    folder: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="The run's world: a folder name under the workspace's worlds (created if"
        " missing), or, embedded, a path on this machine. Default: a new, empty folder.",
    )
    workspace: str | None = Field(
        default=None, min_length=1, max_length=200, description="Default: the door's own."
    )
    budget_usd: float | None = Field(
        default=None, ge=0, le=1e9, description="A cap on the run's model spend, in USD."
    )
    auto_approve: bool = Field(
        default=False,
        description="Allow every call the gates would ask a person about. Refused unless"
        " the server was started with --allow-auto-approve.",
    )


class ListRunsArgs(_Args):
    status: RunStatus | None = Field(default=None, description="Only runs in this status.")
    workspace: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=20, ge=1, le=100, description="How many runs (newest first).")
    cursor: str | None = Field(
        default=None, max_length=500, description="`next_cursor` of the previous page."
    )


class RunArgs(_Args):
    run_id: str = _run_id()


class RunEventsArgs(_Args):
    run_id: str = _run_id()
    after: int = Field(
        default=-1,
        ge=-1,
        description="Return events with seq greater than this (-1: from the first);"
        " pass the previous answer's `next_after` to page on.",
    )
    limit: int = Field(default=100, ge=1, le=EVENTS_PAGE, description="The most events.")
    wait_s: float = Field(
        default=0,
        ge=0,
        le=WAIT_MAX_S,
        description="If there is no event after `after` yet, wait up to this many seconds"
        " for one (a long poll), unless the run has ended.",
    )


class DecideArgs(_Args):
    run_id: str = _run_id()
    request_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The approval request (`pending_approvals`); default: the run's only one.",
    )
    reason: str | None = Field(
        default=None, max_length=10_000, description="Why, for the log (the model is told)."
    )


class ChooseArgs(_Args):
    run_id: str = _run_id()
    choice: str = Field(
        min_length=1, max_length=200, description="The option's id (`pending_choices`)."
    )
    component_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The options card (`pending_choices`); default: the run's only one.",
    )


class SteerArgs(_Args):
    run_id: str = _run_id()
    message: str = Field(
        min_length=1,
        max_length=100_000,
        description="What to tell the agent; it reads it before its next model call.",
    )


class ResumeArgs(_Args):
    run_id: str = _run_id()
    budget_usd: float | None = Field(
        default=None, ge=0, le=1e9, description="A new cap on the run's model spend, in USD."
    )
    max_turns: int | None = Field(
        default=None, ge=1, le=10_000_000, description="A new cap on the run's turns."
    )
    max_seconds: float | None = Field(
        default=None, gt=0, le=1e9, description="A new cap on the run's seconds since creation."
    )


class ForkArgs(_Args):
    run_id: str = _run_id()
    turn: int = Field(
        ge=0, le=10_000_000, description="Fork where this turn ended (0: at the start)."
    )
    message: str | None = Field(
        default=None, max_length=100_000, description="A message the fork's agent reads first."
    )
    model: str | None = Field(
        default=None, min_length=1, max_length=500, description="Another model for the fork."
    )


class RollbackArgs(_Args):
    run_id: str = _run_id()
    to: TurnPoint = Field(
        default="start", description="`start`, or the number of the turn whose end to restore."
    )


class FilesArgs(_Args):
    run_id: str = _run_id()
    path: str | None = Field(
        default=None, max_length=4096, description="A folder or file of the world; default: all."
    )
    turn: TurnPoint = Field(
        default="now", description="`now`, `start`, or a turn number (as it was at its end)."
    )


class ReadFileArgs(_Args):
    run_id: str = _run_id()
    path: str = Field(min_length=1, max_length=4096, description="The file, in the world.")
    turn: TurnPoint = Field(
        default="now", description="`now`, `start`, or a turn number (as it was at its end)."
    )
    max_bytes: int = Field(
        default=256 * 1024,
        ge=1,
        le=READ_MAX_BYTES,
        description="Return at most this many bytes (`truncated` says whether there were more).",
    )


class DiffArgs(_Args):
    run_id: str = _run_id()
    start: TurnPoint = Field(default="start", description="From: `start` or a turn's end.")
    end: TurnPoint = Field(default="now", description="To: `now` or a turn's end.")
    path: str | None = Field(
        default=None, max_length=4096, description="Only this file or folder; default: all."
    )


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema as a tool's ``inputSchema`` (without pydantic's titles)."""
    schema: dict[str, Any] = _untitled(model.model_json_schema())
    return schema


def _untitled(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _untitled(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_untitled(item) for item in node]
    return node
