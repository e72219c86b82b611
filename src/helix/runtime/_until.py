"""Where a caller stops a drive: a predicate on the folded state (``Engine.drive(until=…)``)."""

from __future__ import annotations

from collections.abc import Callable

from helix.kernel.session import SessionState

Until = Callable[[SessionState], bool]
"""When to stop driving: checked on the folded state before every step of the loop."""


class UntilFailed(Exception):
    """The caller's ``until`` raised (its error is the cause): not a crash of the run.

    The supervisor must not restart the loop for it, nor fail the run: the engine
    hands the caller's own error back to the caller.
    """


def holds(until: Until, state: SessionState) -> bool:
    """``until(state)``; its error wrapped in ``UntilFailed``."""
    try:
        return until(state)
    except Exception as error:
        raise UntilFailed(str(error)) from error
