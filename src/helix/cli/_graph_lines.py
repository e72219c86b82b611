"""How a task graph reads on a terminal: its task changes as lines, its tasks as a table."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helix.api import GraphRun, RunEvent

_MARK = {"pending": "·", "running": "▶", "completed": "✓", "failed": "✗", "skipped": "↷"}


def graph_line(event: RunEvent, run_id: str, width: int) -> str | None:
    """What a graph's event says at a glance (``None``: nothing worth a line)."""
    data: dict[str, Any] = event.data
    kind = event.type
    task = str(data.get("task", "")).ljust(width)
    if kind == "graph.planned":
        plan = data.get("plan") or {}
        count = len(plan.get("tasks") or ())
        return f"planned: {count} tasks, at most {plan.get('max_parallel', 4)} at once"
    if kind == "task.started":
        return f"▶ {task}  started (attempt {data['attempt']})  {data['run_id']}"
    if kind == "task.completed":
        return f"✓ {task}  completed  ${float(data.get('cost_usd') or 0):.4f}"
    if kind == "task.failed":
        again = ": retrying" if data.get("retrying") else ""
        return f"✗ {task}  failed (attempt {data['attempt']}){again}: {_one_line(data['error'])}"
    if kind == "task.retried":
        return f"↻ {task}  retried by {data['by']}"
    if kind == "task.skipped":
        return f"↷ {task}  skipped: {_one_line(str(data.get('reason') or ''))}"
    if kind == "approval.requested" and data.get("name") == "task":
        args = data.get("args") or {}
        request = data["request_id"]
        name = str(args.get("task", "")).ljust(width)
        return (
            f"? {name}  waits for approval: helix approve {run_id} {request}"
            f" · helix deny {run_id} {request}"
        )
    if kind == "approval.decided":
        verb = "allowed" if data.get("decision") == "allow" else "denied"
        return f"  approval {data['request_id']} {verb} by {data.get('by')}"
    return _run_line(kind, data, run_id)


def _run_line(kind: str, data: dict[str, Any], run_id: str) -> str | None:
    if kind == "run.paused":
        reason = str(data.get("reason") or "")
        hint = f"helix resume {run_id}"
        if reason.startswith("task_failed:"):
            first = reason.split(":", 1)[1].split(",")[0].strip()
            hint = f"helix graph retry {run_id} {first} · helix graph cancel {run_id}"
        elif reason == "budget":
            hint = f"helix resume {run_id} --budget USD"
        return f"⏸ paused ({reason}): {hint}"
    if kind == "run.resumed":
        return "resumed"
    if kind == "run.completed":
        return f"■ completed: {_one_line(str(data.get('summary') or ''))}"
    if kind == "run.failed":
        return f"■ failed: {_one_line(str(data.get('error') or ''))}"
    if kind == "run.cancelled":
        return "■ cancelled"
    return None


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def graph_table(graph: GraphRun, columns: int | None = None, *, head: bool = True) -> list[str]:
    """``helix graph show``: the graph's run (unless not ``head``), then one row per task.

    On a narrow terminal (under 80 columns) each task takes two lines: id, status,
    attempts and cost, then its run and what it needs, indented.
    """
    columns = columns or shutil.get_terminal_size((100, 24)).columns
    run = graph.run
    done = sum(t.status in ("completed", "skipped") for t in graph.tasks)
    heading = [
        f"graph {run.id}  {run.status}  {done}/{len(graph.tasks)} tasks done  ${run.cost_usd:.4f}",
        f"  {_one_line(run.objective, max(20, columns - 2))}",
    ]
    if graph.pause_reason:
        heading.append(f"  paused: {graph.pause_reason}")
    rows = [
        (
            task.id,
            _status(task),
            str(task.attempts),
            f"${task.cost_usd:.4f}",
            task.run_id or "-",
            ",".join(task.needs) or "-",
        )
        for task in graph.tasks
    ]
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(6)]
    lines = [*heading, ""] if head else []
    if columns < 80:
        for task_id, status, attempts, cost, run_id, needs in rows:
            lines.append(f"{task_id}  {status}  {attempts} attempts  {cost}")
            lines.append(f"    run {run_id}  needs {needs}")
        return lines + _problems(graph)
    for row in [_HEADER, *rows]:
        cells = [
            c.rjust(w) if i in (2, 3) else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines + _problems(graph)


_HEADER = ("TASK", "STATUS", "ATTEMPTS", "COST", "RUN", "NEEDS")


def _status(task: Any) -> str:
    mark = _MARK.get(task.status, "?")
    if task.waiting_for_approval:
        return f"{mark} {task.status}, awaits approval"
    return f"{mark} {task.status}"


def _problems(graph: GraphRun) -> list[str]:
    """What a person may act on: failed tasks' errors, approvals waiting."""
    lines: list[str] = []
    for task in graph.tasks:
        if task.status == "failed" and task.error:
            lines.append(f"{task.id}: {_one_line(task.error)}")
            lines.append(f"  retry it: helix graph retry {graph.run.id} {task.id}")
        if task.waiting_for_approval and task.approval_request:
            lines.append(
                f"{task.id} awaits approval: helix approve {graph.run.id} {task.approval_request}"
            )
    return ["", *lines] if lines else []
