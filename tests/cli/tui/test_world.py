"""The world at any turn, fork and rollback from the cockpit, and bad input said in the UI."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Static

from helix.cli.tui import FilesScreen, ForkDialog, HelixTui, RollbackDialog, RunScreen, RunsScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, plain, screen_text, until

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}
FIRST = {"name": "write_file", "args": {"path": "a.txt", "content": "one\n"}}
SECOND = {"name": "write_file", "args": {"path": "a.txt", "content": "two\n"}}


async def open_run(app: HelixTui, pilot: Pilot[None], objective: str) -> RunScreen:
    run = await app.attempt(app.api.create(objective, model=MODEL), "create")
    assert run is not None
    screen = RunScreen(run.id)
    await app.push_screen(screen)
    return screen


def current(app: HelixTui) -> Screen[object]:
    return app.screen


def finished(screen: RunScreen) -> bool:
    return screen.ended


def error_line(app: HelixTui) -> str:
    return str(app.screen.query_one("#error", Static).render())


async def fill(pilot: Pilot[None], widget_id: str, text: str) -> None:
    box = pilot.app.screen.query_one(f"#{widget_id}", Input)
    box.focus()
    box.value = text
    await pilot.pause()


async def test_files_diffs_fork_and_rollback(door: Door, model_server: MockModelServer) -> None:
    play(
        model_server,
        {"text": "First.", "tool_calls": [FIRST]},
        {"text": "Second.", "tool_calls": [SECOND]},
        {"text": "Done."},
        {"text": "Forked and done."},
    )

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await open_run(app, pilot, "write a.txt twice")
        await until(pilot, lambda: finished(screen), "the run's end")
        # The call's edit shows as a diff under it, once its turn has ended.
        await until(pilot, lambda: len([v for v in screen.views.values() if v.diffs]) == 2, "diffs")
        first, second = [plain(v.drawn()) for v in screen.views.values() if v.diffs]
        assert "write_file" in first
        assert "+one" in first
        assert "-one" in second
        assert "+two" in second

        # The world at turn 1, then turn 2: the file's content and the turn's diff.
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, FilesScreen), "the files")
        files = app.screen
        assert isinstance(files, FilesScreen)
        await until(pilot, lambda: files.shown == "diff", "the last turn's diff")
        assert files.turn == 3
        await pilot.press("t")
        await fill(pilot, "turn", "1")
        await pilot.press("enter")
        await until(pilot, lambda: files.turn == 1 and files.shown == "diff", "turn 1")
        assert "+one" in str(files.query_one("#content", Static).render())
        await pilot.press("enter")  # the highlighted file, as it was at turn 1
        await until(pilot, lambda: files.shown == "a.txt", "a.txt at turn 1")
        assert "one" in str(files.query_one("#content", Static).render())
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: files.turn == 2 and files.shown == "diff", "turn 2")
        assert "+two" in str(files.query_one("#content", Static).render())
        await pilot.press("t")
        await fill(pilot, "turn", "banana")
        await pilot.press("enter")
        await until(pilot, lambda: app.errors, "the bad turn said")
        assert "'banana' is not a turn of this run" in app.errors[-1]
        assert files.turn == 2
        await pilot.press("escape", "escape")
        await until(pilot, lambda: app.screen is screen, "back on the run")

        # Fork at a turn that does not exist: said in the dialog, which stays open.
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ForkDialog), "the fork dialog")
        await fill(pilot, "turn", "99")
        await pilot.press("enter")
        await until(pilot, lambda: "cannot fork" in error_line(app), "the fork refused")
        await fill(pilot, "turn", "x")
        await pilot.press("enter")
        await until(pilot, lambda: "'x' is not a turn" in error_line(app), "a bad turn said")
        assert isinstance(app.screen, ForkDialog)
        # Then a good one, with a message: the fork opens and runs to its end.
        await fill(pilot, "turn", "1")
        await fill(pilot, "message", "only once, please")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(current(app), RunScreen) and current(app) is not screen,
            "the fork's screen",
        )
        fork = current(app)
        assert isinstance(fork, RunScreen)
        await until(pilot, lambda: finished(fork), "the fork's end")
        assert fork.run is not None
        assert fork.run.parent is not None
        assert fork.run.parent.run_id == screen.run_id
        assert fork.run.status == "completed"
        assert any("only once, please" in getattr(b, "text", "") for b in fork.transcript.blocks)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "back on the first run")

        # Roll the first run's world back to turn 1 (confirmed in a dialog).
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, RollbackDialog), "the rollback dialog")
        await fill(pilot, "to", "1")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen, "the rollback done")
        assert await app.api.read(screen.run_id, "a.txt") == b"one\n"
        await until(
            pilot,
            lambda: any(getattr(b, "kind", "") == "rollback" for b in screen.transcript.blocks),
            "the rollback in the conversation",
        )

    await in_tui(scene)


async def test_rollback_while_the_run_runs_is_refused_in_the_ui(
    door: Door, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Done."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await open_run(app, pilot, "write out.txt")
        await until(pilot, lambda: screen.asking, "the approval")
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, RollbackDialog), "the rollback dialog")
        await fill(pilot, "to", "start")
        await pilot.press("enter")
        await until(pilot, lambda: "cannot roll back" in error_line(app), "the refusal")
        assert isinstance(app.screen, RollbackDialog)  # still open, nothing happened
        await fill(pilot, "to", "-3")
        await pilot.press("enter")
        await until(pilot, lambda: "'-3' is not a turn" in error_line(app), "a bad turn said")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "back on the run")
        await pilot.press("d")
        await until(pilot, lambda: finished(screen), "the run's end")
        assert screen.run is not None
        assert screen.run.status == "completed"  # denied, the agent went on and finished
        await pilot.press("a")  # nothing asks any more: said, not a crash
        await until(pilot, lambda: app.is_running, "the app still running")

    await in_tui(scene)


HOSTILE = "[/bold] [link=x]not a link[/link] \x1b[2J\x1b]0;owned\x07"
"""Markup that would not parse, and escape sequences: shown as text, never obeyed."""


async def test_hostile_text_is_shown_as_text(
    local_door: Door, model_server: MockModelServer
) -> None:
    name = "[/x].txt"
    write = {"name": "write_file", "args": {"path": name, "content": HOSTILE + "\n"}}
    play(model_server, {"text": HOSTILE, "tool_calls": [write]}, {"text": "[red]done"})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await open_run(app, pilot, HOSTILE)
        await until(pilot, lambda: finished(screen), "the run's end")
        await until(pilot, lambda: any(v.diffs for v in screen.views.values()), "the diff")
        shown = screen_text(app)
        assert "[/bold] [link=x]not a link[/link]" in shown
        assert "\x1b" not in shown
        assert "[red]done" in shown
        await pilot.press("w")
        await until(pilot, lambda: isinstance(current(app), FilesScreen), "the files")
        await pilot.press("enter")
        files = current(app)
        assert isinstance(files, FilesScreen)
        await until(pilot, lambda: files.shown == name, "the file")
        shown = screen_text(app)
        assert name in shown
        assert "[/bold] [link=x]" in shown
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(current(app), RunsScreen), "the runs list")
        runs = current(app)
        assert isinstance(runs, RunsScreen)
        loads = runs.loads
        await until(pilot, lambda: runs.loads > loads, "a refresh")
        assert "[/bold] [link=x]" in screen_text(app)
        await pilot.press("f")  # nothing happens on the runs list; the app is fine
        assert app.errors == []

    await in_tui(scene)
