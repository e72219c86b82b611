"""A workflow's definition: steps, the edges between them, branches and approvals.

One definition, owned by a workspace and versioned (``_store.py``), edited as YAML, on
the dashboard's canvas (``_canvas.py``) or by an agent's ``edit_workflow`` calls
(``_ops.py``); each becomes the same ``Workflow``. A workflow run is a task graph
(``to_plan``, ``_plan.py``).

```yaml
name: release
description: Test, review and ship a change
model: openai:gpt-4.1          # every step's model unless it names its own
steps:
  - {id: tests, objective: 'Run the tests; reply {"passed": true|false}', tools: [run_command],
     report: {type: object, required: [passed], properties: {passed: {type: boolean}}}}
  - {id: review, objective: Review the diff, model: anthropic:claude-sonnet-4-5}
  - {id: signoff, kind: approval, objective: A person signs off the review}
  - {id: ship, objective: Tag the release, when: {step: tests, field: passed, equals: true}}
edges:
  - {from: tests, to: review}
  - {from: review, to: signoff}
  - {from: signoff, to: ship}
```
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

STEP_ID = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
"""A step's id (a task id of the graph it runs as)."""
WORKFLOW_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""A workflow's name in its workspace."""
MAX_STEPS = 200
"""The most steps one workflow may hold."""
StepKind = Literal["agent", "approval"]
"""``agent``: a run does the step's objective; ``approval``: a person approves the
reports of the steps before it before what follows starts."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Condition(_Strict):
    """When a branch step runs: a test on an earlier step's report.

    ``field`` is a dotted path into the report (``None``: the whole report); the step
    runs when the value there ``equals`` the given value (or, with ``not_equals``,
    differs from it). Otherwise the step is skipped, and its dependents go on.
    """

    step: str = Field(pattern=STEP_ID)
    field: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
    equals: JsonValue = None
    not_equals: bool = False
    """True: the step runs when the value differs from ``equals``."""


class Position(_Strict):
    """Where a step's node sits on the canvas."""

    x: float = Field(ge=-100_000, le=100_000)
    y: float = Field(ge=-100_000, le=100_000)


