"""Run id prefixes and ``last`` over real HTTP: only the caller's workspaces count.

A prefix is matched, and judged ambiguous, among the runs the caller may see, so it
never tells anyone that another workspace holds a run starting the same way.
"""

from __future__ import annotations

import httpx

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status


def _export(owner: httpx.Client, model_server: MockModelServer) -> bytes:
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "say it", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "completed")
    return owner.get(f"/runs/{run_id}/export").content


def _import(client: httpx.Client, body: bytes, as_id: str) -> None:
    answer = client.post("/runs/import", params={"as": as_id}, content=body)
    assert answer.status_code == 201, answer.text


def test_prefixes_and_last_see_only_the_callers_workspaces(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    body = _export(owner, model_server)
    admin.user("bob", password="bob-password")
    with live.client(live.login("bob", "bob-password")) as bob:
        _import(bob, body, "run_cafe0002")  # bob's own workspace
        _import(owner, body, "run_cafe0001")  # default: bob is no member
        _import(owner, body, "run_cafe0003")

        # bob's "cafe" is unique: the owner's two runs neither match nor make it ambiguous.
        mine = bob.get("/runs/cafe")
        assert mine.status_code == 200, mine.text
        assert mine.json()["id"] == "run_cafe0002"
        for hidden in ("cafe0001", "run_cafe0001", "run_cafe0003", "cafe00"):
            if hidden == "cafe00":
                assert bob.get(f"/runs/{hidden}").json()["id"] == "run_cafe0002"
                continue
            refused = bob.get(f"/runs/{hidden}")
            assert refused.status_code == 404, refused.text
            assert refused.json()["error"]["code"] == "run_not_found"
            assert bob.post(f"/runs/{hidden}/cancel").status_code == 404
            assert bob.get(f"/runs/{hidden}/events").status_code == 404
        assert bob.get("/runs/last").json()["id"] == "run_cafe0002"
        assert [r["id"] for r in bob.get("/runs").json()["runs"]] == ["run_cafe0002"]

        # The owner (of default only) sees two cafe runs: ambiguous, with their ids.
        ambiguous = owner.get("/runs/cafe")
        assert ambiguous.status_code == 400, ambiguous.text
        error = ambiguous.json()["error"]
        assert error["code"] == "ambiguous_run_id"
        assert error["candidates"] == ["run_cafe0001", "run_cafe0003"]
        assert "run_cafe0002" not in ambiguous.text
        assert owner.get("/runs/cafe0003").json()["id"] == "run_cafe0003"
        assert owner.get("/runs/cafe0002").status_code == 404

        # A member of both workspaces sees all three.
        admin.role("default", "bob", "viewer")
        both = bob.get("/runs/cafe")
        assert both.status_code == 400
        assert both.json()["error"]["candidates"] == [
            "run_cafe0001", "run_cafe0002", "run_cafe0003",
        ]  # fmt: skip
        # A viewer reads by prefix but may not act: the prefix resolves, the role refuses.
        assert bob.get("/runs/cafe0001").json()["id"] == "run_cafe0001"
        assert bob.post("/runs/cafe0001/cancel").status_code == 403


def test_routes_act_on_the_full_id(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    body = _export(owner, model_server)
    _import(owner, body, "run_beef0001")
    events = owner.get("/runs/beef/events").json()["events"]
    assert events
    assert {e["run_id"] for e in events[1:]} == {"run_beef0001"}
    exported = owner.get("/runs/run_beef/export").text.splitlines()
    assert '"run_id":"run_beef0001"' in exported[-1]
    resumed = owner.post("/runs/beef0001/fork", json={"turn": 0})
    assert resumed.status_code == 201, resumed.text
    fork = owner.get(f"/runs/{resumed.json()['id']}").json()
    assert fork["parent"] == {"run_id": "run_beef0001", "seq": 0, "turn": 0}
    strict = {"policy": {"policy": {"deny_tools": ["run_command"]}}}
    replayed = owner.post("/runs/beef/policy-replay", json=strict)
    assert replayed.status_code == 200, replayed.text
    assert replayed.json()["run_id"] == "run_beef0001"
