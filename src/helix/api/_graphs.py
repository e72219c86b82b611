"""What the door does with task graphs: read a plan however it is given, fold a graph.

``GraphDoor`` gives ``LocalApi`` its ``create_graph``/``graph``/``retry_task``, thin
over the runtime (``Plan``, ``Engine.create``, ``retry_task``); ``HttpApi`` sends a
plan as its data (``plan_data``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from helix.errors import ConfigError, NotAGraphError, TaskNotFoundError
from helix.kernel.log import EventStore, RunRecord
from helix.kernel.session import SessionState, replay_run

from ._graph_models import GraphRun
from ._models import Run

if TYPE_CHECKING:
    from helix.runtime import Blueprint, Engine, Plan

PlanArg: TypeAlias = "Plan | dict[str, Any] | str | os.PathLike[str]"
"""A plan: ``helix.runtime.Plan``, its data (``Plan.to_data()``, a parsed file), or a
plan file's path (YAML, TOML or JSON)."""


class _Door(Protocol):
    """What ``GraphDoor`` uses of ``LocalApi``."""

    store: EventStore
    actor: str
    world_paths: bool

    @property
    def engine(self) -> Engine: ...

    async def resolve(self, run_id: str) -> RunRecord: ...

    async def _run(self, record: RunRecord) -> Run: ...

    def drive(self, run_id: str) -> None: ...

    async def create(
        self,
        objective: str,
        *,
        model: str | None = None,
        blueprint: Blueprint | dict[str, Any] | str | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
    ) -> Run: ...


class GraphDoor:
    """``HelixApi.create_graph``, ``graph`` and ``retry_task`` for ``LocalApi``."""

    async def create_graph(
        self: _Door,
        plan: PlanArg,
        *,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_usd: float | None = None,
    ) -> Run:
        """Start a task graph from a plan and drive it (``HelixApi.create_graph``)."""
        loaded = load_plan(plan, paths=self.world_paths)
        return await self.create(
            loaded.objective, blueprint=loaded.blueprint, world=world, workspace=workspace,
            budget_usd=budget_usd, auto_approve=auto_approve, attended=attended,
        )  # fmt: skip

    async def graph(self: _Door, run_id: str) -> GraphRun:
        """The graph run and its tasks, folded from its log (``NotAGraphError`` if none)."""
        record = await self.resolve(run_id)
        state = await replay_run(self.store, record.id)
        return await graph_of(self.store, await self._run(record), state)

    async def retry_task(self: _Door, run_id: str, task: str) -> GraphRun:
        """Try a graph's failed task again; a graph paused for it is resumed and driven."""
        import helix.runtime as runtime

        record = await self.resolve(run_id)
        state = await replay_run(self.store, record.id)
        graph = await graph_of(self.store, await self._run(record), state)  # a graph?
        if all(t.id != task for t in graph.tasks):
            known = ", ".join(t.id for t in graph.tasks)
            raise TaskNotFoundError(f"graph {record.id} has no task {task!r} (its tasks: {known})")
        await runtime.retry_task(self.engine, record.id, task, by=self.actor)
        self.drive(record.id)
        return await graph_of(
            self.store, await self._run(await self.resolve(record.id)),
            await replay_run(self.store, record.id),
        )  # fmt: skip


def load_plan(plan: PlanArg, *, paths: bool = True) -> Plan:
    """The plan ``plan`` gives; ``BlueprintError`` (field, reason) if it is not one.

    ``paths=False`` (a server): a path is refused, only a plan's data is taken.
    """
    from helix.runtime import Plan

    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, dict):
        return Plan.parse(plan, source="plan")
    if isinstance(plan, str | os.PathLike):
        if not paths:
            raise ConfigError("a plan here is its data (a mapping with tasks), not a file path")
        return Plan.load(Path(plan))
    raise ConfigError(f"a plan is a Plan, a mapping or a file path, not {type(plan).__name__}")


def plan_data(plan: PlanArg) -> dict[str, Any]:
    """The plan as JSON data for a server (a path or ``Plan`` read and checked here first)."""
    if isinstance(plan, dict):
        return plan
    return load_plan(plan).to_data()


async def graph_of(store: EventStore, run: Run, state: SessionState) -> GraphRun:
    """The graph ``run`` is, from its folded log; ``NotAGraphError`` if it is none.

    A graph not yet driven has no ``graph.planned``: its plan is read from its settings.
    """
    plan = state.plan
    if plan is None:
        from helix.runtime import blueprint_of, run_settings

        graph = blueprint_of(await run_settings(store, run.id)).graph
        if graph is None:
            raise NotAGraphError(f"run {run.id} is not a task graph (it has no tasks)")
        plan = graph.model_dump(mode="json")
        state = _with_tasks(state, plan)
    return GraphRun.of(run, state, plan)


def _with_tasks(state: SessionState, plan: dict[str, Any]) -> SessionState:
    from helix.kernel.session import TaskState

    for task in plan.get("tasks") or ():
        state.tasks.setdefault(str(task["id"]), TaskState())
    return state
