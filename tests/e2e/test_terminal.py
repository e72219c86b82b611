"""``helix run`` in a real terminal: the session as a person reads it, and leaving it.

Each test runs ``helix`` in a pseudo-terminal (see ``_terminal``) against the mock model,
types at it as a person would, and checks what the screen shows and, through ``helix
show``, the state the run is left in.
"""

from __future__ import annotations

import re

from ._terminal import CTRL_D, Terminal
from .conftest import MODEL, WAIT_S, Helix, of_type

LONG = (
    "I will write the notes first and then check them with a command, reading every"
    " line back so that nothing is lost; this sentence is long on purpose, because the"
    " view must show an agent's words in full, however many lines they take. "
) * 2


def _run_id(text: str) -> str:
    found = re.search(r"▶ (run_[0-9a-f]+)", text)
    assert found, text
    return found.group(1)


def _words(text: str) -> str:
    """The text with its wrapping undone (a wrapped line goes on after two spaces)."""
    return " ".join(text.split())


def test_a_run_reads_as_a_session_with_marks_diffs_and_a_summary(helix: Helix) -> None:
    helix.play(
        {"text": LONG, "tool_calls": [
            {"name": "write_file", "args": {"path": "notes.md", "content": "# Notes\n- one\n"}}]},
        {"text": "Checking.", "delay_s": 1.0, "tool_calls": [
            {"name": "run_command", "args": {"command": "wc -l < notes.md; exit 3"}}]},
        {"text": "Done: notes.md has two lines, and the check exited 3 as planned."},
    )  # fmt: skip
    terminal = Terminal(
        ["run", "write notes", "--model", MODEL, "--dir", str(helix.world)], helix.env
    )
    try:
        # Each answer is typed once its question shows: typed ahead, the terminal would
        # echo it before the question, which the next line's redraw then overwrites.
        terminal.wait_for("Allow it? [y]es / [n]o:", WAIT_S)
        terminal.type(b"\r")  # a bare Enter decides nothing: asked again
        terminal.wait_for("Allow it? [y]es / [n]o:", WAIT_S, after="Please answer y (allow)")
        terminal.type(b"maybe\r")
        terminal.wait_for("Allow it? [y]es / [n]o:", WAIT_S, after="maybe")
        terminal.type(b"y\r")
        assert terminal.finish(WAIT_S) == 0
    finally:
        terminal.close()
    text = terminal.text
    run_id = _run_id(text)
    assert f"{MODEL} · world {helix.world} · no budget cap · Ctrl-C to pause" in _words(text)
    assert _words(LONG) in _words(text)  # the agent's words, never cut
    assert "● Done: notes.md has two lines, and the check exited 3 as planned." in text
    # Five gates allowed the write: one mark. The ask shows why, then the answer.
    assert "✓ write_file path=notes.md content='# Notes - one'" in text
    assert "gate.decided" not in text
    assert "ceiling" not in text
    assert "? run_command wc -l < notes.md; exit 3" in text
    assert "asked by the approval gate: the command may change things" in text
    assert text.count("Allow it? [y]es / [n]o:") == 3
    assert "✓ run_command wc -l < notes.md; exit 3  allowed by user:tester · exit 3" in text
    # The diff of the file the call wrote, under it.
    assert "+ notes.md (created)" in text
    assert "+# Notes" in text
    assert "+- one" in text
    # The closing summary, and where to go next.
    assert "completed · 3 turns" in text
    assert "1 file changed: notes.md" in text
    assert f"helix diff {run_id}" in text
    assert f"helix fork {run_id} --turn 2" in text
    raw = terminal.raw
    assert "\x1b[" in raw  # coloured: it is a terminal
    assert "thinking (turn 2)" in raw  # the spinner, while the model took its second
    assert "Traceback" not in raw
    assert helix.show(run_id)["status"] == "completed"


def test_ctrl_c_pauses_the_run_driven_here_and_says_how_to_resume(helix: Helix) -> None:
    helix.play({"text": "Thinking hard.", "delay_s": 600.0})  # a model that takes its time
    terminal = Terminal(["run", "think", "--model", MODEL, "--dir", str(helix.world)], helix.env)
    try:
        terminal.wait_for("thinking (turn 1)", WAIT_S)
        terminal.interrupt()
        terminal.wait_for("pausing: the step under way finishes first", WAIT_S)
        terminal.interrupt()  # again: the model call is cut, not waited for
        assert terminal.finish(WAIT_S) == 130
    finally:
        terminal.close()
    text = terminal.text
    run_id = _run_id(text)
    assert f"run {run_id} is paused." in text
    assert f"resume it: helix resume {run_id}" in text
    assert "Traceback" not in terminal.raw
    assert helix.show(run_id)["status"] == "paused"  # not "running" with nothing driving it

    helix.play({"text": "Thought it through."})
    resumed = helix("resume", run_id)  # from any terminal, later: it goes on
    assert resumed.returncode == 0, resumed.stderr
    assert "● Thought it through." in resumed.stdout
    assert helix.show(run_id)["status"] == "completed"


def test_the_input_ending_at_a_question_leaves_the_call_waiting_on_a_paused_run(
    helix: Helix,
) -> None:
    helix.play(
        {"text": "Making it.", "tool_calls": [
            {"name": "run_command", "args": {"command": "touch made.txt"}}]},
        {"text": "Made it."},
    )  # fmt: skip
    terminal = Terminal(
        ["run", "make a file", "--model", MODEL, "--dir", str(helix.world)], helix.env
    )
    try:
        terminal.wait_for("Allow it? [y]es / [n]o:", WAIT_S)
        terminal.type(CTRL_D)
        assert terminal.finish(WAIT_S) == 1
    finally:
        terminal.close()
    text = terminal.text
    run_id = _run_id(text)
    assert f"no answer (the input ended): run {run_id} is paused." in text
    assert f"answer its call: helix approve {run_id} · helix deny {run_id}" in text
    assert f"resume it: helix resume {run_id}" in text
    assert "Traceback" not in terminal.raw
    assert helix.show(run_id)["status"] == "paused"
    assert not (helix.world / "made.txt").exists()

    assert helix("approve", run_id).returncode == 0  # answered from anywhere
    assert helix("resume", run_id).returncode == 0
    assert (helix.world / "made.txt").exists()
    log = helix.logs(run_id)
    assert len(of_type(log, "approval.requested")) == 1  # the same question, answered later
    assert helix.show(run_id)["status"] == "completed"


def test_ctrl_c_while_a_child_works_pauses_both(helix: Helix) -> None:
    helix.play(
        {"text": "Handing it over.", "tool_calls": [
            {"name": "delegate", "args": {"objective": "think it over"}}]},
        {"text": "Thinking, slowly.", "delay_s": 600.0},  # the child's first model call
    )  # fmt: skip
    terminal = Terminal(["run", "delegate", "--model", MODEL, "--dir", str(helix.world)], helix.env)
    try:
        child_id = terminal.wait_for("delegated to run_", WAIT_S).split("delegated to ")[1][:24]
        terminal.wait_for("thinking (turn 1)", WAIT_S, after=child_id)  # the child's model
        terminal.interrupt()
        assert terminal.finish(WAIT_S) == 130
    finally:
        terminal.close()
    text = terminal.text
    run_id = _run_id(text)
    assert f"run {run_id} is paused." in text
    assert helix.show(run_id)["status"] == "paused"
    assert helix.show(child_id)["status"] == "paused"  # neither left "running"
