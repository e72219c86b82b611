"""When the model gets it wrong: its mistakes go back to it, and the run goes on.

A real engine, store and gates; the model is the mock model server, spoken to through
the OpenAI SDK, so a malformed call is parsed by the real adapter. Each kind of mistake
is followed by a correct call: the run completes, the log holds the mistake and the
error result, and the model's next request carries what it was told.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, resume
from helix.runtime._mistakes import EMPTY_REPLY_MESSAGE
from helix.testing import MockModelServer

from .conftest import mock_engine as _engine

MODEL = "openai:mock-model"
WRITE = {"name": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}
"""The call the model gets right after its mistake."""
DONE = {"text": "Wrote notes.txt."}


def _blueprint(pause_after: int | None = 5) -> Blueprint:
    return Blueprint.parse(
        {
            "model": MODEL,
            "tools": ["write_file", "read_file"],
            "model_errors": {"pause_after": pause_after},
        },
        source="mistakes.yaml",
    )


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


def _sent(server: MockModelServer, index: int) -> list[dict[str, Any]]:
    """The messages of the model request at ``index`` (OpenAI's shape)."""
    requests = [r for r in server.requests if r.api == "openai"]
    messages: list[dict[str, Any]] = requests[index].body["messages"]
    return messages


MISTAKES: dict[str, tuple[dict[str, Any], str, str]] = {
    "not-json": (
        {"tool_calls": [{"name": "write_file", "raw_args": '{"path": "notes.txt", "cont'}]},
        "malformed_arguments",
        "denied by the arguments gate: malformed arguments: the arguments of 'write_file'"
        " are not JSON (",
    ),
    "not-an-object": (
        {"tool_calls": [{"name": "write_file", "raw_args": '["notes.txt", "hello"]'}]},
        "malformed_arguments",
        "denied by the arguments gate: malformed arguments: the arguments of 'write_file'"
        " are an array, not a JSON object",
    ),
    "unknown-tool": (
        {"tool_calls": [{"name": "wrtie_file", "args": {"path": "notes.txt"}}]},
        "unknown_tool",
        "denied by the arguments gate: unknown tool 'wrtie_file'; available: read_file, write_file",
    ),
    "wrong-types": (
        {"tool_calls": [{"name": "write_file", "args": {"path": ["notes.txt"], "content": 1}}]},
        "invalid_arguments",
        "denied by the arguments gate: invalid arguments: ",
    ),
}


@pytest.mark.parametrize("kind", sorted(MISTAKES))
async def test_a_call_gone_wrong_goes_back_to_the_model_and_the_run_goes_on(
    kind: str, tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    step, reason, told = MISTAKES[kind]
    server.play(Scenario.of(step, {"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint(), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    log = await engine.store.read(run.id)
    assert not _of(log, "run.failed")
    first = _of(log, "tool.requested")[0]
    (call,) = _of(log, "model.responded")[0].data["tool_calls"]
    assert first.data["call_id"] == call["id"]
    if reason == "malformed_arguments":  # the text the model sent, kept; no arguments made up
        raw = step["tool_calls"][0]["raw_args"]
        assert (first.data["args"], first.data["raw_args"]) == ({}, raw)
        assert (call["args"], call["raw_args"]) == ({}, raw)
        assert first.data["malformed"] == call["malformed"]
        assert first.data["malformed"].startswith("the arguments of 'write_file' are ")
    else:
        assert (first.data["malformed"], first.data["raw_args"]) == (None, None)
    denied = [e for e in _of(log, "gate.decided") if e.data["call_id"] == call["id"]][-1]
    assert (denied.data["gate"], denied.data["verdict"]) == ("arguments", "deny")
    result = _of(log, "tool.completed")[0]
    assert result.data["ok"] is False
    assert result.data["output"].startswith(told)
    (rejected,) = _of(log, "model.rejected")
    assert rejected.seq == result.seq + 1
    assert rejected.data["reason"] == reason
    assert rejected.data["call_id"] == call["id"]
    assert (rejected.data["mistakes"], rejected.data["limit"]) == (1, 5)
    assert rejected.data["message"] is None
    if reason == "malformed_arguments":
        assert rejected.data["detail"] == first.data["malformed"]
    else:
        assert result.data["output"].endswith(rejected.data["detail"])
    # the model read the error as its call's result, and corrected itself
    tool_results = [m for m in _sent(server, 1) if m["role"] == "tool"]
    assert tool_results == [
        {"role": "tool", "tool_call_id": call["id"], "content": result.data["output"]}
    ]
    assert state.mistakes == 0  # the good reply's turn started the count again


async def test_an_empty_reply_is_answered_with_a_message_and_the_run_goes_on(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": ""}, {"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint(), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert state.summary == "Wrote notes.txt."
    log = await engine.store.read(run.id)
    types = [e.type for e in log]
    at = types.index("model.rejected")
    assert types[at - 1] == "model.responded"
    assert types[at + 1 : at + 4] == ["turn.ended", "turn.started", "model.requested"]
    rejected = log[at].data
    assert rejected["reason"] == "empty_reply"
    assert rejected["detail"] == "no text and no tool call (stop reason: end)"
    assert rejected["call_id"] is None
    assert (rejected["mistakes"], rejected["limit"]) == (1, 5)
    # told as the next request's last message; its empty reply is not sent back
    sent = _sent(server, 1)
    assert sent[-1] == {"role": "user", "content": rejected["message"]}
    assert "reply was empty" in rejected["message"]
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "user"]
    assert (tmp_path / "notes.txt").exists()


async def test_mistakes_that_are_not_in_a_row_never_pause_the_run(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    unknown = {"tool_calls": [{"name": "nope", "args": {}}]}
    server.play(Scenario.of(unknown, {"tool_calls": [WRITE]}, {"text": ""}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint(pause_after=2), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    assert [e.data["mistakes"] for e in _of(log, "model.rejected")] == [1, 1]
    assert not _of(log, "run.paused")


async def test_mistakes_in_a_row_pause_the_run_and_a_resume_starts_the_count_again(
    tmp_path: Path, helix_home: Path, server: MockModelServer, store: EventStore
) -> None:
    cut = {"tool_calls": [{"name": "write_file", "raw_args": '{"path": '}]}
    server.play(Scenario.of(cut, {"text": "  "}, cut, {"tool_calls": [WRITE]}, DONE))
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(helix_home, server, store)
    run = await engine.create("write notes", blueprint=_blueprint(pause_after=2), world=world)

    paused = await engine.drive(run.id, until=lambda s: s.status == "paused")

    assert paused.status == "paused"
    assert paused.pause_reason == "model_errors"
    log = await store.read(run.id)
    rejections = _of(log, "model.rejected")
    assert [(e.data["reason"], e.data["mistakes"]) for e in rejections] == [
        ("malformed_arguments", 1),
        ("empty_reply", 2),
    ]
    (pause,) = _of(log, "run.paused")
    assert pause.data["reason"] == "model_errors"
    assert pause.data["detail"] == (
        "the model's last 2 replies in a row went wrong, and it was told each time (the"
        " latest: no text and no tool call (stop reason: end)); a resume goes on and"
        " starts the count again"
    )
    assert log[-1].type == "run.paused"
    assert log[-2].type == "turn.ended"  # between turns: nothing of the next was asked
    assert len(server.requests) == 2

    again = await engine.drive(run.id)  # paused: a drive alone does not go on
    assert again.status == "paused"
    assert len(server.requests) == 2
    await resume(store, run.id, by="user:test")
    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert (world / "notes.txt").read_text() == "hello\n"
    log = await store.read(run.id)
    assert [e.data["mistakes"] for e in _of(log, "model.rejected")] == [1, 2, 1]  # afresh
    assert len(_of(log, "run.paused")) == 1
    # the resumed call carried the message the empty reply earned
    told = _of(log, "model.rejected")[1].data["message"]
    assert _sent(server, 2)[-1] == {"role": "user", "content": told}


async def test_the_limit_can_be_turned_off(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    empty = {"text": ""}
    server.play(Scenario.of(empty, empty, empty, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("say", blueprint=_blueprint(pause_after=None), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    rejections = [e.data for e in _of(log, "model.rejected")]
    assert [(d["mistakes"], d["limit"]) for d in rejections] == [(1, None), (2, None), (3, None)]


async def test_the_same_server_complaint_twice_fails_the_run_after_two_attempts(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    said = "Invalid schema for function 'write_file': In context=('properties',), bad"
    server.play(Scenario.of({"error": {"status": 500, "message": said}}, repeat=True))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint(), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "failed"
    assert len(server.requests) == 2
    log = await engine.store.read(run.id)
    failures = [e.data for e in _of(log, "model.failed")]
    assert [(f["attempt"], f["retry_in_s"] is None) for f in failures] == [(1, False), (2, True)]
    assert failures[0]["error"] == f"openai answered 500: {said}"
    message = (
        "openai answered 500 twice with the same complaint, so the request itself is most"
        f" likely at fault and was not sent again: {said}"
    )
    assert failures[1]["error"] == message
    (failed,) = _of(log, "run.failed")
    assert failed.data["error"] == message
    assert json.dumps(said) not in json.dumps([e.data for e in _of(log, "model.rejected")])


async def test_a_scripted_model_goes_past_its_empty_reply(tmp_path: Path, helix_home: Path) -> None:
    """The scripted model picks its reply by the replies the request holds: the empty one
    stays in the conversation, so the next request is answered by the next step."""
    scenario = Scenario.of({"text": ""}, {"tool_calls": [WRITE]}, DONE)

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    engine = Engine(MemoryEventStore(), home=helix_home, model_factory=model, env={})
    run = await engine.create(
        "write notes", blueprint=Blueprint(model="scripted:t"), world=tmp_path
    )

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    said = [(m.role, m.text) for m in state.messages if m.role != "tool"]
    assert said[1:3] == [("assistant", ""), ("user", EMPTY_REPLY_MESSAGE)]
