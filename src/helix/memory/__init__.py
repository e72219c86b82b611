"""Memory and artifacts across runs, in two scopes: a person's own and a workspace's.

A memory is a short text (with tags, and a key that makes it replaceable); an artifact
a named file (bytes and a media type, at most 10 MiB a version, every save a new
version). ``personal`` ones are their person's alone; ``workspace`` ones are read by
the workspace's members and written by those who may act (``Memories``, over a
``MemoryStore`` in the database ``HELIX_DB`` names: SQLite with FTS5, PostgreSQL with
its full text search). A run reaches its memory through ``RunMemory`` (the tools'
``MemoryDoor``); people through ``helix.api``. See docs/memory.md.
"""

from ._model import MAX_ARTIFACT_BYTES as MAX_ARTIFACT_BYTES
from ._model import MAX_QUERY as MAX_QUERY
from ._model import MAX_RECALL as MAX_RECALL
from ._model import MAX_TEXT as MAX_TEXT
from ._model import SCOPES as SCOPES
from ._model import Artifact as Artifact
from ._model import AuditEntry as AuditEntry
from ._model import Memory as Memory
from ._model import Scope as Scope
from ._model import check_name as check_name
from ._model import check_scope as check_scope
from ._model import search_words as search_words
from ._open import open_memory as open_memory
from ._run import RoleOf as RoleOf
from ._run import RunMemory as RunMemory
from ._service import Memories as Memories
from ._service import Person as Person
from ._store import MemoryStore as MemoryStore
from ._transfer import MAX_IMPORT_BYTES as MAX_IMPORT_BYTES
from ._transfer import export_lines as export_lines
from ._transfer import import_lines as import_lines

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "MAX_IMPORT_BYTES",
    "MAX_QUERY",
    "MAX_RECALL",
    "MAX_TEXT",
    "SCOPES",
    "Artifact",
    "AuditEntry",
    "Memories",
    "Memory",
    "MemoryStore",
    "Person",
    "RoleOf",
    "RunMemory",
    "Scope",
    "check_name",
    "check_scope",
    "export_lines",
    "import_lines",
    "open_memory",
    "search_words",
]
