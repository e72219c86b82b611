"""The cockpit at the keyboard: start a run, steer it, approve its call; embedded and client."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from helix.cli._transcript import Call, Said
from helix.cli.tui import HelixTui, RunScreen, RunsScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, until

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}


def runs_screen(app: HelixTui) -> RunsScreen:
    assert isinstance(app.screen, RunsScreen)
    return app.screen


async def type_into(pilot: Pilot[None], widget_id: str, text: str) -> None:
    app = pilot.app
    box = app.screen.query_one(f"#{widget_id}", Input)
    box.focus()
    box.value = text
    await pilot.pause()


async def new_run(app: HelixTui, pilot: Pilot[None], objective: str, model: str) -> RunScreen:
    """Start a run from the runs list as a person does (``n``, the form); its screen."""
    await until(pilot, lambda: runs_screen(app).loads > 0, "the runs list")
    await pilot.press("n")
    await type_into(pilot, "objective", objective)
    await type_into(pilot, "model", model)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, RunScreen), "the new run's screen")
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def test_start_steer_and_approve_a_run(door: Door, model_server: MockModelServer) -> None:
    play(model_server, {"text": "Writing the file.", "tool_calls": [ASK]}, {"text": "Wrote it."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await new_run(app, pilot, "write out.txt", MODEL)
        assert app.driven_here(screen.run_id) == (door.kind == "local")

        # The approval is shown: what, with which arguments, why.
        def panel() -> str:
            return str(screen.query_one("#approval").render())

        await until(pilot, lambda: "why (" in panel(), "the approval")
        assert "run_command" in panel()
        assert "echo hi > out.txt" in panel()
        assert "why (approval gate): the command may change things" in panel()
        assert "[a] allow" in panel()

        # Steer while it waits: the message is logged and the agent reads it next.
        await pilot.press("s")
        await pilot.press(*"take care")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: any(b.who == "person" and b.text == "take care" for b in said(screen)),
            "the steer in the conversation",
        )
        await pilot.press("a")
        await until(pilot, lambda: screen.ended, "the end")
        # the run has ended; its drive here closes its model client before it stops
        await until(pilot, lambda: not app.driven_here(screen.run_id), "the drive's end")
        assert screen.run is not None
        assert screen.run.status == "completed"
        assert not screen.asking
        calls = [b for b in screen.transcript.blocks if isinstance(b, Call)]
        assert [(c.name, c.verdict, c.decision, c.state) for c in calls] == [
            ("run_command", "ask", "allow", "ok")
        ]
        agent = [b.text for b in said(screen) if b.who == "agent"]
        assert agent == ["Writing the file.", "Wrote it."]
        second = model_server.requests[-1].body
        assert "take care" in str(second["messages"])
        assert app.errors == []

    await in_tui(scene)


def said(screen: RunScreen) -> list[Said]:
    return [b for b in screen.transcript.blocks if isinstance(b, Said)]
