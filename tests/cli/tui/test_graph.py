"""A task graph in the cockpit: its run screen shows its tasks, live."""

from __future__ import annotations

from textual.pilot import Pilot

from helix.cli.tui import HelixTui, RunScreen
from helix.providers import Scenario
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, screen_text, until

PLAN = {
    "model": MODEL,
    "tasks": [
        {"id": "fetch", "objective": "fetch it"},
        {"id": "report", "objective": "report on it", "depends_on": ["fetch"]},
    ],
}


async def test_a_graphs_run_screen_shows_its_tasks(
    door: Door, model_server: MockModelServer
) -> None:
    model_server.play(Scenario.of({"text": "done"}, repeat=True))

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        graph = await app.attempt(app.api.create_graph(PLAN), "create")
        assert graph is not None
        screen = RunScreen(graph.id)
        await app.push_screen(screen)
        await until(pilot, lambda: screen.run is not None and screen.run.finished, "the end")
        await until(pilot, lambda: "✓ completed" in screen_text(app), "the tasks")
        text = screen_text(app)
        assert "TASK" in text
        assert "fetch" in text
        assert "report" in text
        assert screen.is_graph is True
        assert app.errors == []

    await in_tui(scene)


async def test_a_plain_runs_screen_shows_no_tasks(
    local_door: Door, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Hello."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        run = await app.attempt(app.api.create("say hello", model=MODEL), "create")
        assert run is not None
        screen = RunScreen(run.id)
        await app.push_screen(screen)
        await until(pilot, lambda: screen.run is not None and screen.run.finished, "the end")
        await until(pilot, lambda: screen.is_graph is False, "known not to be a graph")
        assert "TASK" not in screen_text(app)

    await in_tui(scene)
