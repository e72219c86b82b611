"""Blueprints stored in the server by name, and runs started from them."""

from __future__ import annotations

import httpx

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status

REVIEWER = {"model": MODEL, "tools": ["list_files", "read_file"], "system": "Review only."}


def test_a_stored_blueprint_runs_by_name(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    stored = owner.put("/workspaces/default/blueprints/reviewer", json=REVIEWER)
    assert stored.status_code == 200, stored.text
    assert stored.json()["name"] == "reviewer"
    assert owner.get("/workspaces/default/blueprints").json() == {"blueprints": ["reviewer"]}
    assert owner.get("/workspaces/default/blueprints/reviewer").json()["tools"] == [
        "list_files",
        "read_file",
    ]

    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Looks fine."},
    )
    created = owner.post("/runs", json={"objective": "review", "blueprint": "reviewer"})
    assert created.status_code == 201, created.text
    run = wait_for_status(owner, created.json()["id"], "completed")
    assert run["blueprint"] == "reviewer"
    assert run["model"] == MODEL
    request = model_server.requests[-1]
    assert request.body["messages"][0] == {"role": "system", "content": "Review only."}


def test_blueprint_bad_input_and_access(
    live: LiveServer, admin: Admin, owner: httpx.Client
) -> None:
    owner.put("/workspaces/default/blueprints/reviewer", json=REVIEWER)
    cases = [
        (owner.post("/runs", json={"objective": "x", "blueprint": "nope"}), 404),
        (owner.put("/workspaces/default/blueprints/bad", json={"tools": ["no_such_tool"]}), 422),
        (owner.put("/workspaces/default/blueprints/bad", json={"budget": {"usd": -1}}), 422),
        (owner.put("/workspaces/default/blueprints/bad name", json=REVIEWER), 422),
        (owner.put("/workspaces/default/blueprints/bad", json=["not", "an", "object"]), 422),
        (owner.get("/workspaces/default/blueprints/nope"), 404),
        (owner.get("/workspaces/elsewhere/blueprints"), 404),
    ]
    for answer, status in cases:
        assert answer.status_code == status, (answer.request.url, answer.text)
        assert answer.json()["error"]["code"]
    assert owner.get("/workspaces/default/blueprints").json()["blueprints"] == ["reviewer"]

    admin.user("vera", workspace="default", role="viewer")
    with live.client(admin.api_token("vera")) as vera:
        assert vera.get("/workspaces/default/blueprints/reviewer").status_code == 200
        refused = vera.put("/workspaces/default/blueprints/mine", json=REVIEWER)
        assert refused.status_code == 403
