"""Task graphs through the one door: start one, read its tasks, approve, retry a task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix import AsyncClient
from helix.api import GraphRun, Run
from helix.errors import (
    BlueprintError,
    NotAGraphError,
    RunNotFoundError,
    RunStateError,
    TaskNotFoundError,
)
from helix.providers import Scenario
from helix.runtime import Plan
from helix.testing import MockModelServer
from tests.server.conftest import Admin

from .conftest import MODEL, Door, follow, raw_client

DIAMOND: dict[str, Any] = {
    "name": "diamond",
    "objective": "Split, do both halves, join",
    "model": MODEL,
    "tasks": [
        {"id": "split", "objective": "split it"},
        {"id": "left", "objective": "do the left half", "depends_on": ["split"]},
        {"id": "right", "objective": "do the right half", "depends_on": ["split"]},
        {"id": "join", "objective": "join", "inputs": {"l": "left", "r": "right"}},
    ],
}


def _replies(server: MockModelServer, text: str) -> None:
    """Every model call answers ``text`` (tasks run side by side, in any order)."""
    server.play(Scenario.of({"text": text}, repeat=True))


async def _until(client: AsyncClient, run_id: str, kind: str) -> dict[str, Any]:
    async for event in client.events(run_id, follow=True):
        if event.type == kind:
            return event.data
    pytest.fail(f"the graph ended without {kind}")


async def test_a_graph_runs_through_the_door_and_shows_its_tasks(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    _replies(model_server, "done")
    run = await client.create_graph(DIAMOND)
    assert isinstance(run, Run)
    assert run.objective == "Split, do both halves, join"
    events = await follow(client, run.id)
    assert events[-1].type == "run.completed", events[-1].data

    graph = await client.graph(run.id)
    assert isinstance(graph, GraphRun)
    assert graph.run.status == "completed"
    assert graph.finished
    assert [t.id for t in graph.tasks] == ["split", "left", "right", "join"]
    assert all(t.status == "completed" and t.approved for t in graph.tasks)
    assert all(t.attempts == 1 and len(t.runs) == 1 and t.run_id == t.runs[0] for t in graph.tasks)
    join = graph.task("join")
    assert (join.depends_on, join.needs) == ([], ["left", "right"])
    assert join.report == "done"
    assert graph.task("left").needs == ["split"]
    child = await client.get(join.runs[0])
    assert child.status == "completed"
    assert (await client.graph(run.id[:12])).run.id == run.id  # a prefix names it too


async def test_a_report_waits_for_a_person_then_its_dependents_start(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    _replies(model_server, "checked")
    plan = {
        "model": MODEL,
        "tasks": [
            {"id": "check", "objective": "check it", "approve": True},
            {"id": "ship", "objective": "ship it", "depends_on": ["check"]},
        ],
    }
    run = await client.create_graph(plan)
    asked = await _until(client, run.id, "approval.requested")
    graph = await client.graph(run.id)
    check = graph.task("check")
    assert check.waiting_for_approval
    assert not check.approved
    assert check.approval_request == asked["request_id"]
    assert graph.task("ship").status == "pending"
    await client.decide(run.id, check.approval_request, "allow")
    assert (await follow(client, run.id))[-1].type == "run.completed"
    done = await client.graph(run.id)
    assert done.task("check").approved
    assert not done.task("check").waiting_for_approval
    assert done.task("ship").status == "completed"


async def test_a_failed_task_is_retried_alone(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    _replies(model_server, "not json")
    plan = {
        "model": MODEL,
        "tasks": [
            {"id": "count", "objective": "count", "report": {"type": "object"}},
            {"id": "other", "objective": "something else"},
            {"id": "use", "objective": "use the count", "depends_on": ["count"]},
        ],
    }
    run = await client.create_graph(plan)
    paused = await _until(client, run.id, "run.paused")
    assert paused["reason"] == "task_failed: count"
    graph = await client.graph(run.id)
    assert graph.pause_reason == "task_failed: count"
    count = graph.task("count")
    assert count.status == "failed"
    assert "not JSON" in (count.error or "")
    assert graph.task("other").status == "completed"
    assert graph.task("use").status == "pending"

    with pytest.raises(TaskNotFoundError, match="no task 'nope'"):
        await client.retry_task(run.id, "nope")
    with pytest.raises(RunStateError, match="has not failed"):
        await client.retry_task(run.id, "use")
    _replies(model_server, '{"n": 3}')
    retried = await client.retry_task(run.id, "count")
    assert retried.task("count").status in ("pending", "running", "completed")
    assert (await follow(client, run.id))[-1].type == "run.completed"
    done = await client.graph(run.id)
    assert done.task("count").report == {"n": 3}
    assert len(done.task("count").runs) == 2
    assert len(done.task("other").runs) == 1  # the others untouched


async def test_a_plan_that_is_not_one_is_refused_naming_what_is_wrong(
    client: AsyncClient, door: Door
) -> None:
    cyclic = {
        "model": MODEL,
        "tasks": [
            {"id": "a", "objective": "a", "depends_on": ["b"]},
            {"id": "b", "objective": "b", "depends_on": ["a"]},
        ],
    }
    with pytest.raises(BlueprintError, match="cycle: a -> b -> a"):
        await client.create_graph(cyclic)
    with pytest.raises(BlueprintError, match="unknown task 'zz'"):
        await client.create_graph(
            {"model": MODEL, "tasks": [{"id": "a", "objective": "a", "depends_on": ["zz"]}]}
        )
    with pytest.raises(BlueprintError, match="needs tasks"):
        await client.create_graph({"model": MODEL})
    assert (await client.runs()).runs == []  # nothing was made


async def test_graph_of_a_run_that_is_none_says_so(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    model_server.play(Scenario.of({"text": "hi"}))
    plain = await client.create("say hi", model=MODEL)
    await follow(client, plain.id)
    with pytest.raises(NotAGraphError, match="not a task graph"):
        await client.graph(plain.id)
    with pytest.raises(RunNotFoundError):
        await client.graph("run_doesnotexist")
    with pytest.raises(NotAGraphError):
        await client.retry_task(plain.id, "a")


async def test_a_plan_is_taken_as_a_plan_a_file_or_its_data(
    client: AsyncClient, model_server: MockModelServer, tmp_path: Path
) -> None:
    _replies(model_server, "ok")
    file = tmp_path / "plan.yaml"
    file.write_text(
        f"objective: From a file\nmodel: {MODEL}\ntasks:\n  - {{id: only, objective: go}}\n"
    )
    from_file = await client.create_graph(file)
    from_plan = await client.create_graph(Plan.load(file), budget_usd=2)
    for run in (from_file, from_plan):
        assert run.objective == "From a file"
        assert (await follow(client, run.id))[-1].type == "run.completed"
    assert (await client.graph(from_plan.id)).run.status == "completed"


def test_rest_answers_bad_graph_requests_with_4xx_bodies(
    server_door: Door, model_server: MockModelServer
) -> None:
    _replies(model_server, "ok")
    with raw_client(server_door) as http:
        cyclic = {"tasks": [{"id": "a", "objective": "a", "depends_on": ["a"]}], "model": MODEL}
        bad = http.post("/graphs", json={"plan": cyclic})
        assert bad.status_code == 422, bad.text
        assert bad.json()["error"]["code"] == "invalid_blueprint"
        assert "depends on itself" in bad.json()["error"]["message"]
        shape = http.post("/graphs", json={"plan": DIAMOND, "colour": "red"})
        assert shape.status_code == 422, shape.text
        made = http.post("/graphs", json={"plan": DIAMOND, "budget_usd": 5})
        assert made.status_code == 201, made.text
        run_id = made.json()["id"]
        assert made.json()["objective"] == DIAMOND["objective"]
        shown = http.get(f"/runs/{run_id}/graph")
        assert shown.status_code == 200
        assert [t["id"] for t in shown.json()["tasks"]] == ["split", "left", "right", "join"]
        unknown = http.post(f"/runs/{run_id}/graph/tasks/nope/retry")
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "task_not_found"
        missing = http.get("/runs/run_nothere/graph")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "run_not_found"
        plain = http.post("/runs", json={"objective": "hi", "model": MODEL}).json()["id"]
        not_graph = http.get(f"/runs/{plain}/graph")
        assert not_graph.status_code == 404
        assert not_graph.json()["error"]["code"] == "not_a_graph"
        assert server_door.live is not None
        admin = Admin(server_door.live.config.db_url)
        admin.user("vera", workspace="default", role="viewer")
        with server_door.live.client(admin.api_token("vera")) as vera:
            assert vera.get(f"/runs/{run_id}/graph").status_code == 200
            refused = vera.post(f"/runs/{run_id}/graph/tasks/left/retry")
            assert refused.status_code == 403
            assert refused.json()["error"]["code"] == "forbidden"
            start = vera.post("/graphs", json={"plan": DIAMOND, "workspace": "default"})
            assert start.status_code == 403
        paths = http.get("/openapi.json").json()["paths"]
        assert {"/api/v1/graphs", "/api/v1/runs/{run_id}/graph"} <= set(paths)
        assert "/api/v1/runs/{run_id}/graph/tasks/{task}/retry" in paths


def test_the_sync_client_runs_and_retries_a_graph(
    door: Door, model_server: MockModelServer
) -> None:
    from helix import Client

    _replies(model_server, "plain words")
    plan = {
        "model": MODEL,
        "tasks": [{"id": "n", "objective": "a number", "report": {"type": "integer"}}],
    }
    opened = (
        Client(door.url, token=door.token)
        if door.url is not None
        else Client(env=door.env, user="tester")
    )
    with opened as client:
        run = client.create_graph(plan)
        for event in client.events(run.id, follow=True):
            if event.type == "run.paused":
                break
        assert client.graph(run.id).task("n").status == "failed"
        _replies(model_server, "7")
        client.retry_task(run.id, "n")
        assert client.wait(run.id).status == "completed"
        assert client.graph(run.id).task("n").report == 7
