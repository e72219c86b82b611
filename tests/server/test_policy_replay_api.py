"""``POST /runs/{id}/policy-replay`` and the workspace route, over real HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_event, wait_for_status

STRICT = {"policy": {"deny_tools": ["run_command"]}}


def _finished_run(owner: httpx.Client, model_server: MockModelServer) -> str:
    """A run that writes a file, then runs a command a person approved."""
    play(
        model_server,
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "args": {"path": "notes.md", "content": "hi\n"}},
        ]},
        {"text": "Building.", "tool_calls": [
            {"name": "run_command", "args": {"command": "mkdir -p build"}},
        ]},
        {"text": "Built."},
    )  # fmt: skip
    run_id: str = owner.post("/runs", json={"objective": "build", "model": MODEL}).json()["id"]
    wait_for_event(owner, run_id, "approval.requested")
    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    assert owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"}).is_success
    wait_for_status(owner, run_id, "completed")
    return run_id


def _error(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()["error"]
    assert body["code"]
    assert body["message"]
    return body


def test_a_candidate_policy_over_a_runs_calls(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _finished_run(owner, model_server)
    head = owner.get(f"/runs/{run_id}").json()["events"]

    answer = owner.post(f"/runs/{run_id}/policy-replay", json={"policy": STRICT})
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert (report["run_id"], report["calls"], report["stricter"], report["looser"]) == (
        run_id, 2, 1, 0
    )  # fmt: skip
    (call,) = report["differences"]
    assert call["tool"] == "run_command"
    assert (call["logged"], call["candidate"], call["candidate_gate"]) == ("ask", "deny", "ceiling")
    assert call["approval"]["decision"] == "allow"
    assert call["ran"] is True

    # The same policy as a file's text (YAML, TOML or JSON), as the dashboard sends it.
    text = "[approvals]\nrules = [{tool = 'write_file', action = 'ask'}]\n"
    as_text = owner.post(
        f"/runs/{run_id}/policy-replay", json={"text": text, "format": "toml"}
    ).json()
    assert [(d["tool"], d["candidate"]) for d in as_text["differences"]] == [("write_file", "ask")]
    assert owner.get(f"/runs/{run_id}").json()["events"] == head  # nothing appended

    # Reading only: a viewer may ask; a stranger's answer is the run route's 404.
    admin.user("vera", workspace="default", role="viewer")
    with live.client(admin.api_token("vera")) as vera:
        assert vera.post(f"/runs/{run_id}/policy-replay", json={"policy": STRICT}).is_success
    admin.user("mallory")
    with live.client(admin.api_token("mallory")) as mallory:
        stranger = mallory.post(f"/runs/{run_id}/policy-replay", json={"policy": STRICT})
        assert _error(stranger, 404)["code"] == "run_not_found"
        elsewhere = mallory.post("/workspaces/default/policy-replay", json={"policy": STRICT})
        assert _error(elsewhere, 404)
    unknown = owner.post("/runs/run_nope/policy-replay", json={"policy": STRICT})
    assert _error(unknown, 404)["code"] == "run_not_found"


def test_the_workspace_route_and_its_ceiling(
    owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _finished_run(owner, model_server)
    # A candidate without a ceiling keeps the run's own, the workspace's included.
    assert owner.put("/workspaces/default/policy", json={"deny_tools": ["write_file"]}).is_success
    rules = {"approvals": {"rules": [{"tool": "run_command", "action": "allow"}]}}
    answer = owner.post("/workspaces/default/policy-replay", json={"policy": rules})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["workspace"] == "default"
    (report,) = body["runs"]
    assert report["run_id"] == run_id
    changes = {(d["tool"], d["candidate"], d["change"]) for d in report["differences"]}
    assert changes == {("write_file", "deny", "stricter"), ("run_command", "allow", "looser")}


def test_a_bad_policy_is_a_422_that_says_why(
    owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _finished_run(owner, model_server)
    url = f"/runs/{run_id}/policy-replay"
    unknown_field = _error(owner.post(url, json={"policy": {"ceiling": {}}}), 422)
    assert (unknown_field["code"], unknown_field["message"]) == (
        "invalid_policy", "invalid policy: ceiling: unknown field"
    )  # fmt: skip
    cases: list[tuple[dict[str, Any], str]] = [
        ({"policy": {"policy": {"deny_tool": ["x"]}}}, "policy.deny_tool: unknown field"),
        ({"policy": {"approvals": {"rules": [{"tool": "x"}]}}}, "approvals.rules.0.action"),
        ({"policy": {}}, "the policy is empty"),
        ({"text": "policy: [unclosed"}, "does not parse"),
        ({"text": "a = 1", "format": "ini"}, "format"),
        # A few lines of aliases can stand for a document too large to check.
        ({"text": "x: &a [1, 1]\ny: &b [*a, *a]\npolicy: {tools: [*b, *b]}"}, "aliases"),
        ({}, "either policy or text"),
        ({"policy": STRICT, "text": "policy: {}"}, "either policy or text"),
    ]
    for body, message in cases:
        error = _error(owner.post(url, json=body), 422)
        assert message in error["message"], (body, error)


def test_the_routes_are_in_the_openapi_document(live: LiveServer) -> None:
    with live.client() as anonymous:
        paths = anonymous.get("/openapi.json").json()["paths"]
    assert "post" in paths["/api/v1/runs/{run_id}/policy-replay"]
    assert "post" in paths["/api/v1/workspaces/{workspace}/policy-replay"]
