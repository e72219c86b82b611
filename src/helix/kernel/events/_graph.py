"""Task-graph events: a graph run's plan and each task's life, as its child runs live it.

A graph is a run like any other (its own log, lease, budget, status); its children are
the tasks' runs. The child's id is logged (``task.started``) before the child is created,
so a graph resumed after a crash finds each task's run again rather than starting a
second one, and a task logged ``task.completed`` is never run again.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, JsonValue

from ._payload import Payload


class GraphPlanned(Payload):
    """The graph's plan, as the graph will run it (its first event after ``run.created``)."""

    TYPE: ClassVar[str] = "graph.planned"

    plan: dict[str, JsonValue]
    """The validated plan (``helix.runtime.Plan`` as JSON): tasks, dependencies, policies."""


class TaskStarted(Payload):
    """A task's run was started (its id logged before the run exists)."""

    TYPE: ClassVar[str] = "task.started"

    task: str
    run_id: str
    """The child run doing the task (this attempt's)."""
    attempt: int = Field(ge=1)
    objective: str
    """What the child was asked: the task's objective with its inputs."""
    budget_usd: float | None = Field(default=None, ge=0)
    """The share of the graph's budget set aside for this attempt (``None``: no cap)."""


class TaskCompleted(Payload):
    """A task's run completed and its report was accepted."""

    TYPE: ClassVar[str] = "task.completed"

    task: str
    run_id: str
    report: JsonValue
    """The child's report: JSON valid against the task's ``report`` schema, else its summary."""
    cost_usd: float = Field(default=0.0, ge=0)
    """What the attempt spent (its run and the run's children): counts against the graph."""


class TaskFailed(Payload):
    """A task's attempt failed: its run failed or was cancelled, or its report was refused."""

    TYPE: ClassVar[str] = "task.failed"

    task: str
    run_id: str
    attempt: int = Field(ge=1)
    error: str
    retrying: bool
    """Whether the task is tried again (its ``retries`` allow another attempt)."""
    cost_usd: float = Field(default=0.0, ge=0)


class TaskRetried(Payload):
    """A person asked for a failed task to be tried again (its dependents then follow)."""

    TYPE: ClassVar[str] = "task.retried"

    task: str
    by: str


class TaskSkipped(Payload):
    """A task's condition (``when``) did not hold once the tasks it needs had passed.

    The task never runs, and its dependents go on as if it had completed.
    """

    TYPE: ClassVar[str] = "task.skipped"

    task: str
    reason: str
    """The condition and the value it found, in words."""
