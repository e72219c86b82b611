"""Helix's public test kit: sessions, mock model and MCP servers, a manual clock, host observers.

The backend conformance suites live in ``helix.testing.conformance`` (they need
pytest); third-party backends run them exactly as Helix's own do.
"""

from ._clock import ManualClock as ManualClock
from ._host import alive as alive
from ._host import kill_all as kill_all
from ._host import processes_mentioning as processes_mentioning
from ._host import wait_gone_now as wait_gone_now
from ._mcp_server import mcp_test_server_argv as mcp_test_server_argv
from ._mock_server import MockModelServer as MockModelServer
from ._mock_server import RecordedRequest as RecordedRequest
from ._sessions import run_created as run_created
from ._sessions import session_events as session_events
from ._sessions import turn_events as turn_events

__all__ = [
    "ManualClock",
    "MockModelServer",
    "RecordedRequest",
    "alive",
    "kill_all",
    "mcp_test_server_argv",
    "processes_mentioning",
    "run_created",
    "session_events",
    "turn_events",
    "wait_gone_now",
]
