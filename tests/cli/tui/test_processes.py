"""The run screen lists a live run's background processes under its header."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from helix.cli.tui import HelixTui, RunScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, until

SERVE = {"name": "run_command", "args": {"command": "exec sleep 600", "background": True}}


async def test_a_live_runs_processes_show_under_its_header(
    door: Door, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Serving.", "tool_calls": [SERVE]}, {"text": "Served."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        blueprint = {"sandbox": {"live": True, "kind": "process"}}
        run = await app.api.create("serve", model=MODEL, blueprint=blueprint, auto_approve=True)
        await app.push_screen(RunScreen(run.id))
        screen = app.screen
        assert isinstance(screen, RunScreen)

        def panel() -> str:
            return str(screen.query_one("#processes", Static).render())

        await until(pilot, lambda: screen.ended, "the end")
        await until(pilot, lambda: "killed" in panel(), "the process, killed with its world")
        assert "p1" in panel()
        assert "exec sleep 600" in panel()
        assert app.errors == []

    await in_tui(scene)
