"""Plans: a task graph read from a file (or sent to the server), checked before it runs.

A plan is a blueprint with tasks: its ``objective`` says what the graph is for, its
``tasks`` (and ``max_parallel``) make the blueprint's ``graph``, and every other key is
the blueprint's (``model``, ``budget``, ``policy``, ``sandbox``, ``approvals``…): the
ceiling and defaults of every task's run. See docs/graphs.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helix.errors import BlueprintError, HelixError
from helix.providers import parse_model_name
from helix.tools import ToolRegistry

from ._blueprint import Blueprint, read_settings


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``helix graph run PLAN`` starts: an objective and a blueprint with a graph."""

    objective: str
    blueprint: Blueprint

    @classmethod
    def load(cls, path: str | Path) -> Plan:
        """Read a YAML, TOML or JSON plan; ``BlueprintError`` names file, field, reason."""
        path = Path(path)
        return cls.parse(read_settings(path, "plan file"), source=str(path), name=path.stem)

    @classmethod
    def parse(cls, data: object, *, source: str, name: str | None = None) -> Plan:
        """Validate a plan's settings; ``BlueprintError`` names ``source``, field, reason."""
        if not isinstance(data, dict):
            raise BlueprintError(f"{source}: a plan is a mapping with tasks")
        settings: dict[str, Any] = dict(data)
        objective = settings.pop("objective", None)
        if objective is not None and not isinstance(objective, str):
            raise BlueprintError(f"{source}: objective: must be text")
        blueprint = Blueprint.parse(settings, source=source, name=name)
        if blueprint.graph is None:
            raise BlueprintError(f"{source}: a plan needs tasks (a list of {{id, objective}})")
        tasks = blueprint.graph.tasks
        text = objective.strip() if objective else ""
        return cls(text or f"Run the task graph {blueprint.name} ({len(tasks)} tasks)", blueprint)

    def to_data(self) -> dict[str, Any]:
        """The plan as JSON data ``parse`` reads back (what a client sends the server)."""
        data = self.blueprint.model_dump(mode="json", exclude_defaults=True)
        graph = data.pop("graph")
        return {"objective": self.objective, **data, **graph}


def check_graph(blueprint: Blueprint, registry: ToolRegistry) -> None:
    """Check what a graph's schema cannot: each task's model and tools.

    ``BlueprintError`` names the task: a task with no model (none of its own, its
    blueprint file's or the graph's), a model name that is not ``provider:model``, a
    tool the graph does not offer.
    """
    graph = blueprint.graph
    assert graph is not None
    offered = blueprint.tools if blueprint.tools is not None else registry.names
    for index, task in enumerate(graph.tasks):
        where = f"tasks.{index} ({task.id})"
        default = blueprint.roles.get("worker") or blueprint.role_model("main")
        if task.model is None and default is None and task.blueprint is None:
            raise BlueprintError(
                f"{where}: no model: give the task a model, or the plan a default model"
                " (model, or roles.worker)"
            )
        for name in [task.model] if isinstance(task.model, str) else list(task.model or ()):
            try:
                parse_model_name(name)
            except HelixError as error:
                raise BlueprintError(f"{where}.model: {error}") from None
        beyond = [name for name in task.tools or () if name not in offered]
        if beyond:
            raise BlueprintError(f"{where}.tools: the graph does not offer {', '.join(beyond)}")


def task_models(blueprint: Blueprint) -> list[str]:
    """Every model a graph's tasks name (the engine checks it can open each)."""
    graph = blueprint.graph
    names: list[str] = []
    for task in graph.tasks if graph is not None else ():
        names += [task.model] if isinstance(task.model, str) else list(task.model or ())
    return list(dict.fromkeys(names))


def check_task_blueprints(blueprint: Blueprint, world: Path) -> None:
    """Read each task's blueprint file from ``world`` (``BlueprintError`` if one is bad)."""
    from ._delegation import load_in_world

    for task in blueprint.graph.tasks if blueprint.graph is not None else ():
        if task.blueprint is not None:
            load_in_world(world, task.blueprint, f"task {task.id}'s blueprint")
