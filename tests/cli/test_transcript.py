"""The transcript: a real run's log, folded into messages, tool calls and run notes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from helix.api import LocalApi, RunEvent
from helix.cli._transcript import Call, Note, Said, Transcript, exit_code_of, summarize_args
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup

LONG = "I will write the file and then check it. " * 8
WORK = Scenario.of(
    {"text": LONG, "tool_calls": [
        {"name": "write_file", "args": {"path": "a.txt", "content": "hello\n"}}]},
    {"text": "Now I check it.", "tool_calls": [
        {"name": "run_command", "args": {"command": "cat a.txt; exit 3"}}]},
    {"text": "Done: a.txt says hello, and the check exits 3 as asked."},
)  # fmt: skip

Answer = Callable[[RunEvent], str]


def _engine(tmp_path: Path, scenario: Scenario) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="t")

    return Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})


async def _fold(
    engine: Engine,
    run_id: str,
    answer: Answer | None = None,
    on: Callable[[Transcript], None] = lambda _t: None,
) -> tuple[Transcript, list[RunEvent]]:
    """Drive the run while folding its events; approvals answered by ``answer``."""
    api = LocalApi(engine, actor="user:ann")
    transcript, seen = Transcript(run_id), []
    driving = asyncio.create_task(engine.drive(run_id))
    events = api.events(run_id, follow=True)
    async with contextlib.aclosing(events):
        async for event in events:
            seen.append(event)
            transcript.add(event)
            if event.type == "approval.requested":
                on(transcript)
                decision = "allow" if answer is None else answer(event)
                await api.decide(run_id, str(event.data["request_id"]), decision)  # type: ignore[arg-type]
    await driving
    return transcript, seen


async def _run(tmp_path: Path, scenario: Scenario, **kwargs: object) -> tuple[Engine, str]:
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    engine = _engine(tmp_path, scenario)
    record = await engine.create(
        "write a file",
        blueprint=Blueprint(model="scripted:t"),
        world=world,
        **kwargs,  # type: ignore[arg-type]
    )
    return engine, record.id


async def test_a_run_folds_into_full_text_calls_and_its_end(tmp_path: Path) -> None:
    engine, run_id = await _run(tmp_path, WORK)
    waiting: list[list[Call]] = []
    transcript, events = await _fold(engine, run_id, on=lambda t: waiting.append(t.pending()))

    said = [b for b in transcript.blocks if isinstance(b, Said)]
    assert [s.text for s in said] == [LONG, "Now I check it.", WORK.steps[-1].text]
    assert said[0].who == "agent"
    assert said[0].turn == 1
    write, command = (b for b in transcript.blocks if isinstance(b, Call))
    assert (write.name, write.state, write.verdict, write.reasons) == (
        "write_file",
        "ok",
        "allow",
        [],
    )
    assert write.summary == "path=a.txt content='hello'"
    assert write.files[0].path == "a.txt"
    assert write.files[0].op == "create"
    assert write.files[0].before is None
    assert write.files[0].after
    assert len(write.gates) >= 3  # every gate's allow folded into the one verdict
    assert command.verdict == "ask"
    assert command.reasons[0].startswith("approval: ")
    assert command.decision == "allow"
    assert command.decided_by == "user:ann"
    assert command.state == "error"
    assert command.exit_code == 3
    assert "hello" in command.output
    assert [[c.call_id for c in p] for p in waiting] == [[command.call_id]]
    assert transcript.pending() == []
    assert transcript.files_changed == ["a.txt"]
    assert transcript.status == "completed"
    assert transcript.turn == 3
    assert transcript.head == events[-1].seq
    assert transcript.objective == "write a file"
    assert transcript.model == "scripted:t"
    assert transcript.input_tokens > 0
    assert transcript.output_tokens > 0
    assert isinstance(transcript.ending, Note)
    assert transcript.ending.kind == "completed"
    assert transcript.ending.tone == "good"
    assert transcript.blocks[0] == Note("created", "write a file", "info", 0)


async def test_every_event_updates_the_block_it_names(tmp_path: Path) -> None:
    engine, run_id = await _run(tmp_path, WORK)
    _, events = await _fold(engine, run_id)
    transcript = Transcript(run_id)
    updated = {event.type: transcript.add(event) for event in events}
    assert isinstance(updated["gate.decided"], Call)
    assert isinstance(updated["approval.decided"], Call)  # found by its request id
    assert isinstance(updated["file.changed"], Call)
    assert updated["turn.started"] is None
    assert updated["world.snapshotted"] is None
    assert updated["model.requested"] is None
    assert not transcript.thinking  # the last model call was answered


async def test_a_denied_ask_and_a_gate_denial_are_denied_calls(tmp_path: Path) -> None:
    scenario = Scenario.of(
        {"text": "", "tool_calls": [
            {"name": "write_file", "args": {"path": "../outside.txt", "content": "x"}},
            {"name": "run_command", "args": {"command": "touch b.txt"}}]},
        {"text": "Both refused."},
    )  # fmt: skip
    engine, run_id = await _run(tmp_path, scenario)
    transcript, _ = await _fold(engine, run_id, answer=lambda _e: "deny")
    outside, command = (b for b in transcript.blocks if isinstance(b, Call))
    assert outside.verdict == "deny"
    assert outside.state == "denied"
    assert any(reason.startswith("boundary: ") for reason in outside.reasons)
    assert command.verdict == "ask"
    assert command.decision == "deny"
    assert command.state == "denied"
    assert transcript.files_changed == []
    assert not (tmp_path / "world" / "b.txt").exists()
    assert [s.text for s in transcript.blocks if isinstance(s, Said)] == ["Both refused."]


async def test_a_pause_a_steer_and_a_resume_are_notes_and_a_persons_words(tmp_path: Path) -> None:
    scenario = Scenario.of(
        {"text": "First.", "tool_calls": [{"name": "run_command", "args": {"command": "true"}}]},
        {"text": "Second, as steered."},
    )  # fmt: skip
    engine, run_id = await _run(tmp_path, scenario, auto_approve=True)
    api = LocalApi(engine, actor="user:ann", drive=lambda _id: None)  # driven here
    transcript = Transcript(run_id)
    driving = asyncio.create_task(engine.drive(run_id, until=lambda s: s.status == "paused"))
    events = api.events(run_id, follow=True)
    async with contextlib.aclosing(events):
        async for event in events:
            transcript.add(event)
            if event.type == "tool.requested":
                await api.pause(run_id)  # at the next safe point: after the call
            if event.type == "run.paused":
                await driving
                assert transcript.status == "paused"
                assert transcript.ending is not None
                assert transcript.ending.kind == "paused"
                await api.steer(run_id, "please be brief")
                await api.resume(run_id)
                driving = asyncio.create_task(engine.drive(run_id))
    await driving
    kinds = [b.kind for b in transcript.blocks if isinstance(b, Note)]
    assert kinds[:1] == ["created"]
    assert "paused" in kinds
    assert "resumed" in kinds
    assert kinds[-1] == "completed"
    person = [b for b in transcript.blocks if isinstance(b, Said) and b.who == "person"]
    assert [p.text for p in person] == ["please be brief"]
    resumed = next(b for b in transcript.blocks if isinstance(b, Note) and b.kind == "resumed")
    assert resumed.text == "resumed by user:ann"


def test_a_failure_is_kept_whole() -> None:
    run_id = "run_failing"
    error = "the model's key is missing: set OPENAI_API_KEY " + "(and more words) " * 10
    events = [
        RunEvent.model_construct(
            run_id=run_id, seq=9, type="run.failed", v=1, ts="", turn=2, actor="system",
            data={"error": error},
        )
    ]  # fmt: skip
    transcript = Transcript(run_id)
    for event in events:
        transcript.add(event)
    assert transcript.ending == Note("failed", error, "bad", 2)
    assert transcript.status == "failed"


async def test_a_fork_starts_with_its_parent_and_turn(tmp_path: Path) -> None:
    engine, run_id = await _run(tmp_path, WORK)
    await _fold(engine, run_id)
    api = LocalApi(engine, actor="user:ann", drive=lambda _id: None)
    fork = await api.fork(run_id, turn=1, message="try again")
    transcript = Transcript(fork.id)
    async for event in api.events(fork.id):
        transcript.add(event)
    forked = next(b for b in transcript.blocks if isinstance(b, Note) and b.kind == "forked")
    assert forked.text == f"forked from {run_id} at turn 1: try again"
    assert forked.run_id == run_id


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("hi\n[exit code 0]", 0),
        ("[exit code 127]\n", 127),
        ("x\n[killed by signal 9]", -9),
        ("created a.txt (6 bytes)", None),
        ("[exit code 2] and then more", None),
    ],
)
def test_exit_codes_are_read_from_a_commands_footer(output: str, code: int | None) -> None:
    assert exit_code_of(output) == code


def test_arguments_summarise_on_one_line() -> None:
    assert summarize_args({"command": "ls  -la\n/tmp"}) == "ls -la /tmp"
    assert summarize_args({"path": "a", "n": 3}) == "path=a n=3"
    long = summarize_args({"path": "a.txt", "content": "x" * 500})
    assert len(long) <= 100
    assert long.endswith("…'")
    assert len(summarize_args({"command": "y" * 500})) == 100


async def test_the_models_mistakes_read_as_notes_with_their_count(tmp_path: Path) -> None:
    cut = {"name": "write_file", "raw_args": '{"path": "a.txt", "con'}
    scenario = Scenario.of(
        {"text": "Writing.", "tool_calls": [cut]},
        {"text": ""},
        {"tool_calls": [{"name": "write_file", "args": {"path": "a.txt", "content": "hi\n"}}]},
        {"text": "Done."},
    )
    engine, run_id = await _run(tmp_path, scenario)
    transcript, _events = await _fold(engine, run_id)

    assert transcript.status == "completed"
    calls = [b for b in transcript.blocks if isinstance(b, Call)]
    assert [(c.state, c.summary) for c in calls] == [
        ("denied", '{"path": "a.txt", "con'),  # the text the model sent, not {}
        ("ok", "path=a.txt content='hi'"),
    ]
    assert calls[0].reasons[-1].startswith("arguments: malformed arguments: the arguments of")
    notes = [b for b in transcript.blocks if isinstance(b, Note) and b.kind == "rejected"]
    assert [n.tone for n in notes] == ["warn", "warn"]
    assert notes[0].text.startswith(
        "the model's reply was malformed: the arguments of 'write_file' are not JSON ("
    )
    assert notes[0].text.endswith(': {"path": "a.txt", "con (told the model; 1 of 5)')
    assert notes[1].text == (
        "the model's reply was empty: no text and no tool call (stop reason: end)"
        " (told the model; 2 of 5)"
    )
    assert transcript.blocks.index(notes[0]) == transcript.blocks.index(calls[0]) + 1
