"""One conformance suite for the automation store, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.automations import (
    Automation,
    AutomationExistsError,
    AutomationNotFoundError,
    AutomationStore,
    BlueprintTarget,
    CronTrigger,
    WebhookTrigger,
    open_automations,
)
from helix.errors import ConfigError


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def store(database: str) -> AsyncIterator[AutomationStore]:
    opened = await open_automations(database)
    try:
        yield opened
    finally:
        await opened.close()


def _automation(workspace: str, name: str = "tidy", **fields: object) -> Automation:
    values: dict[str, object] = {
        "id": "aut_" + uuid.uuid4().hex[:16],
        "workspace": workspace,
        "name": name,
        "owner": "user:ann",
        "trigger": CronTrigger(cron="0 3 * * *"),
        "target": BlueprintTarget(blueprint="nightly", objective="tidy up"),
        "missed": "once",
        "created_at": "2030-01-01T12:00:00.000000Z",
        "active_since": 1893499200.0,
        **fields,
    }
    return Automation.model_validate(values)


def _workspace() -> str:
    """Unique per test: the PostgreSQL database is shared by the session."""
    return f"ws-{uuid.uuid4().hex[:8]}"


async def test_automations_round_trip_and_names_are_unique_per_workspace(
    store: AutomationStore,
) -> None:
    ws, other = _workspace(), _workspace()
    first = _automation(ws, trigger=WebhookTrigger(), missed="all")
    await store.add(first, "whsec_abc")
    assert await store.get(first.id) == first
    assert await store.secret(first.id) == "whsec_abc"
    with pytest.raises(AutomationExistsError):
        await store.add(_automation(ws), None)
    elsewhere = _automation(other)
    await store.add(elsewhere, None)
    assert await store.secret(elsewhere.id) is None
    assert [a.id for a in await store.list([ws])] == [first.id]
    assert {a.id for a in await store.list([ws, other])} == {first.id, elsewhere.id}
    assert await store.get("aut_missing") is None


async def test_pause_and_resume_move_the_start_of_the_schedule(store: AutomationStore) -> None:
    automation = _automation(_workspace())
    await store.add(automation, None)
    await store.set_paused(automation.id, True, active_since=0.0)
    paused = await store.get(automation.id)
    assert paused is not None
    assert paused.paused
    assert paused.active_since == automation.active_since
    await store.set_paused(automation.id, False, active_since=1893500000.5)
    resumed = await store.get(automation.id)
    assert resumed is not None
    assert not resumed.paused
    assert resumed.active_since == 1893500000.5
    with pytest.raises(AutomationNotFoundError):
        await store.set_paused("aut_missing", True, active_since=0.0)


async def test_a_slot_is_claimed_once_even_by_racing_claims(store: AutomationStore) -> None:
    automation = _automation(_workspace())
    await store.add(automation, None)
    claims = await asyncio.gather(
        *(store.claim(automation.id, "cron:A", fired_at="t", slot_at=60.0) for _ in range(8))
    )
    assert sorted(claims) == [False] * 7 + [True]
    assert await store.last_slot(automation.id) == 60.0
    assert await store.claim(automation.id, "cron:B", fired_at="u", slot_at=120.0)
    assert await store.claim(automation.id, "webhook:x", fired_at="v")  # no slot time
    assert await store.last_slot(automation.id) == 120.0
    await store.settle(automation.id, "webhook:x", run_id="run_1", error=None)
    last = await store.last_firing(automation.id)
    assert last is not None
    assert (last.slot, last.run_id, last.error) == ("webhook:x", "run_1", None)
    await store.settle(automation.id, "webhook:x", run_id=None, error="no blueprint")
    last = await store.last_firing(automation.id)
    assert last is not None
    assert last.error == "no blueprint"


async def test_two_stores_on_one_database_share_the_claims(database: str) -> None:
    stores = [await open_automations(database) for _ in range(2)]
    try:
        automation = _automation(_workspace())
        await stores[0].add(automation, None)
        results = await asyncio.gather(
            *(s.claim(automation.id, "cron:A", fired_at="t", slot_at=1.0) for s in stores)
        )
        assert sorted(results) == [False, True]
    finally:
        for opened in stores:
            await opened.close()


async def test_remove_drops_the_automation_and_its_claims(store: AutomationStore) -> None:
    automation = _automation(_workspace())
    await store.add(automation, None)
    await store.claim(automation.id, "cron:A", fired_at="t", slot_at=1.0)
    await store.remove(automation.id)
    assert await store.get(automation.id) is None
    assert await store.last_firing(automation.id) is None
    with pytest.raises(AutomationNotFoundError):
        await store.remove(automation.id)
    await store.add(automation, None)  # the name is free again
    assert await store.claim(automation.id, "cron:A", fired_at="t", slot_at=1.0)


async def test_memory_urls_are_refused() -> None:
    with pytest.raises(ConfigError):
        await open_automations("memory://")
