"""Every error Helix raises on purpose, in one tree.

Callers catch the branch they can handle; surfaces (CLI, server) map branches to exit
codes and HTTP statuses, so a user always gets a precise message instead of a trace::

    HelixError
    ├── ConfigError              a setting is malformed or points somewhere unusable
    ├── StoreUnavailableError    the event store cannot be opened or reached
    ├── NotFoundError
    │   └── RunNotFoundError     no run with that id (in this workspace)
    ├── ConflictError
    │   ├── SeqConflictError     an append's expected seq is not the log's next seq
    │   └── RunExistsError       a run with that id already exists
    ├── InvalidEventError        an event is refused before anything is written
    │   ├── UnknownEventTypeError
    │   └── InvalidPayloadError
    ├── ForkError                the fork point is past the head or not a turn boundary
    ├── AppendOnlyError          something tried to change or delete a stored event
    └── SubscriptionOverflowError  a subscriber fell too far behind to be caught up
"""

from __future__ import annotations


class HelixError(Exception):
    """Base of every error Helix raises deliberately."""

    code = "helix_error"
    """A stable, machine-readable name for the error (used in API error bodies)."""


class ConfigError(HelixError):
    """A setting (environment variable, URL, option) is malformed or unusable."""

    code = "invalid_config"


class StoreUnavailableError(HelixError):
    """The event store cannot be opened or reached."""

    code = "store_unavailable"


class NotFoundError(HelixError):
    """The thing asked for does not exist, or is not visible to the caller."""

    code = "not_found"


class RunNotFoundError(NotFoundError):
    """No run with this id exists."""

    code = "run_not_found"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} does not exist")
        self.run_id = run_id


class ConflictError(HelixError):
    """The request contradicts the current state; retrying blindly will not help."""

    code = "conflict"


class SeqConflictError(ConflictError):
    """An append expected a different next seq than the log has.

    This is the log's optimistic-concurrency check: two writers racing on one run
    cannot both win, and the loser learns where the log really is.
    """

    code = "seq_conflict"

    def __init__(self, run_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"run {run_id!r}: append expected next seq {expected}, but the log's next seq is"
            f" {actual}"
        )
        self.run_id = run_id
        self.expected = expected
        self.actual = actual


class RunExistsError(ConflictError):
    """A run with this id already exists."""

    code = "run_exists"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} already exists")
        self.run_id = run_id


class InvalidEventError(HelixError):
    """An event was refused before anything was written."""

    code = "invalid_event"


class UnknownEventTypeError(InvalidEventError):
    """The event's type is not in the vocabulary."""

    code = "unknown_event_type"

    def __init__(self, event_type: str) -> None:
        super().__init__(f"unknown event type {event_type!r}")
        self.event_type = event_type


class InvalidPayloadError(InvalidEventError):
    """The event's data does not match its type's schema."""

    code = "invalid_payload"


class ForkError(HelixError):
    """A fork was asked for at a point where a run cannot be forked."""

    code = "invalid_fork_point"


class AppendOnlyError(HelixError):
    """Something tried to change or delete a stored event."""

    code = "append_only"


class SubscriptionOverflowError(HelixError):
    """A subscriber fell too far behind and asked to be told rather than caught up."""

    code = "subscription_overflow"

    def __init__(self, cursors: dict[str, int]) -> None:
        super().__init__("subscriber fell behind; resume from the given cursors")
        self.cursors = cursors
        """Last seq delivered per run id, to resume from."""
