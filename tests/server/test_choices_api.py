"""Options cards over HTTP: listed, chosen once (409 after), unknown choices 422, the SDK
and the WebSocket answering the same way."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from helix import Client
from helix.errors import ChoiceClosedError
from helix.testing import MockModelServer

from .conftest import MODEL, LiveServer, play, wait_for_event, wait_for_status

CARD = {
    "question": "Ship it?",
    "title": "Release",
    "choices": [
        {"id": "yes", "label": "Ship"},
        {"id": "no", "label": "Wait", "description": "a day"},
    ],
}


def _asking(client: httpx.Client, server: MockModelServer) -> str:
    play(
        server,
        {"text": "Asking.", "tool_calls": [{"name": "ask_choice", "args": CARD}]},
        {"text": "Done."},
    )
    run_id: str = client.post("/runs", json={"objective": "ask", "model": MODEL}).json()["id"]
    wait_for_event(client, run_id, "ui.asked")
    return run_id


def _events(client: httpx.Client, run_id: str, kind: str) -> list[dict[str, Any]]:
    events = client.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    return [e for e in events if e["type"] == kind]


def test_a_card_is_chosen_over_rest_once(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _asking(owner, model_server)
    assert owner.get(f"/runs/{run_id}").json()["status"] == "waiting"
    (card,) = owner.get(f"/runs/{run_id}/choices").json()["cards"]
    component = card["component_id"]
    assert card == {
        "component_id": component,
        "call_id": card["call_id"],
        "question": "Ship it?",
        "title": "Release",
        "choices": [
            {"id": "yes", "label": "Ship", "description": None},
            {"id": "no", "label": "Wait", "description": "a day"},
        ],
        "expires_at": card["expires_at"],
    }
    path = f"/runs/{run_id}/components/{component}/choose"
    unknown = owner.post(path, json={"choice": "maybe"})
    assert unknown.status_code == 422
    assert unknown.json()["error"] == {
        "code": "invalid_choice",
        "message": f"component {component!r} has no choice 'maybe': its choices are yes, no",
    }
    assert owner.post(path, json={"choice": ""}).status_code == 422
    assert owner.post(path, json={"choice": "yes", "extra": 1}).status_code == 422
    missing = owner.post(f"/runs/{run_id}/components/cmp_nothere/choose", json={"choice": "yes"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "component_not_found"

    chosen = owner.post(path, json={"choice": "no"})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json() == {"component_id": component, "choice": "no"}
    again = owner.post(path, json={"choice": "yes"})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "choice_closed"

    wait_for_status(owner, run_id, "completed")
    (made,) = _events(owner, run_id, "ui.chosen")
    assert (made["data"]["choice"], made["data"]["by"]) == ("no", "user:admin")
    (result,) = _events(owner, run_id, "tool.completed")
    assert json.loads(result["data"]["output"])["choice"] == "no"
    finished = owner.post(path, json={"choice": "yes"})
    assert finished.status_code == 409  # the run has ended
    assert owner.get(f"/runs/{run_id}/choices").json() == {"cards": []}


def test_the_sdk_chooses_over_http(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _asking(owner, model_server)
    token = owner.headers["Authorization"].removeprefix("Bearer ")
    with Client(live.url, token=token) as client:  # the SDK, through HttpApi
        (card,) = client.choices(run_id)
        assert [c.label for c in card.choices] == ["Ship", "Wait"]
        made = client.choose(run_id, None, "yes")
        assert made.component_id == card.component_id
        # Answered already, or (the run went on at once) a run that waits for no choice.
        with pytest.raises(ChoiceClosedError, match=r"answered already|takes no choice"):
            client.choose(run_id, card.component_id, "no")
    wait_for_status(owner, run_id, "completed")


def test_the_socket_takes_a_choice(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _asking(owner, model_server)
    ws_token = owner.post("/auth/ws-token").json()["token"]
    with connect(f"{live.ws_url}/runs/{run_id}/stream?token={ws_token}") as ws:
        ws.send(json.dumps({"type": "choice", "choice": "nope", "id": 1}))
        ws.send(json.dumps({"type": "choice", "choice": "yes", "id": 2}))
        replies: dict[int, dict[str, Any]] = {}
        while 2 not in replies:
            message = json.loads(ws.recv(timeout=30))
            if message["type"] in ("ack", "error") and message.get("id") is not None:
                replies[message["id"]] = message
    assert replies[1]["status"] == 422
    assert replies[1]["error"]["code"] == "invalid_choice"
    assert replies[2]["type"] == "ack"
    wait_for_status(owner, run_id, "completed")
    (made,) = _events(owner, run_id, "ui.chosen")
    assert made["data"]["choice"] == "yes"
