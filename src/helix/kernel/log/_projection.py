"""What a batch of events does to its run's registry row.

The registry row is a cache of facts the log implies; computing the change from the
very events being appended, inside the same transaction, is what keeps the two from
ever disagreeing.
"""

from __future__ import annotations

from collections.abc import Sequence

from helix.kernel.events import (
    STATUS_AFTER,
    ContextCompacted,
    ModelResponded,
    NewEvent,
    RunStatus,
    TurnStarted,
)

from ._records import RunDelta

_COUNTED = frozenset({"turn.started", "model.responded", "context.compacted"})
"""The types whose payload changes the row's counters (besides the status ones)."""


def delta_of(events: Sequence[NewEvent]) -> RunDelta:
    """Sum up how ``events`` change their run's registry row."""
    status: RunStatus | None = None
    turns: int | None = None
    input_tokens = output_tokens = 0
    cost = 0.0
    status_after = STATUS_AFTER
    for event in events:
        payload = event.payload
        kind = payload.TYPE
        if kind not in status_after and kind not in _COUNTED:
            continue  # most of a turn's events (gates, tool calls): nothing to sum
        if kind in status_after:
            status = status_after[kind]
        if kind == "turn.started":
            assert isinstance(payload, TurnStarted)
            turns = payload.turn if turns is None else max(turns, payload.turn)
        elif kind in ("model.responded", "context.compacted"):
            assert isinstance(payload, ModelResponded | ContextCompacted)
            input_tokens += payload.usage.input_tokens
            output_tokens += payload.usage.output_tokens
            cost += payload.cost_usd or 0.0
    return RunDelta(status, turns, input_tokens, output_tokens, cost)
