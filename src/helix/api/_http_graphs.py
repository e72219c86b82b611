"""``HttpApi``'s task graphs: ``POST /graphs``, ``GET /runs/{id}/graph``, a task's retry."""

from __future__ import annotations

import os
from typing import Any, Protocol

from helix.errors import ConfigError

from ._graph_models import GraphRun
from ._graphs import PlanArg, plan_data
from ._models import Run
from ._paths import run_path, segment
from ._worlds import is_world_name


class _Sender(Protocol):
    async def _json(self, method: str, path: str, **kwargs: Any) -> Any: ...


class HttpGraphs:
    """``HelixApi.create_graph``, ``graph`` and ``retry_task`` over HTTP."""

    async def create_graph(
        self: _Sender,
        plan: PlanArg,
        *,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_usd: float | None = None,
    ) -> Run:
        """Start a task graph; the server drives it (a plan file is read and checked here)."""
        if world is not None and not is_world_name(world):
            raise ConfigError(
                f"world {os.fspath(world)!r}: with a server, name a folder of the workspace's"
                " worlds on the server (letters, digits, _ . -), not a local path"
            )
        body: dict[str, Any] = {"plan": plan_data(plan), "auto_approve": auto_approve}
        if not attended:
            body["attended"] = False
        if world is not None:
            body["world"] = os.fspath(world)
        for key, value in (("workspace", workspace), ("budget_usd", budget_usd)):
            if value is not None:
                body[key] = value
        return Run.model_validate(await self._json("POST", "/graphs", json=body))

    async def graph(self: _Sender, run_id: str) -> GraphRun:
        """The graph run and its tasks."""
        return GraphRun.model_validate(await self._json("GET", f"{run_path(run_id)}/graph"))

    async def retry_task(self: _Sender, run_id: str, task: str) -> GraphRun:
        """Try a graph's failed task again; the server resumes and drives the graph."""
        path = f"{run_path(run_id)}/graph/tasks/{segment(task)}/retry"
        return GraphRun.model_validate(await self._json("POST", path))
