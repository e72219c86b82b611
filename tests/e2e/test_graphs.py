"""Task graphs from the command line, as separate processes: run, kill -9 and resume,
an edge approval from another terminal, a failed task retried alone, bad input.

Every task's model is a scenario file (``scripted:PATH``), so tasks running side by
side each get their own replies, in whichever order they run.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from .conftest import Helix, of_type

SIX = ["fetch", "left", "left2", "right", "right2", "join"]
NEEDS = {
    "left": ["fetch"],
    "left2": ["left"],
    "right": ["fetch"],
    "right2": ["right"],
    "join": ["left2", "right2"],
}


def _script(helix: Helix, name: str, *steps: dict[str, Any]) -> str:
    """A scenario file for one task's model; its ``scripted:`` name."""
    folder = helix.tmp / "scripts"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(list(steps)))
    return f"scripted:{path}"


def _six(
    helix: Helix,
    *,
    slow: tuple[str, ...] = (),
    approve: tuple[str, ...] = (),
    slow_s: float = 2.0,
) -> Path:
    """The six-task plan: fetch, two branches of two, a join. ``slow`` tasks take ``slow_s``."""
    tasks = []
    for task in SIX:
        step: dict[str, Any] = {"text": f"{task} done"}
        if task in slow:
            step["delay_s"] = slow_s  # so that a kill lands while they run
        spec: dict[str, Any] = {
            "id": task,
            "objective": f"do {task}",
            "model": _script(helix, task, step),
        }
        if task in NEEDS:
            spec["depends_on"] = NEEDS[task]
        if task in approve:
            spec["approve"] = True
        tasks.append(spec)
    plan = helix.tmp / "six.yaml"
    plan.write_text(yaml.safe_dump({"name": "six", "objective": "six tasks", "tasks": tasks}))
    return plan


def _graph(helix: Helix, run_id: str) -> dict[str, Any]:
    shown = json.loads(helix.ok("graph", "show", run_id, "--json"))
    assert isinstance(shown, dict)
    return shown


def _tasks(helix: Helix, run_id: str) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in _graph(helix, run_id)["tasks"]}


def test_a_six_task_graph_with_two_branches_and_a_join_runs_to_completion(
    helix: Helix,
) -> None:
    plan = _six(helix)
    done = helix("graph", "run", str(plan), "--world", str(helix.world))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    run_id = lines[0].split()[1].rstrip(":")
    assert lines[0] == f"graph {run_id}: 6 tasks · helix graph show {run_id}"
    assert any(line.startswith("✓ join") for line in lines)
    assert lines[-1].startswith("■ completed: 6 tasks completed.")
    started = [line.split()[1] for line in lines if "started (attempt 1)" in line]
    assert started.index("fetch") == 0
    assert started.index("join") == 5

    tasks = _tasks(helix, run_id)
    assert list(tasks) == SIX
    assert all(t["status"] == "completed" and t["attempts"] == 1 for t in tasks.values())
    assert tasks["join"]["needs"] == ["left2", "right2"]
    assert tasks["join"]["report"] == "join done"
    table = helix.ok("graph", "show", run_id)
    assert "6/6 tasks done" in table
    assert "left2,right2" in table
    logs = helix.ok("graph", "logs", run_id).splitlines()
    assert {line.split()[0] for line in logs} == {"(graph)", *SIX}
    joined = [line for line in logs if line.startswith("join ")]
    assert any("run.completed" in line for line in joined)


