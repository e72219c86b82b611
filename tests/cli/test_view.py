"""The run view, captured (not a terminal): clean text, full words, one block per call."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from helix.api import LocalApi
from helix.cli._blocks import next_commands, note
from helix.cli._leave import leaving_hint
from helix.cli._live import drive_and_show
from helix.cli._prompt import answer_of, read_line
from helix.cli._transcript import Note, Transcript
from helix.cli._view import show_replay
from helix.cli._watch import Watch
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup

LONG = "Reading the task first, then writing the file and checking it; " * 6
WORK = Scenario.of(
    {"text": LONG, "tool_calls": [
        {"name": "write_file", "args": {"path": "a.txt", "content": "one\ntwo\n"}}]},
    {"text": "Changing a line.", "tool_calls": [
        {"name": "edit_file", "args": {"path": "a.txt", "old": "two", "new": "three"}},
        {"name": "write_file", "args": {"path": "../out.txt", "content": "x"}}]},
    {"text": "Checking.", "tool_calls": [
        {"name": "run_command", "args": {"command": "cat a.txt; exit 2"}}]},
    {"text": "Done: a.txt holds one and three."},
)  # fmt: skip


def _engine(tmp_path: Path, scenario: Scenario) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="t")

    return Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})


async def _created(tmp_path: Path, engine: Engine, *, auto_approve: bool = True) -> str:
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    record = await engine.create(
        "write a.txt", blueprint=Blueprint(model="scripted:t"), world=world,
        auto_approve=auto_approve,
    )  # fmt: skip
    return record.id


def _words(text: str) -> str:
    return " ".join(text.split())


async def test_captured_output_is_the_session_in_plain_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _engine(tmp_path, WORK)
    run_id = await _created(tmp_path, engine)

    state = await drive_and_show(engine, run_id, json=False, interactive=False)

    assert state.status == "completed"
    out = capsys.readouterr().out
    assert "\x1b" not in out  # no colour, no spinner: not a terminal
    assert "thinking" not in out
    assert all(line == line.rstrip() for line in out.splitlines())  # no padding
    lines = out.splitlines()
    assert lines[0] == f"▶ {run_id}  write a.txt"
    assert _words(LONG) in _words(out)  # in full, however long
    assert "✓ write_file path=a.txt content='one two'" in lines
    assert "✓ edit_file path=a.txt old=two new=three" in lines
    # A denial shows its gate's reason; allows are one mark (no gate names).
    assert any(line.startswith("✗ write_file path=../out.txt content=x  denied") for line in lines)
    assert any(
        line.startswith("  denied by the boundary gate: path '../out.txt'") for line in lines
    )
    assert "ceiling" not in out
    # Each edit's diff under its call.
    assert "  ~ a.txt (modified)" in lines
    assert "    -two" in lines
    assert "    +three" in lines
    command = next(i for i, line in enumerate(lines) if line.startswith("✓ run_command"))
    assert "exit 2" in lines[command]  # the exit code on the call's line, its output under it
    assert lines[command + 2 : command + 4] == ["  one", "  three"]
    assert "[exit code 2]" not in out
    assert "● Done: a.txt holds one and three." in lines
    assert "completed: Done" not in out  # the summary is the agent's last words: not twice
    assert "completed · 4 turns" in out
    assert f"next:  helix diff {run_id}" in lines
    assert f"       helix fork {run_id} --turn 3" in lines


async def test_escape_sequences_from_the_agent_or_a_command_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = Scenario.of(
        {"text": "Look: \x1b[2J\x1b]0;pwned\x07 done", "tool_calls": [
            {"name": "run_command", "args": {"command": "printf 'a\\033[31mred\\n'"}}]},
        {"text": "Bye."},
    )  # fmt: skip
    engine = _engine(tmp_path, hostile)
    run_id = await _created(tmp_path, engine)
    await drive_and_show(engine, run_id, json=False, interactive=False)
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "● Look: ␛[2J␛]0;pwned␇ done" in out
    assert "  a␛[31mred" in out


async def test_json_stays_one_event_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _engine(tmp_path, WORK)
    run_id = await _created(tmp_path, engine)
    await drive_and_show(engine, run_id, json=True, interactive=False)
    lines = capsys.readouterr().out.splitlines()
    events = [e async for e in LocalApi(engine).events(run_id)]
    assert lines == [e.to_kernel().to_json() for e in events]


async def test_a_question_with_no_answer_pauses_the_run_and_says_how_to_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asking = Scenario.of(
        {"text": "Making it.", "tool_calls": [
            {"name": "run_command", "args": {"command": "touch made.txt"}}]},
        {"text": "Made it."},
    )  # fmt: skip
    engine = _engine(tmp_path, asking)
    run_id = await _created(tmp_path, engine, auto_approve=False)

    state = await drive_and_show(
        engine, run_id, json=False, interactive=True, stdin=io.StringIO("")
    )

    assert state.status == "paused"  # not waiting with nothing to drive it
    assert [r.call_id for r in await LocalApi(engine).approvals(run_id)]  # still asked
    out = capsys.readouterr().out
    assert "? run_command touch made.txt" in out
    assert f"no answer (the input ended): run {run_id} is paused." in out
    assert f"resume it: helix resume {run_id}" in out
    assert not (tmp_path / "world" / "made.txt").exists()


async def test_replay_shows_the_session_as_it_was_shown_live(tmp_path: Path) -> None:
    engine = _engine(tmp_path, WORK)
    run_id = await _created(tmp_path, engine)
    await engine.drive(run_id)
    api = LocalApi(engine)
    whole = io.StringIO()
    await show_replay(api, run_id, to=None, console=Console(file=whole, width=100))
    text = whole.getvalue()
    assert _words(LONG) in _words(text)
    assert "✓ edit_file path=a.txt old=two new=three" in text
    assert "    +three" in text  # the diff, from the world at the turn's end
    assert "completed · 4 turns" in text

    events = [e async for e in api.events(run_id)]
    cut = next(e.seq for e in events if e.type == "turn.ended" and e.data["turn"] == 1)
    part = io.StringIO()
    await show_replay(api, run_id, to=cut, console=Console(file=part, width=100))
    shown = part.getvalue()
    assert "✓ write_file path=a.txt content='one two'" in shown
    assert "edit_file" not in shown  # turn 2 is after the cut
    assert f"at seq {cut}: running · 1 turn" in shown
    assert f"helix fork {run_id} --turn 1" in shown


def test_a_failure_is_shown_in_full() -> None:
    error = "this model needs the key OPENAI_API_KEY: set it, or pick another model " * 3
    out = io.StringIO()
    Console(file=out, width=60).print(note(Note("failed", error, "bad")))
    assert _words(out.getvalue()) == _words(f"✗ failed: {error}")


def test_the_next_commands_fit_where_the_run_stands() -> None:
    transcript = Transcript("run_x")
    transcript.ended_turns = [1, 2, 3]
    assert next_commands(transcript, "completed") == [
        "helix fork run_x --turn 2",
        "helix replay run_x",
    ]
    assert next_commands(transcript, "paused")[-2:] == [
        "helix resume run_x",
        "helix logs run_x",
    ]
    assert "helix logs run_x --follow" in next_commands(transcript, "running")


def test_leaving_says_where_the_run_stands_and_how_to_go_on() -> None:
    assert leaving_hint("run_x", "paused", "interrupted", here=True) == [
        "run run_x is paused.",
        "resume it: helix resume run_x",
    ]
    elsewhere = leaving_hint("run_x", "running", "interrupted", here=False)
    assert (
        elsewhere[0] == "run run_x is running, driven by its driver (a server, or another process)."
    )
    assert elsewhere[-1].startswith("follow it: helix logs run_x --follow")
    waiting = leaving_hint("run_x", "waiting", "unanswered", here=False)
    assert "answer its call: helix approve run_x · helix deny run_x" in waiting


@pytest.mark.parametrize(
    ("typed", "answer"),
    [("y", "allow"), (" YES ", "allow"), ("n", "deny"), ("No", "deny"), ("", None), ("ok", None)],
)
def test_only_a_clear_answer_decides(typed: str, answer: str | None) -> None:
    assert answer_of(typed) == answer


async def test_lines_are_read_without_a_thread_to_the_end_of_input() -> None:
    read, write = os.pipe()
    with os.fdopen(read) as stream:
        os.write(write, b"y\npart")
        assert await read_line(stream) == "y"
        reading = asyncio.ensure_future(read_line(stream))
        await asyncio.sleep(0)  # it waits for the rest of the line
        assert not reading.done()
        os.close(write)  # the input ends: what was typed counts
        assert await reading == "part"
        assert await read_line(stream) is None


class _Screen(io.StringIO):
    """Captured output that says when ``awaited`` has been written."""

    def __init__(self, awaited: str) -> None:
        super().__init__()
        self.awaited = awaited
        self.shown = asyncio.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.awaited in self.getvalue():
            self.shown.set()
        return written


ASKING = Scenario.of(
    {"text": "Making it.", "tool_calls": [
        {"name": "run_command", "args": {"command": "touch made.txt"}}]},
    {"text": "Made it."},
)  # fmt: skip


async def _answer_elsewhere(api: LocalApi, run_id: str) -> None:
    events = api.events(run_id, follow=True)
    async for event in events:
        if event.type == "approval.requested":
            await api.decide(run_id, str(event.data["request_id"]), "allow")
            return


async def test_without_a_terminal_the_view_says_how_to_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _engine(tmp_path, ASKING)
    run_id = await _created(tmp_path, engine, auto_approve=False)
    async with asyncio.TaskGroup() as group:
        group.create_task(_answer_elsewhere(LocalApi(engine, actor="user:bob"), run_id))
        state = await drive_and_show(engine, run_id, json=False, interactive=False)
    assert state.status == "completed"
    out = capsys.readouterr().out
    assert f"waiting for a decision: helix approve {run_id} apr_" in _words(out)
    assert "✓ run_command touch made.txt  allowed by user:bob · exit 0" in out
    assert "Allow it?" not in out


async def test_a_question_answered_elsewhere_is_no_longer_asked(tmp_path: Path) -> None:
    engine = _engine(tmp_path, ASKING)
    run_id = await _created(tmp_path, engine, auto_approve=False)
    screen = _Screen("Allow it? [y]es / [n]o:")
    api = LocalApi(engine, actor="user:bob")

    async def answer_once_asked() -> None:
        await screen.shown.wait()  # the question is up
        (pending,) = await api.approvals(run_id)
        await api.decide(run_id, pending.request_id, "allow")

    read, write = os.pipe()  # a keyboard nobody types at
    try:
        with os.fdopen(read) as keyboard:
            watch = Watch(
                api, run_id, json=False, after=-1, ask=True, stdin=keyboard,
                console=Console(file=screen, width=100),
            )  # fmt: skip
            async with asyncio.TaskGroup() as group:
                group.create_task(answer_once_asked())
                code = await asyncio.wait_for(watch.run(engine.drive(run_id)), 60)
    finally:
        os.close(write)
    assert code == 0
    out = screen.getvalue()
    assert "allowed by user:bob elsewhere" in out
    assert out.count("Allow it? [y]es / [n]o:") == 1
    assert (tmp_path / "world" / "made.txt").exists()
