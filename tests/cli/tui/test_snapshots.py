"""The main screens as text, against snapshots (ids, times and spend masked).

Rewrite them after an intended change with ``HELIX_UPDATE_SNAPSHOTS=1`` and review the
diff of ``tests/cli/tui/snapshots/``.
"""

from __future__ import annotations

import re

from textual.pilot import Pilot

from helix.cli.tui import FilesScreen, ForkDialog, HelixTui, RunScreen, RunsScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import check_snapshot, in_tui, masked, screen_text, until

WRITE = {"name": "write_file", "args": {"path": "notes.txt", "content": "alpha\nbeta\n"}}
ASK = {"name": "run_command", "args": {"command": "wc -l notes.txt > count.txt"}}
COST = re.compile(r"\$\d+\.\d{4}")


def shown(app: HelixTui, ids: dict[str, str]) -> str:
    return COST.sub("$0.0000", masked(screen_text(app), ids))


async def settle(app: HelixTui, pilot: Pilot[None]) -> None:
    """No toasts, nothing focused that blinks, and every pending refresh drawn."""
    app.clear_notifications()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def test_the_main_screens(local_door: Door, model_server: MockModelServer) -> None:
    play(
        model_server,
        {"text": "Done already.", "tool_calls": []},
        {"text": "I will write the notes, then count them.", "tool_calls": [WRITE]},
        {"text": "Now counting.", "tool_calls": [ASK]},
        {"text": "Counted."},
    )

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        first = await app.attempt(app.api.create("say you are done", model=MODEL), "create")
        assert first is not None
        async for _ in app.api.events(first.id, follow=True):
            pass
        second = await app.attempt(app.api.create("write and count notes", model=MODEL), "c")
        assert second is not None
        ids = {first.id: "run_first", second.id: "run_second"}
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        run = RunScreen(second.id)
        await app.push_screen(run)
        await until(pilot, lambda: run.asking and run.transcript.pending(), "the approval")
        await until(pilot, lambda: any(v.diffs for v in run.views.values()), "the first diff")
        await settle(app, pilot)
        check_snapshot("run_waiting", shown(app, ids))

        await pilot.press("escape")
        await until(pilot, lambda: app.screen is runs, "the runs list")
        loads = runs.loads
        await until(pilot, lambda: runs.loads > loads, "a refresh")
        await settle(app, pilot)
        check_snapshot("runs", shown(app, ids))

        runs.open_run(second.id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run again")
        again = app.screen
        assert isinstance(again, RunScreen)
        await until(pilot, lambda: again.asking, "the approval again")
        await pilot.press("a")
        await until(pilot, lambda: again.ended, "the end")
        await until(pilot, lambda: not again.asking, "the approval gone")
        await settle(app, pilot)
        check_snapshot("run_completed", shown(app, ids))

        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, FilesScreen), "files")
        files = app.screen
        assert isinstance(files, FilesScreen)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: files.turn == 2 and files.shown == "diff", "turn 2's diff")
        await settle(app, pilot)
        check_snapshot("files", shown(app, ids))

        await pilot.press("escape")
        await until(pilot, lambda: app.screen is again, "the run")
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ForkDialog), "the fork dialog")
        app.screen.set_focus(None)
        await settle(app, pilot)
        check_snapshot("fork_dialog", shown(app, ids))

    await in_tui(scene)


async def test_a_narrow_terminal(local_door: Door, model_server: MockModelServer) -> None:
    play(model_server, {"text": "Counting the notes.", "tool_calls": [ASK]}, {"text": "Ok."})

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        made = await app.attempt(app.api.create("count notes", model=MODEL), "create")
        assert made is not None
        run = RunScreen(made.id)
        await app.push_screen(run)
        await until(pilot, lambda: run.asking and run.transcript.pending(), "the approval")
        await settle(app, pilot)
        check_snapshot("run_waiting_narrow", shown(app, {made.id: "run_narrow"}))
        await pilot.press("d")
        await until(pilot, lambda: run.ended, "the end")

    await in_tui(scene, size=(60, 30))
