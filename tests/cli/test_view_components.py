"""Components in the run view and ``helix replay``: each kind as text, a card's wait and choice."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from helix.api import LocalApi
from helix.cli._blocks import next_commands
from helix.cli._live import drive_and_show
from helix.cli._transcript import Shown, Transcript
from helix.cli._view import show_replay
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, choose

SHOWN: list[tuple[str, dict[str, Any]]] = [
    (
        "table",
        {"title": "Timings", "columns": ["step", "ms"], "rows": [["boot", 12], ["query", 3]]},
    ),
    ("diff", {"path": "a.txt", "diff": "@@ -1 +1 @@\n-old\n+new\n"}),
    ("markdown", {"text": "# Summary\n\nAll **green**."}),
    (
        "chart",
        {"kind": "bar", "labels": ["mon", "tue"], "series": [{"name": "runs", "points": [1, 2]}]},
    ),
    ("acme.gauge", {"value": 7}),  # a plugin's kind this process does not know: its JSON
]
CARD = {
    "question": "Which database?",
    "choices": [{"id": "sqlite", "label": "SQLite"}, {"id": "postgres", "label": "PostgreSQL"}],
}


def _engine(home: Path, scenario: Scenario) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="t")

    return Engine(MemoryEventStore(), home=home, model_factory=model, env={})


def _shows() -> dict[str, Any]:
    calls = [{"name": "show_component", "args": {"component": k, "props": p}} for k, p in SHOWN[:4]]
    return {"text": "Here is what I found.", "tool_calls": calls}


async def test_each_kind_is_drawn_as_text(
    tmp_path: Path, helix_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _engine(helix_home, Scenario.of(_shows(), {"text": "Done."}))
    record = await engine.create("report", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    state = await drive_and_show(engine, record.id, json=False, interactive=False)
    assert state.status == "completed"
    out = capsys.readouterr().out
    lines = out.splitlines()
    ids = list(state.components)
    assert f"▣ table {ids[0]}" in lines
    assert "  Timings" in lines
    assert "  step   ms" in lines
    assert "  boot   12" in lines
    assert f"▣ diff {ids[1]}" in lines
    assert "  --- a.txt" in lines
    assert "  +new" in lines
    assert "  # Summary" in lines
    assert "  runs:" in lines
    assert "    tue " + "█" * 30 + " 2" in lines
    show_lines = [
        i for i, line in enumerate(lines) if line.startswith("✓ show_component component=")
    ]
    component_lines = [i for i, line in enumerate(lines) if line.startswith("▣ ")]
    assert len(show_lines) == len(component_lines) == 4
    assert all(c > s for s, c in zip(show_lines, component_lines, strict=True))  # after its call


async def test_a_waiting_card_says_how_to_choose_and_then_what_was_chosen(
    tmp_path: Path, helix_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = {"text": "Which?", "tool_calls": [{"name": "ask_choice", "args": CARD}]}
    engine = _engine(helix_home, Scenario.of(ask, {"text": "PostgreSQL then."}))
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(
            drive_and_show(engine, record.id, json=False, interactive=False)
        )
        async with engine.store.subscribe(record.id) as events:
            async for event in events:
                if event.type == "ui.asked":
                    card = event.data["component_id"]
                    break
        await choose(engine.store, record.id, None, "postgres", by="user:ann")
    assert driving.result().status == "completed"
    lines = capsys.readouterr().out.splitlines()
    assert f"▣ options {card}" in lines
    assert "  Which database?" in lines
    assert "    1. SQLite [sqlite]" in lines
    assert "    2. PostgreSQL [postgres]" in lines
    assert any(line.startswith("? waiting for your choice (until ") for line in lines)
    assert f"  choose: helix choose {record.id} {card} NUMBER|ID" in lines
    assert "✓ chose 2. PostgreSQL [postgres] by user:ann" in lines

    replayed = io.StringIO()
    await show_replay(
        LocalApi(engine), record.id, to=None, console=Console(file=replayed, width=100)
    )
    again = replayed.getvalue().splitlines()
    assert f"▣ options {card}" in again
    assert "✓ chose 2. PostgreSQL [postgres] by user:ann" in again


def test_a_plugin_kind_unknown_here_is_shown_as_json_and_a_waiting_card_is_a_next_step() -> None:
    from helix.api import RunEvent

    transcript = Transcript("run_x")
    stamp = "2026-12-01T00:00:00.000000Z"
    name, props = SHOWN[4]
    for seq, (kind, data) in enumerate(
        [
            ("ui.component", {"id": "cmp_1", "component": name, "props": props, "call_id": "c0"}),
            (
                "ui.component",
                {"id": "cmp_2", "component": "options", "props": CARD, "call_id": "c1"},
            ),
            ("ui.asked", {"component_id": "cmp_2", "call_id": "c1", "expires_at": None}),
        ]
    ):
        transcript.add(RunEvent(run_id="run_x", seq=seq, type=kind, v=1, ts=stamp, turn=1,
                                actor="agent", data=data))  # fmt: skip
    from helix.cli._shown import shown_block

    gauge = transcript.blocks[0]
    assert isinstance(gauge, Shown)
    text = io.StringIO()
    Console(file=text, width=80).print(shown_block(gauge))
    assert text.getvalue().splitlines() == [
        "▣ acme.gauge cmp_1", "  [acme.gauge]", "  {", '    "value": 7', "  }"
    ]  # fmt: skip
    assert transcript.status == "waiting"
    assert next_commands(transcript, "waiting")[0] == "helix choose run_x cmp_2 NUMBER"


async def test_a_person_at_the_terminal_answers_the_card_by_its_number(
    tmp_path: Path, helix_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = {"text": "Which?", "tool_calls": [{"name": "ask_choice", "args": CARD}]}
    engine = _engine(helix_home, Scenario.of(ask, {"text": "PostgreSQL then."}))
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    typed = io.StringIO("mysql\n2\n")  # not an option: asked again; then the second
    state = await drive_and_show(engine, record.id, json=False, interactive=True, stdin=typed)
    assert state.status == "completed"
    out = capsys.readouterr().out
    assert "Please answer with a number from 1 to 2" in out
    assert "✓ chose 2. PostgreSQL [postgres] by user:" in out
    log = await engine.store.read(record.id)
    (chosen,) = [e.data for e in log if e.type == "ui.chosen"]
    assert chosen["choice"] == "postgres"


async def test_the_end_of_input_leaves_the_card_waiting_and_pauses_the_run(
    tmp_path: Path, helix_home: Path
) -> None:
    ask = {"text": "Which?", "tool_calls": [{"name": "ask_choice", "args": CARD}]}
    engine = _engine(helix_home, Scenario.of(ask, {"text": "never"}))
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    state = await drive_and_show(
        engine, record.id, json=False, interactive=True, stdin=io.StringIO("")
    )
    assert state.status == "paused"
    assert list(state.pending_choices)  # still waiting: answerable later, from anywhere
