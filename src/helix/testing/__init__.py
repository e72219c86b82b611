"""Helix's public test kit: realistic sessions, a mock model server, a manual clock.

The backend conformance suites live in ``helix.testing.conformance`` (they need
pytest); third-party backends run them exactly as Helix's own do.
"""

from ._clock import ManualClock as ManualClock
from ._mock_server import MockModelServer as MockModelServer
from ._mock_server import RecordedRequest as RecordedRequest
from ._sessions import run_created as run_created
from ._sessions import session_events as session_events
from ._sessions import turn_events as turn_events

__all__ = [
    "ManualClock",
    "MockModelServer",
    "RecordedRequest",
    "run_created",
    "session_events",
    "turn_events",
]
