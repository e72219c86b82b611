"""``HttpApi``'s workflow operations: ``/api/v1/workflows`` (``WorkflowDoor``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ._models import CreatedRun, Run

if TYPE_CHECKING:
    from helix.workflows import WorkflowSummary, WorkflowVersion

    from ._workflow_door import WorkflowArg


def _params(workspace: str | None, **more: Any) -> dict[str, Any]:
    return {k: v for k, v in {"workspace": workspace, **more}.items() if v is not None}


class HttpWorkflows:
    """``HttpApi``'s workflow operations (a mixin over its ``_json``)."""

    if TYPE_CHECKING:

        async def _json(self, method: str, path: str, **kwargs: Any) -> Any: ...

        async def get(self, run_id: str) -> Run: ...

    async def workflows(self, *, workspace: str | None = None) -> list[WorkflowSummary]:
        """The workspace's workflows (``GET /workflows``)."""
        from helix.workflows import WorkflowSummary

        raw = await self._json("GET", "/workflows", params=_params(workspace))
        return [WorkflowSummary.model_validate(item) for item in raw["workflows"]]

    async def workflow(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> WorkflowVersion:
        """One version (``GET /workflows/NAME``)."""
        from helix.workflows import WorkflowVersion

        params = _params(workspace, version=version)
        return WorkflowVersion.model_validate(
            await self._json("GET", f"/workflows/{_name(name)}", params=params)
        )

    async def save_workflow(
        self,
        workflow: WorkflowArg,
        *,
        base_version: int | None = None,
        how: str = "api",
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Store a new version (``PUT /workflows/NAME``)."""
        from helix.workflows import Workflow, WorkflowVersion, from_data, load_text

        if isinstance(workflow, str):
            definition = load_text(workflow)
        elif isinstance(workflow, Workflow):
            definition = workflow
        else:
            definition = from_data(workflow)
        body = {"workflow": definition.to_data(), "base_version": base_version, "how": how}
        raw = await self._json(
            "PUT", f"/workflows/{_name(definition.name)}", params=_params(workspace), json=body
        )
        return WorkflowVersion.model_validate(raw)

    async def edit_workflow(
        self,
        name: str,
        operations: list[dict[str, Any]],
        *,
        base_version: int | None = None,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Apply edit operations (``POST /workflows/NAME/edit``)."""
        from helix.workflows import WorkflowVersion

        body = {"operations": operations, "base_version": base_version}
        raw = await self._json(
            "POST", f"/workflows/{_name(name)}/edit", params=_params(workspace), json=body
        )
        return WorkflowVersion.model_validate(raw)

    async def import_workflow(
        self,
        path: str,
        *,
        world: str,
        base_version: int | None = 0,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Save a workflow file of a world (``POST /workflows/import``)."""
        from helix.workflows import WorkflowVersion

        body = {"world": world, "path": path, "base_version": base_version}
        raw = await self._json("POST", "/workflows/import", params=_params(workspace), json=body)
        return WorkflowVersion.model_validate(raw)

    async def workflow_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[WorkflowVersion]:
        """Every version (``GET /workflows/NAME/history``)."""
        from helix.workflows import WorkflowVersion

        raw = await self._json(
            "GET", f"/workflows/{_name(name)}/history", params=_params(workspace)
        )
        return [WorkflowVersion.model_validate(item) for item in raw["versions"]]

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
        """Start the workflow's task graph (``POST /workflows/NAME/runs``)."""
        body = {
            "version": version,
            "world": None if world is None else os.fspath(world),
            "budget_usd": budget_usd,
            "auto_approve": auto_approve,
            "attended": attended,
        }
        raw = await self._json(
            "POST", f"/workflows/{_name(name)}/runs", params=_params(workspace), json=body
        )
        return await self.get(CreatedRun.model_validate(raw).id)

    async def chat_workflow(
        self,
        name: str,
        message: str,
        *,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Run:
        """Start a run editing this workflow (``POST /workflows/NAME/chat``)."""
        raw = await self._json(
            "POST",
            f"/workflows/{_name(name)}/chat",
            params=_params(workspace),
            json={"message": message, "model": model},
        )
        return await self.get(CreatedRun.model_validate(raw).id)


def _name(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")
