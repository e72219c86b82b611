"""``/api/v1/workflows`` and the SDK over it: viewers read, members edit and run; bad
definitions, unknown steps, cycles and stale versions are 4xx with a code, never a 500."""

from __future__ import annotations

import httpx
import pytest

from helix import Client
from helix.errors import WorkflowConflictError, WorkflowError, WorkflowNotFoundError
from helix.testing import MockModelServer
from helix.workflows import MAX_TEXT, load_text

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

FLOW = f"""
name: chain
description: Two steps, one after the other
model: {MODEL}
steps:
  - {{id: first, objective: Do the first thing}}
  - {{id: second, objective: Do the second thing}}
edges: [{{from: first, to: second}}]
"""


@pytest.fixture
def people(live: LiveServer, admin: Admin) -> dict[str, str]:
    admin.workspace("team")
    admin.user("ann", password="api-pw-12345", workspace="team", role="member")
    admin.user("vic", password="api-pw-12345", workspace="team", role="viewer")
    admin.user("out", password="api-pw-12345")
    return {name: live.login(name, "api-pw-12345") for name in ("ann", "vic", "out")}


def _error(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    return str(body["message"])


def test_members_save_edit_and_read_viewers_only_read(
    live: LiveServer, people: dict[str, str]
) -> None:
    team = {"workspace": "team"}
    with live.client(people["ann"]) as ann, live.client(people["vic"]) as vic:
        saved = ann.put("/workflows/chain", params=team, json={"text": FLOW, "base_version": 0})
        assert saved.status_code == 200, saved.text
        assert (saved.json()["version"], saved.json()["by"]) == (1, "user:ann")
        listed = vic.get("/workflows", params=team).json()["workflows"]
        assert [(w["name"], w["version"], w["steps"]) for w in listed] == [("chain", 1, 2)]
        got = vic.get("/workflows/chain", params=team).json()
        assert got["workflow"]["edges"] == [{"from": "first", "to": "second"}]
        edit = {"operations": [{"op": "set_field", "step": "first", "field": "retries",
                                "value": 1}], "base_version": 1}  # fmt: skip
        _error(vic.post("/workflows/chain/edit", params=team, json=edit), 403, "forbidden")
        _error(vic.put("/workflows/chain", params=team, json={"text": FLOW}), 403, "forbidden")
        _error(vic.post("/workflows/chain/runs", params=team, json={}), 403, "forbidden")
        _error(vic.post("/workflows/chain/chat", params=team, json={"message": "x"}), 403,
               "forbidden")  # fmt: skip
        edited = ann.post("/workflows/chain/edit", params=team, json=edit)
        assert edited.status_code == 200, edited.text
        assert edited.json()["change"] == "changed first.retries"
        history = vic.get("/workflows/chain/history", params=team).json()["versions"]
        assert [(v["version"], v["how"]) for v in history] == [(1, "api"), (2, "api")]
        first = vic.get("/workflows/chain", params={**team, "version": 1}).json()
        assert first["workflow"]["steps"][0]["retries"] == 0
    with live.client(people["out"]) as out:
        _error(out.get("/workflows", params=team), 404, "not_found")
        _error(out.get("/workflows/chain", params=team), 404, "not_found")


_NOPE = FLOW.replace("edges: [{from: first, to: second}]", "edges: [{from: first, to: nope}]")
_CYCLE = FLOW.replace(
    "edges: [{from: first, to: second}]",
    "edges: [{from: first, to: second}, {from: second, to: first}]",
)


@pytest.mark.parametrize(
    ("body", "status", "code", "says"),
    [
        ({"text": "name: [oops"}, 422, "invalid_workflow", "does not parse"),
        ({"text": _NOPE}, 422, "invalid_workflow", "unknown step 'nope'"),
        ({"text": _CYCLE}, 422, "invalid_workflow", "cycle"),
        ({"text": FLOW.replace("name: chain", "name: other")}, 422, "invalid_workflow", "'other'"),
        ({}, 422, "invalid_workflow", "one of them"),
        ({"text": "x" * (MAX_TEXT + 1)}, 422, "invalid_request", ""),
        ({"text": FLOW, "how": "telepathy"}, 422, "invalid_request", ""),
        ({"text": FLOW, "base_version": 3}, 409, "stale_workflow_version", "does not exist"),
    ],
)
def test_bad_saves_are_refused_with_a_code(
    live: LiveServer, people: dict[str, str], body: dict[str, object], status: int, code: str,
    says: str,
) -> None:  # fmt: skip
    with live.client(people["ann"]) as ann:
        answer = ann.put("/workflows/chain", params={"workspace": "team"}, json=body)
        if code == "invalid_request":
            assert answer.status_code in (413, 422), answer.text
            return
        assert says in _error(answer, status, code)


def test_stale_versions_missing_workflows_and_bad_edits(
    live: LiveServer, people: dict[str, str]
) -> None:
    team = {"workspace": "team"}
    with live.client(people["ann"]) as ann:
        ann.put("/workflows/chain", params=team, json={"text": FLOW, "base_version": 0})
        ann.put("/workflows/chain", params=team, json={"text": FLOW, "base_version": 1})
        stale = ann.put("/workflows/chain", params=team, json={"text": FLOW, "base_version": 1})
        assert "version 2 is the latest" in _error(stale, 409, "stale_workflow_version")
        _error(ann.get("/workflows/nope", params=team), 404, "workflow_not_found")
        _error(ann.get("/workflows/chain", params={**team, "version": 9}), 404,
               "workflow_not_found")  # fmt: skip
        _error(ann.get("/workflows/bad..name!", params=team), 422, "invalid_request")
        cyc = {"operations": [{"op": "connect", "from": "second", "to": "first"}]}
        assert "cycle" in _error(ann.post("/workflows/chain/edit", params=team, json=cyc), 422,
                                 "invalid_workflow")  # fmt: skip
        unknown = {"operations": [{"op": "teleport"}]}
        _error(ann.post("/workflows/chain/edit", params=team, json=unknown), 422,
               "invalid_workflow")  # fmt: skip
        canvas = ann.get("/workflows/chain/canvas", params=team).json()
        canvas["canvas"]["edges"].append({"from": "first", "to": "ghost"})
        put = {"canvas": canvas["canvas"], "base_version": canvas["version"]}
        assert "ghost" in _error(ann.put("/workflows/chain/canvas", params=team, json=put), 422,
                                 "invalid_workflow")  # fmt: skip


def test_the_sdk_runs_a_workflow_as_its_task_graph_over_http(
    live: LiveServer, people: dict[str, str], model_server: MockModelServer
) -> None:
    play(model_server, {"text": "first done"}, {"text": "second done"})
    with Client(live.url, token=people["ann"]) as client:
        saved = client.save_workflow(FLOW, base_version=0, workspace="team")
        assert saved.workflow == load_text(FLOW)
        assert [w.name for w in client.workflows(workspace="team")] == ["chain"]
        with pytest.raises(WorkflowConflictError):
            client.save_workflow(FLOW, base_version=0, workspace="team")
        with pytest.raises(WorkflowError):
            client.edit_workflow("chain", [{"op": "remove_step", "step": "ghost"}],
                                 workspace="team")  # fmt: skip
        with pytest.raises(WorkflowNotFoundError):
            client.workflow("ghost", workspace="team")
        run = client.run_workflow("chain", workspace="team")
        assert run.workspace == "team"
        assert [v.version for v in client.workflow_history("chain", workspace="team")] == [1]
    with live.client(people["ann"]) as ann:
        done = wait_for_status(ann, run.id, "completed", "failed", "paused")
        assert done["status"] == "completed"
        events = ann.get(f"/runs/{run.id}/events", params={"limit": 1000}).json()["events"]
        completed = [e["data"]["task"] for e in events if e["type"] == "task.completed"]
        assert completed == ["first", "second"]


def test_a_workflow_file_of_a_world_is_imported(live: LiveServer, people: dict[str, str]) -> None:
    world = live.config.worlds / "team" / "repo"
    world.mkdir(parents=True)
    (world / "release.yaml").write_text(FLOW)
    team = {"workspace": "team"}
    with live.client(people["ann"]) as ann, live.client(people["vic"]) as vic:
        body = {"world": "repo", "path": "release.yaml"}
        _error(vic.post("/workflows/import", params=team, json=body), 403, "forbidden")
        saved = ann.post("/workflows/import", params=team, json=body)
        assert saved.status_code == 200, saved.text
        assert (saved.json()["name"], saved.json()["how"]) == ("chain", "file")
        _error(ann.post("/workflows/import", params=team, json=body), 409,
               "stale_workflow_version")  # fmt: skip
        out = {"world": "repo", "path": "../../../helix.db"}
        assert "not a file in the world" in _error(
            ann.post("/workflows/import", params=team, json=out), 422, "invalid_workflow"
        )
        other = {"world": "../team", "path": "release.yaml"}
        assert "not a path" in _error(
            ann.post("/workflows/import", params=team, json=other), 422, "invalid_config"
        )
        missing = {"world": "nope", "path": "release.yaml"}
        _error(ann.post("/workflows/import", params=team, json=missing), 404, "not_found")
