"""What the door does with task graphs: read a plan however it is given, fold a graph.

``LocalApi.create_graph``/``graph``/``retry_task`` are thin over these and the runtime
(``Plan``, ``Engine.create``, ``retry_task``); ``HttpApi`` sends a plan as its data.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from helix.errors import ConfigError, NotAGraphError
from helix.kernel.log import EventStore
from helix.kernel.session import SessionState

from ._graph_models import Graph
from ._models import Run

if TYPE_CHECKING:
    from helix.runtime import Plan

PlanArg: TypeAlias = "Plan | dict[str, Any] | str | os.PathLike[str]"
"""A plan: ``helix.runtime.Plan``, its data (``Plan.to_data()``, a parsed file), or a
plan file's path (YAML, TOML or JSON)."""


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


async def graph_of(store: EventStore, run: Run, state: SessionState) -> Graph:
    """The graph ``run`` is, from its folded log; ``NotAGraphError`` if it is none.

    A graph not yet driven has no ``graph.planned``: its plan is read from its settings.
    """
    plan = state.plan
    if plan is None:
        created = await store.event_at(run.id, 0)
        settings = created.data.get("settings") if created is not None else None
        blueprint = (settings or {}).get("blueprint") or {}
        plan = blueprint.get("graph") if isinstance(blueprint, dict) else None
        if not isinstance(plan, dict):
            raise NotAGraphError(f"run {run.id} is not a task graph (it has no tasks)")
        state = _with_tasks(state, plan)
    return Graph.of(run, state, plan)


def _with_tasks(state: SessionState, plan: dict[str, Any]) -> SessionState:
    from helix.kernel.session import TaskState

    for task in plan.get("tasks") or ():
        state.tasks.setdefault(str(task["id"]), TaskState())
    return state
