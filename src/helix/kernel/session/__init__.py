"""Sessions: a run's state as a pure fold over its events."""

from ._replay import apply as apply
from ._replay import fold as fold
from ._replay import replay as replay
from ._replay import replay_run as replay_run
from ._replay import turn_boundary as turn_boundary
from ._spend import SpendReport as SpendReport
from ._spend import spend as spend
from ._state import CallRequest as CallRequest
from ._state import Message as Message
from ._state import PendingApproval as PendingApproval
from ._state import SessionState as SessionState
from ._state import Usage as Usage

__all__ = [
    "CallRequest",
    "Message",
    "PendingApproval",
    "SessionState",
    "SpendReport",
    "Usage",
    "apply",
    "fold",
    "replay",
    "replay_run",
    "spend",
    "turn_boundary",
]
