"""``model.rejected`` and the fields malformed calls add: schema, fold, old logs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helix.kernel.events import (
    DEFAULT_REGISTRY,
    ForkPoint,
    ModelRejected,
    ModelResponded,
    NewEvent,
    Payload,
    RunCreated,
    RunForked,
    RunPaused,
    RunResumed,
    ToolCall,
    ToolCompleted,
    ToolRequested,
    TurnEnded,
    TurnStarted,
    Usage,
)
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import CallRequest, SessionState, replay_run

NO_USAGE = Usage(input_tokens=0, output_tokens=0)


def test_the_event_and_the_new_fields_are_in_the_schema_closed_and_checked() -> None:
    schema = DEFAULT_REGISTRY.envelope_adapter().json_schema()
    assert "model.rejected" in schema["discriminator"]["mapping"]
    text = str(schema)
    for field in ("malformed", "raw_args", "mistakes", "detail"):
        assert field in text
    made = ModelRejected(reason="empty_reply", detail="nothing", mistakes=1, message="say")
    assert (made.call_id, made.limit) == (None, None)
    with pytest.raises(ValidationError):
        ModelRejected.model_validate({"reason": "rude", "detail": "x", "mistakes": 1})
    with pytest.raises(ValidationError):
        ModelRejected(reason="empty_reply", detail="x", mistakes=0)
    with pytest.raises(ValidationError):
        ModelRejected(reason="empty_reply", detail="x", mistakes=1, limit=0)
    with pytest.raises(ValidationError):
        ModelRejected.model_validate({"reason": "empty_reply", "detail": "", "mistakes": 1, "x": 1})


def test_older_events_validate_as_they_are() -> None:
    old_call = ToolCall.model_validate({"id": "c1", "name": "read_file", "args": {"path": "a"}})
    assert (old_call.malformed, old_call.raw_args) == (None, None)
    requested = ToolRequested.model_validate({"call_id": "c1", "name": "x", "args": {}})
    assert (requested.malformed, requested.raw_args) == (None, None)
    assert RunPaused.model_validate({"reason": "user"}).detail is None


async def _fold(*events: Payload, turn: int = 1) -> SessionState:
    return await _fold_events(*(NewEvent(e, turn=turn) for e in events))


async def _fold_events(*events: NewEvent) -> SessionState:
    store = MemoryEventStore()
    created = RunCreated(
        objective="x", blueprint="b", model="scripted:x", world="/w", parent=None, budget=None
    )
    await store.create_run(created, run_id="run_a")
    await store.append("run_a", list(events), expected_seq=1)
    return await replay_run(store, "run_a")


def _reply(*calls: ToolCall, text: str = "") -> ModelResponded:
    return ModelResponded(
        text=text, tool_calls=list(calls), usage=NO_USAGE, cost_usd=0.0, latency_ms=1.0
    )


def _rejected(mistakes: int, call_id: str | None = None) -> ModelRejected:
    message = None if call_id else "Your last reply was empty."
    return ModelRejected(
        reason="malformed_arguments" if call_id else "empty_reply",
        detail="what was wrong",
        call_id=call_id,
        message=message,
        mistakes=mistakes,
        limit=5,
    )


async def test_a_malformed_call_folds_with_its_text_and_its_rejection_counts() -> None:
    bad = ToolCall(id="c1", name="write_file", args={}, malformed="not JSON", raw_args='{"p')
    denied = ToolCompleted(call_id="c1", ok=False, output="denied: not JSON", duration_ms=0)
    state = await _fold(TurnStarted(turn=1), _reply(bad), denied, _rejected(1, "c1"))
    (assistant,) = [m for m in state.messages if m.role == "assistant"]
    assert assistant.tool_calls == (
        CallRequest("c1", "write_file", {}, malformed="not JSON", raw_args='{"p'),
    )
    assert (state.mistakes, state.mistake_turn, state.last_mistake) == (1, 1, "what was wrong")
    assert state.last_reply_had_calls is True  # the call's result tells the model
    assert state.messages[-1].role == "tool"


async def test_an_empty_reply_is_answered_by_its_message_and_does_not_end_the_run() -> None:
    state = await _fold(TurnStarted(turn=1), _reply(), _rejected(1))
    assert [(m.role, m.text) for m in state.messages[-2:]] == [
        ("assistant", ""),
        ("user", "Your last reply was empty."),
    ]
    assert state.last_reply_had_calls is None  # neither asked for tools nor a final answer
    ended = await _fold(TurnStarted(turn=1), _reply(), _rejected(1), TurnEnded(turn=1))
    assert ended.mistakes == 1  # a turn with a mistake keeps the count


async def test_a_turn_without_a_mistake_and_a_resume_after_a_pause_start_the_count_again() -> None:
    good = await _fold(
        TurnStarted(turn=1), _reply(), _rejected(1), TurnEnded(turn=1),
        TurnStarted(turn=2), _reply(text="fine"), TurnEnded(turn=2),
    )  # fmt: skip
    assert (good.mistakes, good.mistake_turn, good.last_mistake) == (0, None, None)
    two = [
        NewEvent(TurnStarted(turn=1), turn=1), NewEvent(_reply(), turn=1),
        NewEvent(_rejected(1, "c1"), turn=1), NewEvent(_rejected(1, "c2"), turn=1),
        NewEvent(TurnEnded(turn=1), turn=1),
        NewEvent(TurnStarted(turn=2), turn=2), NewEvent(_reply(), turn=2),
        NewEvent(_rejected(2), turn=2), NewEvent(TurnEnded(turn=2), turn=2),
    ]  # fmt: skip
    held = await _fold_events(*two, NewEvent(RunPaused(reason="model_errors"), turn=2))
    assert (held.status, held.pause_reason, held.mistakes) == ("paused", "model_errors", 2)
    assert held.last_mistake == "what was wrong"
    resumed = await _fold_events(
        *two, NewEvent(RunPaused(reason="model_errors")), NewEvent(RunResumed(by="user:ann"))
    )
    assert (resumed.mistakes, resumed.status) == (0, "running")
    restarted = await _fold_events(*two, NewEvent(RunResumed()))
    assert restarted.mistakes == 2  # a driver's restart is no person's decision to go on
    fork = RunForked(parent=ForkPoint(run_id="run_a", seq=9), turn=2, model="openai:other")
    forked = await _fold_events(*two, NewEvent(fork))
    assert forked.mistakes == 0  # a fork, on another model maybe, starts its own count


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="read_file", args={"path": "a"})


def _result(call_id: str) -> ToolCompleted:
    return ToolCompleted(call_id=call_id, ok=False, output="denied", duration_ms=0)


def test_the_new_mistake_kind_is_in_the_schema() -> None:
    made = ModelRejected(reason="no_tool_call", detail="text only", mistakes=1, message="call")
    assert made.reason == "no_tool_call"
    assert "no_tool_call" in str(DEFAULT_REGISTRY.envelope_adapter().json_schema())


async def test_a_call_not_rejected_in_a_turn_that_ended_is_a_tool_called() -> None:
    text_only = await _fold(TurnStarted(turn=1), _reply(text="hi"), TurnEnded(turn=1))
    assert text_only.tool_called is False
    open_turn = await _fold(TurnStarted(turn=1), _reply(_call("c1")), _result("c1"))
    assert open_turn.tool_called is False  # settled only when the turn ends
    assert open_turn.turn_calls == {"c1"}
    called = await _fold(TurnStarted(turn=1), _reply(_call("c1")), _result("c1"), TurnEnded(turn=1))
    assert (called.tool_called, called.turn_calls) == (True, set())
    later = await _fold_events(
        *(NewEvent(e, turn=1) for e in (TurnStarted(turn=1), _reply(_call("c1")))),
        NewEvent(_result("c1"), turn=1), NewEvent(TurnEnded(turn=1), turn=1),
        NewEvent(TurnStarted(turn=2), turn=2), NewEvent(_reply(text="done"), turn=2),
        NewEvent(TurnEnded(turn=2), turn=2),
    )  # fmt: skip
    assert later.tool_called is True  # it stays so


async def test_calls_rejected_as_mistakes_are_no_tool_called() -> None:
    every = await _fold(
        TurnStarted(turn=1), _reply(_call("c1"), _call("c2")),
        _result("c1"), _rejected(1, "c1"), _result("c2"), _rejected(1, "c2"),
        TurnEnded(turn=1),
    )  # fmt: skip
    assert every.tool_called is False
    one_kept = await _fold(
        TurnStarted(turn=1), _reply(_call("c1"), _call("c2")),
        _result("c1"), _rejected(1, "c1"), _result("c2"), TurnEnded(turn=1),
    )  # fmt: skip
    assert one_kept.tool_called is True
    assert one_kept.mistakes == 1  # the reply still went wrong
    text = ModelRejected(reason="no_tool_call", detail="text only", mistakes=1, message="call")
    forced = await _fold(TurnStarted(turn=1), _reply(text="hi"), text, TurnEnded(turn=1))
    assert (forced.tool_called, forced.last_reply_had_calls) == (False, None)
    assert forced.messages[-1].text == "call"


async def test_a_fork_keeps_its_parents_tool_called() -> None:
    called = [
        NewEvent(TurnStarted(turn=1), turn=1), NewEvent(_reply(_call("c1")), turn=1),
        NewEvent(_result("c1"), turn=1), NewEvent(TurnEnded(turn=1), turn=1),
    ]  # fmt: skip
    fork = RunForked(parent=ForkPoint(run_id="run_a", seq=5), turn=1, model="openai:other")
    forked = await _fold_events(*called, NewEvent(fork))
    assert forked.tool_called is True
