"""Stored blueprints in versions, through both doors (and embedded on PostgreSQL too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix import AsyncClient
from helix.accounts import StaleBlueprintVersionError
from helix.errors import ConfigError, ConflictError, NotFoundError
from helix.testing import MockModelServer

from .conftest import MODEL, Door, follow, play


def _reviewer(system: str) -> dict[str, Any]:
    return {"model": MODEL, "tools": ["list_files"], "system": system}


async def _edited_twice_and_run(client: AsyncClient, model_server: MockModelServer) -> None:
    """The done-when: a blueprint edited twice has three versions; a run names the one it used."""
    for system in ("Review v1.", "Review v2.", "Review v3."):
        await client.save_blueprint("reviewer", _reviewer(system))
    history = await client.blueprint_history("reviewer")
    assert [v.version for v in history] == [1, 2, 3]
    assert {v.by for v in history} == {history[0].by}
    assert history[0].by.startswith("user:")

    play(model_server, {"text": "Fine."}, {"text": "Fine."})
    latest = await client.create("review", blueprint="reviewer")
    events = await follow(client, latest.id)
    assert events[0].data["blueprint_version"] == 3
    assert model_server.requests[-1].body["messages"][0]["content"] == "Review v3."
    shown = await client.get(latest.id)
    assert (shown.blueprint, shown.blueprint_version) == ("reviewer", 3)

    old = await client.create("review", blueprint="reviewer@1")
    await follow(client, old.id)
    assert (await client.get(old.id)).blueprint_version == 1
    assert model_server.requests[-1].body["messages"][0]["content"] == "Review v1."
    listed = {run.id: run for run in (await client.runs()).runs}
    assert (listed[old.id].blueprint_version, listed[latest.id].blueprint_version) == (1, 3)


async def test_a_blueprint_edited_twice_has_three_versions_and_a_run_names_it(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    await _edited_twice_and_run(client, model_server)


@pytest.mark.postgres
async def test_the_same_embedded_on_postgres(
    tmp_path: Path, model_server: MockModelServer, fresh_postgres_url: str
) -> None:
    env = {
        "HELIX_HOME": str(tmp_path / "home"),
        "HELIX_DB": fresh_postgres_url,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": model_server.openai_base_url,
    }
    async with AsyncClient(env=env, user="tester") as client:
        await _edited_twice_and_run(client, model_server)


async def test_history_diff_rollback_and_refusals(client: AsyncClient, door: Door) -> None:
    first = await client.save_blueprint("fixer", _reviewer("One."), note="start")
    assert (first.version, first.note, first.blueprint["system"]) == (1, "start", "One.")
    await client.save_blueprint("fixer", {**_reviewer("Two."), "temperature": 0.2})
    with pytest.raises(StaleBlueprintVersionError if door.kind == "local" else ConflictError):
        await client.save_blueprint("fixer", _reviewer("Late."), expected_version=1)
    diff = await client.blueprint_diff("fixer", 1, 2)
    assert [(c.path, c.change) for c in diff.changed] == [
        ("system", "changed"),
        ("temperature", "added"),
    ]
    assert "+temperature: 0.2\n" in diff.diff
    rolled = await client.rollback_blueprint("fixer", 1, expected_version=2)
    assert (rolled.version, rolled.note, rolled.blueprint["system"]) == (
        3,
        "rollback to v1",
        "One.",
    )
    assert (await client.blueprint("fixer", version=2)).blueprint["temperature"] == 0.2
    assert [(b.name, b.version) for b in await client.blueprints()] == [("fixer", 3)]

    with pytest.raises(NotFoundError):
        await client.blueprint("fixer", version=7)
    with pytest.raises(NotFoundError):
        await client.blueprint_history("nothing")
    with pytest.raises(NotFoundError):
        await client.rollback_blueprint("fixer", 9)
    with pytest.raises(ConfigError):
        await client.blueprint_diff("fixer", 0, 1)
    with pytest.raises(ConfigError):
        await client.save_blueprint("fixer", {"budget": {"usd": "lots"}})
    with pytest.raises(ConfigError):
        await client.save_blueprint("fixer", _reviewer("x"), note="one\ntwo")
    with pytest.raises(ConfigError):
        await client.create("x", blueprint="fixer@0")
    with pytest.raises(NotFoundError):
        await client.create("x", blueprint="fixer@8")
    assert [v.version for v in await client.blueprint_history("fixer")] == [1, 2, 3]


def test_the_sync_client_has_the_same_operations(door: Door) -> None:
    from helix import Client

    opened = Client(door.url, token=door.token) if door.url else Client(env=door.env, user="sync")
    with opened as client:
        client.save_blueprint("sync", _reviewer("One."))
        second = client.save_blueprint("sync", _reviewer("Two."), expected_version=1, note="n")
        assert (second.version, second.note) == (2, "n")
        assert [b.name for b in client.blueprints()] == ["sync"]
        assert client.blueprint("sync", version=1).blueprint["system"] == "One."
        assert [v.version for v in client.blueprint_history("sync")] == [1, 2]
        assert [c.path for c in client.blueprint_diff("sync", 1, 2).changed] == ["system"]
        assert client.rollback_blueprint("sync", 1).note == "rollback to v1"