class Step(_Strict):
    """One step: its id, what it asks, and how it runs."""

    id: str = Field(pattern=STEP_ID)
    kind: StepKind = "agent"
    objective: str = Field(min_length=1, max_length=20_000)
    model: str | None = Field(default=None, max_length=200)
    """The step's ``provider:model`` (over the workflow's)."""
    tools: tuple[str, ...] | None = None
    """The tools the step's run is offered (within the workflow's ``tools``)."""
    blueprint: str | None = Field(default=None, max_length=500)
    """A blueprint file in the workflow's world for the step's run."""
    retries: int = Field(default=0, ge=0, le=10)
    approve: bool = False
    """A person approves this step's report before its dependents start."""
    report: dict[str, JsonValue] | None = None
    """A JSON Schema the step's report must match (its reply is then read as JSON)."""
    when: Condition | None = None
    """Run only when this holds (a branch); skipped otherwise."""

    @field_validator("tools")
    @classmethod
    def _tool_names(cls, tools: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in tools or ():
            if not name or len(name) > 128:
                raise ValueError("a tool name is 1 to 128 characters")
        return tools


class Edge(_Strict):
    """``source`` comes before ``target``: the target waits for it (``from``/``to``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    source: str = Field(alias="from", pattern=STEP_ID)
    target: str = Field(alias="to", pattern=STEP_ID)


class Workflow(_Strict):
    """A workflow definition: checked as a DAG whose approval steps gate what follows."""

    name: str = Field(pattern=WORKFLOW_NAME)
    description: str = Field(default="", max_length=5_000)
    model: str | None = Field(default=None, max_length=200)
    """Every agent step's model unless it names its own."""
    tools: tuple[str, ...] | None = None
    """The tools the workflow's steps may be offered (``None``: every tool)."""
    budget_usd: float | None = Field(default=None, ge=0)
    """The most the whole run may spend."""
    max_parallel: int = Field(default=4, ge=1, le=256)
    steps: tuple[Step, ...] = Field(min_length=1, max_length=MAX_STEPS)
    edges: tuple[Edge, ...] = ()
    """Kept sorted by (``from``, ``to``)."""
    layout: dict[str, Position] = Field(default_factory=dict[str, Position])
    """Step id → its node's place on the canvas (steps not here are laid out in rows)."""

    @field_validator("edges")
    @classmethod
    def _sorted(cls, edges: tuple[Edge, ...]) -> tuple[Edge, ...]:
        """Kept sorted by (from, to): the order edges are drawn in means nothing."""
        return tuple(sorted(edges, key=lambda e: (e.source, e.target)))

    @model_validator(mode="after")
    def _shape(self) -> Workflow:
        ids = [step.id for step in self.steps]
        doubled = sorted({i for i in ids if ids.count(i) > 1})
        if doubled:
            raise ValueError(f"two steps have the id {', '.join(doubled)}")
        known = set(ids)
        pairs = [(edge.source, edge.target) for edge in self.edges]
        for source, target in pairs:
            for end in (source, target):
                if end not in known:
                    raise ValueError(f"the edge {source} -> {target} names an unknown step {end!r}")
            if source == target:
                raise ValueError(f"the edge {source} -> {target} joins a step to itself")
        if len(set(pairs)) != len(pairs):
            raise ValueError("an edge is given twice")
        for name in self.layout:
            if name not in known:
                raise ValueError(f"layout: no step {name!r}")
        cycle = find_cycle(ids, pairs)
        if cycle:
            raise ValueError(f"the steps form a cycle: {' -> '.join(cycle)}")
        for step in self.steps:
            _check_step(self, step)
        return self

    def step(self, step_id: str) -> Step:
        """The step with that id (``KeyError`` if none)."""
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def before(self, step_id: str) -> list[str]:
        """The steps with an edge into ``step_id``, in edge order."""
        return [edge.source for edge in self.edges if edge.target == step_id]

    def after(self, step_id: str) -> list[str]:
        """The steps ``step_id`` has an edge to, in edge order."""
        return [edge.target for edge in self.edges if edge.source == step_id]

    def to_data(self) -> dict[str, Any]:
        """The definition as JSON data (defaults left out), what YAML and the store hold."""
        return self.model_dump(mode="json", exclude_defaults=True, by_alias=True)


def _check_step(workflow: Workflow, step: Step) -> None:
    """A condition reads an agent step before it; an approval step has only an objective."""
    if step.when is not None:
        if step.when.step not in ancestors(workflow, step.id):
            raise ValueError(
                f"step {step.id}: its condition reads {step.when.step!r},"
                " which is not a step before it"
            )
        if workflow.step(step.when.step).kind == "approval":
            raise ValueError(f"step {step.id}: an approval step has no report to test")
    if step.kind == "approval" and (step.when or step.report or step.tools or step.model):
        raise ValueError(f"step {step.id}: an approval step has only an objective (what to check)")


def ancestors(workflow: Workflow, step_id: str) -> set[str]:
    """Every step a path of edges leads from to ``step_id``."""
    found: set[str] = set()
    todo = workflow.before(step_id)
    while todo:
        node = todo.pop()
        if node not in found:
            found.add(node)
            todo.extend(workflow.before(node))
    return found


def find_cycle(ids: list[str], pairs: list[tuple[str, str]]) -> list[str]:
    """One cycle of the edges as ids (the first repeated at the end), or ``[]``."""
    out: dict[str, list[str]] = {i: [] for i in ids}
    for source, target in pairs:
        out.setdefault(source, []).append(target)
    state: dict[str, int] = {}
    for start in out:
        if state.get(start):
            continue
        path = [start]
        stack = [iter(out[start])]
        state[start] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                state[path.pop()] = 2
            elif state.get(child) == 1:
                return [*path[path.index(child) :], child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append(iter(out.get(child, [])))
    return []
