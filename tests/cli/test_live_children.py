"""``helix run`` in a terminal: a child run's events shown in its parent's, its asks asked."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from helix.cli._live import drive_and_show
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup

PARENT = Scenario.of(
    {"text": "Handing it over.", "tool_calls": [
        {"id": "d1", "name": "delegate", "args": {"objective": "make the file"}}]},
    {"text": "The worker made it."},
)  # fmt: skip
CHILD = Scenario.of(
    {"text": "Making it.", "tool_calls": [
        {"name": "run_command", "args": {"command": "touch made.txt"}}]},
    {"text": "Made made.txt."},
)  # fmt: skip


async def test_a_childs_events_are_shown_indented_and_its_approval_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def model(setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(PARENT if setup.depth == 0 else CHILD, label="test")

    world = tmp_path / "world"
    world.mkdir()
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})
    record = await engine.create(
        "delegate it", blueprint=Blueprint(model="scripted:t"), world=world
    )

    answers = io.StringIO("\nperhaps\ny\n")  # unclear twice, then yes
    state = await drive_and_show(engine, record.id, json=False, interactive=True, stdin=answers)

    assert state.status == "completed"
    assert (world / "made.txt").exists()  # the child's command ran, allowed inline
    out = capsys.readouterr().out
    assert out.count("Allow it? [y]es / [n]o:") == 3  # asked again until the answer was clear
    lines = out.splitlines()
    spawned = next(i for i, line in enumerate(lines) if "delegated to run_" in line)
    child = [line for line in lines[spawned + 1 :] if line.startswith("│")]
    assert "│ ● Making it." in child
    assert any(line.startswith("│ ? run_command touch made.txt") for line in child)
    assert any(line.startswith("│ ✓ run_command touch made.txt") for line in child)
    assert "│ ● Made made.txt." in child
    last_child = max(i for i, line in enumerate(lines) if line.startswith("│"))
    parent_after = lines[last_child + 1 :]
    assert "● The worker made it." in parent_after  # the parent has the last word
    assert any(line.startswith("completed · ") for line in parent_after)
