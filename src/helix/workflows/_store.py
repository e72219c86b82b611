"""The workflow store: every version of every workspace's workflows, and who made it.

A save never changes a version: it adds the next one, with who made it (``by``: an
actor, ``user:ann`` or ``run:ID``), how (``canvas``, ``chat``, ``file``, ``api``), when,
and what changed. Saving on top of a version that is no longer the latest is refused
(``WorkflowConflictError``): two editors never overwrite each other. The versions live in
the database ``HELIX_DB`` names, in tables of their own (SQLite or PostgreSQL); every
backend passes the one conformance suite in ``tests/workflows``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

EditHow = Literal["canvas", "chat", "file", "api"]
"""Where an edit came from: the dashboard's canvas, an ``edit_workflow`` call (a chat),
a YAML file (``helix workflows edit``/``import``), or the API."""


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """One stored version of a workflow, as the store holds it."""

    workspace: str
    name: str
    version: int
    body: dict[str, Any]
    """The definition's JSON data (``Workflow.to_data``)."""
    by: str
    how: str
    at: str
    """When it was saved (ISO 8601, UTC)."""
    change: str
    """What changed from the version before, in one line."""


class WorkflowStore(ABC):
    """Versions of workflows, per workspace; which runs edit or run which workflow."""

    @abstractmethod
    async def add_version(
        self,
        workspace: str,
        name: str,
        body: dict[str, Any],
        *,
        base: int | None,
        by: str,
        how: str,
        at: str,
        change: str,
    ) -> int:
        """Store the next version and return its number.

        ``base``: the version the edit was made on (``0``: the workflow must not exist
        yet); a base that is not the latest is a ``WorkflowConflictError``. ``None``:
        on top of whatever is latest.
        """

    @abstractmethod
    async def get(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredVersion | None:
        """That version (``None``: the latest), if there is one."""

    @abstractmethod
    async def history(self, workspace: str, name: str) -> list[StoredVersion]:
        """Every version, oldest first (empty if there is no such workflow)."""

    @abstractmethod
    async def latest(self, workspace: str) -> list[StoredVersion]:
        """The latest version of each of the workspace's workflows, by name."""

    @abstractmethod
    async def bind_run(self, run_id: str, workspace: str, name: str, purpose: str) -> None:
        """Record that ``run_id`` edits (``chat``) or runs (``run``) the workflow."""

    @abstractmethod
    async def bound(self, run_id: str) -> tuple[str, str, str] | None:
        """(workspace, name, purpose) a run was bound to, if any."""

    async def close(self) -> None:  # noqa: B027 (a no-op unless the backend holds resources)
        """Release the connection."""


def stale(name: str, base: int, latest: int) -> str:
    """Why a save on ``base`` is refused when ``latest`` is the latest version."""
    if latest == 0:
        return f"workflow {name!r} has no version {base}: it does not exist yet"
    if base == 0:
        return f"workflow {name!r} exists already (version {latest}): edit it on top of that"
    return (
        f"workflow {name!r} was saved on top of version {base}, but version {latest} is the"
        " latest: reload it and make the edit again"
    )
