"""What a batch of events does to its run's registry row.

The registry row is a cache of facts the log implies; computing the change from the
very events being appended, inside the same transaction, is what keeps the two from
ever disagreeing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..events import (
    ApprovalDecided,
    ApprovalRequested,
    ModelResponded,
    NewEvent,
    RunCancelled,
    RunCompleted,
    RunCreated,
    RunFailed,
    RunForked,
    RunPaused,
    RunResumed,
    RunStarted,
    TurnStarted,
)
from ._records import RunDelta, RunStatus

STATUS_AFTER: dict[type, RunStatus] = {
    RunCreated: "queued",
    RunForked: "queued",
    RunStarted: "running",
    RunResumed: "running",
    RunPaused: "paused",
    RunCompleted: "completed",
    RunFailed: "failed",
    RunCancelled: "cancelled",
    ApprovalRequested: "waiting",
    ApprovalDecided: "running",
}
"""The status a run has right after an event of each type (types not listed keep it)."""


def delta_of(events: Sequence[NewEvent]) -> RunDelta:
    """Sum up how ``events`` change their run's registry row."""
    status: RunStatus | None = None
    turns: int | None = None
    input_tokens = output_tokens = 0
    cost = 0.0
    for event in events:
        payload = event.payload
        status = STATUS_AFTER.get(type(payload), status)
        if isinstance(payload, TurnStarted):
            turns = payload.turn if turns is None else max(turns, payload.turn)
        elif isinstance(payload, ModelResponded):
            input_tokens += payload.usage.input_tokens
            output_tokens += payload.usage.output_tokens
            cost += payload.cost_usd or 0.0
    return RunDelta(status, turns, input_tokens, output_tokens, cost)
