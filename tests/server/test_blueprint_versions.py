"""Versioned blueprints through a real server: saves, history, diff, rollback, runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix.accounts import StaleBlueprintVersionError
from helix.api import AsyncClient
from helix.errors import ConfigError, NotFoundError
from helix.testing import MockModelServer

from .conftest import MODEL, WAIT_S, Admin, LiveServer, make_config, play, wait_for_status

BASE = "/workspaces/default/blueprints"


def _reviewer(system: str, **more: Any) -> dict[str, Any]:
    return {"model": MODEL, "tools": ["list_files"], "system": system, **more}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(
    request: pytest.FixtureRequest, tmp_path: Path, model_server: MockModelServer
) -> Iterator[LiveServer]:
    """A live server on SQLite, or on a PostgreSQL database of its own."""
    overrides: dict[str, Any] = {}
    if request.param == "postgres":
        overrides["db_url"] = request.getfixturevalue("fresh_postgres_url")
    server = LiveServer(make_config(tmp_path, model_server, **overrides)).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def signed_in(served: LiveServer) -> Iterator[httpx.Client]:
    with served.client() as anonymous:
        answer = anonymous.post("/auth/link", json={"token": served.bootstrap_token})
    assert answer.status_code == 200, answer.text
    with served.client(answer.json()["token"]) as client:
        yield client


def _run(client: httpx.Client, server: MockModelServer, **body: Any) -> dict[str, Any]:
    play(server, {"text": "Looks fine."})
    created = client.post("/runs", json={"objective": "review", **body})
    assert created.status_code == 201, created.text
    return wait_for_status(client, created.json()["id"], "completed")


def test_a_blueprint_edited_twice_has_three_versions_and_a_run_names_the_one_it_used(
    served: LiveServer, signed_in: httpx.Client, model_server: MockModelServer
) -> None:
    owner = signed_in
    for n, system in enumerate(["Review v1.", "Review v2.", "Review v3."], start=1):
        saved = owner.put(f"{BASE}/reviewer", json=_reviewer(system), params={"note": f"n{n}"})
        assert saved.status_code == 200, saved.text
        assert (saved.json()["version"], saved.json()["note"]) == (n, f"n{n}")
        assert saved.json()["by"] == "user:admin"
    history = owner.get(f"{BASE}/reviewer/versions").json()["versions"]
    assert [v["version"] for v in history] == [1, 2, 3]
    assert owner.get(BASE).json() == {"blueprints": ["reviewer"]}  # as before versions
    listed = owner.get(BASE, params={"latest": "true"}).json()
    assert listed["blueprints"] == ["reviewer"]
    assert [(b["name"], b["version"]) for b in listed["latest"]] == [("reviewer", 3)]

    latest = _run(owner, model_server, blueprint="reviewer")
    assert (latest["blueprint"], latest["blueprint_version"]) == ("reviewer", 3)
    assert model_server.requests[-1].body["messages"][0]["content"] == "Review v3."
    first = owner.get(f"/runs/{latest['id']}/events").json()["events"][0]
    assert first["type"] == "run.created"
    assert (first["data"]["blueprint"], first["data"]["blueprint_version"]) == ("reviewer", 3)

    old = _run(owner, model_server, blueprint="reviewer", blueprint_version=1)
    assert old["blueprint_version"] == 1
    assert model_server.requests[-1].body["messages"][0]["content"] == "Review v1."
    at = _run(owner, model_server, blueprint="reviewer@2")
    assert at["blueprint_version"] == 2
    listed_runs = {r["id"]: r for r in owner.get("/runs").json()["runs"]}
    assert listed_runs[old["id"]]["blueprint_version"] == 1

    inline = _run(owner, model_server, blueprint=_reviewer("Inline."))
    assert inline["blueprint_version"] is None  # not a stored blueprint


def test_diff_rollback_and_a_stale_save(
    live: LiveServer, owner: httpx.Client, admin: Admin
) -> None:
    owner.put(f"{BASE}/fixer", json=_reviewer("One.", budget={"usd": 1}))
    owner.put(f"{BASE}/fixer", json=_reviewer("Two.", budget={"usd": 2}, temperature=0.5))
    diff = owner.get(f"{BASE}/fixer/diff", params={"a": 1, "b": 2})
    assert diff.status_code == 200, diff.text
    body = diff.json()
    assert body["diff"].startswith("--- fixer v1\n+++ fixer v2\n")
    assert "-system: One.\n" in body["diff"]
    assert "+system: Two.\n" in body["diff"]
    assert body["changed"] == [
        {"path": "budget.usd", "change": "changed"},
        {"path": "system", "change": "changed"},
        {"path": "temperature", "change": "added"},
    ]
    same = owner.get(f"{BASE}/fixer/diff", params={"a": 2, "b": 2}).json()
    assert (same["diff"], same["changed"]) == ("", [])

    stale = owner.put(f"{BASE}/fixer", json=_reviewer("Late."), params={"expected_version": 1})
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "stale_blueprint_version"
    fresh = owner.put(f"{BASE}/fixer", json=_reviewer("New."), params={"expected_version": 0})
    assert fresh.status_code == 409  # 0: the name must be new

    rolled = owner.post(f"{BASE}/fixer/rollback", json={"version": 1})
    assert rolled.status_code == 200, rolled.text
    assert (rolled.json()["version"], rolled.json()["note"]) == (3, "rollback to v1")
    assert rolled.json()["blueprint"]["system"] == "One."
    kept = owner.get(f"{BASE}/fixer/versions/2").json()
    assert kept["blueprint"]["system"] == "Two."  # history is never rewritten
    assert owner.get(f"{BASE}/fixer/versions/latest").json()["version"] == 3
    assert owner.get(f"{BASE}/fixer", params={"version": 2}).json()["system"] == "Two."
    stale_rollback = owner.post(
        f"{BASE}/fixer/rollback", json={"version": 1, "expected_version": 2}
    )
    assert stale_rollback.status_code == 409


def test_blueprint_versions_bad_input_and_roles(
    live: LiveServer, owner: httpx.Client, admin: Admin
) -> None:
    owner.put(f"{BASE}/reviewer", json=_reviewer("One."))
    cases = [
        (owner.get(f"{BASE}/reviewer/versions/9"), 404),
        (owner.get(f"{BASE}/reviewer/versions/0"), 422),
        (owner.get(f"{BASE}/reviewer/versions/two"), 422),
        (owner.get(f"{BASE}/nope/versions"), 404),
        (owner.get(f"{BASE}/reviewer/diff", params={"a": 0, "b": 1}), 422),
        (owner.get(f"{BASE}/reviewer/diff", params={"a": "x", "b": 1}), 422),
        (owner.get(f"{BASE}/reviewer/diff", params={"a": 1}), 422),
        (owner.get(f"{BASE}/reviewer/diff", params={"a": 1, "b": 5}), 404),
        (owner.get(BASE + "/reviewer", params={"version": 4}), 404),
        (owner.post(f"{BASE}/reviewer/rollback", json={"version": 7}), 404),
        (owner.post(f"{BASE}/reviewer/rollback", json={"version": 0}), 422),
        (owner.post(f"{BASE}/reviewer/rollback", json={"version": 1, "extra": 1}), 422),
        (owner.put(f"{BASE}/reviewer", json=_reviewer("x"), params={"expected_version": -1}), 422),
        (owner.put(f"{BASE}/reviewer", json=_reviewer("x"), params={"note": "a" * 201}), 422),
        (owner.put(f"{BASE}/reviewer", json=_reviewer("x"), params={"note": "two\nlines"}), 422),
        (owner.post("/runs", json={"objective": "x", "blueprint": "reviewer@9"}), 404),
        (owner.post("/runs", json={"objective": "x", "blueprint": "reviewer@0"}), 422),
        (owner.post("/runs", json={"objective": "x", "blueprint": "reviewer@x"}), 422),
        (
            owner.post(
                "/runs",
                json={"objective": "x", "blueprint": {"model": MODEL}, "blueprint_version": 1},
            ),
            422,
        ),
        (
            owner.post(
                "/runs", json={"objective": "x", "blueprint": "reviewer", "blueprint_version": 0}
            ),
            422,
        ),
        (owner.get("/workspaces/elsewhere/blueprints/reviewer/versions"), 404),
    ]
    for answer, status in cases:
        assert answer.status_code == status, (answer.request.url, answer.text)
        assert answer.json()["error"]["code"]
    bad = owner.put(f"{BASE}/reviewer", json={"budget": {"usd": "lots"}})
    assert bad.status_code == 422
    assert "budget" in bad.json()["error"]["message"]  # names the field
    assert [v["version"] for v in owner.get(f"{BASE}/reviewer/versions").json()["versions"]] == [1]

    admin.user("vera", workspace="default", role="viewer")
    admin.workspace("team")
    admin.user("otto", workspace="team", role="member")
    with live.client(admin.api_token("vera")) as vera:
        assert vera.get(f"{BASE}/reviewer/versions").status_code == 200
        assert vera.get(f"{BASE}/reviewer/diff", params={"a": 1, "b": 1}).status_code == 200
        assert vera.put(f"{BASE}/reviewer", json=_reviewer("v")).status_code == 403
        assert vera.post(f"{BASE}/reviewer/rollback", json={"version": 1}).status_code == 403
    with live.client(admin.api_token("otto")) as otto:  # not a member of default
        for answer in (
            otto.get(f"{BASE}/reviewer/versions"),
            otto.get(f"{BASE}/reviewer/versions/1"),
            otto.get(f"{BASE}/reviewer/diff", params={"a": 1, "b": 1}),
            otto.post(f"{BASE}/reviewer/rollback", json={"version": 1}),
            otto.put(f"{BASE}/reviewer", json=_reviewer("o")),
        ):
            assert answer.status_code == 404, answer.text
        saved = otto.put("/workspaces/team/blueprints/reviewer", json=_reviewer("Team."))
        assert saved.json()["version"] == 1  # each workspace numbers its own


async def test_the_http_door_saves_diffs_and_rolls_back(live: LiveServer, admin: Admin) -> None:
    admin.user("mia", workspace="default", role="member")
    token = admin.api_token("mia")
    async with AsyncClient(live.url, token=token) as client:
        first = await client.save_blueprint(
            "door", _reviewer("One."), note="first", workspace="default"
        )
        assert (first.version, first.by, first.note) == (1, "user:mia", "first")
        mine = await client.save_blueprint("own", _reviewer("Mine."))  # the personal workspace
        assert mine.workspace == "mia"
        await client.save_blueprint(
            "door", _reviewer("Two."), expected_version=1, workspace="default"
        )
        with pytest.raises(StaleBlueprintVersionError):
            await client.save_blueprint(
                "door", _reviewer("Late."), expected_version=1, workspace="default"
            )
        listed = await client.blueprints(workspace="default")
        assert [(b.name, b.version) for b in listed] == [("door", 2)]
        history = await client.blueprint_history("door", workspace="default")
        assert [(v.version, v.note) for v in history] == [(1, "first"), (2, "")]
        diff = await client.blueprint_diff("door", 1, 2, workspace="default")
        assert [c.path for c in diff.changed] == ["system"]
        rolled = await client.rollback_blueprint("door", 1, workspace="default")
        assert (rolled.version, rolled.note) == (3, "rollback to v1")
        latest = await client.blueprint("door", workspace="default")
        assert (latest.version, latest.blueprint["system"]) == (3, "One.")
        assert (await client.blueprint("door", version=2, workspace="default")).version == 2
        with pytest.raises(NotFoundError):
            await client.blueprint("door", version=9, workspace="default")
        with pytest.raises(ConfigError):
            await client.save_blueprint("door", {"tools": ["no_such_tool"]}, workspace="default")


def _helix(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args], env={**inherited, **env}, capture_output=True,
        text=True, timeout=WAIT_S, check=False,
    )  # fmt: skip


def test_the_cli_through_a_server_saves_and_runs_a_version(
    live: LiveServer, admin: Admin, model_server: MockModelServer, tmp_path: Path
) -> None:
    admin.user("cli", workspace="default", role="member")
    env = {
        "HELIX_SERVER": live.url,
        "HELIX_TOKEN": admin.api_token("cli"),
        "HELIX_HOME": str(tmp_path / "client-home"),  # nothing local is used
    }
    for n, system in enumerate(["One.", "Two."], start=1):
        path = tmp_path / f"v{n}.yaml"
        path.write_text(f"model: {MODEL}\nsystem: {system}\n")
        saved = _helix(env, "blueprints", "save", "rev", str(path))  # in their own workspace
        assert saved.stdout.strip() == f"rev is now version {n}", saved.stderr
    history = _helix(env, "blueprints", "history", "rev", "--workspace", "cli")
    assert [line.split()[:2] for line in history.stdout.splitlines()] == [
        ["v1", "user:cli"],
        ["v2", "user:cli"],
    ]
    stale = _helix(env, "blueprints", "rollback", "rev", "1", "--expected-version", "1")
    assert stale.returncode == 1
    assert "version 2 is the latest" in stale.stderr
    unknown = _helix(env, "blueprints", "show", "rev", "--version", "5")
    assert unknown.returncode == 3
    elsewhere = _helix(env, "blueprints", "list", "--workspace", "nowhere")
    assert elsewhere.returncode == 3

    play(model_server, {"text": "Fine."})
    ran = _helix(env, "run", "review", "--blueprint", "rev@1", "--json")
    assert ran.returncode == 0, ran.stderr
    shown = _helix(env, "show", "last")
    assert "blueprint  rev v1" in shown.stdout, shown.stdout + shown.stderr
    as_json = json.loads(_helix(env, "show", "last", "--json").stdout)
    assert (as_json["blueprint"], as_json["blueprint_version"]) == ("rev", 1)
