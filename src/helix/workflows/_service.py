"""``Workflows``: the operations every surface shares, over one ``WorkflowStore``.

List, get (a version), save (a new version, on top of the one the editor read), edit
(operations applied to the latest), history; and ``editor_for``, the ``edit_workflow``
callback a run is given. ``helix.api.LocalApi`` calls these; the server and the CLI go
through it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from helix.errors import WorkflowConflictError, WorkflowError, WorkflowNotFoundError

from ._model import Workflow
from ._ops import apply_ops, describe_change, parse_ops
from ._store import StoredVersion, WorkflowStore, stale
from ._text import dump, from_data

if TYPE_CHECKING:
    from helix.tools import WorkflowEdit


class WorkflowVersion(BaseModel):
    """One version of a workflow, as the API answers it."""

    workspace: str
    name: str
    version: int
    by: str
    """Who saved it: ``user:NAME``, or ``run:ID`` (an agent's ``edit_workflow``)."""
    how: str
    """``canvas``, ``chat``, ``file`` or ``api``."""
    at: str
    change: str
    """What changed from the version before, in one line."""
    workflow: Workflow | None = None
    """The definition (left out of a history listing)."""


class WorkflowSummary(BaseModel):
    """A workflow in a listing: its latest version."""

    name: str
    description: str
    version: int
    steps: int
    by: str
    at: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _version(stored: StoredVersion, *, body: bool = True) -> WorkflowVersion:
    workflow = from_data(stored.body, source=f"stored workflow {stored.name}") if body else None
    return WorkflowVersion(
        workspace=stored.workspace,
        name=stored.name,
        version=stored.version,
        by=stored.by,
        how=stored.how,
        at=stored.at,
        change=stored.change,
        workflow=workflow,
    )


class Workflows:
    """A workspace-aware service over ``store`` (``now`` gives the time of a save)."""

    def __init__(self, store: WorkflowStore, *, now: Callable[[], str] = _now) -> None:
        self.store = store
        self._now = now

    async def list(self, workspace: str) -> list[WorkflowSummary]:
        """The workspace's workflows, by name, each at its latest version."""
        found = []
        for stored in await self.store.latest(workspace):
            steps = stored.body.get("steps")
            found.append(
                WorkflowSummary(
                    name=stored.name,
                    description=str(stored.body.get("description", "")),
                    version=stored.version,
                    steps=len(steps) if isinstance(steps, list) else 0,
                    by=stored.by,
                    at=stored.at,
                )
            )
        return found

    async def get(self, workspace: str, name: str, version: int | None = None) -> WorkflowVersion:
        """That version (default: the latest); ``WorkflowNotFoundError`` if there is none."""
        stored = await self.store.get(workspace, name, version)
        if stored is None:
            which = f" version {version}" if version is not None else ""
            raise WorkflowNotFoundError(f"no workflow {name!r}{which} in workspace {workspace!r}")
        return _version(stored)

    async def save(
        self,
        workspace: str,
        workflow: Workflow,
        *,
        base_version: int | None,
        by: str,
        how: str,
    ) -> WorkflowVersion:
        """Store ``workflow`` as its next version, made on ``base_version`` (see the store)."""
        old = await self.store.get(workspace, workflow.name)
        before = from_data(old.body) if old is not None else None
        change = describe_change(before, workflow)
        version = await self.store.add_version(
            workspace,
            workflow.name,
            workflow.to_data(),
            base=base_version,
            by=by,
            how=how,
            at=self._now(),
            change=change,
        )
        return await self.get(workspace, workflow.name, version)

    async def edit(
        self,
        workspace: str,
        name: str,
        operations: object,
        *,
        base_version: int | None,
        by: str,
        how: str,
    ) -> WorkflowVersion:
        """Apply edit operations (``_ops.py``) to the latest version and save the result."""
        ops = parse_ops(operations)
        current = await self.get(workspace, name)
        if base_version is not None and base_version != current.version:
            raise WorkflowConflictError(stale(name, base_version, current.version))
        assert current.workflow is not None
        edited = apply_ops(current.workflow, ops)
        return await self.save(workspace, edited, base_version=current.version, by=by, how=how)

    async def history(self, workspace: str, name: str) -> builtins.list[WorkflowVersion]:
        """Every version, oldest first, without their definitions."""
        versions = await self.store.history(workspace, name)
        if not versions:
            raise WorkflowNotFoundError(f"no workflow {name!r} in workspace {workspace!r}")
        return [_version(stored, body=False) for stored in versions]

    def editor_for(self, workspace: str, run_id: str) -> RunEditor:
        """The ``edit_workflow`` callback of a run of ``workspace``."""
        return RunEditor(self, workspace, run_id)


class RunEditor:
    """One run's ``WorkflowEditor``: its workspace's workflows, saved as ``run:ID`` by chat.

    A run started from a workflow's chat box (bound to it: ``bind_run``) may edit that
    workflow only.
    """

    def __init__(self, workflows: Workflows, workspace: str, run_id: str) -> None:
        self._workflows = workflows
        self._workspace = workspace
        self._run_id = run_id

    async def edit(
        self, workflow: str, operations: list[dict[str, Any]], *, base_version: int | None
    ) -> WorkflowEdit:
        """Apply the operations; ``HelixError`` says why not."""
        bound = await self._workflows.store.bound(self._run_id)
        if bound is not None and bound[2] == "chat" and bound[1] != workflow:
            raise WorkflowError(f"this run edits the workflow {bound[1]!r} only, not {workflow!r}")
        done = await self._workflows.edit(
            self._workspace,
            workflow,
            operations,
            base_version=base_version,
            by=f"run:{self._run_id}",
            how="chat",
        )
        assert done.workflow is not None
        from helix.tools import WorkflowEdit

        return WorkflowEdit(done.name, done.version, done.change, dump(done.workflow))
