"""``GET /plugins``, and a run started over HTTP with a blueprint naming a plugin."""

from __future__ import annotations

import httpx

from helix.testing import MockModelServer

from .conftest import MODEL, LiveServer, play, wait_for_status


def test_the_plugins_are_listed_and_a_run_uses_one(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    with live.client() as anonymous:
        assert anonymous.get("/plugins").status_code == 401
    listed = owner.get("/plugins")
    assert listed.status_code == 200, listed.text
    (example,) = [p for p in listed.json()["plugins"] if p["name"] == "example"]
    assert example["status"] == "active"
    assert example["source"] == "entry_point"
    assert example["provides"] == {
        "tools": ["count_words"],
        "gates": ["example.no-secrets"],
        "components": ["example.counts"],
    }
    assert "location" not in example

    play(
        model_server,
        {"text": "", "tool_calls": [{"name": "count_words", "args": {"path": "missing.txt"}}]},
        {"text": "Counted."},
    )
    blueprint = {"model": MODEL, "tools": ["read_file"], "plugins": ["example"]}
    created = owner.post("/runs", json={"objective": "count", "blueprint": blueprint})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    wait_for_status(owner, run_id, "completed")
    events = owner.get(f"/runs/{run_id}/events").json()["events"]
    (started,) = [e["data"] for e in events if e["type"] == "tool.started"]
    assert started["origin"] == f"plugin:example@{example['version']}"
    assert [e["data"]["name"] for e in events if e["type"] == "plugin.loaded"] == ["example"]

    refused = owner.post(
        "/runs", json={"objective": "x", "blueprint": {"model": MODEL, "plugins": ["nope"]}}
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_plugin"
    assert "unknown plugin 'nope'" in refused.json()["error"]["message"]
