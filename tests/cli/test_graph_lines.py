"""How a task graph reads on a terminal: its task table, wide and narrow, and its lines."""

from __future__ import annotations

from typing import Any

from helix.api import GraphRun, GraphTask, Run, RunEvent
from helix.cli._graph_lines import graph_line, graph_table

RUN = Run(
    id="run_graph", status="paused", objective="Three tasks", model="", blueprint="g",
    world="/w", parent=None, workspace="default", turns=0, cost_usd=0.25, input_tokens=0,
    output_tokens=0, events=12, created_at="2026-12-01T00:00:00Z",
    updated_at="2026-12-01T00:00:00Z", driven=True,
)  # fmt: skip


def _task(task_id: str, status: Any, **fields: Any) -> GraphTask:
    base: dict[str, Any] = {
        "id": task_id, "objective": f"do {task_id}", "status": status, "depends_on": [],
        "needs": [], "approve": False, "approved": status == "completed",
        "waiting_for_approval": False, "approval_request": None, "attempts": 1, "retries": 0,
        "run_id": f"run_{task_id}", "runs": [f"run_{task_id}"], "cost_usd": 0.1,
        "budget_usd": None,
    }  # fmt: skip
    return GraphTask(**(base | fields))


GRAPH = GraphRun(
    run=RUN,
    max_parallel=4,
    pause_reason="task_failed: clean",
    tasks=[
        _task("fetch", "completed"),
        _task("clean", "failed", needs=["fetch"], error="its run failed: boom", attempts=3),
        _task(
            "stats",
            "completed",
            needs=["fetch"],
            approve=True,
            approved=False,
            waiting_for_approval=True,
            approval_request="apr_1",
        ),
    ],
)


def test_the_wide_table_has_a_row_per_task_and_what_to_do_next() -> None:
    lines = graph_table(GRAPH, columns=120)
    assert lines[0] == "graph run_graph  paused  2/3 tasks done  $0.2500"
    assert "  paused: task_failed: clean" in lines
    header = next(line for line in lines if line.startswith("TASK"))
    assert header.split() == ["TASK", "STATUS", "ATTEMPTS", "COST", "RUN", "NEEDS"]
    clean = next(line for line in lines if line.startswith("clean"))
    assert clean.split() == ["clean", "✗", "failed", "3", "$0.1000", "run_clean", "fetch"]
    assert "  retry it: helix graph retry run_graph clean" in lines
    assert "stats awaits approval: helix approve run_graph apr_1" in lines
    assert all(len(line) <= 120 for line in lines)


def test_a_narrow_terminal_gets_two_lines_a_task() -> None:
    lines = graph_table(GRAPH, columns=50, head=False)
    assert lines[0] == "fetch  ✓ completed  1 attempts  $0.1000"
    assert lines[1] == "    run run_fetch  needs -"
    assert "stats  ✓ completed, awaits approval  1 attempts  $0.1000" in lines
    assert not any(line.startswith("TASK") for line in lines)


def _event(kind: str, **data: Any) -> RunEvent:
    return RunEvent(run_id="run_graph", seq=3, type=kind, v=1, ts="t", turn=None,
                    actor="system", data=data)  # fmt: skip


def test_each_task_change_is_one_line() -> None:
    started = _event("task.started", task="fetch", run_id="run_x", attempt=1, objective="o")
    assert graph_line(started, "run_graph", 6) == "▶ fetch   started (attempt 1)  run_x"
    failed = _event("task.failed", task="clean", run_id="run_y", attempt=2, error="boom\nbad",
                    retrying=True)  # fmt: skip
    assert graph_line(failed, "run_graph", 5) == "✗ clean  failed (attempt 2): retrying: boom bad"
    paused = _event("run.paused", reason="task_failed: clean, other")
    assert graph_line(paused, "run_graph", 5) == (
        "⏸ paused (task_failed: clean, other): helix graph retry run_graph clean"
        " · helix graph cancel run_graph"
    )
    skipped = _event("task.skipped", task="docs", reason="tests.passed is false")
    assert graph_line(skipped, "run_graph", 4) == "↷ docs  skipped: tests.passed is false"
    assert graph_line(_event("model.requested"), "run_graph", 5) is None
