"""``helix run`` in a terminal: a child run's events shown in its parent's, its asks asked."""

from __future__ import annotations

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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def model(setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(PARENT if setup.depth == 0 else CHILD, label="test")

    asked: list[str] = []

    def answer(question: str) -> str:
        asked.append(question)
        return "y"

    monkeypatch.setattr("builtins.input", answer)
    world = tmp_path / "world"
    world.mkdir()
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})
    record = await engine.create(
        "delegate it", blueprint=Blueprint(model="scripted:t"), world=world
    )

    state = await drive_and_show(engine, record.id, json=False, interactive=True)

    assert state.status == "completed"
    assert (world / "made.txt").exists()  # the child's command ran, allowed inline
    assert asked == ["allow run_command {'command': 'touch made.txt'}? [y/n] "]
    lines = capsys.readouterr().out.splitlines()
    spawned = next(i for i, line in enumerate(lines) if "agent.spawned" in line)
    child_lines = [line for line in lines[spawned + 1 :] if line.startswith("│ ")]
    assert any("approval.requested" in line for line in child_lines)
    assert any("run.completed" in line and "Made made.txt." in line for line in child_lines)
    assert not lines[-1].startswith("│")  # the parent has the last word
    assert "run.completed" in lines[-1]
