"""Following a run, the same whether it is driven here or by a server: where it ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix.kernel.events import TERMINAL_EVENTS, Event

if TYPE_CHECKING:
    from helix.api import RunEvent

CHILD_WAIT_TRIES = 200
"""Tries, 50 ms apart, to find a child whose id its parent logged just before creating it."""


def stops_following(event: Event | RunEvent, depth: int) -> bool:
    """Whether following a run ends at ``event``.

    At its end; and a child's (``depth`` > 0) at its pause, which hands control back.
    """
    return event.type in TERMINAL_EVENTS or (depth > 0 and event.type == "run.paused")
