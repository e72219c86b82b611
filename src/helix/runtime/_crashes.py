"""What a run's log says when its loop crashed: restarted by its supervisor, or given up."""

from __future__ import annotations

from helix.errors import ConfigError
from helix.kernel.events import NewEvent, RunFailed, SupervisorRestarted
from helix.kernel.log import EventStore, Lease

from ._session import append_checked, finished


async def log_restart(store: EventStore, lease: Lease, error: BaseException, attempt: int) -> None:
    """Record that the run's loop crashed with ``error`` and is started again."""
    reason = describe(error)
    event = NewEvent(SupervisorRestarted(component="run loop", reason=reason, attempt=attempt))
    await append_checked(
        store, lease.run_id, lambda s: None if finished(s) else [event], lease=lease
    )


async def log_gave_up(store: EventStore, lease: Lease, error: BaseException) -> None:
    """Fail the run whose loop kept crashing (a ``ConfigError`` is said whole: it names its fix)."""
    cause = unwrap(error)
    if isinstance(cause, ConfigError):
        message = str(cause)
    else:
        message = f"the run loop kept crashing: {describe(error)}"
    failed = [NewEvent(RunFailed(error=message))]
    await append_checked(
        store, lease.run_id, lambda s: None if finished(s) else failed, lease=lease
    )


def unwrap(error: BaseException) -> BaseException:
    """The error itself, not the task groups it passed through."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """``Type: message`` of the error itself, not of the task groups it passed through."""
    error = unwrap(error)
    said = str(error).strip()
    return f"{type(error).__name__}: {said}" if said else f"{type(error).__name__} (no message)"