def test_a_graph_killed_mid_way_is_resumed_without_running_a_finished_task_again(
    helix: Helix,
) -> None:
    plan = _six(helix, slow=("left", "right"))
    running = helix.start("graph", "run", str(plan), "--world", str(helix.world), "--json")
    run_id = running.run_id
    running.wait_for("task.completed", lambda e: e["data"]["task"] == "fetch")
    running.kill()  # kill -9, mid-graph
    log = helix.logs(run_id)
    assert not of_type(log, "run.completed")
    assert [e["data"]["task"] for e in of_type(log, "task.completed")] == ["fetch"]

    resumed = helix("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    log = helix.logs(run_id)
    assert of_type(log, "run.completed")
    started = Counter(e["data"]["task"] for e in of_type(log, "task.started"))
    assert started == Counter(SIX)  # each task started once: none ran again
    tasks = _tasks(helix, run_id)
    assert all(len(t["runs"]) == 1 and t["status"] == "completed" for t in tasks.values())
    fetch_log = helix.logs(tasks["fetch"]["run_id"])
    assert len(of_type(fetch_log, "run.completed")) == 1
    assert len(of_type(fetch_log, "model.responded")) == 1  # its model was not asked again


def test_an_edge_approval_comes_from_another_process(helix: Helix) -> None:
    plan = _six(helix, approve=("left",))
    running = helix.start("graph", "run", str(plan), "--world", str(helix.world), "--json")
    run_id = running.run_id
    asked = running.wait_for("approval.requested")
    assert asked["data"]["args"]["task"] == "left"
    tasks = _tasks(helix, run_id)
    assert tasks["left"]["waiting_for_approval"] is True
    request = tasks["left"]["approval_request"]
    assert request == asked["data"]["request_id"]
    assert tasks["left2"]["status"] == "pending"  # the gate holds its dependent

    approved = helix("approve", run_id, request)
    assert approved.returncode == 0, approved.stderr
    assert running.finish() == 0, running.stderr
    tasks = _tasks(helix, run_id)
    assert tasks["left"]["approved"] is True
    assert all(t["status"] == "completed" for t in tasks.values())
    decided = of_type(helix.logs(run_id), "approval.decided")
    assert [e["data"]["by"] for e in decided] == ["user:tester"]


def test_a_failed_task_is_retried_alone(helix: Helix) -> None:
    counter = _script(helix, "count", {"text": "about three"})
    plan = helix.tmp / "plan.yaml"
    plan.write_text(
        yaml.safe_dump(
            {
                "tasks": [
                    {
                        "id": "count",
                        "objective": "count the rows",
                        "model": counter,
                        "report": {"type": "object", "required": ["rows"]},
                    },
                    {
                        "id": "side",
                        "objective": "do the other thing",
                        "model": _script(helix, "side", {"text": "side done"}),
                    },
                    {
                        "id": "use",
                        "objective": "use the count",
                        "inputs": {"rows": "count.rows"},
                        "model": _script(helix, "use", {"text": "used"}),
                    },
                ]
            }
        )
    )
    running = helix.start("graph", "run", str(plan), "--world", str(helix.world), "--json")
    run_id = running.run_id
    paused = running.wait_for("run.paused")
    assert paused["data"]["reason"] == "task_failed: count"
    shown = helix.ok("graph", "show", run_id)
    assert f"helix graph retry {run_id} count" in shown
    tasks = _tasks(helix, run_id)
    assert tasks["count"]["status"] == "failed"
    assert "not JSON" in tasks["count"]["error"]

    _script(helix, "count", {"text": '{"rows": 3}'})  # the cause fixed
    retried = helix("graph", "retry", run_id, "count")
    assert retried.returncode == 0, retried.stderr
    assert f"retrying count of {run_id}" in retried.stdout
    assert running.finish() == 0, running.stderr
    tasks = _tasks(helix, run_id)
    assert len(tasks["count"]["runs"]) == 2
    assert tasks["count"]["report"] == {"rows": 3}
    assert len(tasks["side"]["runs"]) == 1  # the others were not run again
    assert len(tasks["use"]["runs"]) == 1
    log = helix.logs(run_id)
    assert [e["data"]["task"] for e in of_type(log, "task.retried")] == ["count"]


def test_bad_graph_input_gets_a_message_and_an_exit_code(helix: Helix) -> None:
    model = _script(helix, "any", {"text": "ok"})
    cyclic = helix.tmp / "cyclic.yaml"
    cyclic.write_text(
        yaml.safe_dump(
            {
                "model": model,
                "tasks": [
                    {"id": "a", "objective": "a", "depends_on": ["c"]},
                    {"id": "b", "objective": "b", "depends_on": ["a"]},
                    {"id": "c", "objective": "c", "depends_on": ["b"]},
                ],
            }
        )
    )
    refused = helix("graph", "run", str(cyclic), "--world", str(helix.world))
    assert refused.returncode == 2
    assert "cycle: a -> c -> b -> a" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = helix("graph", "run", str(helix.tmp / "nothere.yaml"))
    assert missing.returncode == 2
    assert "cannot read the plan" in missing.stderr
    assert helix.ok("runs", "--json") == ""  # nothing was started

    plain = helix("run", "say ok", "--model", model, "--dir", str(helix.world), "--json")
    assert plain.returncode == 0, plain.stderr
    run_id = json.loads(plain.stdout.splitlines()[0])["run_id"]
    for command in (("show", run_id), ("logs", run_id), ("retry", run_id, "a")):
        answer = helix("graph", *command)
        assert answer.returncode == 3, (command, answer.stderr)
        assert f"run {run_id} is not a task graph" in answer.stderr
    nobody = helix("graph", "show", "run_nothere")
    assert nobody.returncode == 3

    ok = helix.tmp / "ok.yaml"
    ok.write_text(yaml.safe_dump({"model": model, "tasks": [{"id": "a", "objective": "a"}]}))
    done = helix("graph", "run", str(ok), "--world", str(helix.world), "--json")
    assert done.returncode == 0, done.stderr
    graph_id = json.loads(done.stdout.splitlines()[0])["run_id"]
    unknown = helix("graph", "retry", graph_id, "zz")
    assert unknown.returncode == 3
    assert "has no task 'zz' (its tasks: a)" in unknown.stderr
    ended = helix("graph", "retry", graph_id, "a")
    assert ended.returncode == 1
    assert "has ended (completed)" in ended.stderr
    assert _graph(helix, "last")["run"]["id"] == graph_id  # last: the newest graph


def test_cancelling_a_graph_cancels_its_running_tasks(helix: Helix) -> None:
    # slow enough that only the cancel ends them, however slow the cancelling process starts
    plan = _six(helix, slow=("left", "right"), slow_s=600.0)
    running = helix.start("graph", "run", str(plan), "--world", str(helix.world), "--json")
    run_id = running.run_id
    left = running.wait_for("task.started", lambda e: e["data"]["task"] == "left")
    cancelled = helix("graph", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert running.finish() == 1  # the graph did not complete
    assert helix.show(run_id)["status"] == "cancelled"
    assert helix.show(left["data"]["run_id"])["status"] == "cancelled"
    assert _tasks(helix, run_id)["join"]["runs"] == []


def test_a_detached_graph_is_followed_by_its_logs_with_each_line_led_by_its_task(
    helix: Helix,
) -> None:
    plan = _six(helix)
    started = helix("graph", "run", str(plan), "--world", str(helix.world), "--detach", "--json")
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["id"]
    followed = helix("graph", "logs", run_id, "--follow", "--json")
    assert followed.returncode == 0, followed.stderr
    lines = [json.loads(line) for line in followed.stdout.splitlines()]
    graph_ends = [e for e in lines if e["run_id"] == run_id and e["type"] == "run.completed"]
    assert len(graph_ends) == 1
    ended = {e["task"] for e in lines if e["run_id"] != run_id and e["type"] == "run.completed"}
    assert ended == set(SIX)  # every task's run, followed to its end
    assert {e["task"] for e in lines if e["type"] == "task.started"} == set(SIX)
    assert all(e["task"] is None for e in lines if e["type"] == "graph.planned")
    assert _graph(helix, run_id)["run"]["status"] == "completed"
