"""Following a run, the same whether it is driven here or by a server: where it ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix.kernel.events import TERMINAL_EVENTS, Event

if TYPE_CHECKING:
    from helix.api import RunEvent

CHILD_WAIT_TRIES = 200
"""Tries, 50 ms apart, to find a child whose id its parent logged just before creating it."""


def stops_following(event: Event | RunEvent, depth: int, *, at_pause: bool = False) -> bool:
    """Whether following a run ends at ``event``.

    At its end; at a child's (``depth`` > 0) pause, which hands control back; and at the
    run's own pause when ``at_pause`` (nobody asked to wait for a resume there).
    """
    if event.type in TERMINAL_EVENTS:
        return True
    return event.type == "run.paused" and (depth > 0 or at_pause)
