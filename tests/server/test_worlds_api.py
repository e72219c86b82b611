"""A workspace's world folders over the API: listed, chosen for a run, and its boundary."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from helix.api import Client
from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status


def _worlds(client: httpx.Client, workspace: str) -> httpx.Response:
    return client.get(f"/workspaces/{workspace}/worlds")


def test_a_run_in_a_chosen_folder_reads_its_files_and_the_folder_is_listed(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    assert _worlds(owner, "default").json() == {"worlds": []}
    folder = live.config.worlds / "default" / "project"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("the plan\n")
    (live.config.worlds / "default" / "stray.txt").write_text("not a folder")
    play(
        model_server,
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
        {"text": "Read it."},
    )
    body = {"objective": "read", "model": MODEL, "world": "project", "auto_approve": True}
    run_id = owner.post("/runs", json=body).json()["id"]
    wait_for_status(owner, run_id, "completed")
    events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    done = next(e for e in events if e["type"] == "tool.completed")
    assert done["data"]["ok"] is True
    assert "the plan" in done["data"]["output"]
    assert _worlds(owner, "default").json() == {"worlds": ["project"]}


def test_the_http_api_lists_world_names(live: LiveServer, owner: httpx.Client) -> None:
    (live.config.worlds / "default" / "alpha").mkdir(parents=True)
    token = owner.headers["Authorization"].split()[1]

    with Client(live.url, token=token) as client:  # the SDK, through HttpApi
        assert client.world_names("default") == ["alpha"]


def test_another_workspaces_worlds_are_not_listed_or_usable(
    live: LiveServer, admin: Admin, owner: httpx.Client
) -> None:
    admin.workspace("other")
    (live.config.worlds / "other" / "secret").mkdir(parents=True)
    admin.user("bea", password="bea-password")
    with live.client(live.login("bea", "bea-password")) as bea:
        answer = _worlds(bea, "other")
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "account_not_found"  # as for blueprints
        assert "secret" not in answer.text
        assert bea.get("/workspaces/other/blueprints").status_code == 404
        body = {"objective": "x", "model": MODEL, "world": "secret", "workspace": "other"}
        refused = bea.post("/runs", json=body)
        assert refused.status_code == 404, refused.text
        own = _worlds(bea, "bea")
        assert own.status_code == 200, own.text
        assert own.json() == {"worlds": []}
    assert _worlds(owner, "other").status_code == 404  # the owner of default is not in it


@pytest.mark.parametrize("name", ["..", "../other", "a/b", "/etc", ".hidden", "", "x" * 65])
def test_a_world_that_is_not_a_plain_name_is_refused(owner: httpx.Client, name: str) -> None:
    answer = owner.post("/runs", json={"objective": "x", "model": MODEL, "world": name})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"]


def test_a_world_that_is_a_link_out_of_the_worlds_is_refused(
    live: LiveServer, owner: httpx.Client, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("keep out")
    worlds = live.config.worlds / "default"
    worlds.mkdir(parents=True)
    os.symlink(outside, worlds / "escape")
    (worlds / "plain").mkdir()
    assert _worlds(owner, "default").json() == {"worlds": ["plain"]}  # the link is not offered
    answer = owner.post("/runs", json={"objective": "x", "model": MODEL, "world": "escape"})
    assert answer.status_code == 422, answer.text
    assert "not a folder of the workspace's worlds" in answer.json()["error"]["message"]
    assert owner.get("/runs").json()["runs"] == []  # nothing was started


def test_unknown_workspace_and_no_token(live: LiveServer, owner: httpx.Client) -> None:
    assert _worlds(owner, "nope").status_code == 404
    with live.client() as anonymous:
        assert _worlds(anonymous, "default").status_code == 401
