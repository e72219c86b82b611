"""A task graph's shape: its tasks, their dependencies and policies, checked as a DAG.

A graph is a blueprint with ``graph:`` (``Blueprint.graph``): the blueprint is the
graph's ceiling (model, policy, sandbox, approvals, budget) and ``graph`` lists the
tasks. Each task becomes a child run when its dependencies have completed (and their
outputs were approved, where a task asks for it).

```yaml
tasks:
  - {id: fetch, objective: Download the data set into data/}
  - {id: clean, objective: Clean data/, depends_on: [fetch], retries: 2}
  - id: stats
    objective: Compute summary statistics of data/
    inputs: {source: fetch}                 # fetch's report, given to this task
    report: {type: object, required: [rows], properties: {rows: {type: integer}}}
    approve: true                           # a person approves before dependents start
  - {id: publish, objective: Write the report, depends_on: [clean, stats], world: own}
```
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
"""A task's id: a letter or digit, then up to 63 letters, digits, ``-`` or ``_``."""
MAX_TASKS = 1000
"""The most tasks one graph may hold."""
MAX_RETRIES = 10


class TaskSpec(BaseModel):
    """One task of a graph: what its child run is asked, and how its result is taken."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=TASK_ID)
    objective: str = Field(min_length=1, max_length=20_000)
    depends_on: tuple[str, ...] = ()
    """Tasks that must complete (and be approved, if they ask) before this one starts."""
    inputs: dict[str, str] = Field(default_factory=dict[str, str])
    """Name → ``TASK`` or ``TASK.field.subfield``: that task's report (or a field of it),
    given to this task with its objective. A task named here is a dependency too."""
    report: dict[str, JsonValue] | None = None
    """A JSON Schema the task's report must match: the child's final reply is then read
    as JSON (a fenced ``json`` block is accepted) and checked; a mismatch fails the
    attempt. ``None``: the report is the reply's text."""
    blueprint: str | None = None
    """A blueprint file in the graph's world for the task's run (narrowed to the graph's
    ceiling, as a delegated child's is); ``None``: the graph's own settings."""
    model: str | tuple[str, ...] | None = None
    """The task's model (over its blueprint's and the graph's)."""
    tools: tuple[str, ...] | None = None
    """The tools the task's run is offered (a subset of the graph's)."""
    retries: int = Field(default=0, ge=0, le=MAX_RETRIES)
    """Further attempts after a failed one (each a new run); then the task has failed."""
    approve: bool = False
    """A person approves the task's report before its dependents start (denied: the
    attempt has failed)."""
    world: Literal["shared", "own"] = "shared"
    """``shared``: the run works in the graph's world; ``own``: in a copy of it made when
    the task starts (its changes stay there)."""
    budget_usd: float | None = Field(default=None, ge=0)
    """The most the task may spend per attempt (within what the graph has left)."""

    @cached_property
    def needs(self) -> tuple[str, ...]:
        """Every task this one waits for: its dependencies and its inputs' tasks."""
        extra = [source.split(".", 1)[0] for source in self.inputs.values()]
        return tuple(dict.fromkeys([*self.depends_on, *extra]))

    @field_validator("inputs")
    @classmethod
    def _input_names(cls, inputs: dict[str, str]) -> dict[str, str]:
        for name, source in inputs.items():
            if not name.isidentifier():
                raise ValueError(f"input name {name!r} is not an identifier")
            if not source or any(not part for part in source.split(".")):
                raise ValueError(f"input {name!r}: {source!r} is not TASK or TASK.field")
        return inputs

    @field_validator("report")
    @classmethod
    def _schema(cls, schema: dict[str, JsonValue] | None) -> dict[str, JsonValue] | None:
        if schema is not None:
            from jsonschema import Draft202012Validator, SchemaError

            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as error:
                message = f"the report schema is not a JSON Schema: {error.message}"
                raise ValueError(message) from None
        return schema


class TaskGraph(BaseModel):
    """The tasks of a graph run, a DAG: ids distinct, dependencies known, no cycle."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: tuple[TaskSpec, ...] = Field(min_length=1, max_length=MAX_TASKS)
    max_parallel: int = Field(default=4, ge=1, le=256)
    """How many tasks may run at once."""

    @model_validator(mode="after")
    def _dag(self) -> TaskGraph:
        ids = [task.id for task in self.tasks]
        doubled = sorted({i for i in ids if ids.count(i) > 1})
        if doubled:
            raise ValueError(f"two tasks have the id {', '.join(doubled)}")
        known = set(ids)
        for task in self.tasks:
            for need in task.needs:
                if need == task.id:
                    raise ValueError(f"task {task.id} depends on itself")
                if need not in known:
                    raise ValueError(f"task {task.id} depends on an unknown task {need!r}")
        cycle = _cycle(self)
        if cycle:
            raise ValueError(f"the tasks depend on each other in a cycle: {' -> '.join(cycle)}")
        return self

    @cached_property
    def by_id(self) -> dict[str, TaskSpec]:
        """The tasks by id (built once: a conductor looks tasks up on every step)."""
        return {task.id: task for task in self.tasks}

    def task(self, task_id: str) -> TaskSpec:
        """The task with that id (``KeyError`` if none)."""
        return self.by_id[task_id]

    def dependents(self, task_id: str) -> Iterator[TaskSpec]:
        """The tasks that wait for ``task_id`` directly."""
        return (task for task in self.tasks if task_id in task.needs)


def _cycle(graph: TaskGraph) -> list[str]:
    """One cycle of the graph as ids (first repeated at the end), or ``[]``."""
    needs = {task.id: task.needs for task in graph.tasks}
    done: set[str] = set()
    for start in needs:
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(needs[start]))]
        if start in done:
            continue
        path.append(start)
        on_path.add(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif child in on_path:
                return [*path[path.index(child) :], child]
            elif child not in done:
                stack.append((child, iter(needs[child])))
                path.append(child)
                on_path.add(child)
    return []
