"""A tool source's question (MCP elicitation) is a Helix approval: answered, declined,
expired, refused when the answer does not fit, declined at once when nobody attends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helix.errors import InvalidAnswerError, RunStateError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.kernel.session import replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import SYSTEM_CLOCK, Blueprint, Clock, Engine, RunSetup, decide
from helix.testing import ManualClock
from helix.tools import ElicitationAnswer

from ._asking_sources import ASK_CALL, HOSTILE, AskingSource


def _engine(home: Path, source: AskingSource, clock: Clock = SYSTEM_CLOCK) -> Engine:
    scenario = Scenario.of(ASK_CALL, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    return Engine(
        MemoryEventStore(),
        home=home,
        model_factory=model,
        env={},
        sources=lambda setup: [source],
        clock=clock,
    )


async def _first(store: EventStore, run_id: str, event_type: str) -> Event:
    """Wait (on the log, not on time) for the run's first event of ``event_type``."""
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == event_type:
                return event
    raise AssertionError(f"the log ended without {event_type}")


async def _events(engine: Engine, run_id: str, event_type: str) -> list[Event]:
    return [e for e in await engine.store.read(run_id) if e.type == event_type]


async def _asked_and(engine: Engine, answer: Any, **create: Any) -> tuple[str, Event, list[Event]]:
    """Start a run, wait for its question, let ``answer(run_id, request)`` act; its log."""
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), **create)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        asked = await _first(engine.store, record.id, "approval.requested")
        await answer(record.id, asked.data["request_id"])
    assert driving.result().status == "completed"
    return record.id, asked, await engine.store.read(record.id)


async def test_a_question_is_an_approval_answered_with_its_fields(
    tmp_path: Path, helix_home: Path
) -> None:
    source = AskingSource()
    engine = _engine(helix_home, source)

    async def answer(run_id: str, request_id: str) -> None:
        state = await replay_run(engine.store, run_id)
        pending = state.pending_approvals[request_id]
        assert pending.question is not None
        assert pending.question["message"] == HOSTILE  # logged as written, shown as text
        await decide(
            engine.store,
            run_id,
            request_id,
            "allow",
            by="user:ann",
            answer={"name": "Ada", "age": 36, "tea": True, "colour": "green"},
        )

    _, asked, log = await _asked_and(engine, answer, world=tmp_path)
    assert asked.data["name"] == "question"
    assert asked.data["call_id"] == "q1"
    assert asked.data["question"]["source"] == "test:asking"
    assert asked.data["question"]["schema"]["required"] == ["name"]
    (decided,) = [e for e in log if e.type == "approval.decided"]
    assert decided.actor == "user:ann"
    assert decided.data["answer"] == {"name": "Ada", "age": 36, "tea": True, "colour": "green"}
    assert source.answers == [
        ElicitationAnswer("accept", {"name": "Ada", "age": 36, "tea": True, "colour": "green"})
    ]
    (completed,) = [e for e in log if e.type == "tool.completed"]
    assert json.loads(completed.data["output"])["action"] == "accept"
    assert completed.data["ok"] is True


async def test_a_denied_question_is_declined(tmp_path: Path, helix_home: Path) -> None:
    source = AskingSource()
    engine = _engine(helix_home, source)

    async def answer(run_id: str, request_id: str) -> None:
        await decide(engine.store, run_id, request_id, "deny", by="user:ann", reason="no")

    await _asked_and(engine, answer, world=tmp_path)
    assert source.answers == [ElicitationAnswer("decline")]


async def test_answers_that_do_not_fit_are_refused_and_nothing_is_written(
    tmp_path: Path, helix_home: Path
) -> None:
    source = AskingSource()
    engine = _engine(helix_home, source)
    bad: list[tuple[str, dict[str, Any] | None, str]] = [
        ("allow", {}, "missing required field\\(s\\): name"),
        ("allow", {"name": "Ada", "shoe": 3}, "unknown field\\(s\\): shoe"),
        ("allow", {"name": "Ada", "age": "old"}, "age: must be a number"),
        ("allow", {"name": "Ada", "age": 1.5}, "age: must be an integer"),
        ("allow", {"name": "Ada", "age": -1}, "age: must be at least 0"),
        ("allow", {"name": "Ada", "tea": "yes"}, "tea: must be true or false"),
        ("allow", {"name": "Ada", "colour": "blue"}, "colour: must be one of red, green"),
        ("allow", {"name": ""}, "name: is too short"),
        ("deny", {"name": "Ada"}, "a decline takes no answer"),
    ]

    async def answer(run_id: str, request_id: str) -> None:
        head = (await engine.store.get_run(run_id)).head
        for decision, content, message in bad:
            with pytest.raises(InvalidAnswerError, match=message):
                await decide(
                    engine.store, run_id, request_id, decision, by="user:ann", answer=content
                )
        assert (await engine.store.get_run(run_id)).head == head  # nothing written
        await decide(engine.store, run_id, request_id, "allow", by="user:ann", answer={"name": "A"})

    await _asked_and(engine, answer, world=tmp_path)
    assert source.answers == [ElicitationAnswer("accept", {"name": "A"})]


