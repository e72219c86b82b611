"""Pause, resume, cancel from the keyboard; quitting leaves nothing looking active."""

from __future__ import annotations

from textual.pilot import Pilot

from helix import AsyncClient
from helix.cli._transcript import Note
from helix.cli.tui import ConfirmDialog, HelixTui, RunScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, until

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}


async def open_waiting_run(app: HelixTui, pilot: Pilot[None]) -> RunScreen:
    """Start a run whose call asks (driven here when embedded), open it, wait for the ask."""
    run = await app.attempt(app.api.create("write out.txt", model=MODEL), "create")
    assert run is not None
    screen = RunScreen(run.id)
    await app.push_screen(screen)
    await until(pilot, lambda: screen.asking, "the approval")
    return screen


def status(screen: RunScreen) -> str | None:
    return None if screen.run is None else screen.run.status


async def test_pause_resume_cancel(door: Door, model_server: MockModelServer) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Done."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await open_waiting_run(app, pilot)
        await pilot.press("p")
        await until(pilot, lambda: status(screen) == "paused", "paused")
        await pilot.press("r")
        await until(pilot, lambda: status(screen) in ("running", "waiting"), "resumed")
        assert any(b.kind == "resumed" for b in notes(screen))
        await until(pilot, lambda: screen.asking, "the question, still open")
        assert app.driven_here(screen.run_id) == (door.kind == "local")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirmation")
        await pilot.click("#cancel")  # "Cancel" in the dialog: nothing happens
        await until(pilot, lambda: app.screen is screen, "back on the run")
        assert status(screen) in ("running", "waiting")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirmation")
        await pilot.click("#ok")
        await until(pilot, lambda: status(screen) == "cancelled", "cancelled")
        assert any(b.kind == "cancelled" for b in notes(screen))
        assert app.errors == []

    await in_tui(scene)


async def test_quitting_pauses_the_runs_driven_here(
    local_door: Door, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Done."})
    seen: list[str] = []

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await open_waiting_run(app, pilot)
        assert app.driven_here(screen.run_id)
        seen.append(screen.run_id)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None, "the app to quit")

    await in_tui(scene)
    async with AsyncClient(env=local_door.env, user="tester") as client:
        assert (await client.get(seen[0])).status == "paused"


def notes(screen: RunScreen) -> list[Note]:
    return [b for b in screen.transcript.blocks if isinstance(b, Note)]


async def test_a_run_driven_elsewhere_is_followed_and_answered_through_the_store(
    local_door: Door, model_server: MockModelServer
) -> None:
    """Embedded: another driver (its own engine and store connection) runs it; we approve."""
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Done."})
    async with AsyncClient(env=local_door.env, user="elsewhere") as other:
        run = await other.create("write out.txt", model=MODEL)

        async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
            screen = RunScreen(run.id)
            await app.push_screen(screen)
            await until(pilot, lambda: screen.asking, "the approval")
            assert not app.driven_here(run.id)
            await pilot.press("a")
            await until(pilot, lambda: screen.ended, "the end")
            assert screen.run is not None
            assert screen.run.status == "completed"
            assert not app.driven_here(run.id)
            assert app.errors == []

        await in_tui(scene)
        assert await other.read(run.id, "out.txt") == b"hi\n"
        decided = [e async for e in other.events(run.id) if e.type == "approval.decided"]
        assert [(e.data["decision"], e.data["by"]) for e in decided] == [("allow", "user:tester")]
