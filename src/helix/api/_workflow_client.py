"""The SDK's workflow operations: ``AsyncClient``'s and ``Client``'s (``WorkflowDoor``'s)."""

from __future__ import annotations

import os
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from ._models import Run

if TYPE_CHECKING:
    from helix.workflows import WorkflowSummary, WorkflowVersion

    from ._async_client import AsyncClient
    from ._protocol import HelixApi
    from ._workflow_door import WorkflowArg

T = TypeVar("T")


class AsyncClientWorkflows:
    """``AsyncClient``'s workflow operations, documented on ``WorkflowDoor``."""

    if TYPE_CHECKING:

        @property
        def api(self) -> HelixApi: ...

    async def workflows(self, *, workspace: str | None = None) -> list[WorkflowSummary]:
        """The workspace's workflows, each at its latest version."""
        return await self.api.workflows(workspace=workspace)

    async def workflow(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> WorkflowVersion:
        """One version of a workflow (default: the latest)."""
        return await self.api.workflow(name, version=version, workspace=workspace)

    async def save_workflow(
        self,
        workflow: WorkflowArg,
        *,
        base_version: int | None = None,
        how: str = "api",
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Store a definition as its next version (a stale ``base_version``: 409)."""
        return await self.api.save_workflow(
            workflow, base_version=base_version, how=how, workspace=workspace
        )

    async def edit_workflow(
        self,
        name: str,
        operations: list[dict[str, Any]],
        *,
        base_version: int | None = None,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Apply edit operations to the latest version and save the result."""
        return await self.api.edit_workflow(
            name, operations, base_version=base_version, workspace=workspace
        )

    async def import_workflow(
        self,
        path: str,
        *,
        world: str,
        base_version: int | None = 0,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Save the workflow file ``path`` of a world of the workspace."""
        return await self.api.import_workflow(
            path, world=world, base_version=base_version, workspace=workspace
        )

    async def workflow_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[WorkflowVersion]:
        """Every version of a workflow, oldest first."""
        return await self.api.workflow_history(name, workspace=workspace)

    async def run_workflow(
        self,
        name: str,
        *,
        version: int | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
    ) -> Run:
        """Start the workflow's task graph as a run."""
        return await self.api.run_workflow(
            name, version=version, world=world, workspace=workspace, budget_usd=budget_usd,
            auto_approve=auto_approve, attended=attended,
        )  # fmt: skip

    async def chat_workflow(
        self, name: str, message: str, *, model: str | None = None, workspace: str | None = None
    ) -> Run:
        """Start an agent run that edits this workflow as ``message`` asks."""
        return await self.api.chat_workflow(name, message, model=model, workspace=workspace)


class ClientWorkflows:
    """``Client``'s workflow operations (``AsyncClient``'s, without ``await``)."""

    if TYPE_CHECKING:
        _async: AsyncClient

        def _call(self, coroutine: Coroutine[Any, Any, T]) -> T: ...

    def workflows(self, *, workspace: str | None = None) -> list[WorkflowSummary]:
        """The workspace's workflows, each at its latest version."""
        return self._call(self._async.workflows(workspace=workspace))

    def workflow(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> WorkflowVersion:
        """One version of a workflow (default: the latest)."""
        return self._call(self._async.workflow(name, version=version, workspace=workspace))

    def save_workflow(
        self,
        workflow: WorkflowArg,
        *,
        base_version: int | None = None,
        how: str = "api",
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Store a definition as its next version (a stale ``base_version``: 409)."""
        return self._call(
            self._async.save_workflow(
                workflow, base_version=base_version, how=how, workspace=workspace
            )
        )

    def edit_workflow(
        self,
        name: str,
        operations: list[dict[str, Any]],
        *,
        base_version: int | None = None,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Apply edit operations to the latest version and save the result."""
        return self._call(
            self._async.edit_workflow(
                name, operations, base_version=base_version, workspace=workspace
            )
        )

    def import_workflow(
        self,
        path: str,
        *,
        world: str,
        base_version: int | None = 0,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Save the workflow file ``path`` of a world of the workspace."""
        return self._call(
            self._async.import_workflow(
                path, world=world, base_version=base_version, workspace=workspace
            )
        )

    def workflow_history(self, name: str, *, workspace: str | None = None) -> list[WorkflowVersion]:
        """Every version of a workflow, oldest first."""
        return self._call(self._async.workflow_history(name, workspace=workspace))

    def run_workflow(
        self,
        name: str,
        *,
        version: int | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
    ) -> Run:
        """Start the workflow's task graph as a run."""
        return self._call(
            self._async.run_workflow(
                name, version=version, world=world, workspace=workspace, budget_usd=budget_usd,
                auto_approve=auto_approve, attended=attended,
            )
        )  # fmt: skip

    def chat_workflow(
        self, name: str, message: str, *, model: str | None = None, workspace: str | None = None
    ) -> Run:
        """Start an agent run that edits this workflow as ``message`` asks."""
        return self._call(
            self._async.chat_workflow(name, message, model=model, workspace=workspace)
        )
