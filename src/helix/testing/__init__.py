"""Helix's public test kit: realistic sessions to feed stores and folds.

The backend conformance suites live in ``helix.testing.conformance`` (they need
pytest); third-party backends run them exactly as Helix's own do.
"""

from ._sessions import run_created as run_created
from ._sessions import session_events as session_events
from ._sessions import turn_events as turn_events

__all__ = ["run_created", "session_events", "turn_events"]
