"""A blueprint's ``tool_choice``: forced until the model has called, then ``auto``.

A real engine, store and gates; the model is the mock model server, spoken to through
the OpenAI SDK, so each request's ``tool_choice`` is read as the server received it.
Text where a call was forced is the model's mistake (``no_tool_call``): it is told,
counted, and the run goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from helix.errors import BlueprintError, ConfigError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.providers import Scenario
from helix.runtime import Blueprint, Engine, resume
from helix.runtime._mistakes import no_call_message
from helix.testing import MockModelServer
from helix.tools import SourceHost, ToolContext, ToolDef, ToolResult, tool

from .conftest import mock_engine as _engine

MODEL = "openai:mock-model"
WRITE = {"name": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}
READ = {"name": "read_file", "args": {"path": "notes.txt"}}
DONE = {"text": "Wrote notes.txt."}
CHAT = {"text": "I would write the notes now."}
"""Text where a call was forced."""


def _blueprint(choice: str, pause_after: int | None = 5, **more: Any) -> Blueprint:
    settings = {
        "model": MODEL,
        "tools": ["write_file", "read_file"],
        "tool_choice": choice,
        "model_errors": {"pause_after": pause_after},
        **more,
    }
    return Blueprint.parse(settings, source="forced.yaml")


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


def _bodies(server: MockModelServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.api == "openai"]


def _choices(server: MockModelServer) -> list[Any]:
    """The ``tool_choice`` of each request the server received (``None``: not sent)."""
    return [body.get("tool_choice") for body in _bodies(server)]


async def test_text_where_a_call_was_required_is_told_and_the_choice_holds_until_a_call(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of(CHAT, {"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint("required"), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert state.summary == "Wrote notes.txt."
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    assert _choices(server) == ["required", "required", "auto"]
    log = await engine.store.read(run.id)
    types = [e.type for e in log]
    at = types.index("model.rejected")
    assert types[at - 1] == "model.responded"
    assert types[at + 1 : at + 4] == ["turn.ended", "turn.started", "model.requested"]
    (rejected,) = _of(log, "model.rejected")
    assert rejected.data["reason"] == "no_tool_call"
    assert rejected.data["call_id"] is None
    assert rejected.data["detail"] == (
        "text and no tool call, where the request forced one (tool_choice: required)"
    )
    assert rejected.data["message"] == no_call_message("required")
    assert "call one of your tools" in rejected.data["message"]
    assert (rejected.data["mistakes"], rejected.data["limit"]) == (1, 5)
    # the text stays in the conversation, the message follows it on the next request
    sent = _bodies(server)[1]["messages"]
    assert sent[-2:] == [
        {"role": "assistant", "content": CHAT["text"]},
        {"role": "user", "content": rejected.data["message"]},
    ]
    assert not _of(log, "run.failed")
    assert state.tool_called is True
    assert state.mistakes == 0  # the call's turn started the count again


async def test_a_named_tool_is_forced_and_calls_of_other_tools_are_denied_as_mistakes(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    (tmp_path / "notes.txt").write_text("old\n")
    server.play(Scenario.of({"tool_calls": [READ]}, CHAT, {"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint("write_file"), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    named = {"type": "function", "function": {"name": "write_file"}}
    assert _choices(server) == [named, named, named, "auto"]
    log = await engine.store.read(run.id)
    other, text = _of(log, "model.rejected")
    read_call = _of(log, "tool.requested")[0].data["call_id"]
    told = "you were asked to call 'write_file', not 'read_file': call 'write_file' now"
    assert (other.data["reason"], other.data["call_id"]) == ("no_tool_call", read_call)
    assert other.data["detail"] == told
    denied = [e for e in _of(log, "gate.decided") if e.data["call_id"] == read_call][-1]
    assert (denied.data["gate"], denied.data["verdict"]) == ("arguments", "deny")
    result = _of(log, "tool.completed")[0]
    assert (result.data["ok"], result.data["output"]) == (
        False,
        f"denied by the arguments gate: {told}",
    )
    assert (text.data["reason"], text.data["mistakes"]) == ("no_tool_call", 2)
    assert text.data["message"] == (
        "You were asked to call the tool write_file and replied with text only. Call it now."
    )
    assert (tmp_path / "notes.txt").read_text() == "hello\n"  # read_file never ran


async def test_none_is_sent_with_every_request(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    """A server that calls a tool anyway gets its call handled as any other."""
    server.play(Scenario.of({"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    run = await engine.create("write notes", blueprint=_blueprint("none"), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert _choices(server) == ["none", "none"]
    assert not _of(await engine.store.read(run.id), "model.rejected")


async def test_auto_is_the_default_and_a_text_reply_completes_the_run(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of(CHAT))
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse({"model": MODEL, "tools": ["read_file"]}, source="b.yaml")
    assert blueprint.tool_choice == "auto"
    run = await engine.create("say", blueprint=blueprint, world=tmp_path)

    state = await engine.drive(run.id)

    assert (state.status, state.summary) == ("completed", CHAT["text"])
    assert _choices(server) == ["auto"]


async def test_a_plan_then_act_planning_call_goes_without_a_choice(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "1. write the notes"}, {"tool_calls": [WRITE]}, DONE))
    engine = _engine(helix_home, server)
    blueprint = _blueprint("required", strategy={"kind": "plan_then_act"})
    run = await engine.create("write notes", blueprint=blueprint, world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    first, *acting = _bodies(server)
    assert "tools" not in first  # nothing to choose from: no choice sent
    assert "tool_choice" not in first
    assert [body["tool_choice"] for body in acting] == ["required", "auto"]
    assert not _of(await engine.store.read(run.id), "model.rejected")  # the plan is no mistake


async def test_forced_text_replies_in_a_row_pause_the_run_and_a_resume_is_still_forced(
    tmp_path: Path, helix_home: Path, server: MockModelServer, store: EventStore
) -> None:
    server.play(Scenario.of(CHAT, CHAT, {"tool_calls": [WRITE]}, DONE))
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(helix_home, server, store)
    blueprint = _blueprint("required", pause_after=2)
    run = await engine.create("write notes", blueprint=blueprint, world=world)

    paused = await engine.drive(run.id, until=lambda s: s.status == "paused")

    assert (paused.status, paused.pause_reason) == ("paused", "model_errors")
    log = await store.read(run.id)
    rejections = [(e.data["reason"], e.data["mistakes"]) for e in _of(log, "model.rejected")]
    assert rejections == [("no_tool_call", 1), ("no_tool_call", 2)]
    (pause,) = _of(log, "run.paused")
    assert "the model's last 2 replies in a row went wrong" in pause.data["detail"]
    assert "tool_choice: required" in pause.data["detail"]
    assert len(server.requests) == 2

    await resume(store, run.id, by="user:test")
    again = _engine(helix_home, server, store)  # another engine: the log is all it has
    state = await again.drive(run.id)

    assert state.status == "completed"
    assert _choices(server) == ["required", "required", "required", "auto"]
    told = no_call_message("required")
    assert _bodies(server)[2]["messages"][-1] == {"role": "user", "content": told}


async def test_a_run_rebuilt_from_its_log_knows_the_forced_choice_was_met(
    tmp_path: Path, helix_home: Path, server: MockModelServer, store: EventStore
) -> None:
    server.play(Scenario.of({"tool_calls": [WRITE]}, {"tool_calls": [READ]}, DONE))
    world = tmp_path / "world"
    world.mkdir()
    engine = _engine(helix_home, server, store)
    run = await engine.create("write notes", blueprint=_blueprint("write_file"), world=world)

    first = await engine.drive(run.id, until=lambda s: s.turn == 1 and not s.in_turn)

    assert first.tool_called is True
    assert len(server.requests) == 1
    state = await _engine(helix_home, server, store).drive(run.id)  # a new process, say

    assert state.status == "completed"
    named = {"type": "function", "function": {"name": "write_file"}}
    assert _choices(server) == [named, "auto", "auto"]
    log = await store.read(run.id)
    assert not _of(log, "model.rejected")  # read_file, after the write, is no mistake
    assert [e.data["ok"] for e in _of(log, "tool.completed")] == [True, True]


def test_a_tool_choice_that_is_no_tool_name_is_refused_on_load() -> None:
    for bad in ("write file", "", "a" * 65, "write_file\n", 3):
        with pytest.raises(BlueprintError) as refused:
            Blueprint.parse({"tool_choice": bad}, source="b.yaml")
        assert str(refused.value).startswith("b.yaml: tool_choice: ")
    with pytest.raises(BlueprintError, match="is not auto, required, none or a tool's name"):
        Blueprint.parse({"tool_choice": "write file"}, source="b.yaml")
    assert Blueprint.parse({"tool_choice": "mcp-x__get"}, source="b.yaml").tool_choice


async def test_a_named_tool_the_run_does_not_have_is_refused_before_the_run_exists(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    engine = _engine(helix_home, server)
    with pytest.raises(ConfigError) as refused:
        await engine.create("x", blueprint=_blueprint("run_command"), world=tmp_path)
    assert str(refused.value) == (
        "tool_choice names the tool 'run_command', which the run does not offer (its"
        " tools: read_file, write_file): name one of them, or use required"
    )
    with pytest.raises(ConfigError, match="tool_choice is required, but the run offers no"):
        await engine.create("x", blueprint=_blueprint("required", tools=[]), world=tmp_path)
    assert not (await engine.store.list_runs()).runs
    assert not server.requests


@tool(read_only=True, effect="none")
async def lookup(ctx: ToolContext) -> ToolResult:
    """Look something up."""
    return ToolResult(ok=True, output="found")


class Lookup:
    """A tool source offering ``lookup``."""

    name = "test:lookup"

    async def open(self, host: SourceHost) -> None:
        pass

    def tools(self) -> Sequence[ToolDef]:
        return [lookup]

    async def close(self) -> None:
        pass


async def test_a_sources_tool_is_checked_once_the_run_opens_its_sources(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
    engine = Engine(MemoryEventStore(), home=helix_home, env=env, sources=lambda setup: [Lookup()])
    server.play(Scenario.of({"tool_calls": [{"name": "lookup", "args": {}}]}, DONE))
    ok = await engine.create("look", blueprint=_blueprint("lookup"), world=tmp_path)
    state = await engine.drive(ok.id)
    assert state.status == "completed"
    assert _choices(server)[0] == {"type": "function", "function": {"name": "lookup"}}

    missing = await engine.create("look", blueprint=_blueprint("lookdown"), world=tmp_path)
    failed = await engine.drive(missing.id)

    assert failed.status == "failed"
    assert failed.error == (
        "tool_choice names the tool 'lookdown', which the run does not offer (its tools:"
        " lookup, read_file, write_file): name one of them, or use required"
    )
    assert not _of(await engine.store.read(missing.id), "model.requested")
    assert len(server.requests) == 2
