"""Sessions: a run's state as a pure fold over its events."""

from ._live import BackgroundProcess as BackgroundProcess
from ._live import LiveState as LiveState
from ._replay import apply as apply
from ._replay import fold as fold
from ._replay import replay as replay
from ._replay import replay_run as replay_run
from ._replay import snapshot_run as snapshot_run
from ._replay import turn_boundary as turn_boundary
from ._snapshot import decode_state as decode_state
from ._snapshot import encode_state as encode_state
from ._snapshot import fold_version as fold_version
from ._snapshot import load_snapshot as load_snapshot
from ._snapshot import save_snapshot as save_snapshot
from ._spend import SPEND_BUCKETS as SPEND_BUCKETS
from ._spend import SPEND_GROUPS as SPEND_GROUPS
from ._spend import SpendBucket as SpendBucket
from ._spend import SpendGroup as SpendGroup
from ._spend import SpendQuery as SpendQuery
from ._spend import SpendReport as SpendReport
from ._spend import SpendSlot as SpendSlot
from ._spend import spend as spend
from ._state import BranchProgress as BranchProgress
from ._state import CallRequest as CallRequest
from ._state import ChoiceMade as ChoiceMade
from ._state import Message as Message
from ._state import PendingApproval as PendingApproval
from ._state import PendingChoice as PendingChoice
from ._state import SessionState as SessionState
from ._state import StrategyProgress as StrategyProgress
from ._state import TaskState as TaskState
from ._state import TaskStatus as TaskStatus
from ._state import Usage as Usage
from ._trace import TraceSpan as TraceSpan
from ._trace import trace as trace

__all__ = [
    "SPEND_BUCKETS",
    "SPEND_GROUPS",
    "BackgroundProcess",
    "BranchProgress",
    "CallRequest",
    "ChoiceMade",
    "LiveState",
    "Message",
    "PendingApproval",
    "PendingChoice",
    "SessionState",
    "SpendBucket",
    "SpendGroup",
    "SpendQuery",
    "SpendReport",
    "SpendSlot",
    "StrategyProgress",
    "TaskState",
    "TaskStatus",
    "TraceSpan",
    "Usage",
    "apply",
    "decode_state",
    "encode_state",
    "fold",
    "fold_version",
    "load_snapshot",
    "replay",
    "replay_run",
    "save_snapshot",
    "snapshot_run",
    "spend",
    "trace",
    "turn_boundary",
]
