"""Run settings are typed and versioned: a run created by an older Helix resumes here.

``run.created`` v1 held ``settings`` as an untyped mapping (or nothing); v2 holds a
closed ``RunSettings``. The older runs are written for real by a store whose
vocabulary has the v1 payload, the way an older Helix wrote them, then read back by
today's store and driven by today's engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import JsonValue

from helix.errors import InvalidEventError, InvalidPayloadError
from helix.kernel.events import (
    BUILTIN_PAYLOADS,
    EventRegistry,
    RunCreated,
    RunSettings,
    builtin_registry,
)
from helix.kernel.log import MemoryEventStore, SqliteEventStore, import_lines
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, blueprint_of, resume


class RunCreatedV1(RunCreated):
    """``run.created`` as Helix wrote it before settings were typed."""

    VERSION: ClassVar[int] = 1
    settings: dict[str, JsonValue] | None = None  # type: ignore[assignment]


def _older_registry() -> EventRegistry:
    return EventRegistry(RunCreatedV1 if p is RunCreated else p for p in BUILTIN_PAYLOADS)


def _engine(store: Any, home: Path, scenario: Scenario) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    return Engine(store, home=home, model_factory=model, env={})


WRITE = {"name": "run_command", "args": {"command": "echo hi > a.txt"}}
"""A call the approval gate asks a person about, unless the run auto-approves."""
TODAYS_SHAPE: dict[str, JsonValue] = {
    "blueprint": Blueprint(model="scripted:t").model_dump(mode="json"),
    "auto_approve": True,
    "attended": True,
}


@pytest.mark.parametrize("settings", [TODAYS_SHAPE, None], ids=["v1-mapping", "no-settings"])
async def test_a_run_created_by_an_older_helix_resumes_and_completes(
    tmp_path: Path, settings: dict[str, JsonValue] | None
) -> None:
    db, world = tmp_path / "helix.db", tmp_path / "world"
    world.mkdir()
    old = SqliteEventStore(db, registry=_older_registry())
    created = RunCreatedV1(
        objective="write a.txt", model="scripted:t", world=str(world), settings=settings
    )
    record = await old.create_run(created)
    await old.close()

    async with SqliteEventStore(db) as store:
        (stored,) = await store.read(record.id, to_seq=0)
        assert stored.v == 2  # upcast on read; the row itself is never rewritten
        calls = [WRITE] if settings is not None else []
        scenario = Scenario.of({"text": "writing", "tool_calls": calls}, {"text": "done"})
        state = await _engine(store, tmp_path / "home", scenario).drive(record.id)
        assert state.status == "completed", state
        types = [e.type for e in await store.read(record.id)]
    if settings is not None:  # its auto_approve was read: the write was allowed unasked
        assert (world / "a.txt").read_text() == "hi\n"
        assert types.count("approval.decided") == 1
    assert types[-1] == "run.completed"


async def test_settings_round_trip(tmp_path: Path, helix_home: Path) -> None:
    engine = _engine(MemoryEventStore(), helix_home, Scenario.of({"text": "done"}))
    blueprint = Blueprint(name="b", model="scripted:t", max_tokens=99)
    record = await engine.create(
        "go", blueprint=blueprint, world=tmp_path, auto_approve=True, attended=False, depth=2
    )
    (first,) = await engine.store.read(record.id, to_seq=0)
    assert first.v == 2
    created = engine.store.registry.parse(first.type, json.loads(json.dumps(first.data)))
    assert isinstance(created, RunCreated)
    assert created.settings == RunSettings(
        blueprint=blueprint.model_dump(mode="json"), auto_approve=True, attended=False, depth=2
    )
    assert blueprint_of(created.settings) == blueprint
    setup = await engine.setup(record.id)
    assert (setup.blueprint, setup.auto_approve, setup.attended, setup.depth) == (
        blueprint,
        True,
        False,
        2,
    )


def _exported_v1(world: Path, **settings: JsonValue) -> list[dict[str, Any]]:
    """A log exported by an older Helix: ``run.created`` v1, stopped before its first turn."""
    data: dict[str, JsonValue] = {"objective": "go", "model": "scripted:t", "world": str(world)}
    data["settings"] = {**TODAYS_SHAPE, **settings}
    return [
        {
            "run_id": "run_old",
            "seq": 0,
            "type": "run.created",
            "v": 1,
            "ts": "2026-01-02T03:04:05.000006Z",
            "turn": 0,
            "actor": "system",
            "data": data,
        }
    ]


def _lines(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e) for e in events]


async def test_a_log_exported_by_an_older_helix_imports_and_completes(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(MemoryEventStore(), tmp_path, Scenario.of({"text": "done"}))
    lines = _lines(_exported_v1(tmp_path / "elsewhere"))
    record = await import_lines(
        engine.store, lines, world=str(world), check_settings=blueprint_of, by="user:me"
    )
    assert record.status == "paused"  # an import never resumes by itself
    (first,) = await engine.store.read(record.id, to_seq=0)
    assert (first.v, first.data["settings"]["auto_approve"]) == (2, False)  # nor auto-approves
    assert first.data["settings"]["blueprint"] == TODAYS_SHAPE["blueprint"]
    assert await resume(engine.store, record.id, by="user:me")
    state = await engine.drive(record.id)
    assert state.status == "completed", state


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"auto_approve": "yes"}, "settings.auto_approve: Input should be a valid boolean"),
        ({"depth": -1}, "settings.depth: Input should be greater than or equal to 0"),
        ({"surprise": 1}, "settings.surprise: Extra inputs are not permitted"),
        (
            {"blueprint": {"approvals": {"timeout_s": 0}}},
            "settings.blueprint.approvals.timeout_s: Input should be greater than 0",
        ),
        ({"blueprint": {"tools": "all"}}, "settings.blueprint.tools"),
    ],
)
async def test_bad_settings_in_an_imported_log_are_refused(
    tmp_path: Path, edit: dict[str, JsonValue], said: str
) -> None:
    store = MemoryEventStore()
    with pytest.raises(InvalidEventError) as refused:
        await import_lines(
            store,
            _lines(_exported_v1(tmp_path, **edit)),
            world=str(tmp_path),
            check_settings=blueprint_of,
        )
    assert str(refused.value).startswith("line 1: run.created: "), refused.value
    assert said in str(refused.value)
    assert (await store.list_runs()).runs == []  # nothing was written


async def test_a_version_newer_than_this_helix_is_refused_on_import(tmp_path: Path) -> None:
    events = _exported_v1(tmp_path)
    events[0]["v"] = 3
    with pytest.raises(InvalidEventError, match=r"line 1: run\.created: version 3 is newer"):
        await import_lines(MemoryEventStore(), _lines(events), world=str(tmp_path))


async def test_a_stored_run_with_bad_settings_fails_to_resume_with_a_clear_error(
    tmp_path: Path,
) -> None:
    old = MemoryEventStore(registry=_older_registry())
    bad = {"blueprint": {"approvals": {"timeout_s": "soon"}}}
    record = await old.create_run(
        RunCreatedV1(objective="go", model="scripted:t", world=str(tmp_path), settings=bad)
    )
    old.registry = builtin_registry()  # the same rows, read by today's Helix
    engine = _engine(old, tmp_path, Scenario.of({"text": "done"}))
    with pytest.raises(InvalidPayloadError, match=r"settings\.blueprint\.approvals\.timeout_s"):
        await engine.setup(record.id)