async def test_an_unanswered_question_is_cancelled_at_its_deadline(
    tmp_path: Path, helix_home: Path
) -> None:
    clock = ManualClock()
    source = AskingSource()
    engine = _engine(helix_home, source, clock)

    async def answer(run_id: str, request_id: str) -> None:
        await clock.sleeping(2)  # the lease renewer, and the question's deadline
        clock.advance(Blueprint().approvals.timeout_s + 1)

    run_id, asked, log = await _asked_and(engine, answer, world=tmp_path)
    (decided,) = [e for e in log if e.type == "approval.decided"]
    assert (decided.data["decision"], decided.data["auto"]) == ("deny", True)
    assert decided.data["reason"] == "no decision before the deadline"
    assert source.answers == [ElicitationAnswer("cancel")]
    with pytest.raises(RunStateError):  # closed, and its run has ended
        await decide(engine.store, run_id, asked.data["request_id"], "allow", by="user:ann")


async def test_an_unattended_run_declines_at_once_and_says_why(
    tmp_path: Path, helix_home: Path
) -> None:
    source = AskingSource()
    engine = _engine(helix_home, source)
    record = await engine.create(
        "ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path, attended=False
    )
    state = await engine.drive(record.id)
    assert state.status == "completed"
    assert source.answers == [ElicitationAnswer("decline")]
    (asked,) = await _events(engine, record.id, "approval.requested")
    (decided,) = await _events(engine, record.id, "approval.decided")
    assert decided.data["request_id"] == asked.data["request_id"]
    assert (decided.data["decision"], decided.data["by"]) == ("deny", "system")
    assert decided.data["reason"] == "declined: nobody attends this run"


async def test_auto_approve_accepts_a_plain_yes_but_asks_a_person_for_fields(
    tmp_path: Path,
    helix_home: Path,
) -> None:
    plain = AskingSource(schema={})
    engine = _engine(helix_home, plain)
    record = await engine.create(
        "ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path, auto_approve=True
    )
    assert (await engine.drive(record.id)).status == "completed"
    assert plain.answers == [ElicitationAnswer("accept", {})]
    (decided,) = await _events(engine, record.id, "approval.decided")
    assert decided.data["reason"] == "auto-approve"

    fields = AskingSource()
    engine = _engine(helix_home, fields)

    async def answer(run_id: str, request_id: str) -> None:
        await decide(engine.store, run_id, request_id, "allow", by="user:b", answer={"name": "B"})

    await _asked_and(engine, answer, world=tmp_path, auto_approve=True)
    assert fields.answers == [ElicitationAnswer("accept", {"name": "B"})]

    unattended = AskingSource()
    engine = _engine(helix_home, unattended)
    record = await engine.create(
        "ask",
        blueprint=Blueprint(model="scripted:t"),
        world=tmp_path,
        auto_approve=True,
        attended=False,
    )
    assert (await engine.drive(record.id)).status == "completed"
    assert unattended.answers == [ElicitationAnswer("decline")]
    (decided,) = await _events(engine, record.id, "approval.decided")
    assert "auto-approve gives no answers with content" in decided.data["reason"]


async def test_a_schema_that_is_not_flat_is_refused_to_the_source(
    tmp_path: Path, helix_home: Path
) -> None:
    nested = {"type": "object", "properties": {"x": {"type": "object", "properties": {}}}}
    source = AskingSource(schema=nested)
    engine = _engine(helix_home, source)
    record = await engine.create(
        "ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path, attended=False
    )
    assert (await engine.drive(record.id)).status == "completed"
    assert not await _events(engine, record.id, "approval.requested")
    (completed,) = await _events(engine, record.id, "tool.completed")
    assert completed.data["ok"] is False
    assert "cannot ask a person: field 'x': type must be one of" in completed.data["output"]


async def test_a_source_cannot_flood_a_person_with_questions(
    tmp_path: Path, helix_home: Path
) -> None:
    source = AskingSource(schema={})
    calls = [{"name": "ask_person", "args": {}, "id": f"q{n}"} for n in range(6)]
    scenario = Scenario.of({"text": "", "tool_calls": calls}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    engine = Engine(
        MemoryEventStore(), home=helix_home, model_factory=model, env={},
        sources=lambda setup: [source],
    )  # fmt: skip
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)

    def waiting(state: Any) -> bool:
        return len(state.pending_approvals) == 4 and len(source.answers) == 2

    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        async with engine.store.subscribe(record.id) as events:
            async for _event in events:
                if waiting(await replay_run(engine.store, record.id)):
                    break
        assert source.answers == [ElicitationAnswer("decline")] * 2  # past four: not asked
        for request_id in list((await replay_run(engine.store, record.id)).pending_approvals):
            await decide(engine.store, record.id, request_id, "allow", by="user:ann")
    assert driving.result().status == "completed"
    reasons = [e.data["reason"] for e in await _events(engine, record.id, "approval.decided")]
    crowded = "declined: 4 questions of this run's sources already wait for a person"
    assert reasons.count(crowded) == 2
    assert sorted(a.action for a in source.answers) == ["accept"] * 4 + ["decline"] * 2
