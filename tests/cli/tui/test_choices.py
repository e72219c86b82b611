"""An options card in the cockpit: drawn in the conversation, chosen with a key or a click."""

from __future__ import annotations

from textual.pilot import Pilot

from helix.cli._transcript import Shown
from helix.cli.tui import HelixTui, RunScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, screen_text, until

CARD = {
    "question": "Which database?",
    "choices": [
        {"id": "sqlite", "label": "SQLite"},
        {"id": "postgres", "label": "PostgreSQL", "description": "a server"},
    ],
}
TABLE = {"columns": ["name", "ms"], "rows": [["boot", 12], ["query", 3]]}


def _play(model_server: MockModelServer) -> None:
    play(
        model_server,
        {
            "text": "Here is what I measured.",
            "tool_calls": [
                {"name": "show_component", "args": {"component": "table", "props": TABLE}}
            ],
        },
        {"text": "Which one?", "tool_calls": [{"name": "ask_choice", "args": CARD}]},
        {"text": "Done."},
    )


async def _open(app: HelixTui, pilot: Pilot[None]) -> RunScreen:
    run = await app.attempt(app.api.create("measure and ask", model=MODEL), "create")
    assert run is not None
    screen = RunScreen(run.id)
    await app.push_screen(screen)
    await until(pilot, lambda: screen.card is not None, "the waiting card")
    return screen


def _chosen(screen: RunScreen) -> str | None:
    shown = [b for b in screen.transcript.blocks if isinstance(b, Shown) and b.kind == "options"]
    return shown[0].choice if shown else None


async def test_a_card_is_chosen_with_a_number_key(
    door: Door, model_server: MockModelServer
) -> None:
    _play(model_server)

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot)
        shown = screen_text(app)
        assert "Choose: Which database?" in shown
        assert "[2] PostgreSQL — a server" in shown
        assert "boot" in shown  # the table, drawn in the conversation
        assert "query" in shown
        await pilot.press("2")
        await until(pilot, lambda: _chosen(screen) == "postgres", "the choice")
        await until(pilot, lambda: screen.ended, "the end")
        assert screen.card is None
        assert app.errors == []

    await in_tui(scene)


async def test_a_card_is_chosen_with_a_click(
    local_door: Door, model_server: MockModelServer
) -> None:
    _play(model_server)

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await _open(app, pilot)
        await pilot.click(
            "#approval", offset=(5, 2)
        )  # on "[1]" of "  [1] SQLite", inside the border
        await until(pilot, lambda: _chosen(screen) == "sqlite", "the choice")
        await pilot.press("3")  # nothing waits any more: told, nothing sent
        assert app.errors == []

    await in_tui(scene)
