"""``GET /nodes`` and ``POST /nodes/{id}/drain``: who may, what they see, errors by code."""

from __future__ import annotations

import httpx

from helix.testing import MockModelServer

from .conftest import Admin, LiveServer, start_asking_run, wait_for_event, wait_for_status


def _code(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    code = answer.json()["error"]["code"]
    assert isinstance(code, str)
    return code


def test_owners_see_the_local_node_and_its_run_and_cannot_drain_it(
    owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    answer = owner.get("/nodes")
    assert answer.status_code == 200, answer.text
    listed = answer.json()
    assert listed["executor"] == "local"
    [node] = listed["nodes"]
    assert (node["id"], node["state"], node["executor"]) == ("local", "alive", "local")
    assert node["resources"]["CPU"] >= 1
    assert node["resources"]["memory"] > 2**20  # bytes
    assert (node["runs"], node["run_count"]) == ([run_id], 1)
    assert node["labels"] == {}

    assert _code(owner.post("/nodes/local/drain"), 409) == "invalid_node_state"
    assert _code(owner.post("/nodes/worker-7/drain"), 404) == "node_not_found"
    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    wait_for_status(owner, run_id, "completed")


def test_members_viewers_and_personal_owners_are_refused_and_admins_see_only_their_runs(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    admin.user("mia", workspace="default", role="member")  # and owner of "mia", personal
    admin.user("vera", workspace="default", role="viewer")
    admin.user("tess")
    admin.workspace("team2", owner="tess")  # a team workspace: tess may see the nodes
    for name in ("mia", "vera"):
        with live.client(admin.api_token(name)) as refused:
            assert _code(refused.get("/nodes"), 403) == "forbidden"
            assert _code(refused.post("/nodes/local/drain"), 403) == "forbidden"
    with live.client(admin.api_token("tess")) as tess:
        [node] = tess.get("/nodes").json()["nodes"]
        assert (node["runs"], node["run_count"]) == ([], 1)  # the run is default's
    with live.client() as anonymous:
        assert _code(anonymous.get("/nodes"), 401) == "unauthorized"
        assert _code(anonymous.post("/nodes/local/drain"), 401) == "unauthorized"
    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    wait_for_status(owner, run_id, "completed")
