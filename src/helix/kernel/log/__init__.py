"""The append-only session log: one interface, several backends."""

from ._checkpoint import DEFAULT_WAL_LIMIT as DEFAULT_WAL_LIMIT
from ._codec import DEFAULT_BLOB_THRESHOLD as DEFAULT_BLOB_THRESHOLD
from ._codec import encode as encode_event
from ._ids import new_run_id as new_run_id
from ._memory import MemoryEventStore as MemoryEventStore
from ._open import open_store as open_store
from ._open import parse_store_url as parse_store_url
from ._records import Durability as Durability
from ._records import EncodedEvent as EncodedEvent
from ._records import FoldSnapshot as FoldSnapshot
from ._records import Lease as Lease
from ._records import RunPage as RunPage
from ._records import RunRecord as RunRecord
from ._sqlite import SqliteEventStore as SqliteEventStore
from ._store import DEFAULT_SNAPSHOT_EVERY as DEFAULT_SNAPSHOT_EVERY
from ._store import FORK_POINT_TYPES as FORK_POINT_TYPES
from ._store import EventStore as EventStore
from ._subscription import AllRunsSubscription as AllRunsSubscription
from ._subscription import Subscription as Subscription
from ._transfer import export_lines as export_lines
from ._transfer import import_lines as import_lines

__all__ = [
    "DEFAULT_BLOB_THRESHOLD",
    "DEFAULT_SNAPSHOT_EVERY",
    "DEFAULT_WAL_LIMIT",
    "FORK_POINT_TYPES",
    "AllRunsSubscription",
    "Durability",
    "EncodedEvent",
    "EventStore",
    "FoldSnapshot",
    "Lease",
    "MemoryEventStore",
    "RunPage",
    "RunRecord",
    "SqliteEventStore",
    "Subscription",
    "encode_event",
    "export_lines",
    "import_lines",
    "new_run_id",
    "open_store",
    "parse_store_url",
]
