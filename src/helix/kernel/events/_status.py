"""Which event types change a run's status, and to what."""

from __future__ import annotations

from typing import Literal

RunStatus = Literal["queued", "running", "waiting", "paused", "completed", "failed", "cancelled"]

RUN_STATUSES: tuple[RunStatus, ...] = (
    "queued",
    "running",
    "waiting",
    "paused",
    "completed",
    "failed",
    "cancelled",
)

TERMINAL_STATUSES: frozenset[RunStatus] = frozenset({"completed", "failed", "cancelled"})
"""Statuses a run never leaves."""

TERMINAL_EVENTS = frozenset(f"run.{status}" for status in TERMINAL_STATUSES)
"""The event types that end a run."""

STATUS_AFTER: dict[str, RunStatus] = {
    "run.created": "queued",
    "run.forked": "queued",
    "run.started": "running",
    "run.resumed": "running",
    "run.paused": "paused",
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
    "approval.requested": "waiting",
    "approval.decided": "running",
    "ui.asked": "waiting",
    "ui.chosen": "running",
}
"""The status a run has right after an event of each type (types not listed keep it)."""
