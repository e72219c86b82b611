"""Components in real runs: tools return each kind, ``ask_choice`` waits for a person.

The model is scripted (the boundary we do not own); the engine, the gates, the log and
the choices are Helix's own. "Another process" is another writer on the same store:
``choose`` folds the log and appends, exactly as ``helix choose`` does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ChoiceClosedError, ComponentNotFoundError, InvalidChoiceError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import SYSTEM_CLOCK, Blueprint, Engine, RunSetup, choose
from helix.testing import ManualClock
from helix.tools import ToolContext, ToolRegistry, ToolResult, UiPart, builtin_registry, tool

PROPS: dict[str, dict[str, Any]] = {
    "table": {"title": "Tests", "columns": ["name", "ms"], "rows": [["a", 1.5], ["b", None]]},
    "diff": {"path": "a.txt", "diff": "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n"},
    "options": {"question": "Which?", "choices": [{"id": "x", "label": "X"}]},
    "markdown": {"text": "# Done\n\n*all* green"},
    "chart": {
        "kind": "bar",
        "labels": ["mon", "tue"],
        "series": [{"name": "runs", "points": [3, 5]}],
    },
}
CARD = {
    "question": "Which database?",
    "choices": [
        {"id": "sqlite", "label": "SQLite", "description": "embedded"},
        {"id": "postgres", "label": "PostgreSQL"},
    ],
}


def _tools() -> ToolRegistry:
    @tool(read_only=True, effect="none")
    async def report(ctx: ToolContext, kind: str) -> ToolResult:
        """Show a component of ``kind``."""
        return ToolResult(ok=True, output=f"{kind} shown", ui=UiPart(kind, PROPS[kind]))

    registry = builtin_registry()
    registry.register(report)
    return registry


def _engine(
    home: Path,
    scenario: Scenario,
    *,
    clock: ManualClock | None = None,
    store: EventStore | None = None,
) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    return Engine(
        store or MemoryEventStore(),
        home=home,
        tools=_tools(),
        model_factory=model,
        env={"HELIX_TEST_TOKEN": "sk-secret-123456789"},
        clock=clock or SYSTEM_CLOCK,
    )


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "text": "",
        "tool_calls": [{"name": n, "args": a, "id": f"c{i}"} for i, (n, a) in enumerate(calls)],
    }


async def _first(store: EventStore, run_id: str, event_type: str) -> Event:
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == event_type:
                return event
    raise AssertionError(f"the log ended without {event_type}")


async def test_a_tool_returns_each_kind_and_each_is_a_ui_component_event(
    tmp_path: Path, helix_home: Path
) -> None:
    calls = [("report", {"kind": k}) for k in PROPS]
    engine = _engine(helix_home, Scenario.of(_calls(*calls), {"text": "done"}))
    record = await engine.create("report", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    state = await engine.drive(record.id)
    assert state.status == "completed"
    log = await engine.store.read(record.id)
    shown = [e for e in log if e.type == "ui.component"]
    assert [e.data["component"] for e in shown] == list(PROPS)
    assert [e.data["props"] for e in shown] == list(PROPS.values())
    assert [e.data["call_id"] for e in shown] == [f"c{i}" for i in range(len(PROPS))]
    assert all(e.data["id"].startswith("cmp_") and e.actor == "agent" for e in shown)
    assert len({e.data["id"] for e in shown}) == len(PROPS)
    # Each follows its call's result, and the run's fold knows each by id.
    for event in shown:
        before = log[event.seq - 1]
        assert (before.type, before.data["call_id"]) == ("tool.completed", event.data["call_id"])
    assert set(state.components) == {e.data["id"] for e in shown}
    (options,) = [e for e in shown if e.data["component"] == "options"]
    assert state.components[options.data["id"]] == "options"
    assert state.cards == {options.data["id"]: PROPS["options"]}


async def test_show_with_invalid_props_fails_precisely_and_shows_nothing(
    tmp_path: Path, helix_home: Path
) -> None:
    bad = {"component": "table", "props": {"columns": ["a"], "rows": [["1", "2"]]}}
    unknown = {"component": "gauge", "props": {}}
    secret = {"component": "markdown", "props": {"text": "key sk-secret-123456789"}}
    calls = _calls(("show_component", bad), ("show_component", unknown), ("show_component", secret))
    engine = _engine(helix_home, Scenario.of(calls, {"text": "done"}))
    record = await engine.create("show", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    await engine.drive(record.id)
    log = await engine.store.read(record.id)
    results = [e.data for e in log if e.type == "tool.completed"]
    assert [r["ok"] for r in results] == [False, False, True]
    assert results[0]["output"] == (
        "the component was not shown: component 'table': rows.0: has 2 cells, the table has"
        " 1 columns"
    )
    assert results[1]["output"].startswith(
        "the component was not shown: unknown component 'gauge': known components are table,"
    )
    (shown,) = [e.data for e in log if e.type == "ui.component"]
    assert shown["call_id"] == "c2"
    assert "sk-secret" not in json.dumps(shown)  # secrets never reach events


async def test_ask_choice_waits_for_a_choice_from_another_writer(
    tmp_path: Path, helix_home: Path
) -> None:
    scenario = Scenario.of(_calls(("ask_choice", CARD)), {"text": "done"})
    engine = _engine(helix_home, scenario)
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        asked = await _first(engine.store, record.id, "ui.asked")
        card = asked.data["component_id"]
        assert (await engine.store.get_run(record.id)).status == "waiting"
        with pytest.raises(InvalidChoiceError, match="its choices are sqlite, postgres"):
            await choose(engine.store, record.id, card, "mysql", by="user:ann")
        with pytest.raises(ComponentNotFoundError):
            await choose(engine.store, record.id, "cmp_nope", "sqlite", by="user:ann")
        assert await choose(engine.store, record.id, None, "postgres", by="user:ann") == card
        with pytest.raises(ChoiceClosedError, match="answered already"):
            await choose(engine.store, record.id, card, "sqlite", by="user:bob")
    assert driving.result().status == "completed"
    log = await engine.store.read(record.id)
    (shown,) = [e for e in log if e.type == "ui.component"]
    assert (shown.data["id"], shown.data["component"], shown.data["call_id"]) == (
        card,
        "options",
        "c0",
    )
    (chosen,) = [e for e in log if e.type == "ui.chosen"]
    assert chosen.data == {
        "component_id": card,
        "choice": "postgres",
        "by": "user:ann",
        "reason": None,
        "auto": False,
    }
    assert chosen.actor == "user:ann"
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert result["ok"] is True
    assert json.loads(result["output"]) == {
        "choice": "postgres",
        "label": "PostgreSQL",
        "by": "user:ann",
    }
    with pytest.raises(ChoiceClosedError, match="completed"):
        await choose(engine.store, record.id, card, "sqlite", by="user:ann")


async def test_ask_choice_fails_at_once_when_nobody_attends(
    tmp_path: Path, helix_home: Path
) -> None:
    scenario = Scenario.of(_calls(("ask_choice", CARD)), {"text": "done"})
    engine = _engine(helix_home, scenario)
    blueprint = Blueprint(model="scripted:t")
    record = await engine.create("ask", blueprint=blueprint, world=tmp_path, attended=False)
    state = await engine.drive(record.id)
    assert state.status == "completed"
    log = await engine.store.read(record.id)
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert result == {**result, "ok": False}
    assert result["output"] == "a choice needs a person to make it, and nobody attends this run"
    assert not [e for e in log if e.type.startswith("ui.")]


async def test_ask_choice_with_invalid_choices_fails_and_shows_nothing(
    tmp_path: Path, helix_home: Path
) -> None:
    twice = {"question": "?", "choices": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}
    engine = _engine(helix_home, Scenario.of(_calls(("ask_choice", twice)), {"text": "done"}))
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    await engine.drive(record.id)
    log = await engine.store.read(record.id)
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert not result["ok"]
    assert (
        result["output"] == "component 'options': choices.1.id: 'a' is used twice (ids are unique)"
    )
    assert not [e for e in log if e.type.startswith("ui.")]


async def test_an_unanswered_card_closes_at_the_approvals_deadline(
    tmp_path: Path, helix_home: Path
) -> None:
    clock = ManualClock()
    scenario = Scenario.of(_calls(("ask_choice", CARD)), {"text": "done"})
    engine = _engine(helix_home, scenario, clock=clock)
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        await _first(engine.store, record.id, "ui.asked")
        await clock.sleeping(2)  # the lease renewer, and the card's deadline
        clock.advance(Blueprint().approvals.timeout_s + 1)
    assert driving.result().status == "completed"
    log = await engine.store.read(record.id)
    (closed,) = [e.data for e in log if e.type == "ui.chosen"]
    assert (closed["choice"], closed["by"], closed["auto"]) == (None, "system", True)
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert result["ok"] is False
    assert result["output"] == "no choice was made: no decision before the deadline"


async def test_a_run_restarted_while_waiting_takes_the_choice_from_the_log(
    tmp_path: Path, helix_home: Path
) -> None:
    store = MemoryEventStore()
    scenario = Scenario.of(_calls(("ask_choice", CARD)), {"text": "done"})
    first = _engine(helix_home, scenario, store=store)
    record = await first.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    driving = asyncio.create_task(first.drive(record.id))
    asked = await _first(store, record.id, "ui.asked")
    driving.cancel()  # the process driving it dies while it waits
    with pytest.raises(asyncio.CancelledError):
        await driving
    await choose(store, record.id, asked.data["component_id"], "sqlite", by="user:ann")
    second = _engine(helix_home, scenario, store=store)
    state = await second.drive(record.id)
    assert state.status == "completed", state.error
    log = await store.read(record.id)
    types = [e.type for e in log]
    assert types.count("ui.component") == 1  # the card was not shown twice
    assert (
        types.index("ui.chosen") < types.index("tool.interrupted") < types.index("tool.completed")
    )
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert json.loads(result["output"])["choice"] == "sqlite"
