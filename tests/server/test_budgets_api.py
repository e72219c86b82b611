"""Cumulative budgets over real HTTP: read by members, set by owners and admins, binding runs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from helix.api import HttpApi
from helix.budgets import BudgetNotFoundError
from helix.errors import ConfigError, HelixError
from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status


def _error(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()["error"]
    assert body["code"]
    assert body["message"]
    return body


def test_a_workspace_budget_pauses_a_run_until_it_is_raised(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    set_ = owner.put(
        "/workspaces/default/budgets", json={"kind": "workspace", "period": "day", "usd": 0}
    )
    assert set_.status_code == 200, set_.text
    assert (set_.json()["scope"], set_.json()["left_usd"]) == ("workspace:default", 0.0)
    play(model_server, {"text": "Done."})
    run_id = owner.post("/runs", json={"objective": "x", "model": MODEL}).json()["id"]
    wait_for_status(owner, run_id, "paused")
    events = owner.get(f"/runs/{run_id}/events").json()["events"]
    (exceeded,) = [e["data"] for e in events if e["type"] == "budget.exceeded"]
    assert (exceeded["scope"], exceeded["period"], exceeded["cap_usd"]) == (
        "workspace:default", "day", 0.0
    )  # fmt: skip
    assert owner.put(
        "/budgets", json={"kind": "workspace", "period": "day", "usd": 5}
    ).is_success  # the caller's own workspace: default
    assert owner.post(f"/runs/{run_id}/resume").is_success  # no cap of its own to raise
    wait_for_status(owner, run_id, "completed")
    capped = {"objective": "y", "model": MODEL, "budget_tokens": 5}
    own = owner.post("/runs", json=capped).json()["id"]  # a run's own token cap, over REST
    wait_for_status(owner, own, "paused")
    refused = owner.post(f"/runs/{own}/resume")
    assert "token cap" in _error(refused, 409)["message"]
    (listed,) = owner.get("/workspaces/default/budgets").json()["budgets"]
    assert listed["spent_usd"] > 0
    assert listed["reserved_usd"] == 0
    assert listed["budget"] == {
        "workspace": "default", "kind": "workspace", "name": "", "period": "day",
        "usd": 5.0, "tokens": None,
    }  # fmt: skip


def test_who_may_read_and_set_budgets_and_bad_budgets(
    live: LiveServer, admin: Admin, owner: httpx.Client
) -> None:
    body = {"kind": "person", "name": "vera", "period": "month", "tokens": 1000}
    assert owner.put("/workspaces/default/budgets", json=body).is_success
    admin.user("vera", workspace="default", role="viewer")
    admin.user("mia", workspace="default", role="member")
    admin.user("mallory")
    with live.client(admin.api_token("vera")) as vera:
        (listed,) = vera.get("/workspaces/default/budgets").json()["budgets"]
        assert listed["scope"] == "person:vera"
        _error(vera.put("/workspaces/default/budgets", json=body), 403)
        remove = {"kind": "person", "name": "vera", "period": "month"}
        _error(vera.delete("/workspaces/default/budgets", params=remove), 403)
    with live.client(admin.api_token("mia")) as mia:
        assert mia.get("/workspaces/default/budgets").is_success
        _error(mia.put("/workspaces/default/budgets", json=body), 403)
    with live.client(admin.api_token("mallory")) as mallory:
        _error(mallory.get("/workspaces/default/budgets"), 404)
        _error(mallory.put("/workspaces/default/budgets", json=body), 404)
    _error(owner.get("/workspaces/nowhere/budgets"), 404)
    _error(owner.put("/workspaces/nowhere/budgets", json=body), 404)
    for bad, said in (
        ({**body, "tokens": -5}, "a cap is 0 or more"),
        ({**body, "period": "week"}, "choose day or month"),
        ({**body, "kind": "galaxy"}, "choose workspace, blueprint, person"),
        ({"kind": "workspace", "period": "day"}, "give a cap"),
        ({**body, "name": "a/../b"}, "name"),
    ):
        assert said in _error(owner.put("/budgets", json=bad), 422)["message"]
    remove = {"kind": "person", "name": "vera", "period": "month"}
    assert owner.delete("/workspaces/default/budgets", params=remove).status_code == 204
    assert _error(owner.delete("/budgets", params=remove), 404)["code"] == "budget_not_found"


def test_the_http_door_sets_lists_and_removes(live: LiveServer, owner: httpx.Client) -> None:
    token = owner.headers["Authorization"].removeprefix("Bearer ")

    async def main() -> None:
        api = HttpApi(live.url, token=token)
        try:
            usage = await api.set_budget("blueprint", name="coder", period="day", usd=2.5)
            assert (usage.scope, usage.left_usd) == ("blueprint:coder", 2.5)
            listed = await api.budgets(workspace="default")
            assert [u.scope for u in listed.budgets] == ["blueprint:coder"]
            with pytest.raises(ConfigError, match="choose day or month"):
                await api.set_budget("workspace", period="year", usd=1.0)
            await api.remove_budget("blueprint", name="coder", period="day")
            with pytest.raises(BudgetNotFoundError):
                await api.remove_budget("blueprint", name="coder", period="day")
            with pytest.raises(HelixError):
                await api.budgets(workspace="nowhere")
        finally:
            await api.aclose()

    asyncio.run(main())
